package s3xml

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

const (
	xsiDecl  = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
)

func aliceACL() s3.ACL {
	return s3.ACL{
		Owner: s3.Owner{ID: idAlice, DisplayName: "alice"},
		Grants: []s3.Grant{
			{Grantee: s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3.PermFullControl},
			{Grantee: s3.Grantee{Type: s3.GranteeGroup, URI: allUsers}, Permission: s3.PermRead},
		},
	}
}

func TestMarshalACLGolden(t *testing.T) {
	tests := []struct {
		name string
		acl  s3.ACL
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
		{"no grants, escaped names", s3.ACL{Owner: s3.Owner{ID: "a&b", DisplayName: `<x> "q"`}}, Header + lines(
			`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
			`<Owner><ID>a&amp;b</ID><DisplayName>&lt;x&gt; "q"</DisplayName></Owner>`,
			`<AccessControlList></AccessControlList></AccessControlPolicy>`)},
		{"untyped grantees", s3.ACL{Owner: s3.Owner{ID: "o"}, Grants: []s3.Grant{
			{Grantee: s3.Grantee{URI: allUsers}, Permission: s3.PermWrite},
			{Grantee: s3.Grantee{ID: "u"}, Permission: s3.PermReadACP},
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
	acls := []s3.ACL{
		aliceACL(),
		{Owner: s3.Owner{ID: idAlice, DisplayName: "alice"}},
		{Owner: s3.Owner{ID: idBob, DisplayName: "b&b\r<bob>\tx\r\n"}, Grants: []s3.Grant{
			{Grantee: s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}, Permission: s3.PermWrite},
			{Grantee: s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3.PermReadACP},
			{Grantee: s3.Grantee{Type: s3.GranteeGroup, URI: s3.GroupAuthenticatedUsers}, Permission: s3.PermWriteACP},
			{Grantee: s3.Grantee{Type: s3.GranteeGroup, URI: s3.GroupLogDelivery}, Permission: s3.PermWrite},
			{Grantee: s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}, Permission: s3.PermReadACP},
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
			want.Grants = []s3.Grant{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestParseACLForms(t *testing.T) {
	owner := `<Owner><ID>` + idAlice + `</ID><DisplayName>whoever</DisplayName></Owner>`
	alice := s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idAlice, DisplayName: "alice"}
	bob := s3.Grantee{Type: s3.GranteeCanonicalUser, ID: idBob, DisplayName: "bob"}
	group := func(uri string) s3.Grantee { return s3.Grantee{Type: s3.GranteeGroup, URI: uri} }
	tests := []struct {
		name  string
		body  string
		owner s3.Owner
		want  []s3.Grant
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
			owner: s3.Owner{ID: idAlice, DisplayName: "foobar"},
			want:  []s3.Grant{{Grantee: alice, Permission: s3.PermFullControl}, {Grantee: group(allUsers), Permission: s3.PermRead}},
		},
		{
			name: "no namespace, xsi declared on the root, other prefix",
			body: `<AccessControlPolicy xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` + owner +
				`<AccessControlList><Grant><Grantee i:type="CanonicalUser"><ID>` + idBob + `</ID></Grantee>` +
				`<Permission>WRITE</Permission></Grant></AccessControlList></AccessControlPolicy>`,
			want: []s3.Grant{{Grantee: bob, Permission: s3.PermWrite}},
		},
		{
			name: "bare type attribute",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee type="Group">` +
				`<URI>` + s3.GroupLogDelivery + `</URI></Grantee><Permission>WRITE</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3.Grant{{Grantee: group(s3.GroupLogDelivery), Permission: s3.PermWrite}},
		},
		{
			name: "undeclared xsi prefix",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee xsi:type="Group">` +
				`<URI>` + s3.GroupAuthenticatedUsers + `</URI></Grantee><Permission>READ_ACP</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3.Grant{{Grantee: group(s3.GroupAuthenticatedUsers), Permission: s3.PermReadACP}},
		},
		{
			name: "email grants, both type names, display name from the resolver",
			body: `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + owner + `<AccessControlList>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="AmazonCustomerByEmail"><EmailAddress>bob@example.com</EmailAddress></Grantee><Permission>READ</Permission></Grant>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="CustomerByEmail"><EmailAddress> alice@example.com </EmailAddress></Grantee><Permission>WRITE_ACP</Permission></Grant>` +
				`<Grant><Grantee ` + xsiDecl + ` xsi:type="CanonicalUser"><ID>` + idBob + `</ID><DisplayName>mallory</DisplayName></Grantee><Permission>READ_ACP</Permission></Grant>` +
				`</AccessControlList></AccessControlPolicy>`,
			want: []s3.Grant{
				{Grantee: bob, Permission: s3.PermRead},
				{Grantee: alice, Permission: s3.PermWriteACP},
				{Grantee: bob, Permission: s3.PermReadACP},
			},
		},
		{
			name: "type attribute preferred over bare type, case-insensitive type",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList><Grant><Grantee type="Group" ` + xsiDecl + ` xsi:type="canonicaluser">` +
				`<ID>` + idBob + `</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`,
			want: []s3.Grant{{Grantee: bob, Permission: s3.PermRead}},
		},
		{
			name: "empty list",
			body: `<AccessControlPolicy>` + owner + `<AccessControlList/></AccessControlPolicy>`,
			want: []s3.Grant{},
		},
		{
			name: "no list, trailing comment, BOM",
			body: "\xEF\xBB\xBF<AccessControlPolicy>" + owner + "</AccessControlPolicy>\n<!-- end -->\n",
			want: []s3.Grant{},
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
				wantOwner = s3.Owner{ID: idAlice, DisplayName: "whoever"}
			}
			want := s3.ACL{Owner: wantOwner, Grants: tt.want}
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
		code s3.Code
		msg  string
	}{
		{"empty body", ``, s3.MalformedACLError, msgMalformedACL},
		{"not XML", `hello`, s3.MalformedACLError, msgMalformedACL},
		{"unclosed", `<AccessControlPolicy>` + owner, s3.MalformedACLError, ""},
		{"wrong root", `<AccessControlList>` + owner + `</AccessControlList>`, s3.MalformedACLError, ""},
		{"trailing element", doc(okGrant) + `<x/>`, s3.MalformedACLError, ""},
		{"trailing text", doc(okGrant) + `junk`, s3.MalformedACLError, ""},
		{"no owner", `<AccessControlPolicy><AccessControlList>` + okGrant + `</AccessControlList></AccessControlPolicy>`, s3.MalformedACLError, ""},
		{"owner without id", `<AccessControlPolicy><Owner><DisplayName>a</DisplayName></Owner></AccessControlPolicy>`, s3.MalformedACLError, ""},
		{"owner with blank id", `<AccessControlPolicy><Owner><ID> </ID></Owner></AccessControlPolicy>`, s3.MalformedACLError, ""},
		{"no type", doc(`<Grant><Grantee><URI>` + allUsers + `</URI></Grantee><Permission>READ</Permission></Grant>`), s3.MalformedACLError, ""},
		{"unknown type", doc(grant("Robot", "<ID>x</ID>", "READ")), s3.MalformedACLError, ""},
		{"type in another namespace", doc(`<Grant><Grantee xmlns:q="urn:q" q:type="Group"><URI>` + allUsers + `</URI></Grantee><Permission>READ</Permission></Grant>`), s3.MalformedACLError, ""},
		{"no grantee", doc(`<Grant><Permission>READ</Permission></Grant>`), s3.MalformedACLError, ""},
		{"no permission", doc(`<Grant><Grantee ` + xsiDecl + ` xsi:type="Group"><URI>` + allUsers + `</URI></Grantee></Grant>`), s3.MalformedACLError, ""},
		{"unknown permission", doc(grant("Group", "<URI>"+allUsers+"</URI>", "DELETE")), s3.MalformedACLError, ""},
		{"lower-case permission", doc(grant("Group", "<URI>"+allUsers+"</URI>", "read")), s3.MalformedACLError, ""},
		{"unknown group", doc(grant("Group", "<URI>http://example.com/groups/x</URI>", "READ")), s3.MalformedACLError, ""},
		{"group without uri", doc(grant("Group", "", "READ")), s3.MalformedACLError, ""},
		{"user without id", doc(grant("CanonicalUser", "<DisplayName>a</DisplayName>", "READ")), s3.MalformedACLError, ""},
		{"email without address", doc(grant("AmazonCustomerByEmail", "<EmailAddress></EmailAddress>", "READ")), s3.MalformedACLError, ""},
		{"malformed after an unknown user", doc(grant("CanonicalUser", "<ID>nobody</ID>", "READ"), grant("Group", "", "READ")), s3.MalformedACLError, ""},
		{"too many grants", doc(strings.Repeat(okGrant, MaxGrants+1)), s3.MalformedACLError, ""},
		{"unknown id", doc(okGrant, grant("CanonicalUser", "<ID>nobody</ID>", "READ")), s3.InvalidArgument, "Invalid id"},
		{"NoSuchUser id", doc(grant("CanonicalUser", "<ID>nosuch</ID>", "READ")), s3.InvalidArgument, "Invalid id"},
		{"unknown email", doc(grant("AmazonCustomerByEmail", "<EmailAddress>eve@example.com</EmailAddress>", "READ")), s3.UnresolvableGrantByEmail,
			"The e-mail address you provided does not match any account on record."},
		{"NoSuchUser email", doc(grant("CustomerByEmail", "<EmailAddress>nosuch@example.com</EmailAddress>", "READ")), s3.UnresolvableGrantByEmail, ""},
		{"latin-1 declared", `<?xml version="1.0" encoding="ISO-8859-1"?>` + doc(okGrant), s3.MalformedACLError, ""},
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
		if !errors.Is(err, errBoom) || s3.AsError(err) != nil {
			t.Fatalf("%s: err = %v, want the wrapped resolver error", inner, err)
		}
	}
}

// A resolver may return an e-mail user without an id only by mistake; that must not
// produce a grant to nobody.
type noIDResolver struct{ *fakeResolver }

func (noIDResolver) UserByEmail(string) (s3.Owner, error) { return s3.Owner{DisplayName: "x"}, nil }

func TestParseACLResolverWithoutID(t *testing.T) {
	body := `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee ` + xsiDecl +
		` xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`
	if _, err := ParseACL([]byte(body), noIDResolver{newResolver()}); err == nil || s3.AsError(err) != nil {
		t.Fatalf("err = %v", err)
	}
}

func ExampleMarshalACL() {
	acl, _ := s3.CannedACL(s3.CannedPublicRead, s3.Owner{ID: "abc", DisplayName: "alice"}, s3.Owner{})
	fmt.Println(string(MarshalACL(acl)))
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>abc</ID><DisplayName>alice</DisplayName></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>abc</ID><DisplayName>alice</DisplayName></Grantee><Permission>FULL_CONTROL</Permission></Grant><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>
}
