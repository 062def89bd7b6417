package s3xml

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// headers makes a getter over a map of lower-case header names.
func headers(h map[string][]string) func(string) []string {
	return func(name string) []string {
		if name != strings.ToLower(name) {
			panic("getter called with a name that is not lower-case: " + name)
		}
		return h[name]
	}
}

func TestParseGrantHeaders(t *testing.T) {
	owner := s3types.Owner{ID: "own", DisplayName: "owner"}
	alice := s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}
	bob := s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}
	all := s3types.Grantee{Type: s3types.GranteeGroup, URI: allUsers}
	auth := s3types.Grantee{Type: s3types.GranteeGroup, URI: s3types.GroupAuthenticatedUsers}
	tests := []struct {
		name string
		h    map[string][]string
		want []s3types.Grant
	}{
		{"quoted id", map[string][]string{"x-amz-grant-read": {`id="` + idAlice + `"`}},
			[]s3types.Grant{{Grantee: alice, Permission: s3types.PermRead}}},
		{"unquoted, spaces, key case", map[string][]string{"x-amz-grant-write": {`  ID = ` + idBob + ` ,EmailAddress=alice@example.com,uri = ` + allUsers + `  `}},
			[]s3types.Grant{{Grantee: bob, Permission: s3types.PermWrite}, {Grantee: alice, Permission: s3types.PermWrite}, {Grantee: all, Permission: s3types.PermWrite}}},
		{"quoted with inner spaces and tabs", map[string][]string{"x-amz-grant-read-acp": {"emailaddress=\t\" bob@example.com \"\t, uri=\"" + s3types.GroupAuthenticatedUsers + "\""}},
			[]s3types.Grant{{Grantee: bob, Permission: s3types.PermReadACP}, {Grantee: auth, Permission: s3types.PermReadACP}}},
		{"neutral spelling", map[string][]string{"x-obj-grant-write-acp": {`uri="` + allUsers + `"`}},
			[]s3types.Grant{{Grantee: all, Permission: s3types.PermWriteACP}}},
		{"header order, several values", map[string][]string{
			"x-amz-grant-write-acp":    {`id="` + idBob + `"`},
			"x-amz-grant-read-acp":     {`id="` + idBob + `"`},
			"x-amz-grant-write":        {`id="` + idAlice + `"`},
			"x-obj-grant-read":         {`uri="` + allUsers + `"`},
			"x-amz-grant-read":         {`id="` + idBob + `"`, `id="` + idAlice + `"`},
			"x-amz-grant-full-control": {`emailAddress="alice@example.com"`},
		}, []s3types.Grant{
			{Grantee: bob, Permission: s3types.PermRead},
			{Grantee: alice, Permission: s3types.PermRead},
			{Grantee: all, Permission: s3types.PermRead},
			{Grantee: alice, Permission: s3types.PermWrite},
			{Grantee: bob, Permission: s3types.PermReadACP},
			{Grantee: bob, Permission: s3types.PermWriteACP},
			{Grantee: alice, Permission: s3types.PermFullControl},
		}},
		{"no implicit owner grant", map[string][]string{"x-amz-grant-read": {`uri=` + allUsers}},
			[]s3types.Grant{{Grantee: all, Permission: s3types.PermRead}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acl, present, err := ParseGrantHeaders(headers(tt.h), owner, newResolver())
			if err != nil || !present {
				t.Fatalf("present=%v err=%v", present, err)
			}
			want := s3types.ACL{Owner: owner, Grants: tt.want}
			if !reflect.DeepEqual(acl, want) {
				t.Fatalf("got  %+v\nwant %+v", acl, want)
			}
		})
	}
}

func TestParseGrantHeadersAbsent(t *testing.T) {
	r := newResolver()
	acl, present, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-acl": {"private"}, "x-amz-grant-bogus": {"id=1"}}), s3types.Owner{ID: "o"}, r)
	if present || err != nil || !reflect.DeepEqual(acl, s3types.ACL{}) {
		t.Fatalf("acl=%+v present=%v err=%v", acl, present, err)
	}
	if r.calls != 0 {
		t.Fatalf("resolver called %d times", r.calls)
	}
}

func TestParseGrantHeadersErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		code  s3types.Code
	}{
		{"empty", ``, s3types.InvalidArgument},
		{"blank", `   `, s3types.InvalidArgument},
		{"no equals", `idfoo`, s3types.InvalidArgument},
		{"no key", `="x"`, s3types.InvalidArgument},
		{"unknown key", `user="x"`, s3types.InvalidArgument},
		{"canonical key spelled out", `canonicalUser=` + idAlice, s3types.InvalidArgument},
		{"empty value", `id=""`, s3types.InvalidArgument},
		{"empty unquoted value", `id=`, s3types.InvalidArgument},
		{"unterminated quote", `id="abc`, s3types.InvalidArgument},
		{"stray quote", `id=ab"c"`, s3types.InvalidArgument},
		{"junk after quote", `id="` + idAlice + `" x`, s3types.InvalidArgument},
		{"trailing comma", `id="` + idAlice + `",`, s3types.InvalidArgument},
		{"leading comma", `,id="` + idAlice + `"`, s3types.InvalidArgument},
		{"double comma", `id="` + idAlice + `",,id="` + idBob + `"`, s3types.InvalidArgument},
		{"semicolon list", `id="` + idAlice + `"; id="` + idBob + `"`, s3types.InvalidArgument},
		{"unknown group", `uri="http://acs.amazonaws.com/groups/global/Everyone"`, s3types.InvalidArgument},
		{"too many", strings.TrimSuffix(strings.Repeat(`uri=`+allUsers+`,`, MaxGrants+1), ","), s3types.InvalidArgument},
		{"unknown id", `id="nobody"`, s3types.InvalidArgument},
		{"unknown email", `emailAddress="eve@example.com"`, s3types.UnresolvableGrantByEmail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, present, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {tt.value}}), s3types.Owner{ID: "o"}, newResolver())
			if !present {
				t.Fatal("present = false")
			}
			wantCode(t, err, tt.code, "")
		})
	}
	// Syntax is checked in every header before any user is looked up.
	r := newResolver()
	_, _, err := ParseGrantHeaders(headers(map[string][]string{
		"x-amz-grant-full-control": {`id="nobody"`},
		"x-amz-grant-write-acp":    {`bogus`},
	}), s3types.Owner{}, r)
	wantCode(t, err, s3types.InvalidArgument, "")
	if r.calls != 0 {
		t.Fatalf("resolver called %d times before the syntax error", r.calls)
	}
	// Exactly MaxGrants is fine.
	v := strings.TrimSuffix(strings.Repeat(`uri=`+allUsers+`,`, MaxGrants), ",")
	acl, _, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {v}}), s3types.Owner{}, newResolver())
	if err != nil || len(acl.Grants) != MaxGrants {
		t.Fatalf("%d grants, err %v", len(acl.Grants), err)
	}
	// Resolver failures are passed on.
	_, _, err = ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {`id=boom`}}), s3types.Owner{}, newResolver())
	if !errors.Is(err, errBoom) || s3types.AsError(err) != nil {
		t.Fatalf("err = %v", err)
	}
}
