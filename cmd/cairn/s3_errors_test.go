package main

// End-to-end tests of the S3 errors: every error code the service produces, driven by
// raw requests that create its condition precisely, with the error body checked
// (Code, Message, Resource, RequestId = the request id header); the signature V2
// details (x-amz-date, bucket roots signed both ways, signed sub-resources, response
// overrides, presigned URLs); the bucket quota.

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3api/sig"
)

// s3ErrCase is one request and the answer it must get: an error (status and code, or
// one of codes) or, with code "", just the status.
type s3ErrCase struct {
	name     string
	q        s3Req
	status   int
	code     string
	codes    []string // acceptable codes when the specification allows several
	resource string   // expected Resource, when set
}

// with returns a copy of q changed by f.
func (q s3Req) with(f func(*s3Req)) s3Req { f(&q); return q }

func runS3ErrCases(t *testing.T, s *child, cases []s3ErrCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s3Do(t, s, tc.q)
			switch {
			case tc.code == "" && tc.codes == nil:
				if r.StatusCode != tc.status {
					t.Errorf("want %d, got\n%s", tc.status, r)
				}
			case tc.codes != nil:
				if r.StatusCode != tc.status {
					t.Errorf("want %d (%v), got\n%s", tc.status, tc.codes, r)
					return
				}
				e, checked := s3CheckError(t, r, tc.status)
				ok := false
				for _, c := range tc.codes {
					ok = ok || e.Code == c
				}
				if checked && !ok && tc.q.method != http.MethodHead {
					t.Errorf("code %q, want one of %v", e.Code, tc.codes)
				}
			default:
				e := expectS3Error(t, r, tc.status, tc.code)
				if tc.resource != "" && tc.q.method != http.MethodHead && e.Resource != tc.resource {
					t.Errorf("Resource %q, want %q", e.Resource, tc.resource)
				}
			}
		})
	}
}

func TestS3Errors(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "alice@example.com", "Alice")
	bob := s3CreateUser(t, s, "bob@example.com", "Bob")
	al := s3c{s: s, cred: alice.cred(), sign: s3V2}
	al4 := al.withSign(s3V4)
	bo := al.as(bob.cred())
	an := al.anon()
	al.mkBucket(t, "errs")
	al.put(t, "errs", "obj", "0123456789", "Content-Type", "text/plain")
	al.put(t, "errs", "empty", "")
	al.put(t, "errs", "keep-me", "kept")
	al.mkBucket(t, "empty-bucket")
	al.mkBucket(t, "public", "x-amz-acl", "public-read")

	wrong := s3Cred{alice.KeyID, "not-the-secret-not-the-secret-not-the-se"}
	unknown := s3Cred{"AAAAAAAAAAAAAAAAAAAA", "whatever"}
	now := time.Now()
	longKey := strings.Repeat("k", 1025)

	cases := []s3ErrCase{
		// NoSuchBucket
		{name: "NoSuchBucket/list", q: al.req("GET", "nosuch-bucket", "", "", nil, ""), status: 404, code: "NoSuchBucket", resource: "/nosuch-bucket"},
		{name: "NoSuchBucket/list host", q: al.withHost(true).req("GET", "nosuch-bucket", "", "", nil, ""), status: 404, code: "NoSuchBucket", resource: "/nosuch-bucket"},
		{name: "NoSuchBucket/get", q: al.req("GET", "nosuch-bucket", "k", "", nil, ""), status: 404, code: "NoSuchBucket", resource: "/nosuch-bucket/k"},
		{name: "NoSuchBucket/put", q: al.req("PUT", "nosuch-bucket", "k", "", nil, "x"), status: 404, code: "NoSuchBucket"},
		{name: "NoSuchBucket/delete object", q: al.req("DELETE", "nosuch-bucket", "k", "", nil, ""), status: 404, code: "NoSuchBucket"},
		{name: "NoSuchBucket/delete", q: al.req("DELETE", "nosuch-bucket", "", "", nil, ""), status: 404, code: "NoSuchBucket"},
		{name: "NoSuchBucket/acl", q: al.req("GET", "nosuch-bucket", "", "acl", nil, ""), status: 404, code: "NoSuchBucket"},
		{name: "NoSuchBucket/head", q: al.req("HEAD", "nosuch-bucket", "", "", nil, ""), status: 404},
		{name: "NoSuchBucket/anonymous", q: an.req("GET", "nosuch-bucket", "k", "", nil, ""), status: 404, code: "NoSuchBucket"},
		// NoSuchKey
		{name: "NoSuchKey/get", q: al.req("GET", "errs", "missing", "", nil, ""), status: 404, code: "NoSuchKey", resource: "/errs/missing"},
		{name: "NoSuchKey/get host", q: al4.withHost(true).req("GET", "errs", "dir/mis sing", "", nil, ""), status: 404, code: "NoSuchKey"},
		{name: "NoSuchKey/head", q: al.req("HEAD", "errs", "missing", "", nil, ""), status: 404, code: "NoSuchKey"},
		{name: "NoSuchKey/get acl", q: al.req("GET", "errs", "missing", "acl", nil, ""), status: 404, code: "NoSuchKey"},
		{name: "NoSuchKey/put acl", q: al.req("PUT", "errs", "missing", "acl", hdr{"x-amz-acl", "private"}, ""), status: 404, code: "NoSuchKey"},
		{name: "NoSuchKey/public bucket anonymous", q: an.req("GET", "public", "missing", "", nil, ""), status: 404, code: "NoSuchKey"},
		// Buckets: names, ownership, emptiness
		{name: "BucketAlreadyExists", q: bo.req("PUT", "errs", "", "", nil, ""), status: 409, code: "BucketAlreadyExists"},
		{name: "BucketAlreadyExists/V4 host", q: bo.withSign(s3V4).withHost(true).req("PUT", "errs", "", "", nil, ""), status: 409, code: "BucketAlreadyExists"},
		{name: "owner re-creates", q: al.req("PUT", "errs", "", "", nil, ""), status: 200},
		{name: "BucketNotEmpty", q: al.req("DELETE", "errs", "", "", nil, ""), status: 409, code: "BucketNotEmpty", resource: "/errs"},
		{name: "MalformedXML/create bucket", q: al.req("PUT", "mx-bucket", "", "", nil, "<garbage"), status: 400, code: "MalformedXML"},
		{name: "MalformedXML/other root", q: al.req("PUT", "mx-bucket", "", "", nil, "<Other/>"), status: 400, code: "MalformedXML"},
		{name: "CreateBucketConfiguration", q: al.req("PUT", "cfg-bucket", "", "", nil,
			`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>`), status: 200},
		// Hosts that mean path style.
		{name: "path style on the IP address", q: al.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.hostHeader = s.S3Addr }), status: 200},
		{name: "path style on localhost", q: al4.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.hostHeader = "localhost:" + s3PortOf(s) }), status: 200},
		{name: "path style without port", q: al.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.hostHeader = s3DataHost }), status: 200},
		{name: "host style upper case", q: al.withHost(true).req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) {
			q.hostHeader = "ERRS.S3.LOCALHOST:" + s3PortOf(s)
		}), status: 200},
		// Keys and metadata
		{name: "MetadataTooLarge", q: al.req("PUT", "errs", "meta", "", hdr{"x-amz-meta-big", strings.Repeat("m", 2100)}, "x"), status: 400, code: "MetadataTooLarge"},
		{name: "KeyTooLongError/put", q: al.req("PUT", "errs", longKey, "", nil, "x"), status: 400, code: "KeyTooLongError"},
		{name: "KeyTooLongError/get", q: al.req("GET", "errs", longKey, "", nil, ""), status: 400, code: "KeyTooLongError"},
		{name: "1024-byte key", q: al.req("PUT", "errs", longKey[:1024], "", nil, "x"), status: 200},
		// Digests and lengths
		{name: "InvalidDigest", q: al.req("PUT", "errs", "d", "", hdr{"Content-MD5", "zzz"}, "x"), status: 400, code: "InvalidDigest"},
		{name: "BadDigest", q: al.req("PUT", "errs", "d", "", hdr{"Content-MD5", s3MD5B64([]byte("y"))}, "x"), status: 400, code: "BadDigest"},
		{name: "MissingContentLength", q: al.req("PUT", "errs", "d", "", nil, "").with(func(q *s3Req) {
			q.bodyReader = strings.NewReader("x")
		}), status: 411, code: "MissingContentLength"},
		{name: "XAmzContentSHA256Mismatch", q: al4.req("PUT", "errs", "sha", "", nil, "the body").with(func(q *s3Req) {
			q.payloadHash = s3SHA256Hex([]byte("another body"))
		}), status: 400, code: "XAmzContentSHA256Mismatch"},
		{name: "XAmzContentSHA256Mismatch/big", q: al4.req("PUT", "errs", "sha", "", nil, strings.Repeat("z", 3<<20)).with(func(q *s3Req) {
			q.payloadHash = s3SHA256Hex([]byte("another body"))
		}), status: 400, code: "XAmzContentSHA256Mismatch"},
		// Arguments
		{name: "InvalidArgument/max-keys=blah", q: al.req("GET", "errs", "", "max-keys=blah", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/max-keys=-1", q: al.req("GET", "errs", "", "max-keys=-1", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/V2 max-keys=blah", q: al.req("GET", "errs", "", "list-type=2&max-keys=blah", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/encoding-type", q: al.req("GET", "errs", "", "encoding-type=base64", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/list-type", q: al.req("GET", "errs", "", "list-type=3", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/continuation-token", q: al.req("GET", "errs", "", "list-type=2&continuation-token=%21%21", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/AWS HAHAHA", q: an.req("GET", "errs", "", "", hdr{"Authorization", "AWS HAHAHA"}, ""), status: 400, code: "InvalidArgument"},
		{name: "InvalidArgument/AWS key only", q: an.req("GET", "errs", "", "", hdr{"Authorization", "AWS " + alice.KeyID, "Date", now.UTC().Format(http.TimeFormat)}, ""), status: 400, code: "InvalidArgument"},
		{name: "garbled V4 Authorization", q: an.req("GET", "errs", "", "", hdr{"Authorization", "AWS4-HMAC-SHA256 garbage", "X-Amz-Date", now.UTC().Format("20060102T150405Z"), "X-Amz-Content-Sha256", s3SHA256Hex(nil)}, ""),
			status: 400, codes: []string{"AuthorizationHeaderMalformed", "InvalidArgument"}},
		{name: "unsupported Authorization", q: an.req("GET", "errs", "", "", hdr{"Authorization", "Bearer abc"}, ""),
			status: 400, codes: []string{"InvalidArgument", "InvalidRequest"}},
		// Credentials and signatures
		{name: "InvalidAccessKeyId/V2", q: al.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.cred = unknown }), status: 403, code: "InvalidAccessKeyId"},
		{name: "InvalidAccessKeyId/V4", q: al4.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.cred = unknown }), status: 403, code: "InvalidAccessKeyId"},
		{name: "SignatureDoesNotMatch/V2", q: al.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.cred = wrong }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "SignatureDoesNotMatch/V2 put", q: al.req("PUT", "errs", "sig", "", hdr{"Content-Type", "text/plain"}, "x").with(func(q *s3Req) { q.cred = wrong }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "SignatureDoesNotMatch/V2 other resource", q: al.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.v2Res = "/errs/other" }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "SignatureDoesNotMatch/V4", q: al4.req("GET", "errs", "obj", "", nil, "").with(func(q *s3Req) { q.cred = wrong }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "SignatureDoesNotMatch/V4 host", q: al4.withHost(true).req("PUT", "errs", "sig", "", nil, "x").with(func(q *s3Req) { q.cred = wrong }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "RequestTimeTooSkewed/V2 past", q: al.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.at = now.Add(-20 * time.Minute) }), status: 403, code: "RequestTimeTooSkewed"},
		{name: "RequestTimeTooSkewed/V2 future", q: al.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.at = now.Add(20 * time.Minute) }), status: 403, code: "RequestTimeTooSkewed"},
		{name: "RequestTimeTooSkewed/V2 x-amz-date", q: al.req("GET", "errs", "", "", hdr{"x-amz-date", now.Add(-20 * time.Minute).UTC().Format("Mon, 02 Jan 2006 15:04:05 +0000")}, ""), status: 403, code: "RequestTimeTooSkewed"},
		{name: "RequestTimeTooSkewed/V4", q: al4.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.at = now.Add(-20 * time.Minute) }), status: 403, code: "RequestTimeTooSkewed"},
		{name: "10 minutes of skew are fine", q: al.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.at = now.Add(-10 * time.Minute) }), status: 200},
		// AccessDenied
		{name: "AccessDenied/no date", q: al.req("GET", "errs", "", "", nil, "").with(func(q *s3Req) { q.noDate = true }), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/garbage date", q: al.req("GET", "errs", "", "", hdr{"Date", "yesterday"}, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/anonymous list", q: an.req("GET", "errs", "", "", nil, ""), status: 403, code: "AccessDenied", resource: "/errs"},
		{name: "AccessDenied/anonymous service", q: an.req("GET", "", "", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/anonymous create", q: an.req("PUT", "anon-bucket", "", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/anonymous get", q: an.req("GET", "errs", "obj", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/anonymous head", q: an.req("HEAD", "errs", "obj", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/other get", q: bo.req("GET", "errs", "obj", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/other put", q: bo.req("PUT", "errs", "bobs", "", nil, "x"), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/other delete object", q: bo.req("DELETE", "errs", "obj", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/other delete bucket", q: bo.req("DELETE", "empty-bucket", "", "", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/other acl", q: bo.req("GET", "errs", "", "acl", nil, ""), status: 403, code: "AccessDenied"},
		{name: "AccessDenied/anonymous public write", q: an.req("PUT", "public", "anon", "", nil, "x"), status: 403, code: "AccessDenied"},
		// Methods and features
		{name: "MethodNotAllowed/POST object", q: al.req("POST", "errs", "obj", "", nil, "x"), status: 405, code: "MethodNotAllowed"},
		{name: "MethodNotAllowed/POST service", q: al.req("POST", "", "", "", nil, ""), status: 405, code: "MethodNotAllowed"},
		{name: "MethodNotAllowed/PATCH bucket", q: al.req("PATCH", "errs", "", "", nil, ""), status: 405, code: "MethodNotAllowed"},
		{name: "MethodNotAllowed/HEAD acl", q: al.req("HEAD", "errs", "obj", "acl", nil, ""), status: 405, code: "MethodNotAllowed"},
		{name: "MethodNotAllowed/DELETE object acl", q: al.req("DELETE", "errs", "keep-me", "acl", nil, ""), status: 405, code: "MethodNotAllowed"},
		{name: "MethodNotAllowed/DELETE bucket acl", q: al.req("DELETE", "empty-bucket", "", "acl", nil, ""), status: 405, code: "MethodNotAllowed"},
		{name: "InvalidArgument/version-id-marker alone", q: al.req("GET", "errs", "", "versions&version-id-marker=null", nil, ""), status: 400, code: "InvalidArgument"},
		{name: "NoSuchCORSConfiguration", q: al.req("GET", "errs", "", "cors", nil, ""), status: 404, code: "NoSuchCORSConfiguration"},
		{name: "NoSuchBucketPolicy", q: al.req("GET", "errs", "", "policy", nil, ""), status: 404, code: "NoSuchBucketPolicy"},
		{name: "NotImplemented/website", q: al.req("GET", "errs", "", "website", nil, ""), status: 501, code: "NotImplemented"},
		{name: "IllegalVersioningConfigurationException", q: al.req("PUT", "errs", "", "versioning", nil, "<VersioningConfiguration/>"), status: 400, code: "IllegalVersioningConfigurationException"},
		{name: "NotImplemented/MfaDelete", q: al.req("PUT", "errs", "", "versioning", nil, "<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>"), status: 501, code: "NotImplemented"},
		{name: "NotImplemented/torrent", q: al.req("GET", "errs", "obj", "torrent", nil, ""), status: 501, code: "NotImplemented"},
		{name: "NotImplemented/restore", q: al.req("POST", "errs", "obj", "restore", nil, "<RestoreRequest/>"), status: 501, code: "NotImplemented"},
		{name: "NoSuchUpload/upload part", q: al.req("PUT", "errs", "mp", "partNumber=1&uploadId=abc", nil, "x"), status: 404, code: "NoSuchUpload"},
		{name: "NoSuchTagSet", q: al.req("GET", "errs", "", "tagging", nil, ""), status: 404, code: "NoSuchTagSet"},
		{name: "NoSuchLifecycleConfiguration", q: al.req("GET", "errs", "", "lifecycle", nil, ""), status: 404, code: "NoSuchLifecycleConfiguration"},
		{name: "MalformedXML/lifecycle", q: al.req("PUT", "errs", "", "lifecycle", nil, "<LifecycleConfiguration/>"), status: 400, code: "MalformedXML"},
		// Conditions and ranges
		{name: "PreconditionFailed", q: al.req("GET", "errs", "obj", "", hdr{"If-Match", `"abc"`}, ""), status: 412, code: "PreconditionFailed", resource: "/errs/obj"},
		{name: "PreconditionFailed/head", q: al.req("HEAD", "errs", "obj", "", hdr{"If-Match", `"abc"`}, ""), status: 412, code: "PreconditionFailed"},
		{name: "PreconditionFailed/unmodified", q: al.req("GET", "errs", "obj", "", hdr{"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, ""), status: 412, code: "PreconditionFailed"},
		{name: "InvalidRange", q: al.req("GET", "errs", "obj", "", hdr{"Range", "bytes=100-"}, ""), status: 416, code: "InvalidRange", resource: "/errs/obj"},
		{name: "InvalidRange/at size", q: al.req("GET", "errs", "obj", "", hdr{"Range", "bytes=10-20"}, ""), status: 416, code: "InvalidRange"},
		{name: "InvalidRange/empty object", q: al.req("GET", "errs", "empty", "", hdr{"Range", "bytes=0-"}, ""), status: 416, code: "InvalidRange"},
		{name: "InvalidRange/head", q: al.req("HEAD", "errs", "obj", "", hdr{"Range", "bytes=100-"}, ""), status: 416, code: "InvalidRange"},
	}
	for _, name := range []string{"ab", "Upper-case", "-abc", "abc-", "192.168.1.1", "a..b", "a_b", strings.Repeat("a", 64),
		"bkt.", ".bkt", "a-.b", "a.-b", "sp ace", "ünï"} {
		cases = append(cases, s3ErrCase{name: "InvalidBucketName/" + name, q: al.req("PUT", "", "", "", nil, "").with(func(q *s3Req) {
			q.bucket, q.rawPath = name, "/"+s3Escape(name, false)
		}), status: 400, code: "InvalidBucketName"})
	}
	for _, name := range []string{"abc", strings.Repeat("a", 63), "a.b.c", "a-b", "1.2.3.4a", "0ab"} {
		cases = append(cases, s3ErrCase{name: "valid bucket name/" + name, q: al.req("PUT", name, "", "", nil, ""), status: 200})
	}
	runS3ErrCases(t, s, cases)

	// Nothing was stored or removed by the failures.
	expectS3Error(t, al.do(t, http.MethodHead, "mx-bucket", "", "", nil, ""), 404, "NoSuchBucket")
	for _, key := range []string{"d", "sha", "sig", "bobs", "copy", "mp", "meta"} {
		expectS3Error(t, al.do(t, http.MethodGet, "errs", key, "", nil, ""), 404, "NoSuchKey")
	}
	if r := al.must(t, 200, http.MethodGet, "errs", "obj", "", nil, ""); string(r.Body) != "0123456789" {
		t.Errorf("errs/obj after the failures: %q", r.Body)
	}
	// DELETE ?acl is no way to delete an object or a bucket.
	if r := al.do(t, http.MethodGet, "errs", "keep-me", "", nil, ""); r.StatusCode != 200 {
		t.Errorf("errs/keep-me after DELETE ?acl: %s", r)
	}
	if r := al.do(t, http.MethodHead, "empty-bucket", "", "", nil, ""); r.StatusCode != 200 {
		t.Errorf("empty-bucket after DELETE ?acl: %s", r)
	}
	expectS3Error(t, al.do(t, http.MethodGet, "anon-bucket", "", "", nil, ""), 404, "NoSuchBucket")
	if d := s3ParseACL(t, al.must(t, 200, http.MethodGet, "errs", "", "acl", nil, "")); d.Owner.ID != alice.ID {
		t.Errorf("errs changed owner: %+v", d.Owner)
	}
}

// TestS3V2Details covers the corners of signature V2: x-amz-date and the date formats,
// path-style bucket roots signed as /bkt and /bkt/, signed sub-resources and response
// overrides, presigned URLs.
func TestS3V2Details(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "v2@example.com", "V2")
	cred := u.cred()
	c := s3c{s: s, cred: cred, sign: s3V2}
	c.mkBucket(t, "vtwo")
	c.put(t, "vtwo", "obj", "v2 body", "Content-Type", "text/plain")
	c.put(t, "vtwo", "dir/k y+z.txt", "spaced")
	now := time.Now().UTC()
	future := now.Add(5 * time.Minute)
	past := now.Add(-time.Minute)
	presign := func(method, resource string, exp time.Time, cr s3Cred) string {
		return s3V2Presign(cr, method, resource, exp)
	}
	get := func(key, query string) s3Req { return c.req(http.MethodGet, "vtwo", key, query, nil, "") }
	cases := []s3ErrCase{
		// Dates.
		{name: "x-amz-date instead of Date", q: get("obj", "").with(func(q *s3Req) {
			q.noDate, q.h = true, hdr{"x-amz-date", now.Format("Mon, 02 Jan 2006 15:04:05 +0000")}
		}), status: 200},
		{name: "x-amz-date GMT", q: get("obj", "").with(func(q *s3Req) { q.noDate, q.h = true, hdr{"X-Amz-Date", now.Format(http.TimeFormat)} }), status: 200},
		{name: "x-amz-date ISO 8601", q: get("obj", "").with(func(q *s3Req) { q.noDate, q.h = true, hdr{"X-Amz-Date", now.Format("20060102T150405Z")} }), status: 200},
		{name: "x-amz-date wins over a bad Date", q: get("obj", "").with(func(q *s3Req) {
			q.h = hdr{"Date", "garbage", "X-Amz-Date", now.Format(http.TimeFormat)}
		}), status: 200},
		{name: "Date RFC 850", q: get("obj", "").with(func(q *s3Req) { q.h = hdr{"Date", now.Format(time.RFC850)} }), status: 200},
		{name: "Date asctime", q: get("obj", "").with(func(q *s3Req) { q.h = hdr{"Date", now.Format(time.ANSIC)} }), status: 200},
		{name: "Date +0000", q: get("obj", "").with(func(q *s3Req) { q.h = hdr{"Date", now.Format("Mon, 02 Jan 2006 15:04:05 +0000")} }), status: 200},
		{name: "empty Date", q: get("obj", "").with(func(q *s3Req) { q.h = hdr{"Date", ""} }), status: 403, code: "AccessDenied"},
		// Path-style bucket roots: /bkt signed as /bkt or /bkt/, /bkt/ as /bkt/.
		{name: "root /vtwo signed /vtwo", q: get("", "").with(func(q *s3Req) { q.rawPath, q.v2Res = "/vtwo", "/vtwo" }), status: 200},
		{name: "root /vtwo signed /vtwo/", q: get("", "").with(func(q *s3Req) { q.rawPath, q.v2Res = "/vtwo", "/vtwo/" }), status: 200},
		{name: "root /vtwo/ signed /vtwo/", q: get("", "").with(func(q *s3Req) { q.rawPath, q.v2Res = "/vtwo/", "/vtwo/" }), status: 200},
		{name: "root /vtwo?acl signed /vtwo/?acl", q: get("", "acl").with(func(q *s3Req) { q.rawPath, q.v2Res = "/vtwo", "/vtwo/?acl" }), status: 200},
		{name: "root /vtwo?acl signed /vtwo?acl", q: get("", "acl").with(func(q *s3Req) { q.rawPath, q.v2Res = "/vtwo", "/vtwo?acl" }), status: 200},
		{name: "host root signed /vtwo/", q: c.withHost(true).req(http.MethodGet, "vtwo", "", "", nil, "").with(func(q *s3Req) { q.v2Res = "/vtwo/" }), status: 200},
		{name: "wrong bucket in resource", q: get("", "").with(func(q *s3Req) { q.v2Res = "/other/" }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "key signed as sent", q: get("dir/k y+z.txt", ""), status: 200},
		// Sub-resources.
		{name: "?acl signed", q: get("", "acl"), status: 200},
		{name: "?acl not signed", q: get("", "acl").with(func(q *s3Req) { q.v2Res = "/vtwo/" }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "object ?acl signed", q: get("obj", "acl"), status: 200},
		{name: "listing parameters not signed", q: get("", "prefix=o&max-keys=5&delimiter=/&marker=a"), status: 200},
		{name: "listing parameters signed", q: get("", "prefix=o").with(func(q *s3Req) { q.v2Res = "/vtwo/?prefix=o" }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "response override not signed", q: get("obj", "response-content-type=text%2Fx-test").with(func(q *s3Req) { q.v2Res = "/vtwo/obj" }),
			status: 403, code: "SignatureDoesNotMatch"},
		// Presigned URLs.
		{name: "presigned", q: get("obj", "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("GET", "/vtwo/obj", future, cred) }), status: 200},
		{name: "presigned host style", q: get("obj", "").with(func(q *s3Req) { q.sign, q.host, q.query = s3Anon, true, presign("GET", "/vtwo/obj", future, cred) }), status: 200},
		{name: "presigned far future", q: get("obj", "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("GET", "/vtwo/obj", now.AddDate(2, 0, 0), cred) }), status: 200},
		{name: "presigned head", q: c.req(http.MethodHead, "vtwo", "obj", "", nil, "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("HEAD", "/vtwo/obj", future, cred) }), status: 200},
		{name: "presigned expired", q: get("obj", "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("GET", "/vtwo/obj", past, cred) }), status: 403, code: "AccessDenied"},
		{name: "presigned wrong signature", q: get("obj", "").with(func(q *s3Req) {
			q.sign, q.query = s3Anon, presign("GET", "/vtwo/obj", future, s3Cred{cred.KeyID, "wrong"})
		}), status: 403, code: "SignatureDoesNotMatch"},
		{name: "presigned other key", q: get("obj", "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("GET", "/vtwo/other", future, cred) }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "presigned unknown key", q: get("obj", "").with(func(q *s3Req) {
			q.sign, q.query = s3Anon, presign("GET", "/vtwo/obj", future, s3Cred{"AAAAAAAAAAAAAAAAAAAA", "x"})
		}), status: 403, code: "InvalidAccessKeyId"},
		{name: "presigned for PUT used for GET", q: get("obj", "").with(func(q *s3Req) { q.sign, q.query = s3Anon, presign("PUT", "/vtwo/obj", future, cred) }), status: 403, code: "SignatureDoesNotMatch"},
		{name: "presigned put", q: c.req(http.MethodPut, "vtwo", "presigned-put", "", nil, "put through a URL").with(func(q *s3Req) {
			q.sign, q.query = s3Anon, presign("PUT", "/vtwo/presigned-put", future, cred)
		}), status: 200},
	}
	runS3ErrCases(t, s, cases)
	if r := c.must(t, 200, http.MethodGet, "vtwo", "presigned-put", "", nil, ""); string(r.Body) != "put through a URL" {
		t.Errorf("presigned PUT stored %q", r.Body)
	}

	// Response overrides: signed (decoded values in the resource) and honoured.
	t.Run("response overrides", func(t *testing.T) {
		over := url.Values{
			"response-content-type":        {"text/x-test"},
			"response-content-language":    {"fr"},
			"response-expires":             {"Thu, 01 Dec 2030 16:00:00 GMT"},
			"response-cache-control":       {"no-store"},
			"response-content-disposition": {`attachment; filename="a b.txt"`},
			"response-content-encoding":    {"identity"},
		}
		for _, host := range []bool{false, true} {
			r := c.withHost(host).must(t, 200, http.MethodGet, "vtwo", "obj", over.Encode(), nil, "")
			for q, h := range map[string]string{"response-content-type": "Content-Type", "response-content-language": "Content-Language",
				"response-expires": "Expires", "response-cache-control": "Cache-Control",
				"response-content-disposition": "Content-Disposition", "response-content-encoding": "Content-Encoding"} {
				if got := r.Header.Get(h); got != over.Get(q) {
					t.Errorf("host=%v: %s = %q, want %q", host, h, got, over.Get(q))
				}
			}
			if string(r.Body) != "v2 body" {
				t.Errorf("body %q", r.Body)
			}
		}
		// In a presigned URL too (the overrides are part of the signed resource).
		res := "/vtwo/obj?response-content-type=text/x-presigned"
		q := "response-content-type=text%2Fx-presigned&" + presign("GET", res, future, cred)
		r := s3Do(t, s, s3Req{method: http.MethodGet, bucket: "vtwo", key: "obj", query: q})
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/x-presigned" {
			t.Errorf("presigned with an override: %s", r)
		}
		// V4 signs the query as it is: the overrides work there too.
		r = c.withSign(s3V4).must(t, 200, http.MethodGet, "vtwo", "obj", "response-content-type=text%2Fx-v4", nil, "")
		if r.Header.Get("Content-Type") != "text/x-v4" {
			t.Errorf("V4 override: Content-Type %q", r.Header.Get("Content-Type"))
		}
	})
	// The expiry is checked against the server's clock: a URL that expires in 2 s works
	// now and not 3 s later.
	t.Run("expiry", func(t *testing.T) {
		exp := time.Now().Add(2 * time.Second)
		q := s3Req{method: http.MethodGet, bucket: "vtwo", key: "obj", query: presign("GET", "/vtwo/obj", exp, cred)}
		if r := s3Do(t, s, q); r.StatusCode != 200 {
			t.Fatalf("fresh presigned URL: %s", r)
		}
		time.Sleep(time.Until(exp) + 1100*time.Millisecond)
		expectS3Error(t, s3Do(t, s, q), 403, "AccessDenied")
	})
}

// TestS3V4Details covers signature V4 variants raw requests can produce: unsigned
// payloads, header values with extra spaces, a mismatching payload on a streamed body.
func TestS3V4Details(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "v4@example.com", "V4")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "vfour")
	runS3ErrCases(t, s, []s3ErrCase{
		{name: "UNSIGNED-PAYLOAD", q: c.req(http.MethodPut, "vfour", "unsigned", "", nil, "unsigned body").with(func(q *s3Req) { q.payloadHash = "UNSIGNED-PAYLOAD" }), status: 200},
		{name: "signed metadata", q: c.req(http.MethodPut, "vfour", "meta", "", hdr{"x-amz-meta-a", "  spaced   value  ", "Content-Type", "text/plain"}, "m"), status: 200},
		{name: "query parameters", q: c.req(http.MethodGet, "vfour", "", "prefix=a%20b&max-keys=3&delimiter=%2F", nil, ""), status: 200},
		{name: "other region", q: c.req(http.MethodGet, "vfour", "", "", nil, "").with(func(q *s3Req) { q.region = "eu-west-1" }), status: 200},
		{name: "payload hash not hex", q: c.req(http.MethodPut, "vfour", "bad-hash", "", nil, "x").with(func(q *s3Req) { q.payloadHash = "not-a-hash" }),
			status: 400, codes: []string{"InvalidArgument", "XAmzContentSHA256Mismatch", "AuthorizationHeaderMalformed"}},
	})
	if r := c.must(t, 200, http.MethodGet, "vfour", "unsigned", "", nil, ""); string(r.Body) != "unsigned body" {
		t.Errorf("unsigned payload stored %q", r.Body)
	}
	if r := c.must(t, 200, http.MethodHead, "vfour", "meta", "", nil, ""); r.Header.Get("X-Amz-Meta-A") != "spaced   value" {
		t.Errorf("metadata %q", r.Header.Get("X-Amz-Meta-A"))
	}
	expectS3Error(t, c.do(t, http.MethodGet, "vfour", "bad-hash", "", nil, ""), 404, "NoSuchKey")
}

// TestS3TooManyBuckets creates the 100 buckets a user may have; the 101st is refused
// until one is deleted. Another user is not affected.
func TestS3TooManyBuckets(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "many@example.com", "Many")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	for i := range 100 {
		c.mkBucket(t, fmt.Sprintf("many-%03d", i))
	}
	expectS3Error(t, c.do(t, http.MethodPut, "many-100", "", "", nil, ""), 400, "TooManyBuckets")
	c.mkBucket(t, "many-000") // re-creating an own bucket is not a new one
	other := s3CreateUser(t, s, "few@example.com", "Few")
	c.as(other.cred()).mkBucket(t, "few-000")
	c.must(t, http.StatusNoContent, http.MethodDelete, "many-042", "", "", nil, "")
	c.mkBucket(t, "many-100")
	expectS3Error(t, c.do(t, http.MethodPut, "many-101", "", "", nil, ""), 400, "TooManyBuckets")
	r := c.must(t, 200, http.MethodGet, "", "", "", nil, "")
	if n := strings.Count(string(r.Body), "<Bucket>"); n != 100 {
		t.Errorf("bucket list holds %d buckets, want 100", n)
	}
	if !strings.Contains(string(r.Body), "<Name>many-100</Name>") || strings.Contains(string(r.Body), "<Name>many-042</Name>") {
		t.Errorf("bucket list:\n%s", r.Body)
	}
}

// TestS3AWSChunked sends aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) bodies by
// hand: a good one is stored; a chunk whose data or signature was changed fails the
// upload with SignatureDoesNotMatch, a body shorter than it claims with 400, and the
// previous version stays.
func TestS3AWSChunked(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "chunks@example.com", "Chunks")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "chunks")
	chunks := []string{strings.Repeat("a", 64<<10), strings.Repeat("b", 64<<10), strings.Repeat("c", 1<<20), "tail"}
	whole := strings.Join(chunks, "")
	put := func(key string, ch *s3Chunked) *resp {
		return s3Do(t, s, c.req(http.MethodPut, "chunks", key, "", hdr{"Content-Type", "text/plain"}, "").with(func(q *s3Req) { q.chunked = ch }))
	}
	r := put("good", &s3Chunked{chunks: chunks, badSig: -1})
	if r.StatusCode != 200 || r.Header.Get("ETag") != `"`+s3MD5Hex([]byte(whole))+`"` {
		t.Fatalf("good aws-chunked upload: %s", r)
	}
	got := c.must(t, 200, http.MethodGet, "chunks", "good", "", nil, "")
	if string(got.Body) != whole || got.Header.Get("Content-Encoding") != "" || got.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("stored %d bytes, Content-Encoding %q, Content-Type %q", len(got.Body), got.Header.Get("Content-Encoding"), got.Header.Get("Content-Type"))
	}
	if r := put("empty", &s3Chunked{badSig: -1}); r.StatusCode != 200 || r.Header.Get("ETag") != `"`+s3MD5Hex(nil)+`"` {
		t.Errorf("empty aws-chunked upload: %s", r)
	}
	for _, tc := range []struct {
		name   string
		ch     *s3Chunked
		status int
		codes  []string
	}{
		{"tampered data", &s3Chunked{chunks: chunks, badSig: -1, tamper: map[int]string{1: strings.Repeat("B", 64<<10)}}, 403, []string{"SignatureDoesNotMatch"}},
		{"forged signature", &s3Chunked{chunks: chunks, badSig: 2}, 403, []string{"SignatureDoesNotMatch"}},
		{"forged final signature", &s3Chunked{chunks: chunks, badSig: len(chunks)}, 403, []string{"SignatureDoesNotMatch"}},
		{"shorter than declared", &s3Chunked{chunks: chunks, badSig: -1, decodedLength: int64(len(whole) + 10)}, 400, []string{"IncompleteBody", "BadDigest"}},
		{"longer than declared", &s3Chunked{chunks: chunks, badSig: -1, decodedLength: int64(len(whole) - 10)}, 400, []string{"IncompleteBody", "BadDigest", "InvalidRequest"}},
		{"no final chunk", &s3Chunked{chunks: chunks, badSig: -1, noFinal: true}, 400, []string{"IncompleteBody"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.put(t, "chunks", "victim", "previous version")
			r := put("victim", tc.ch)
			e, ok := s3CheckError(t, r, tc.status)
			if ok && !slices.Contains(tc.codes, e.Code) {
				t.Errorf("code %q, want one of %v", e.Code, tc.codes)
			}
			if got := c.must(t, 200, http.MethodGet, "chunks", "victim", "", nil, ""); string(got.Body) != "previous version" {
				t.Errorf("the failed upload replaced the object (%d bytes)", len(got.Body))
			}
		})
	}
}

// TestS3EntityTooLarge runs a server with a 1 MiB object limit.
func TestS3EntityTooLarge(t *testing.T) {
	t.Parallel()
	s := startS3Server(t, "--s3-max-object-size", "1MiB")
	u := s3CreateUser(t, s, "large@example.com", "Large")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "large")
	c.put(t, "large", "max", strings.Repeat("x", 1<<20))
	expectS3Error(t, c.do(t, http.MethodPut, "large", "over", "", nil, strings.Repeat("x", 1<<20+1)), 400, "EntityTooLarge")
	r := s3Do(t, s, c.withSign(s3V4).req(http.MethodPut, "large", "over", "", nil, "").with(func(q *s3Req) {
		q.chunked = &s3Chunked{chunks: []string{strings.Repeat("y", 1<<20), "z"}, badSig: -1}
	}))
	expectS3Error(t, r, 400, "EntityTooLarge")
	expectS3Error(t, c.do(t, http.MethodGet, "large", "over", "", nil, ""), 404, "NoSuchKey")
}

// TestS3IncompleteBody sends fewer bytes than Content-Length and half-closes the
// connection: 400 IncompleteBody, and the previous version stays.
func TestS3IncompleteBody(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "short@example.com", "Short")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "short")
	cred := u.cred()
	for _, n := range []int{10, 1<<20 + 5} { // one chunk; several
		c.put(t, "short", "obj", "previous version")
		conn := s3Dial(t, s)
		head := s3RawRequest(http.MethodPut, "/short/obj", &cred, "/short/obj",
			hdr{"Host", s3DataHost + ":" + s3PortOf(s), "Content-Length", fmt.Sprint(n + 100), "Connection", "close"})
		if _, err := conn.Write([]byte(head + strings.Repeat("s", n))); err != nil {
			t.Fatal(err)
		}
		if err := conn.Conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		r, body := conn.readResponse(t, http.MethodPut) //nolint:bodyclose // readResponse has read and closed the body
		r.Request = &http.Request{Method: http.MethodPut, URL: &url.URL{Path: "/short/obj"}}
		expectS3Error(t, &resp{Response: r, Body: body}, 400, "IncompleteBody")
		if got := c.must(t, 200, http.MethodGet, "short", "obj", "", nil, ""); string(got.Body) != "previous version" {
			t.Errorf("%d of %d bytes: the object is now %d bytes", n, n+100, len(got.Body))
		}
	}
}

// TestS3SignersAgree checks this file's signers against the server's own helpers
// (core/s3api/sig): both give the same Authorization for the same requests, and the
// server accepts what either signs; presigned V4 URLs made by sig.PresignV4 work until
// they expire.
func TestS3SignersAgree(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "agree@example.com", "Agree")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "agree")
	c.put(t, "agree", "k y+z", "agreed", "Content-Type", "text/plain")
	at := time.Now()
	var reqs []s3Req
	for _, sign := range []s3SigVer{s3V2, s3V4} {
		for _, host := range []bool{false, true} {
			x := s3c{s: s, cred: u.cred(), sign: sign, host: host}
			reqs = append(reqs,
				x.req(http.MethodGet, "agree", "k y+z", "", nil, ""),
				x.req(http.MethodGet, "agree", "k y+z", "response-content-type=text%2Fx&acl", nil, ""),
				x.req(http.MethodGet, "agree", "", "prefix=k%20y&max-keys=10", nil, ""),
				x.req(http.MethodPut, "agree", "new "+sign.String(), "", hdr{"Content-Type", "text/plain", "Content-MD5", s3MD5B64([]byte("body")),
					"x-amz-meta-b", "2", "X-Amz-Meta-A", " one ", "x-amz-acl", "private"}, "body"),
			)
		}
	}
	for _, q := range reqs {
		q.at = at
		mine := s3Build(t, s, q)
		hostBucket := ""
		if q.host {
			hostBucket = q.bucket
		}
		sr := &sig.Request{Method: q.method, Host: mine.Host, RawPath: q.path(), RawQuery: q.query, Header: http.Header{}, HostBucket: hostBucket}
		for k, v := range mine.Header {
			switch k {
			case "Authorization", "X-Amz-Date", "X-Amz-Content-Sha256":
			default:
				sr.Header[k] = append([]string(nil), v...)
			}
		}
		if q.sign == s3V2 {
			sig.SignRequestV2(sr, q.cred.KeyID, q.cred.Secret, at)
		} else {
			sig.SignRequestV4(sr, q.cred.KeyID, q.cred.Secret, "us-east-1", at, mine.Header.Get("X-Amz-Content-Sha256"))
		}
		theirs := http.Header(sr.Header).Get("Authorization")
		if theirs != mine.Header.Get("Authorization") {
			t.Errorf("%s %s?%s (%v, host=%v): Authorization\n mine %s\n sig  %s", q.method, q.path(), q.query, q.sign, q.host,
				mine.Header.Get("Authorization"), theirs)
		}
		// The server accepts the request as sig signed it.
		sq := q
		sq.sign, sq.h = s3Anon, nil
		for k, vs := range sr.Header {
			for _, v := range vs {
				sq.h = append(sq.h, k, v)
			}
		}
		if r := s3Do(t, s, sq); r.StatusCode != http.StatusOK {
			t.Errorf("%s %s?%s signed by sig: %s", q.method, q.path(), q.query, r)
		}
	}
	// Presigned V4 URLs.
	for _, host := range []bool{false, true} {
		q := s3c{s: s, host: host}.req(http.MethodGet, "agree", "k y+z", "", nil, "")
		hostBucket := ""
		if host {
			hostBucket = "agree"
		}
		sr := &sig.Request{Method: http.MethodGet, Host: q.hostValue(s), RawPath: q.path(), Header: http.Header{}, HostBucket: hostBucket}
		sig.PresignV4(sr, u.KeyID, u.KeySecret, "us-east-1", time.Now(), 10*time.Minute)
		q.query = sr.RawQuery
		if r := s3Do(t, s, q); r.StatusCode != http.StatusOK || string(r.Body) != "agreed" {
			t.Errorf("presigned V4 (host=%v): %s", host, r)
		}
		sr = &sig.Request{Method: http.MethodGet, Host: q.hostValue(s), RawPath: q.path(), Header: http.Header{}, HostBucket: hostBucket}
		sig.PresignV4(sr, u.KeyID, u.KeySecret, "us-east-1", time.Now().Add(-2*time.Hour), time.Hour)
		q.query = sr.RawQuery
		expectS3Error(t, s3Do(t, s, q), http.StatusForbidden, "AccessDenied")
		sr = &sig.Request{Method: http.MethodGet, Host: q.hostValue(s), RawPath: q.path(), Header: http.Header{}, HostBucket: hostBucket}
		sig.PresignV4(sr, u.KeyID, "wrong secret", "us-east-1", time.Now(), time.Hour)
		q.query = sr.RawQuery
		expectS3Error(t, s3Do(t, s, q), http.StatusForbidden, "SignatureDoesNotMatch")
	}
}
