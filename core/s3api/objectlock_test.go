package s3api

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
)

// TestObjectLockHTTP: the Object Lock requests and headers over HTTP — a bucket
// created with x-amz-bucket-object-lock-enabled, ?object-lock, ?retention and
// ?legal-hold (their methods, bodies and errors), the x-amz-object-lock-* headers of
// a PUT (malformed ones refused with AWS's messages) and of GET/HEAD, and a DELETE of
// the bucket with ?object-lock that is refused instead of deleting the bucket.
func TestObjectLockHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "PUT", path: "/badlock", as: e.alice,
		header: map[string]string{"x-amz-bucket-object-lock-enabled": "maybe"}})
	e.bucket("lock", e.alice, "x-amz-bucket-object-lock-enabled", "true")
	cfg := mpReq{method: "GET", path: "/lock", query: "object-lock", as: e.alice}
	if body := e.must(200, cfg).body; !strings.Contains(body, "<ObjectLockEnabled>Enabled</ObjectLockEnabled>") || strings.Contains(body, "<Rule>") {
		t.Fatalf("lock configuration: %s", body)
	}
	put := cfg
	put.method = "PUT"
	put.body = `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	e.mustErr(400, s3.MalformedXML, put) // Days and Years both absent (0 is absent)
	put.body = `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>-2</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	e.mustErr(400, s3.InvalidArgument, put)
	put.body = `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>2</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	e.must(200, put)
	if body := e.must(200, cfg).body; !strings.Contains(body, "<Mode>GOVERNANCE</Mode><Days>2</Days>") {
		t.Fatalf("lock configuration after PUT: %s", body)
	}
	put.as = e.bob
	e.mustErr(403, s3.AccessDenied, put)
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "DELETE", path: "/lock", query: "object-lock", as: e.alice})
	e.must(200, mpReq{method: "HEAD", path: "/lock", as: e.alice}) // still there

	for _, tc := range []struct {
		header []string
		msg    string
	}{
		{[]string{"x-amz-object-lock-mode", "GOVERNANCE"}, "must both be supplied"},
		{[]string{"x-amz-object-lock-mode", "governance", "x-amz-object-lock-retain-until-date", "2099-01-01T00:00:00Z"}, "Unknown wormMode"},
		{[]string{"x-amz-object-lock-mode", "GOVERNANCE", "x-amz-object-lock-retain-until-date", "Jan 1 2099"}, "ISO 8601"},
		{[]string{"x-amz-object-lock-mode", "GOVERNANCE", "x-amz-object-lock-retain-until-date", "2001-01-01T00:00:00Z"}, "in the future"},
		{[]string{"x-amz-object-lock-legal-hold", "yes"}, "ON' or 'OFF"},
	} {
		h := map[string]string{}
		for i := 0; i+1 < len(tc.header); i += 2 {
			h[tc.header[i]] = tc.header[i+1]
		}
		r := e.do(mpReq{method: "PUT", path: "/lock/bad", header: h, body: "x", as: e.alice})
		if r.status != 400 || !strings.Contains(r.body, tc.msg) {
			t.Errorf("PUT with %v: %d %s", tc.header, r.status, r.body)
		}
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	resp := e.put("/lock/obj", "data", e.alice, "x-amz-object-lock-mode", "COMPLIANCE",
		"x-amz-object-lock-retain-until-date", until, "x-amz-object-lock-legal-hold", "ON")
	vid := resp.header.Get("x-amz-version-id")
	for _, m := range []string{"GET", "HEAD"} {
		h := e.must(200, mpReq{method: m, path: "/lock/obj", as: e.alice}).header
		if h.Get("x-amz-object-lock-mode") != "COMPLIANCE" || !strings.HasPrefix(h.Get("x-amz-object-lock-retain-until-date"), strings.TrimSuffix(until, "Z")) ||
			h.Get("x-amz-object-lock-legal-hold") != "ON" {
			t.Errorf("%s lock headers: %v", m, h)
		}
	}
	// Another reader (the object is public-read) does not see the lock.
	e.must(200, mpReq{method: "PUT", path: "/lock/obj", query: "acl&versionId=" + vid, as: e.alice,
		header: map[string]string{"x-amz-acl": "public-read"}})
	for _, who := range []*s3.User{e.bob, nil} {
		h := e.must(200, mpReq{method: "HEAD", path: "/lock/obj", as: who}).header
		if h.Get("x-amz-object-lock-mode") != "" || h.Get("x-amz-object-lock-legal-hold") != "" {
			t.Errorf("a reader without the lock permissions sees the lock: %v", h)
		}
	}
	ret := mpReq{method: "GET", path: "/lock/obj", query: "retention&versionId=" + vid, as: e.alice}
	if body := e.must(200, ret).body; !strings.Contains(body, "<Mode>COMPLIANCE</Mode>") {
		t.Fatalf("retention: %s", body)
	}
	ret.method, ret.body = "PUT", `<Retention><Mode>COMPLIANCE</Mode></Retention>`
	e.mustErr(400, s3.MalformedXML, ret)
	ret.body = `<Retention/>`
	e.mustErr(403, s3.AccessDenied, ret)
	hold := mpReq{method: "PUT", path: "/lock/obj", query: "legal-hold&versionId=" + vid, as: e.alice, body: `<LegalHold><Status>OFF</Status></LegalHold>`}
	e.must(200, hold)
	hold.method, hold.body = "GET", ""
	if body := e.must(200, hold).body; !strings.Contains(body, "<Status>OFF</Status>") {
		t.Fatalf("legal hold: %s", body)
	}
	hold.method = "DELETE"
	e.mustErr(405, s3.MethodNotAllowed, hold)
	e.mustErr(403, s3.AccessDenied, mpReq{method: "DELETE", path: "/lock/obj", query: "versionId=" + vid, as: e.alice,
		header: map[string]string{"x-amz-bypass-governance-retention": "true"}})

	e.bucket("plain", e.alice)
	e.mustErr(404, s3.ObjectLockConfigurationNotFound, mpReq{method: "GET", path: "/plain", query: "object-lock", as: e.alice})
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "PUT", path: "/plain/k", body: "x", as: e.alice,
		header: map[string]string{"x-amz-object-lock-legal-hold": "ON"}})
	e.put("/plain/k", "x", e.alice)
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "GET", path: "/plain/k", query: "retention", as: e.alice})
}

// TestLockCallsAuthorizeFirst: ?retention and ?legal-hold (GET and PUT) on a bucket
// without Object Lock answer AccessDenied to whoever may not make the call (another
// user, even with WRITE on the bucket; anonymous) before InvalidRequest "Bucket is
// missing Object Lock Configuration", which only the bucket owner gets, as AWS.
func TestLockCallsAuthorizeFirst(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("plain", e.alice, "x-amz-acl", "public-read-write")
	e.put("/plain/k", "x", e.alice)
	reqs := []mpReq{
		{method: "GET", path: "/plain/k", query: "retention"},
		{method: "PUT", path: "/plain/k", query: "retention",
			body: `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2199-01-01T00:00:00Z</RetainUntilDate></Retention>`},
		{method: "GET", path: "/plain/k", query: "legal-hold"},
		{method: "PUT", path: "/plain/k", query: "legal-hold", body: `<LegalHold><Status>ON</Status></LegalHold>`},
		{method: "GET", path: "/plain/absent", query: "retention"},
	}
	for _, q := range reqs {
		for _, who := range []*s3.User{e.bob, nil} {
			q.as = who
			e.mustErr(403, s3.AccessDenied, q)
		}
		q.as = e.alice
		e.mustErr(400, s3.InvalidRequest, q)
	}
}
