package s3xml

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

const (
	xsiDecl  = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
)

func aliceACL() s3types.ACL {
	return s3types.ACL{
		Owner: s3types.Owner{ID: idAlice, DisplayName: "alice"},
		Grants: []s3types.Grant{
			{Grantee: s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3types.PermFullControl},
			{Grantee: s3types.Grantee{Type: s3types.GranteeGroup, URI: allUsers}, Permission: s3types.PermRead},
		},
	}
}

func TestMarshalACLGolden(t *testing.T) {
	tests := []struct {
		name string
		acl  s3types.ACL
		want string
	}{
		{"owner and public read", aliceACL(), Header + lines(
			`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
			`<Owner><ID>`+idAlice+`</ID><DisplayName>alice</DisplayName></Owner>`,
			`<AccessControlList>`,
			`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">`,
			`<ID>`+idAlice+`</ID><DisplayName>alice</DisplayName></Grantee>`,
			`<Permission>FULL_CONTROL</Permission></Grant>`,
			`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group">`,
			`<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>`,
			`<Permission>READ</Permission></Grant>`,
			`</AccessControlList></AccessControlPolicy>`)},
		{"no grants, escaped names", s3types.ACL{Owner: s3types.Owner{ID: "a&b", DisplayName: `<x> "q"`}}, Header + lines(
			`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
			`<Owner><ID>a&amp;b</ID><DisplayName>&lt;x&gt; "q"</DisplayName></Owner>`,
			`<AccessControlList></AccessControlList></AccessControlPolicy>`)},
		{"untyped grantees", s3types.ACL{Owner: s3types.Owner{ID: "o"}, Grants: []s3types.Grant{
			{Grantee: s3types.Grantee{URI: allUsers}, Permission: s3types.PermWrite},
			{Grantee: s3types.Grantee{ID: "u"}, Permission: s3types.PermReadACP},
		}}, Header + lines(
			`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
			`<Owner><ID>o</ID><DisplayName></DisplayName></Owner><AccessControlList>`,
			`<Grant><Grantee `+xsiDecl+` xsi:type="Group"><URI>`+allUsers+`</URI></Grantee><Permission>WRITE</Permission></Grant>`,
			`<Grant><Grantee `+xsiDecl+` xsi:type="CanonicalUser"><ID>u</ID><DisplayName></DisplayName></Grantee><Permission>READ_ACP</Permission></Grant>`,
			`</AccessControlList></AccessControlPolicy>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalACL(tt.acl)
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, got)
		})
	}
}

func TestACLRoundTrip(t *testing.T) {
	acls := []s3types.ACL{
		aliceACL(),
		{Owner: s3types.Owner{ID: idAlice, DisplayName: "alice"}},
		{Owner: s3types.Owner{ID: idBob, DisplayName: "b&b\r<bob>\tx\r\n"}, Grants: []s3types.Grant{
			{Grantee: s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}, Permission: s3types.PermWrite},
			{Grantee: s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3types.PermReadACP},
			{Grantee: s3types.Grantee{Type: s3types.GranteeGroup, URI: s3types.GroupAuthenticatedUsers}, Permission: s3types.PermWriteACP},
			{Grantee: s3types.Grantee{Type: s3types.GranteeGroup, URI: s3types.GroupLogDelivery}, Permission: s3types.PermWrite},
			{Grantee: s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3types.PermReadACP},
		}},
	}
	for i, acl := range acls {
		got, err := ParseACL(MarshalACL(acl), newResolver())
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		want := acl.Clone()
		// The owner's display name is kept as sent, less surrounding white space.
		want.Owner.DisplayName = trim(want.Owner.DisplayName)
		if len(want.Grants) == 0 {
			want.Grants = []s3types.Grant{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestParseACLForms(t *testing.T) {
	owner := `<Owner><ID>` + idAlice + `</ID><DisplayName>whoever</DisplayName></Owner>`
	alice := s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}
	bob := s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}
	group := func(uri string) s3types.Grantee { return s3types.Grantee{Type: s3types.GranteeGroup, URI: uri} }
	tests := []struct {
		name  string
		body  string
		owner s3types.Owner
		want  []s3types.Grant
	}{
		{
			name: "details example, pretty-printed",
			body: `<?xml version="1.0" encoding="UTF-8"?>
<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Owner><ID>` + idAlice + `</ID><DisplayName>foobar</DisplayName></Owner>
  <AccessControlList>
    <Grant>
      <Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">
        <ID>` + idAlice + `</ID><DisplayName>foobar</DisplayName></Grantee>
      <Permission>FULL_CONTROL</Permission>
    </Grant>
    <Grant>
      <Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group">
        <URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>
      <Permission>READ</Permission>
    </Grant>
  </AccessControlList>
</AccessControlPolicy>
`,
			owner: s3types.Owner{ID: idAlice, DisplayName: "foobar"},
			want:  []s3types.Grant{{Grantee: alice, Permission: s3types.PermFullControl}, {Grantee: group(allUsers), Permission: s3types.PermRead}},
		},
		{
			name: "no namespace, xsi declared on the root, other prefix",
			body: `<AccessControlPolicy xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` + owner +
				`<AccessControlList><Grant><Grantee i:type="CanonicalUser"><ID>` + idBob + `</ID></Grantee>` +
				`<Permission>WRITE</Permission></Grant></AccessControlList></AccessControlPolicy>`,
			want: []s3types.Grant{{Grantee: bob, Permission: s3types.PermWrite}},
		},
		{
			name: "bare type attribute",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee type="Group">` +
				`<URI>` + s3types.GroupLogDelivery + `</URI></Grantee><Permission>WRITE</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3types.Grant{{Grantee: group(s3types.GroupLogDelivery), Permission: s3types.PermWrite}},
		},
		{
			name: "undeclared xsi prefix",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee xsi:type="Group">` +
				`<URI>` + s3types.GroupAuthenticatedUsers + `</URI></Grantee><Permission>READ_ACP</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3types.Grant{{Grantee: group(s3types.GroupAuthenticatedUsers), Permission: s3types.PermReadACP}},
		},
		{
			name: "email grants, both type names, display name from the resolver",
			body: `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + owner + `<AccessControlList>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="AmazonCustomerByEmail"><EmailAddress>bob@example.com</EmailAddress></Grantee><Permission>READ</Permission></Grant>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="CustomerByEmail"><EmailAddress> alice@example.com </EmailAddress></Grantee><Permission>WRITE_ACP</Permission></Grant>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="CanonicalUser"><ID>` + idBob + `</ID><DisplayName>mallory</DisplayName></Grantee><Permission>READ_ACP</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3types.Grant{
				{Grantee: bob, Permission: s3types.PermRead},
				{Grantee: alice, Permission: s3types.PermWriteACP},
				{Grantee: bob, Permission: s3types.PermReadACP},
			},
		},
		{
			name: "type attribute preferred over bare type, case-insensitive type",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee type="Group" ` + xsiDecl + ` xsi:type="canonicaluser">` +
				`<ID>` + idBob + `</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`,
			want: []s3types.Grant{{Grantee: bob, Permission: s3types.PermRead}},
		},
		{
			name: "empty list",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList/></AccessControlPolicy>`,
			want: []s3types.Grant{},
		},
		{
			name: "no list, trailing comment, BOM",
			body: "\xEF\xBB\xBF<AccessControlPolicy>" + owner + "</AccessControlPolicy>\n<!-- end -->\n",
			want: []s3types.Grant{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseACL([]byte(tt.body), newResolver())
			if err != nil {
				t.Fatal(err)
			}
			wantOwner := tt.owner
			if wantOwner.ID == "" {
				wantOwner = s3types.Owner{ID: idAlice, DisplayName: "whoever"}
			}
			want := s3types.ACL{Owner: wantOwner, Grants: tt.want}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseACLErrors(t *testing.T) {
	owner := `<Owner><ID>` + idAlice + `</ID></Owner>`
	doc := func(grants ...string) string {
		return `<AccessControlPolicy>` + owner + `<AccessControlList>` + strings.Join(grants, "") + `</AccessControlList></AccessControlPolicy>`
	}
	grant := func(typ, inner, perm string) string {
		return `<Grant><Grantee ` + xsiDecl + ` xsi:type="` + typ + `">` + inner + `</Grantee><Permission>` + perm + `</Permission></Grant>`
	}
	okGrant := grant("Group", "<URI>"+allUsers+"</URI>", "READ")
	tests := []struct {
		name string
		body string
		code s3types.Code
		msg  string
	}{
		{"empty body", ``, s3types.MalformedACLError, msgMalformedACL},
		{"not XML", `hello`, s3types.MalformedACLError, msgMalformedACL},
		{"unclosed", `<AccessControlPolicy>` + owner, s3types.MalformedACLError, ""},
		{"wrong root", `<AccessControlList>` + owner + `</AccessControlList>`, s3types.MalformedACLError, ""},
		{"trailing element", doc(okGrant) + `<x/>`, s3types.MalformedACLError, ""},
		{"trailing text", doc(okGrant) + `junk`, s3types.MalformedACLError, ""},
		{"no owner", `<AccessControlPolicy><AccessControlList>` + okGrant + `</AccessControlList></AccessControlPolicy>`, s3types.MalformedACLError, ""},
		{"owner without id", `<AccessControlPolicy><Owner><DisplayName>a</DisplayName></Owner></AccessControlPolicy>`, s3types.MalformedACLError, ""},
		{"owner with blank id", `<AccessControlPolicy><Owner><ID> </ID></Owner></AccessControlPolicy>`, s3types.MalformedACLError, ""},
		{"no type", doc(`<Grant><Grantee><URI>` + allUsers + `</URI></Grantee><Permission>READ</Permission></Grant>`), s3types.MalformedACLError, ""},
		{"unknown type", doc(grant("Robot", "<ID>x</ID>", "READ")), s3types.MalformedACLError, ""},
		{"type in another namespace", doc(`<Grant><Grantee xmlns:q="urn:q" q:type="Group"><URI>` + allUsers + `</URI></Grantee><Permission>READ</Permission></Grant>`), s3types.MalformedACLError, ""},
		{"no grantee", doc(`<Grant><Permission>READ</Permission></Grant>`), s3types.MalformedACLError, ""},
		{"no permission", doc(`<Grant><Grantee ` + xsiDecl + ` xsi:type="Group"><URI>` + allUsers + `</URI></Grantee></Grant>`), s3types.MalformedACLError, ""},
		{"unknown permission", doc(grant("Group", "<URI>"+allUsers+"</URI>", "DELETE")), s3types.MalformedACLError, ""},
		{"lower-case permission", doc(grant("Group", "<URI>"+allUsers+"</URI>", "read")), s3types.MalformedACLError, ""},
		{"unknown group", doc(grant("Group", "<URI>http://example.com/groups/x</URI>", "READ")), s3types.MalformedACLError, ""},
		{"group without uri", doc(grant("Group", "", "READ")), s3types.MalformedACLError, ""},
		{"user without id", doc(grant("CanonicalUser", "<DisplayName>a</DisplayName>", "READ")), s3types.MalformedACLError, ""},
		{"email without address", doc(grant("AmazonCustomerByEmail", "<EmailAddress></EmailAddress>", "READ")), s3types.MalformedACLError, ""},
		{"malformed after an unknown user", doc(grant("CanonicalUser", "<ID>nobody</ID>", "READ"), grant("Group", "", "READ")), s3types.MalformedACLError, ""},
		{"too many grants", doc(strings.Repeat(okGrant, MaxGrants+1)), s3types.MalformedACLError, ""},
		{"unknown id", doc(okGrant, grant("CanonicalUser", "<ID>nobody</ID>", "READ")), s3types.InvalidArgument, "Invalid id"},
		{"NoSuchUser id", doc(grant("CanonicalUser", "<ID>nosuch</ID>", "READ")), s3types.InvalidArgument, "Invalid id"},
		{"unknown email", doc(grant("AmazonCustomerByEmail", "<EmailAddress>eve@example.com</EmailAddress>", "READ")), s3types.UnresolvableGrantByEmail,
			"The e-mail address you provided does not match any account on record."},
		{"NoSuchUser email", doc(grant("CustomerByEmail", "<EmailAddress>nosuch@example.com</EmailAddress>", "READ")), s3types.UnresolvableGrantByEmail, ""},
		{"latin-1 declared", `<?xml version="1.0" encoding="ISO-8859-1"?>` + doc(okGrant), s3types.MalformedACLError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseACL([]byte(tt.body), newResolver())
			wantCode(t, err, tt.code, tt.msg)
		})
	}
}

func TestParseACLLimitAndResolverFailure(t *testing.T) {
	g := `<Grant><Grantee ` + xsiDecl + ` xsi:type="CanonicalUser"><ID>` + idBob + `</ID></Grantee><Permission>READ</Permission></Grant>`
	body := `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList>` + strings.Repeat(g, MaxGrants) + `</AccessControlList></AccessControlPolicy>`
	acl, err := ParseACL([]byte(body), newResolver())
	if err != nil || len(acl.Grants) != MaxGrants {
		t.Fatalf("%d grants: %v", len(acl.Grants), err)
	}

	for _, inner := range []string{
		`xsi:type="CanonicalUser"><ID>boom</ID>`,
		`xsi:type="AmazonCustomerByEmail"><EmailAddress>boom@example.com</EmailAddress>`,
	} {
		body := `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee ` + xsiDecl + ` ` + inner +
			`</Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
		_, err := ParseACL([]byte(body), newResolver())
		if !errors.Is(err, errBoom) || s3types.AsError(err) != nil {
			t.Fatalf("%s: err = %v, want the wrapped resolver error", inner, err)
		}
	}
}

// A resolver may return an e-mail user without an id only by mistake; that must not
// produce a grant to nobody.
type noIDResolver struct{ *fakeResolver }

func (noIDResolver) UserByEmail(string) (s3types.Owner, error) {
	return s3types.Owner{DisplayName: "x"}, nil
}

func TestParseACLResolverWithoutID(t *testing.T) {
	body := `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee ` + xsiDecl +
		` xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
	if _, err := ParseACL([]byte(body), noIDResolver{newResolver()}); err == nil || s3types.AsError(err) != nil {
		t.Fatalf("err = %v", err)
	}
}

func ExampleMarshalACL() {
	// The public-read canned ACL of alice's resource.
	alice := s3types.Owner{ID: "abc", DisplayName: "alice"}
	acl := s3types.ACL{Owner: alice, Grants: []s3types.Grant{
		{Grantee: s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: alice.ID, DisplayName: alice.DisplayName}, Permission: s3types.PermFullControl},
		{Grantee: s3types.Grantee{Type: s3types.GranteeGroup, URI: s3types.GroupAllUsers}, Permission: s3types.PermRead},
	}}
	fmt.Println(string(MarshalACL(acl)))
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>abc</ID><DisplayName>alice</DisplayName></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>abc</ID><DisplayName>alice</DisplayName></Grantee><Permission>FULL_CONTROL</Permission></Grant><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>
}
