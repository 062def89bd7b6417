package main

// End-to-end tests of S3 access control: which of list, read, write, read-acp and
// write-acp the owner, another user and an anonymous requester get under every canned
// ACL on buckets and objects; the exact GET ?acl document; PUT ?acl with XML bodies of
// every grantee form and with grant headers, and their errors; owners without grants;
// objects written by others into public-read-write buckets.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// s3Actors are the principals of the ACL tests: the owner (alice), another user (bob)
// and an anonymous requester, all in the same signing and addressing style.
type s3Actors struct {
	s                 *child
	alice, bob        s3User
	owner, other, ano s3c
}

func newS3Actors(t testing.TB, s *child, sign s3SigVer, host bool) s3Actors {
	t.Helper()
	a := s3Actors{s: s}
	a.alice = s3CreateUser(t, s, "alice@example.com", "Alice")
	a.bob = s3CreateUser(t, s, "bob@example.com", "Bob")
	a.owner = s3c{s: s, cred: a.alice.cred(), sign: sign, host: host}
	a.other = a.owner.as(a.bob.cred())
	a.ano = a.owner.anon()
	return a
}

// who lists the principals in the order of the expectation strings: owner, other,
// anonymous.
func (a s3Actors) who() []struct {
	name string
	c    s3c
} {
	return []struct {
		name string
		c    s3c
	}{{"owner", a.owner}, {"other", a.other}, {"anonymous", a.ano}}
}

// s3Allowed reads an access check's answer: 2xx is allowed, 403 AccessDenied (bare for
// HEAD) is refused; anything else is an error.
func s3Allowed(t testing.TB, what string, r *resp) bool {
	t.Helper()
	if r.StatusCode/100 == 2 {
		return true
	}
	if r.StatusCode == http.StatusForbidden {
		if r.Request.Method != http.MethodHead {
			expectS3Error(t, r, http.StatusForbidden, "AccessDenied")
		}
		return false
	}
	t.Errorf("%s: want 2xx or 403, got\n%s", what, r)
	return false
}

// s3Matrix renders who may do what as "owner:list,write other:list anonymous:".
type s3Matrix map[string][]string

func (m s3Matrix) String() string {
	var b strings.Builder
	for i, w := range []string{"owner", "other", "anonymous"} {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w + ":" + strings.Join(m[w], ","))
	}
	return b.String()
}

// s3ExecRead stands for the grant aws-exec-read adds: READ to a canonical user that is
// neither test user (AWS's EC2 account; its id and name are not ours to fix).
const s3ExecRead = "<exec-read>"

// s3CheckGrants compares an ACL's grants with want (see s3ExecRead).
func s3CheckGrants(t testing.TB, when string, d *s3ACLDoc, want []string, a s3Actors) {
	t.Helper()
	got := d.grants()
	for i, w := range want {
		if w == s3ExecRead && i < len(d.Grants) {
			g := d.Grants[i]
			if g.Grantee.Type == "CanonicalUser" && g.Permission == "READ" && g.Grantee.ID != "" &&
				g.Grantee.ID != a.alice.ID && g.Grantee.ID != a.bob.ID {
				got[i] = s3ExecRead
			}
		}
	}
	if !s3SameStrings(got, want) {
		t.Errorf("%s: grants\n got %q\nwant %q", when, got, want)
	}
}

func TestS3CannedACLBuckets(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V2, true)
	for i, tc := range []struct {
		canned string
		extra  func() []string // grants besides owner FULL_CONTROL
		want   string          // s3Matrix of list, write, read-acp, write-acp
	}{
		{"private", nil, "owner:list,write,read-acp,write-acp other: anonymous:"},
		{"public-read", func() []string { return []string{s3GroupGrant(s3AllUsers, "READ")} },
			"owner:list,write,read-acp,write-acp other:list anonymous:list"},
		{"public-read-write", func() []string {
			return []string{s3GroupGrant(s3AllUsers, "READ"), s3GroupGrant(s3AllUsers, "WRITE")}
		}, "owner:list,write,read-acp,write-acp other:list,write anonymous:list,write"},
		{"authenticated-read", func() []string { return []string{s3GroupGrant(s3AuthUsers, "READ")} },
			"owner:list,write,read-acp,write-acp other:list anonymous:"},
		{"bucket-owner-read", nil, "owner:list,write,read-acp,write-acp other: anonymous:"},
		{"bucket-owner-full-control", nil, "owner:list,write,read-acp,write-acp other: anonymous:"},
		{"log-delivery-write", func() []string {
			return []string{s3GroupGrant(s3LogDelivery, "WRITE"), s3GroupGrant(s3LogDelivery, "READ_ACP")}
		}, "owner:list,write,read-acp,write-acp other: anonymous:"},
		{"aws-exec-read", func() []string { return []string{s3ExecRead} },
			"owner:list,write,read-acp,write-acp other: anonymous:"},
	} {
		t.Run(tc.canned, func(t *testing.T) {
			b := fmt.Sprintf("canned-%d", i)
			a.owner.mkBucket(t, b, "x-amz-acl", tc.canned)
			want := []string{s3UserGrant(a.alice, "FULL_CONTROL")}
			if tc.extra != nil {
				want = append(want, tc.extra()...)
			}
			checkGrants := func(when string) {
				t.Helper()
				d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, b, "", "acl", nil, ""))
				s3CheckGrants(t, when, d, want, a)
				if d.Owner.ID != a.alice.ID || d.Owner.DisplayName != a.alice.DisplayName {
					t.Errorf("%s: owner %+v", when, d.Owner)
				}
			}
			checkGrants("after create")
			got := s3Matrix{}
			for _, w := range a.who() {
				if s3Allowed(t, w.name+" list", w.c.do(t, http.MethodGet, b, "", "", nil, "")) {
					got[w.name] = append(got[w.name], "list")
				}
				head := s3Allowed(t, w.name+" head", w.c.do(t, http.MethodHead, b, "", "", nil, ""))
				if head != (len(got[w.name]) > 0 && got[w.name][0] == "list") {
					t.Errorf("%s: HEAD bucket allowed=%v differs from listing", w.name, head)
				}
				key := "by-" + w.name
				if s3Allowed(t, w.name+" write", w.c.do(t, http.MethodPut, b, key, "", nil, "data")) {
					got[w.name] = append(got[w.name], "write")
					// Deleting is WRITE on the bucket too.
					if !s3Allowed(t, w.name+" delete", w.c.do(t, http.MethodDelete, b, key, "", nil, "")) {
						t.Errorf("%s may write into %s but not delete", w.name, tc.canned)
					}
				} else if s3Allowed(t, w.name+" delete", w.c.do(t, http.MethodDelete, b, key, "", nil, "")) {
					t.Errorf("%s may delete in %s but not write", w.name, tc.canned)
				}
				if s3Allowed(t, w.name+" read-acp", w.c.do(t, http.MethodGet, b, "", "acl", nil, "")) {
					got[w.name] = append(got[w.name], "read-acp")
				}
				if s3Allowed(t, w.name+" write-acp", w.c.do(t, http.MethodPut, b, "", "acl", hdr{"x-amz-acl", tc.canned}, "")) {
					got[w.name] = append(got[w.name], "write-acp")
				}
			}
			if got.String() != tc.want {
				t.Errorf("bucket %s:\n got %s\nwant %s", tc.canned, got, tc.want)
			}
			checkGrants("after the checks")
			// Only the owner deletes a bucket, whatever the ACL.
			for _, w := range a.who()[1:] {
				if s3Allowed(t, w.name+" delete bucket", w.c.do(t, http.MethodDelete, b, "", "", nil, "")) {
					t.Errorf("%s deleted the %s bucket", w.name, tc.canned)
				}
			}
		})
	}
}

func TestS3CannedACLObjects(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	a.owner.mkBucket(t, "objs") // private: object access is the object ACL's alone
	for _, tc := range []struct {
		canned string
		extra  func() []string
		want   string // s3Matrix of read, read-acp, write-acp
	}{
		{"private", nil, "owner:read,read-acp,write-acp other: anonymous:"},
		{"public-read", func() []string { return []string{s3GroupGrant(s3AllUsers, "READ")} },
			"owner:read,read-acp,write-acp other:read anonymous:read"},
		{"public-read-write", func() []string {
			return []string{s3GroupGrant(s3AllUsers, "READ"), s3GroupGrant(s3AllUsers, "WRITE")}
		}, "owner:read,read-acp,write-acp other:read anonymous:read"},
		{"authenticated-read", func() []string { return []string{s3GroupGrant(s3AuthUsers, "READ")} },
			"owner:read,read-acp,write-acp other:read anonymous:"},
		{"bucket-owner-read", nil, "owner:read,read-acp,write-acp other: anonymous:"},
		{"bucket-owner-full-control", nil, "owner:read,read-acp,write-acp other: anonymous:"},
		{"aws-exec-read", func() []string { return []string{s3ExecRead} },
			"owner:read,read-acp,write-acp other: anonymous:"},
	} {
		t.Run(tc.canned, func(t *testing.T) {
			key := "obj-" + tc.canned
			a.owner.put(t, "objs", key, "object data", "x-amz-acl", tc.canned)
			want := []string{s3UserGrant(a.alice, "FULL_CONTROL")}
			if tc.extra != nil {
				want = append(want, tc.extra()...)
			}
			d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "objs", key, "acl", nil, ""))
			s3CheckGrants(t, "after PUT", d, want, a)
			got := s3Matrix{}
			for _, w := range a.who() {
				r := w.c.do(t, http.MethodGet, "objs", key, "", nil, "")
				if s3Allowed(t, w.name+" read", r) {
					got[w.name] = append(got[w.name], "read")
					if string(r.Body) != "object data" {
						t.Errorf("%s read %q", w.name, r.Body)
					}
				}
				if head := s3Allowed(t, w.name+" head", w.c.do(t, http.MethodHead, "objs", key, "", nil, "")); head != (r.StatusCode == 200) {
					t.Errorf("%s: HEAD allowed=%v, GET status %d", w.name, head, r.StatusCode)
				}
				if s3Allowed(t, w.name+" read-acp", w.c.do(t, http.MethodGet, "objs", key, "acl", nil, "")) {
					got[w.name] = append(got[w.name], "read-acp")
				}
				if s3Allowed(t, w.name+" write-acp", w.c.do(t, http.MethodPut, "objs", key, "acl", hdr{"x-amz-acl", tc.canned}, "")) {
					got[w.name] = append(got[w.name], "write-acp")
				}
				// Object writes are the bucket's business: the private bucket refuses others.
				if w.name != "owner" && s3Allowed(t, w.name+" overwrite", w.c.do(t, http.MethodPut, "objs", key, "", nil, "overwritten")) {
					t.Errorf("%s overwrote an object of a private bucket", w.name)
				}
			}
			if got.String() != tc.want {
				t.Errorf("object %s:\n got %s\nwant %s", tc.canned, got, tc.want)
			}
		})
	}
	// The administrator is an ordinary user on the S3 API (as in Riak CS): no access to
	// private data of others.
	adm := a.owner.as(s3AdminCred(t, s))
	expectS3Error(t, adm.do(t, http.MethodGet, "objs", "obj-private", "", nil, ""), 403, "AccessDenied")
	expectS3Error(t, adm.do(t, http.MethodGet, "objs", "", "", nil, ""), 403, "AccessDenied")
	// An unknown canned ACL is refused, on objects and buckets.
	expectS3Error(t, a.owner.do(t, http.MethodPut, "objs", "bad", "", hdr{"x-amz-acl", "public-everything"}, "x"), 400, "InvalidArgument")
	expectS3Error(t, a.owner.do(t, http.MethodPut, "bad-canned", "", "", hdr{"x-amz-acl", "public-everything"}, ""), 400, "InvalidArgument")
	expectS3Error(t, a.owner.do(t, http.MethodPut, "objs", "", "acl", hdr{"x-amz-acl", "public-everything"}, ""), 400, "InvalidArgument")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "objs", "bad", "", nil, ""), 404, "NoSuchKey")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "bad-canned", "", "", nil, ""), 404, "NoSuchBucket")
}

// TestS3ObjectOwnership writes objects as bob into alice's public-read-write bucket:
// bob owns them, and alice reaches them only through their ACL (bucket-owner-read,
// bucket-owner-full-control), though she may delete them (WRITE on her bucket).
func TestS3ObjectOwnership(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V2, false)
	a.owner.mkBucket(t, "rw-bucket", "x-amz-acl", "public-read-write")
	for _, tc := range []struct {
		canned      string
		grants      func() []string
		aliceRead   bool
		aliceACP    bool // read-acp and write-acp
		anonymousRd bool
	}{
		{"private", func() []string { return []string{s3UserGrant(a.bob, "FULL_CONTROL")} }, false, false, false},
		{"bucket-owner-read", func() []string {
			return []string{s3UserGrant(a.bob, "FULL_CONTROL"), s3UserGrant(a.alice, "READ")}
		}, true, false, false},
		{"bucket-owner-full-control", func() []string {
			return []string{s3UserGrant(a.bob, "FULL_CONTROL"), s3UserGrant(a.alice, "FULL_CONTROL")}
		}, true, true, false},
		{"public-read", func() []string {
			return []string{s3UserGrant(a.bob, "FULL_CONTROL"), s3GroupGrant(s3AllUsers, "READ")}
		}, true, false, true},
	} {
		t.Run(tc.canned, func(t *testing.T) {
			key := "bobs-" + tc.canned
			a.other.put(t, "rw-bucket", key, "bob's data", "x-amz-acl", tc.canned)
			d := s3ParseACL(t, a.other.must(t, 200, http.MethodGet, "rw-bucket", key, "acl", nil, ""))
			if d.Owner.ID != a.bob.ID || d.Owner.DisplayName != "bob" {
				t.Errorf("owner of an object bob wrote: %+v, want bob", d.Owner)
			}
			if got, want := d.grants(), tc.grants(); !s3SameStrings(got, want) {
				t.Errorf("grants\n got %q\nwant %q", got, want)
			}
			if got := s3Allowed(t, "alice read", a.owner.do(t, http.MethodGet, "rw-bucket", key, "", nil, "")); got != tc.aliceRead {
				t.Errorf("alice (bucket owner) read bob's %s object: %v, want %v", tc.canned, got, tc.aliceRead)
			}
			if got := s3Allowed(t, "alice read-acp", a.owner.do(t, http.MethodGet, "rw-bucket", key, "acl", nil, "")); got != tc.aliceACP {
				t.Errorf("alice read-acp: %v, want %v", got, tc.aliceACP)
			}
			if got := s3Allowed(t, "alice write-acp", a.owner.do(t, http.MethodPut, "rw-bucket", key, "acl", hdr{"x-amz-acl", tc.canned}, "")); got != tc.aliceACP {
				t.Errorf("alice write-acp: %v, want %v", got, tc.aliceACP)
			}
			if got := s3Allowed(t, "anonymous read", a.ano.do(t, http.MethodGet, "rw-bucket", key, "", nil, "")); got != tc.anonymousRd {
				t.Errorf("anonymous read: %v, want %v", got, tc.anonymousRd)
			}
			// The listing shows bob as the owner.
			l := a.owner.must(t, 200, http.MethodGet, "rw-bucket", "", "prefix="+key, nil, "")
			if !strings.Contains(string(l.Body), "<Owner><ID>"+a.bob.ID+"</ID>") {
				t.Errorf("listing does not show bob as the owner:\n%s", l.Body)
			}
			// The bucket owner may delete it (WRITE on the bucket).
			a.owner.must(t, http.StatusNoContent, http.MethodDelete, "rw-bucket", key, "", nil, "")
		})
	}
}

// TestS3ACLDocument checks the exact GET ?acl document (s3-details §4.3) on a bucket
// and an object, in both addressing styles.
func TestS3ACLDocument(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V2, false)
	a.owner.mkBucket(t, "doc", "x-amz-acl", "public-read")
	a.owner.put(t, "doc", "o", "x")
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	want := `<?xml version="1.0" encoding="UTF-8"?>
<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Owner><ID>` + a.alice.ID + `</ID><DisplayName>alice</DisplayName></Owner>
  <AccessControlList>
    <Grant>
      <Grantee ` + xsi + ` xsi:type="CanonicalUser">
        <ID>` + a.alice.ID + `</ID><DisplayName>alice</DisplayName></Grantee>
      <Permission>FULL_CONTROL</Permission>
    </Grant>
    <Grant>
      <Grantee ` + xsi + ` xsi:type="Group">
        <URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>
      <Permission>READ</Permission>
    </Grant>
  </AccessControlList>
</AccessControlPolicy>`
	wantPrivate := strings.Replace(want, `
    <Grant>
      <Grantee `+xsi+` xsi:type="Group">
        <URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>
      <Permission>READ</Permission>
    </Grant>`, "", 1)
	for _, host := range []bool{false, true} {
		for _, tc := range []struct{ key, want string }{{"", want}, {"o", wantPrivate}} {
			r := a.owner.withHost(host).must(t, 200, http.MethodGet, "doc", tc.key, "acl", nil, "")
			if got := s3CompactXML(string(r.Body)); got != s3CompactXML(tc.want) {
				t.Errorf("GET /doc/%s?acl (host=%v):\n got %s\nwant %s", tc.key, host, got, s3CompactXML(tc.want))
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/xml" {
				t.Errorf("GET ?acl Content-Type %q", ct)
			}
		}
	}
	// The document PUT back unchanged (what s3cmd setacl does) changes nothing.
	for _, key := range []string{"", "o"} {
		body := a.owner.must(t, 200, http.MethodGet, "doc", key, "acl", nil, "").Body
		a.owner.must(t, 200, http.MethodPut, "doc", key, "acl", hdr{"Content-Type", "application/xml"}, string(body))
		if again := a.owner.must(t, 200, http.MethodGet, "doc", key, "acl", nil, "").Body; string(again) != string(body) {
			t.Errorf("ACL of /doc/%s changed by a round trip:\n%s\n%s", key, body, again)
		}
	}
}

// withHost returns c with host-style addressing on or off.
func (c s3c) withHost(host bool) s3c { c.host = host; return c }

// s3PolicyXML is an AccessControlPolicy body with the owner id and the grants.
func s3PolicyXML(ownerID string, grants ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>` + ownerID + `</ID></Owner>
<AccessControlList>` + strings.Join(grants, "") + `</AccessControlList></AccessControlPolicy>`
}

// s3GrantXML is one Grant element: the grantee's xsi:type, its child elements, the
// permission.
func s3GrantXML(typ, inner, perm string) string {
	return `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="` + typ + `">` + inner +
		`</Grantee><Permission>` + perm + `</Permission></Grant>`
}

// TestS3PutACL sets ACLs with XML bodies of every grantee form and with grant headers,
// checks what GET ?acl shows and what each principal may then do, and the errors.
func TestS3PutACL(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, true)
	a.owner.mkBucket(t, "acls")
	ownerFC := s3GrantXML("CanonicalUser", "<ID>"+a.alice.ID+"</ID>", "FULL_CONTROL")
	xmlCT := hdr{"Content-Type", "application/xml"}

	// Object ACLs from bodies: grants shown, and bob's and anonymous' reads.
	for _, tc := range []struct {
		name             string
		grant            string
		shown            func() []string
		bobRead, anoRead bool
		bobReadACP       bool
		bobWriteACP      bool
	}{
		{"canonical user", s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID><DisplayName>ignored</DisplayName>", "READ"),
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, true, false, false, false},
		{"canonical user without name", s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID>", "READ"),
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, true, false, false, false},
		{"email", s3GrantXML("AmazonCustomerByEmail", "<EmailAddress>bob@example.com</EmailAddress>", "READ"),
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, true, false, false, false},
		{"email neutral spelling", s3GrantXML("CustomerByEmail", "<EmailAddress>bob@example.com</EmailAddress>", "READ"),
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, true, false, false, false},
		{"email other case", s3GrantXML("AmazonCustomerByEmail", "<EmailAddress>BOB@example.com</EmailAddress>", "READ"),
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, true, false, false, false},
		{"all users", s3GrantXML("Group", "<URI>"+s3AllUsers+"</URI>", "READ"),
			func() []string { return []string{s3GroupGrant(s3AllUsers, "READ")} }, true, true, false, false},
		{"authenticated users", s3GrantXML("Group", "<URI>"+s3AuthUsers+"</URI>", "READ"),
			func() []string { return []string{s3GroupGrant(s3AuthUsers, "READ")} }, true, false, false, false},
		{"other xsi prefix", `<Grant><Grantee xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:type="Group"><URI>` +
			s3AllUsers + `</URI></Grantee><Permission>READ</Permission></Grant>`,
			func() []string { return []string{s3GroupGrant(s3AllUsers, "READ")} }, true, true, false, false},
		{"read-acp", s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID>", "READ_ACP"),
			func() []string { return []string{s3UserGrant(a.bob, "READ_ACP")} }, false, false, true, false},
		{"write-acp", s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID>", "WRITE_ACP"),
			func() []string { return []string{s3UserGrant(a.bob, "WRITE_ACP")} }, false, false, false, true},
		{"full control", s3GrantXML("AmazonCustomerByEmail", "<EmailAddress>bob@example.com</EmailAddress>", "FULL_CONTROL"),
			func() []string { return []string{s3UserGrant(a.bob, "FULL_CONTROL")} }, true, false, true, true},
	} {
		t.Run("body/"+tc.name, func(t *testing.T) {
			key := "o-" + strings.ReplaceAll(tc.name, " ", "-")
			a.owner.put(t, "acls", key, "acl data")
			a.owner.must(t, 200, http.MethodPut, "acls", key, "acl", xmlCT, s3PolicyXML(a.alice.ID, ownerFC, tc.grant))
			d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "acls", key, "acl", nil, ""))
			want := append([]string{s3UserGrant(a.alice, "FULL_CONTROL")}, tc.shown()...)
			if got := d.grants(); !s3SameStrings(got, want) {
				t.Errorf("grants\n got %q\nwant %q", got, want)
			}
			if d.Owner.ID != a.alice.ID || d.Owner.DisplayName != "alice" {
				t.Errorf("owner %+v", d.Owner)
			}
			check := func(what string, want bool, r *resp) {
				t.Helper()
				if got := s3Allowed(t, what, r); got != want {
					t.Errorf("%s: allowed %v, want %v", what, got, want)
				}
			}
			check("bob read", tc.bobRead, a.other.do(t, http.MethodGet, "acls", key, "", nil, ""))
			check("anonymous read", tc.anoRead, a.ano.do(t, http.MethodGet, "acls", key, "", nil, ""))
			check("bob read-acp", tc.bobReadACP, a.other.do(t, http.MethodGet, "acls", key, "acl", nil, ""))
			check("bob write-acp", tc.bobWriteACP, a.other.do(t, http.MethodPut, "acls", key, "acl", xmlCT,
				s3PolicyXML(a.alice.ID, ownerFC, tc.grant)))
			check("owner read", true, a.owner.do(t, http.MethodGet, "acls", key, "", nil, ""))
		})
	}

	// Object ACLs from grant headers: exactly the grants named (no implicit owner grant).
	for _, tc := range []struct {
		name      string
		h         hdr
		shown     func() []string
		ownerRead bool
		bobRead   bool
		anoRead   bool
	}{
		{"id", hdr{"x-amz-grant-read", `id="` + a.bob.ID + `"`},
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, false, true, false},
		{"email", hdr{"x-amz-grant-read", `emailAddress="bob@example.com"`},
			func() []string { return []string{s3UserGrant(a.bob, "READ")} }, false, true, false},
		{"uri", hdr{"x-amz-grant-read", `uri="` + s3AllUsers + `"`},
			func() []string { return []string{s3GroupGrant(s3AllUsers, "READ")} }, true, true, true},
		{"several", hdr{"x-amz-grant-full-control", `id="` + a.alice.ID + `"`,
			"x-amz-grant-read", `emailAddress="bob@example.com", uri="` + s3AuthUsers + `"`},
			func() []string {
				return []string{s3UserGrant(a.bob, "READ"), s3GroupGrant(s3AuthUsers, "READ"), s3UserGrant(a.alice, "FULL_CONTROL")}
			}, true, true, false},
		{"neutral names", hdr{"x-obj-grant-read", `id="` + a.bob.ID + `"`, "x-obj-grant-full-control", `id="` + a.alice.ID + `"`},
			func() []string { return []string{s3UserGrant(a.bob, "READ"), s3UserGrant(a.alice, "FULL_CONTROL")} }, true, true, false},
	} {
		for _, where := range []string{"put-acl", "put-object"} {
			t.Run("headers/"+where+"/"+tc.name, func(t *testing.T) {
				key := "h-" + where + "-" + strings.ReplaceAll(tc.name, " ", "-")
				if where == "put-acl" {
					a.owner.put(t, "acls", key, "hdr data")
					a.owner.must(t, 200, http.MethodPut, "acls", key, "acl", tc.h, "")
				} else {
					a.owner.put(t, "acls", key, "hdr data", tc.h...)
				}
				d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "acls", key, "acl", nil, ""))
				if got, want := d.grants(), tc.shown(); !s3SameStrings(got, want) {
					t.Errorf("grants\n got %q\nwant %q", got, want)
				}
				for _, c := range []struct {
					name string
					c    s3c
					want bool
				}{{"owner", a.owner, tc.ownerRead}, {"bob", a.other, tc.bobRead}, {"anonymous", a.ano, tc.anoRead}} {
					if got := s3Allowed(t, c.name+" read", c.c.do(t, http.MethodGet, "acls", key, "", nil, "")); got != c.want {
						t.Errorf("%s read: %v, want %v", c.name, got, c.want)
					}
				}
			})
		}
	}

	// Bucket ACLs from a body: WRITE and READ for bob.
	t.Run("bucket body", func(t *testing.T) {
		a.owner.mkBucket(t, "acl-bucket")
		a.owner.must(t, 200, http.MethodPut, "acl-bucket", "", "acl", xmlCT, s3PolicyXML(a.alice.ID, ownerFC,
			s3GrantXML("AmazonCustomerByEmail", "<EmailAddress>bob@example.com</EmailAddress>", "WRITE"),
			s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID>", "READ")))
		a.other.put(t, "acl-bucket", "from-bob", "x")
		a.other.must(t, 200, http.MethodGet, "acl-bucket", "", "", nil, "")
		expectS3Error(t, a.other.do(t, http.MethodGet, "acl-bucket", "", "acl", nil, ""), 403, "AccessDenied")
		expectS3Error(t, a.ano.do(t, http.MethodPut, "acl-bucket", "anon", "", nil, "x"), 403, "AccessDenied")
	})
	// Bucket created with grant headers.
	t.Run("bucket create headers", func(t *testing.T) {
		a.owner.mkBucket(t, "acl-hdr-bucket", "x-amz-grant-full-control", `id="`+a.alice.ID+`"`, "x-amz-grant-write", `emailAddress="bob@example.com"`)
		d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "acl-hdr-bucket", "", "acl", nil, ""))
		if got, want := d.grants(), []string{s3UserGrant(a.bob, "WRITE"), s3UserGrant(a.alice, "FULL_CONTROL")}; !s3SameStrings(got, want) {
			t.Errorf("grants\n got %q\nwant %q", got, want)
		}
		a.other.put(t, "acl-hdr-bucket", "from-bob", "x")
	})

	// Errors.
	a.owner.put(t, "acls", "err", "e")
	for _, tc := range []struct {
		name   string
		key    string // "" for the bucket
		h      hdr
		body   string
		status int
		code   string
	}{
		{"body and canned header", "err", hdr{"x-amz-acl", "public-read"}, s3PolicyXML(a.alice.ID, ownerFC), 400, "InvalidRequest"},
		{"body and grant header", "err", hdr{"x-amz-grant-read", `id="` + a.bob.ID + `"`}, s3PolicyXML(a.alice.ID, ownerFC), 400, "InvalidRequest"},
		{"bucket body and header", "", hdr{"x-amz-acl", "private"}, s3PolicyXML(a.alice.ID, ownerFC), 400, "InvalidRequest"},
		{"canned and grant headers", "err", hdr{"x-amz-acl", "private", "x-amz-grant-read", `id="` + a.bob.ID + `"`}, "", 400, "InvalidRequest"},
		{"unknown email in body", "err", nil, s3PolicyXML(a.alice.ID, ownerFC,
			s3GrantXML("AmazonCustomerByEmail", "<EmailAddress>nobody@example.com</EmailAddress>", "READ")), 400, "UnresolvableGrantByEmailAddress"},
		{"unknown email in header", "err", hdr{"x-amz-grant-read", `emailAddress="nobody@example.com"`}, "", 400, "UnresolvableGrantByEmailAddress"},
		{"unknown email on bucket", "", hdr{"x-amz-grant-write", `emailAddress="nobody@example.com"`}, "", 400, "UnresolvableGrantByEmailAddress"},
		{"unknown id in body", "err", nil, s3PolicyXML(a.alice.ID, ownerFC,
			s3GrantXML("CanonicalUser", "<ID>"+strings.Repeat("ab", 32)+"</ID>", "READ")), 400, "InvalidArgument"},
		{"unknown id in header", "err", hdr{"x-amz-grant-read", `id="` + strings.Repeat("cd", 32) + `"`}, "", 400, "InvalidArgument"},
		{"unknown group uri in header", "err", hdr{"x-amz-grant-read", `uri="http://example.com/group"`}, "", 400, "InvalidArgument"},
		{"garbled grant header", "err", hdr{"x-amz-grant-read", `bogus`}, "", 400, "InvalidArgument"},
		{"not XML", "err", nil, "this is not xml", 400, "MalformedACLError"},
		{"unclosed", "err", nil, `<AccessControlPolicy><Owner><ID>` + a.alice.ID + `</ID></Owner>`, 400, "MalformedACLError"},
		{"other root", "err", nil, `<Policy><Owner><ID>` + a.alice.ID + `</ID></Owner></Policy>`, 400, "MalformedACLError"},
		{"bad permission", "err", nil, s3PolicyXML(a.alice.ID, s3GrantXML("CanonicalUser", "<ID>"+a.alice.ID+"</ID>", "EVERYTHING")), 400, "MalformedACLError"},
		{"grantee without type", "err", nil, s3PolicyXML(a.alice.ID,
			`<Grant><Grantee><ID>`+a.alice.ID+`</ID></Grantee><Permission>READ</Permission></Grant>`), 400, "MalformedACLError"},
		{"unknown group in body", "err", nil, s3PolicyXML(a.alice.ID, s3GrantXML("Group", "<URI>http://example.com/g</URI>", "READ")), 400, "MalformedACLError"},
		{"bucket malformed", "", nil, "<AccessControlPolicy>", 400, "MalformedACLError"},
		{"foreign owner", "err", nil, s3PolicyXML(a.bob.ID, ownerFC), 403, "AccessDenied"},
		{"foreign owner on bucket", "", nil, s3PolicyXML(a.bob.ID, ownerFC), 403, "AccessDenied"},
		{"no object", "absent", hdr{"x-amz-acl", "private"}, "", 404, "NoSuchKey"},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			expectS3Error(t, a.owner.do(t, http.MethodPut, "acls", tc.key, "acl", tc.h, tc.body), tc.status, tc.code)
		})
	}
	// Grant-header errors on PUT object and bucket creation.
	expectS3Error(t, a.owner.do(t, http.MethodPut, "acls", "hdr-err", "", hdr{"x-amz-acl", "private", "x-amz-grant-read", `id="` + a.bob.ID + `"`}, "x"), 400, "InvalidRequest")
	expectS3Error(t, a.owner.do(t, http.MethodPut, "acls", "hdr-err", "", hdr{"x-amz-grant-read", `emailAddress="nobody@example.com"`}, "x"), 400, "UnresolvableGrantByEmailAddress")
	expectS3Error(t, a.owner.do(t, http.MethodPut, "acls-new", "", "", hdr{"x-amz-acl", "private", "x-amz-grant-read", `id="` + a.bob.ID + `"`}, ""), 400, "InvalidRequest")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "acls", "hdr-err", "", nil, ""), 404, "NoSuchKey")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "acls-new", "", "", nil, ""), 404, "NoSuchBucket")
	// The failed PUTs left the object's ACL as it was (private).
	if got := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "acls", "err", "acl", nil, "")).grants(); !s3SameStrings(got, []string{s3UserGrant(a.alice, "FULL_CONTROL")}) {
		t.Errorf("ACL after failed PUTs: %q", got)
	}
}

// TestS3OwnerWithoutGrants: an owner who removed its own grants may still read and
// change the ACL, but not the data.
func TestS3OwnerWithoutGrants(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V2, false)
	a.owner.mkBucket(t, "revoked")
	a.owner.put(t, "revoked", "obj", "secret")
	xmlCT := hdr{"Content-Type", "application/xml"}
	bobRead := s3GrantXML("CanonicalUser", "<ID>"+a.bob.ID+"</ID>", "READ")
	for _, key := range []string{"obj", ""} {
		what := "object"
		if key == "" {
			what = "bucket"
		}
		t.Run(what, func(t *testing.T) {
			for _, body := range []string{s3PolicyXML(a.alice.ID), s3PolicyXML(a.alice.ID, bobRead)} {
				a.owner.must(t, 200, http.MethodPut, "revoked", key, "acl", xmlCT, body)
				d := s3ParseACL(t, a.owner.must(t, 200, http.MethodGet, "revoked", key, "acl", nil, ""))
				if d.Owner.ID != a.alice.ID || len(d.Grants) > 1 {
					t.Errorf("ACL after revoking: owner %+v, grants %q", d.Owner, d.grants())
				}
				// Data access is gone.
				expectS3Error(t, a.owner.do(t, http.MethodGet, "revoked", key, "", nil, ""), 403, "AccessDenied")
				if key == "" {
					expectS3Error(t, a.owner.do(t, http.MethodPut, "revoked", "new", "", nil, "x"), 403, "AccessDenied")
				}
				// bob's READ grant works.
				if len(d.Grants) == 1 {
					a.other.must(t, 200, http.MethodGet, "revoked", key, "", nil, "")
				}
				// The owner may still change the ACL (header and body), and that restores access.
				a.owner.must(t, 200, http.MethodPut, "revoked", key, "acl", hdr{"x-amz-acl", "private"}, "")
				a.owner.must(t, 200, http.MethodGet, "revoked", key, "", nil, "")
				a.owner.must(t, 200, http.MethodPut, "revoked", key, "acl", xmlCT, body)
				a.owner.must(t, 200, http.MethodPut, "revoked", key, "acl", xmlCT, s3PolicyXML(a.alice.ID,
					s3GrantXML("CanonicalUser", "<ID>"+a.alice.ID+"</ID>", "FULL_CONTROL")))
				a.owner.must(t, 200, http.MethodGet, "revoked", key, "", nil, "")
				// bob, without WRITE_ACP, may not.
				expectS3Error(t, a.other.do(t, http.MethodPut, "revoked", key, "acl", hdr{"x-amz-acl", "public-read"}, ""), 403, "AccessDenied")
			}
		})
	}
}
