package s3xml

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
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
	owner := s3.Owner{ID: "own", DisplayName: "owner"}
	alice := s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}
	bob := s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}
	all := s3.Grantee{Type: s3.GranteeGroup, URI: allUsers}
	auth := s3.Grantee{Type: s3.GranteeGroup, URI: s3.GroupAuthenticatedUsers}
	tests := []struct {
		name string
		h    map[string][]string
		want []s3.Grant
	}{
		{"quoted id", map[string][]string{"x-amz-grant-read": {`id="` + idAlice + `"`}},
			[]s3.Grant{{Grantee: alice, Permission: s3.PermRead}}},
		{"unquoted, spaces, key case", map[string][]string{"x-amz-grant-write": {`  ID = ` + idBob + ` ,EmailAddress=alice@example.com,uri = ` + allUsers + `  `}},
			[]s3.Grant{{Grantee: bob, Permission: s3.PermWrite}, {Grantee: alice, Permission: s3.PermWrite}, {Grantee: all, Permission: s3.PermWrite}}},
		{"quoted with inner spaces and tabs", map[string][]string{"x-amz-grant-read-acp": {"emailaddress=\t\" bob@example.com \"\t, uri=\"" + s3.GroupAuthenticatedUsers + "\""}},
			[]s3.Grant{{Grantee: bob, Permission: s3.PermReadACP}, {Grantee: auth, Permission: s3.PermReadACP}}},
		{"neutral spelling", map[string][]string{"x-obj-grant-write-acp": {`uri="` + allUsers + `"`}},
			[]s3.Grant{{Grantee: all, Permission: s3.PermWriteACP}}},
		{"header order, several values", map[string][]string{
			"x-amz-grant-write-acp":    {`id="` + idBob + `"`},
			"x-amz-grant-read-acp":     {`id="` + idBob + `"`},
			"x-amz-grant-write":        {`id="` + idAlice + `"`},
			"x-obj-grant-read":         {`uri="` + allUsers + `"`},
			"x-amz-grant-read":         {`id="` + idBob + `"`, `id="` + idAlice + `"`},
			"x-amz-grant-full-control": {`emailAddress="alice@example.com"`},
		}, []s3.Grant{
			{Grantee: bob, Permission: s3.PermRead},
			{Grantee: alice, Permission: s3.PermRead},
			{Grantee: all, Permission: s3.PermRead},
			{Grantee: alice, Permission: s3.PermWrite},
			{Grantee: bob, Permission: s3.PermReadACP},
			{Grantee: bob, Permission: s3.PermWriteACP},
			{Grantee: alice, Permission: s3.PermFullControl},
		}},
		{"no implicit owner grant", map[string][]string{"x-amz-grant-read": {`uri=` + allUsers}},
			[]s3.Grant{{Grantee: all, Permission: s3.PermRead}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acl, present, err := ParseGrantHeaders(headers(tt.h), owner, newResolver())
			if err != nil || !present {
				t.Fatalf("present=%v err=%v", present, err)
			}
			want := s3.ACL{Owner: owner, Grants: tt.want}
			if !reflect.DeepEqual(acl, want) {
				t.Fatalf("got  %+v\nwant %+v", acl, want)
			}
		})
	}
}

func TestParseGrantHeadersAbsent(t *testing.T) {
	r := newResolver()
	acl, present, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-acl": {"private"}, "x-amz-grant-bogus": {"id=1"}}), s3.Owner{ID: "o"}, r)
	if present || err != nil || !reflect.DeepEqual(acl, s3.ACL{}) {
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
		code  s3.Code
	}{
		{"empty", ``, s3.InvalidArgument},
		{"blank", `   `, s3.InvalidArgument},
		{"no equals", `idfoo`, s3.InvalidArgument},
		{"no key", `="x"`, s3.InvalidArgument},
		{"unknown key", `user="x"`, s3.InvalidArgument},
		{"canonical key spelled out", `canonicalUser=` + idAlice, s3.InvalidArgument},
		{"empty value", `id=""`, s3.InvalidArgument},
		{"empty unquoted value", `id=`, s3.InvalidArgument},
		{"unterminated quote", `id="abc`, s3.InvalidArgument},
		{"stray quote", `id=ab"c"`, s3.InvalidArgument},
		{"junk after quote", `id="` + idAlice + `" x`, s3.InvalidArgument},
		{"trailing comma", `id="` + idAlice + `",`, s3.InvalidArgument},
		{"leading comma", `,id="` + idAlice + `"`, s3.InvalidArgument},
		{"double comma", `id="` + idAlice + `",,id="` + idBob + `"`, s3.InvalidArgument},
		{"semicolon list", `id="` + idAlice + `"; id="` + idBob + `"`, s3.InvalidArgument},
		{"unknown group", `uri="http://acs.amazonaws.com/groups/global/Everyone"`, s3.InvalidArgument},
		{"too many", strings.TrimSuffix(strings.Repeat(`uri=`+allUsers+`,`, MaxGrants+1), ","), s3.InvalidArgument},
		{"unknown id", `id="nobody"`, s3.InvalidArgument},
		{"unknown email", `emailAddress="eve@example.com"`, s3.UnresolvableGrantByEmail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, present, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {tt.value}}), s3.Owner{ID: "o"}, newResolver())
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
	}), s3.Owner{}, r)
	wantCode(t, err, s3.InvalidArgument, "")
	if r.calls != 0 {
		t.Fatalf("resolver called %d times before the syntax error", r.calls)
	}
	// Exactly MaxGrants is fine.
	v := strings.TrimSuffix(strings.Repeat(`uri=`+allUsers+`,`, MaxGrants), ",")
	acl, _, err := ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {v}}), s3.Owner{}, newResolver())
	if err != nil || len(acl.Grants) != MaxGrants {
		t.Fatalf("%d grants, err %v", len(acl.Grants), err)
	}
	// Resolver failures are passed on.
	_, _, err = ParseGrantHeaders(headers(map[string][]string{"x-amz-grant-read": {`id=boom`}}), s3.Owner{}, newResolver())
	if !errors.Is(err, errBoom) || s3.AsError(err) != nil {
		t.Fatalf("err = %v", err)
	}
}
