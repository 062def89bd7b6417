package main

// End-to-end tests of S3 access control as AWS behaves (issue 16 §2): grant headers
// listed by GET ?acl in their documented order with exactly the grantees given, group
// grantees written as AWS writes them, the owner's lasting READ_ACP/WRITE_ACP, bucket
// policy condition operators and keys, Service principals, and
// x-amz-expected-bucket-owner.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// s3GroupGranteeXML is a Group grantee exactly as AWS writes it.
func s3GroupGranteeXML(uri string) string {
	return `<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>` + uri + `</URI></Grantee>`
}

// s3UserGranteeXML is a CanonicalUser grantee exactly as AWS writes it.
func s3UserGranteeXML(u s3User) string {
	return `<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` + u.ID +
		`</ID><DisplayName>` + u.DisplayName + `</DisplayName></Grantee>`
}

// TestS3GrantHeadersOrder: grant headers on PUT bucket and PUT object, sent in a
// scrambled order, come back from GET ?acl in the order read, write, read-acp,
// write-acp, full-control, each grantee as given (an e-mail address resolved to its
// CanonicalUser), groups written exactly as AWS writes them, with no owner grant that
// was not asked for; the document parses back through PUT ?acl; canned ACLs still add
// the owner's FULL_CONTROL; canned and grant headers together are 400 InvalidRequest.
func TestS3GrantHeadersOrder(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	h := hdr{
		"x-amz-grant-full-control", `id="` + a.bob.ID + `"`,
		"x-amz-grant-write-acp", `uri="` + s3LogDelivery + `"`,
		"x-amz-grant-read-acp", `emailAddress="bob@example.com"`,
		"x-amz-grant-write", `uri="` + s3AuthUsers + `"`,
		"x-amz-grant-read", `uri="` + s3AllUsers + `", id="` + a.bob.ID + `"`,
	}
	want := `<AccessControlList>` +
		`<Grant>` + s3GroupGranteeXML(s3AllUsers) + `<Permission>READ</Permission></Grant>` +
		`<Grant>` + s3UserGranteeXML(a.bob) + `<Permission>READ</Permission></Grant>` +
		`<Grant>` + s3GroupGranteeXML(s3AuthUsers) + `<Permission>WRITE</Permission></Grant>` +
		`<Grant>` + s3UserGranteeXML(a.bob) + `<Permission>READ_ACP</Permission></Grant>` +
		`<Grant>` + s3GroupGranteeXML(s3LogDelivery) + `<Permission>WRITE_ACP</Permission></Grant>` +
		`<Grant>` + s3UserGranteeXML(a.bob) + `<Permission>FULL_CONTROL</Permission></Grant>` +
		`</AccessControlList>`
	owner := `<Owner><ID>` + a.alice.ID + `</ID><DisplayName>` + a.alice.DisplayName + `</DisplayName></Owner>`
	check := func(t *testing.T, key string) string {
		t.Helper()
		body := string(a.owner.must(t, http.StatusOK, http.MethodGet, "grants", key, "acl", nil, "").Body)
		if !strings.Contains(body, owner+want) {
			t.Errorf("GET ?acl:\n%s\nwant it to hold\n%s", body, owner+want)
		}
		return body
	}
	a.owner.mkBucket(t, "grants", h...)
	doc := check(t, "")
	a.owner.must(t, http.StatusOK, http.MethodPut, "grants", "obj", "", h, "data")
	check(t, "obj")

	// The document GET ?acl wrote is a valid PUT ?acl body and sets the same ACL.
	a.owner.put(t, "grants", "copy", "x")
	a.owner.must(t, http.StatusOK, http.MethodPut, "grants", "copy", "acl", hdr{"Content-Type", "application/xml"}, doc)
	check(t, "copy")

	// Canned ACLs as before: the owner's FULL_CONTROL, then the canned grants.
	a.owner.put(t, "grants", "canned", "x", "x-amz-acl", "public-read")
	d := s3ParseACL(t, a.owner.must(t, http.StatusOK, http.MethodGet, "grants", "canned", "acl", nil, ""))
	if got, want := d.grants(), []string{s3UserGrant(a.alice, "FULL_CONTROL"), s3GroupGrant(s3AllUsers, "READ")}; !s3SameStrings(got, want) {
		t.Errorf("public-read grants\n got %q\nwant %q", got, want)
	}
	// Canned and grant headers together.
	both := hdr{"x-amz-acl", "private", "x-amz-grant-write-acp", `uri="` + s3LogDelivery + `"`}
	expectS3Error(t, a.owner.do(t, http.MethodPut, "grants", "both", "", both, "x"), http.StatusBadRequest, "InvalidRequest")
	expectS3Error(t, a.owner.do(t, http.MethodPut, "grants-both", "", "", both, ""), http.StatusBadRequest, "InvalidRequest")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "grants", "both", "", nil, ""), http.StatusNotFound, "NoSuchKey")
}

// TestS3OwnerGrantedAwayACP: an owner whose grant headers gave everything to someone
// else keeps READ_ACP and WRITE_ACP (and nothing more) on its bucket and its object, so
// it can read the ACL and put one back (raw requests; minio-go sees the data refused,
// then allowed).
func TestS3OwnerGrantedAwayACP(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	away := hdr{"x-amz-grant-full-control", `id="` + a.bob.ID + `"`}
	a.owner.mkBucket(t, "away")
	a.owner.must(t, http.StatusOK, http.MethodPut, "away", "obj", "", away, "mine")
	a.owner.must(t, http.StatusOK, http.MethodPut, "away", "", "acl", away, "")
	a.other.put(t, "away", "bobs", "b")

	mc := newMinio(t, s, a.alice.cred(), minioCombos[2])
	ctx := context.Background()
	for _, key := range []string{"", "obj"} {
		d := s3ParseACL(t, a.owner.must(t, http.StatusOK, http.MethodGet, "away", key, "acl", nil, ""))
		if got, want := d.grants(), []string{s3UserGrant(a.bob, "FULL_CONTROL")}; d.Owner.ID != a.alice.ID || !s3SameStrings(got, want) {
			t.Errorf("%q: owner %q grants %q, want owner alice and %q", key, d.Owner.ID, got, want)
		}
		expectS3Error(t, a.owner.do(t, http.MethodGet, "away", key, "", nil, ""), http.StatusForbidden, "AccessDenied")
	}
	expectS3Error(t, a.owner.do(t, http.MethodPut, "away", "new", "", nil, "x"), http.StatusForbidden, "AccessDenied")
	if _, err := mc.StatObject(ctx, "away", "obj", minio.StatObjectOptions{}); minioCode(err) != "AccessDenied" {
		t.Errorf("minio StatObject as the owner who granted everything away: %v, want AccessDenied", err)
	}
	// The owner puts ACLs back, and with them its access.
	a.owner.must(t, http.StatusOK, http.MethodPut, "away", "", "acl", hdr{"x-amz-acl", "private"}, "")
	a.owner.must(t, http.StatusOK, http.MethodPut, "away", "obj", "acl", hdr{"x-amz-grant-full-control", `id="` + a.alice.ID + `"`}, "")
	a.owner.put(t, "away", "new", "x")
	if _, err := mc.StatObject(ctx, "away", "obj", minio.StatObjectOptions{}); err != nil {
		t.Errorf("minio StatObject after the ACL was put back: %v", err)
	}
	// bob lost the bucket with the new ACL; the rule gave him nothing on alice's ACLs.
	expectS3Error(t, a.other.do(t, http.MethodGet, "away", "", "acl", nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, a.other.do(t, http.MethodPut, "away", "obj", "acl", hdr{"x-amz-acl", "public-read"}, ""), http.StatusForbidden, "AccessDenied")
}

// s3SetPolicy stores a policy document on bucket as the owner and requires 204.
func s3SetPolicy(t *testing.T, owner s3c, bucket, doc string) {
	t.Helper()
	owner.must(t, http.StatusNoContent, http.MethodPut, bucket, "", "policy", nil, doc)
}

// TestS3PolicyConditionOperators: the String*, Numeric* and Null operators and the
// IfExists forms, on the keys a request carries (s3:prefix, s3:max-keys, aws:Referer,
// aws:UserAgent, s3:x-amz-acl, s3:signatureversion, aws:username), with values OR'ed,
// keys AND'ed and absent keys as AWS treats them; Service principals accepted and
// matching nobody; unknown operators MalformedPolicy naming them; minio-go round trip.
func TestS3PolicyConditionOperators(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	v2 := a.owner
	v2.sign = s3V2
	a.owner.mkBucket(t, "cond")
	a.owner.put(t, "cond", "pub/a", "a")
	a.owner.put(t, "cond", "priv/b", "b")
	res := func(r ...string) []string { return r }

	t.Run("s3:prefix StringLike", func(t *testing.T) {
		s3SetPolicy(t, a.owner, "cond", s3PolicyDoc("Allow", `"*"`, "s3:ListBucket", res("arn:aws:s3:::cond"),
			`{"StringLike":{"s3:prefix":["pub/*","other/*"]}}`))
		a.ano.must(t, http.StatusOK, http.MethodGet, "cond", "", "prefix=pub/", nil, "")
		expectS3Error(t, a.ano.do(t, http.MethodGet, "cond", "", "prefix=priv/", nil, ""), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, a.ano.do(t, http.MethodGet, "cond", "", "", nil, ""), http.StatusForbidden, "AccessDenied") // absent key
	})
	t.Run("Referer and UserAgent", func(t *testing.T) {
		s3SetPolicy(t, a.owner, "cond", `{"Statement":[`+
			`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/pub/*","Condition":{"StringEquals":{"aws:Referer":["http://good.example/","http://also.example/"]}}},`+
			`{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*","Condition":{"StringLike":{"aws:UserAgent":"*BadBot*"},"StringNotEqualsIgnoreCase":{"aws:Referer":"HTTP://ALSO.EXAMPLE/"}}}]}`)
		a.ano.must(t, http.StatusOK, http.MethodGet, "cond", "pub/a", "", hdr{"Referer", "http://also.example/"}, "")
		a.ano.must(t, http.StatusOK, http.MethodGet, "cond", "pub/a", "", hdr{"Referer", "http://good.example/", "User-Agent", "x"}, "")
		for _, h := range []hdr{{"Referer", "http://bad.example/"}, nil, {"Referer", "http://good.example/", "User-Agent", "a BadBot/1"}} {
			expectS3Error(t, a.ano.do(t, http.MethodGet, "cond", "pub/a", "", h, ""), http.StatusForbidden, "AccessDenied")
		}
		// Both keys of the Deny must hold: the BadBot from the allowed-twice referer passes.
		a.ano.must(t, http.StatusOK, http.MethodGet, "cond", "pub/a", "", hdr{"Referer", "http://also.example/", "User-Agent", "BadBot"}, "")
	})
	t.Run("Null and IfExists", func(t *testing.T) {
		// The owner must name a canned ACL on every write, and any it names must be private.
		s3SetPolicy(t, a.owner, "cond", `{"Statement":[`+
			`{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::cond/*","Condition":{"Null":{"s3:x-amz-acl":"true"}}},`+
			`{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::cond/*","Condition":{"StringNotEqualsIfExists":{"s3:x-amz-acl":"private"}}}]}`)
		expectS3Error(t, a.owner.do(t, http.MethodPut, "cond", "w", "", nil, "x"), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, a.owner.do(t, http.MethodPut, "cond", "w", "", hdr{"x-amz-acl", "public-read"}, "x"), http.StatusForbidden, "AccessDenied")
		a.owner.put(t, "cond", "w", "x", "x-amz-acl", "private")
	})
	t.Run("NumericGreaterThan s3:max-keys", func(t *testing.T) {
		s3SetPolicy(t, a.owner, "cond", s3PolicyDoc("Deny", `"*"`, "s3:ListBucket", res("arn:aws:s3:::cond"),
			`{"NumericGreaterThan":{"s3:max-keys":"10"}}`))
		expectS3Error(t, a.owner.do(t, http.MethodGet, "cond", "", "max-keys=100", nil, ""), http.StatusForbidden, "AccessDenied")
		a.owner.must(t, http.StatusOK, http.MethodGet, "cond", "", "max-keys=5", nil, "")
		a.owner.must(t, http.StatusOK, http.MethodGet, "cond", "", "", nil, "") // absent: the Deny does not apply
		// With IfExists an absent key makes the Deny apply.
		s3SetPolicy(t, a.owner, "cond", s3PolicyDoc("Deny", `"*"`, "s3:ListBucket", res("arn:aws:s3:::cond"),
			`{"NumericGreaterThanIfExists":{"s3:max-keys":"10"}}`))
		expectS3Error(t, a.owner.do(t, http.MethodGet, "cond", "", "", nil, ""), http.StatusForbidden, "AccessDenied")
		a.owner.must(t, http.StatusOK, http.MethodGet, "cond", "", "max-keys=10", nil, "")
	})
	t.Run("s3:signatureversion and aws:username", func(t *testing.T) {
		s3SetPolicy(t, a.owner, "cond", s3PolicyDoc("Deny", `"*"`, "s3:GetObject", res("arn:aws:s3:::cond/*"),
			`{"StringEquals":{"s3:signatureversion":"AWS","aws:username":"Alice"}}`))
		expectS3Error(t, v2.do(t, http.MethodGet, "cond", "pub/a", "", nil, ""), http.StatusForbidden, "AccessDenied")
		a.owner.must(t, http.StatusOK, http.MethodGet, "cond", "pub/a", "", nil, "")
	})
	t.Run("Service principal", func(t *testing.T) {
		s3SetPolicy(t, a.owner, "cond", s3PolicyDoc("Allow", `{"Service":["s3.amazonaws.com","logging.s3.amazonaws.com"]}`, "s3:GetObject", res("arn:aws:s3:::cond/*"), ""))
		expectS3Error(t, a.ano.do(t, http.MethodGet, "cond", "pub/a", "", nil, ""), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, a.other.do(t, http.MethodGet, "cond", "pub/a", "", nil, ""), http.StatusForbidden, "AccessDenied")
	})
	t.Run("unknown operator", func(t *testing.T) {
		r := a.owner.do(t, http.MethodPut, "cond", "", "policy", nil, s3PolicyDoc("Allow", `"*"`, "s3:GetObject", res("arn:aws:s3:::cond/*"),
			`{"StringMatchesRegex":{"aws:Referer":"x"}}`))
		if e := expectS3Error(t, r, http.StatusBadRequest, "MalformedPolicy"); !strings.Contains(e.Message, "StringMatchesRegex") {
			t.Errorf("message %q does not name the operator", e.Message)
		}
	})
	t.Run("minio-go", func(t *testing.T) {
		mc := newMinio(t, s, a.alice.cred(), minioCombos[3])
		doc := s3PolicyDoc("Allow", `{"AWS":["*"]}`, "s3:GetObject", res("arn:aws:s3:::cond/*"),
			`{"StringLikeIfExists":{"aws:Referer":"http://good.example/*"},"Null":{"aws:UserAgent":"false"}}`)
		if err := mc.SetBucketPolicy(context.Background(), "cond", doc); err != nil {
			t.Fatalf("SetBucketPolicy: %v", err)
		}
		if got, err := mc.GetBucketPolicy(context.Background(), "cond"); err != nil || got != s3Compact(t, doc) {
			t.Fatalf("GetBucketPolicy: %q, %v", got, err)
		}
		a.ano.must(t, http.StatusOK, http.MethodGet, "cond", "pub/a", "", nil, "")
		expectS3Error(t, a.ano.do(t, http.MethodGet, "cond", "pub/a", "", hdr{"Referer", "http://bad.example/"}, ""), http.StatusForbidden, "AccessDenied")
	})
}

// TestS3ExpectedBucketOwner: x-amz-expected-bucket-owner (and x-obj-) is the bucket
// owner's canonical id or the request is 403 AccessDenied, whoever asks;
// x-amz-source-expected-bucket-owner does the same for a copy's source bucket, and a
// refused copy writes nothing.
func TestS3ExpectedBucketOwner(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	a.owner.mkBucket(t, "exp", "x-amz-acl", "public-read-write")
	a.other.mkBucket(t, "exp-bob")
	a.owner.put(t, "exp", "k", "v", "x-amz-acl", "public-read")
	a.other.put(t, "exp-bob", "k", "v")
	right := hdr{"x-amz-expected-bucket-owner", a.alice.ID}
	wrong := hdr{"x-amz-expected-bucket-owner", a.bob.ID}
	for _, c := range []struct {
		who                      s3c
		method, key, query, body string
		status                   int
	}{
		{a.other, http.MethodGet, "k", "", "", http.StatusOK},
		{a.other, http.MethodHead, "k", "", "", http.StatusOK},
		{a.other, http.MethodGet, "", "", "", http.StatusOK},
		{a.other, http.MethodPut, "k2", "", "x", http.StatusOK},
		{a.owner, http.MethodGet, "", "acl", "", http.StatusOK},
		{a.other, http.MethodDelete, "k2", "", "", http.StatusNoContent},
	} {
		c.who.must(t, c.status, c.method, "exp", c.key, c.query, right, c.body)
		expectS3Error(t, c.who.do(t, c.method, "exp", c.key, c.query, wrong, c.body), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, c.who.do(t, c.method, "exp", c.key, c.query, hdr{"x-obj-expected-bucket-owner", "0123"}, c.body), http.StatusForbidden, "AccessDenied")
	}
	expectS3Error(t, a.owner.do(t, http.MethodGet, "exp-none", "", "", right, ""), http.StatusNotFound, "NoSuchBucket")

	// Copy: the source's owner is checked with the source header.
	src := hdr{"x-amz-copy-source", "/exp-bob/k", "x-amz-source-expected-bucket-owner", a.alice.ID}
	expectS3Error(t, a.other.do(t, http.MethodPut, "exp", "copied", "", src, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, a.owner.do(t, http.MethodGet, "exp", "copied", "", nil, ""), http.StatusNotFound, "NoSuchKey")
	src[3] = a.bob.ID
	a.other.must(t, http.StatusOK, http.MethodPut, "exp", "copied", "", append(src, right...), "")
	expectS3Error(t, a.other.do(t, http.MethodPut, "exp", "copied2", "", append(src, wrong...), ""), http.StatusForbidden, "AccessDenied")
}
