package s3api

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
)

func TestParseCopySource(t *testing.T) {
	tests := []struct {
		in               string
		bucket, key, ver string
		code             s3.Code
	}{
		{"/bkt/key", "bkt", "key", "", ""},
		{"bkt/key", "bkt", "key", "", ""},
		{"/bkt/dir/k%20y%2Bz+w.txt", "bkt", "dir/k y+z+w.txt", "", ""},
		{"/bkt/k%3Fq?versionId=null", "bkt", "k?q", "null", ""},
		{"/bkt/k?versionId=AAAAAAAAAAAAAAAAAAAAAA", "bkt", "k", "AAAAAAAAAAAAAAAAAAAAAA", ""},
		{" /bkt/k ", "bkt", "k", "", ""},
		{"/bkt//k", "bkt", "/k", "", ""},
		{"/bkt/k?versionId=3HL4kqtJlcpXroDTDmJ%2Brmsz", "", "", "", s3.InvalidArgument},
		{"/bkt/k?versionId=", "", "", "", s3.InvalidArgument},
		{"/bkt/k?versionId=%zz", "", "", "", s3.InvalidArgument},
		{"/bkt", "", "", "", s3.InvalidArgument},
		{"/bkt/", "", "", "", s3.InvalidArgument},
		{"//k", "", "", "", s3.InvalidArgument},
		{"/bkt/k%zz", "", "", "", s3.InvalidArgument},
	}
	for _, tt := range tests {
		b, k, v, err := parseCopySource(tt.in)
		if tt.code != "" {
			if !s3.IsCode(err, tt.code) {
				t.Errorf("%q: err %v, want %s", tt.in, err, tt.code)
			}
			continue
		}
		if err != nil || b != tt.bucket || k != tt.key || v != tt.ver {
			t.Errorf("%q: %q %q %q %v, want %q %q %q", tt.in, b, k, v, err, tt.bucket, tt.key, tt.ver)
		}
	}
}

func TestParseCopyRange(t *testing.T) {
	tests := []struct {
		in          string
		off, length int64
		ok          bool
	}{
		{"bytes=0-0", 0, 1, true},
		{"bytes=5-9", 5, 5, true},
		{" bytes=10-20 ", 10, 11, true},
		{"bytes=5-4", 0, 0, false},
		{"bytes=-5", 0, 0, false},
		{"bytes=5-", 0, 0, false},
		{"bytes=+1-2", 0, 0, false},
		{"bytes=1-2,4-5", 0, 0, false},
		{"bits=1-2", 0, 0, false},
		{"bytes=99999999999999999999-1", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		off, n, err := parseCopyRange(tt.in)
		if !tt.ok {
			if !s3.IsCode(err, s3.InvalidArgument) {
				t.Errorf("%q: err %v, want InvalidArgument", tt.in, err)
			}
			continue
		}
		if err != nil || off != tt.off || n != tt.length {
			t.Errorf("%q: %d %d %v, want %d %d", tt.in, off, n, err, tt.off, tt.length)
		}
	}
}

// copyResult parses a CopyObjectResult or CopyPartResult.
func copyResult(t *testing.T, root, body string) (etag string, lm time.Time) {
	t.Helper()
	var doc struct {
		XMLName      xml.Name
		LastModified string
		ETag         string
	}
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	lm, err := time.Parse("2006-01-02T15:04:05.000Z", doc.LastModified)
	if doc.XMLName.Local != root || err != nil {
		t.Fatalf("answer %s (%v)", body, err)
	}
	return doc.ETag, lm
}

func TestCopyObject(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("src", e.alice)
	e.bucket("dst", e.alice)
	data := "the source object, longer than a chunk"
	e.put("/src/a%20b", data, e.alice, "Content-Type", "text/x-src", "X-Amz-Meta-Color", "blue", "Content-Language", "fr")

	// COPY (the default) keeps the type, metadata and headers; the ACL is the request's.
	r := e.put("/dst/copy", "", e.alice, "X-Amz-Copy-Source", "/src/a%20b", "X-Amz-Acl", "public-read",
		"Content-Type", "ignored/type", "X-Amz-Meta-Color", "ignored")
	etag, lm := copyResult(t, "CopyObjectResult", r.body)
	if etag != `"`+md5hex(data)+`"` || time.Since(lm) > time.Minute {
		t.Fatalf("copy result %s", r.body)
	}
	r = e.must(200, mpReq{method: "GET", path: "/dst/copy"}) // anonymous: public-read
	if r.body != data || r.header.Get("Content-Type") != "text/x-src" || r.header.Get("X-Amz-Meta-Color") != "blue" ||
		r.header.Get("Content-Language") != "fr" {
		t.Fatalf("copy: %q %v", r.body, r.header)
	}
	// The source's ACL is not copied: without an ACL header the copy is private.
	e.put("/dst/private", "", e.alice, "X-Amz-Copy-Source", "dst/copy")
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/dst/private"})

	// REPLACE takes them from the request (x-obj- names too).
	e.put("/dst/replaced", "", e.alice, "X-Obj-Copy-Source", "/src/a%20b", "X-Amz-Metadata-Directive", "REPLACE",
		"Content-Type", "text/x-new", "X-Obj-Meta-Shape", "round")
	r = e.must(200, mpReq{method: "GET", path: "/dst/replaced", as: e.alice})
	if r.body != data || r.header.Get("Content-Type") != "text/x-new" || r.header.Get("X-Amz-Meta-Shape") != "round" ||
		r.header.Get("X-Amz-Meta-Color") != "" || r.header.Get("Content-Language") != "" {
		t.Fatalf("replace: %q %v", r.body, r.header)
	}

	// A self-copy must replace the metadata.
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "PUT", path: "/src/a%20b", as: e.alice,
		header: map[string]string{"X-Amz-Copy-Source": "/src/a%20b"}})
	e.put("/src/a%20b", "", e.alice, "X-Amz-Copy-Source", "/src/a%20b", "X-Amz-Metadata-Directive", "REPLACE", "X-Amz-Meta-Color", "red")
	r = e.must(200, mpReq{method: "GET", path: "/src/a%20b", as: e.alice})
	if r.body != data || r.header.Get("X-Amz-Meta-Color") != "red" {
		t.Fatalf("self-copy: %q %v", r.body, r.header)
	}

	src := md5hex(data)
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	errs := []struct {
		name   string
		status int
		code   s3.Code
		h      map[string]string
		as     *s3.User
	}{
		{"missing key", 404, s3.NoSuchKey, map[string]string{"X-Amz-Copy-Source": "/src/nope"}, e.alice},
		{"missing bucket", 404, s3.NoSuchBucket, map[string]string{"X-Amz-Copy-Source": "/nobkt/k"}, e.alice},
		{"no key", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/src"}, e.alice},
		{"a malformed version", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/src/a%20b?versionId=abc"}, e.alice},
		{"an unknown version", 404, s3.NoSuchVersion, map[string]string{"X-Amz-Copy-Source": "/src/a%20b?versionId=AAAAAAAAAAAAAAAAAAAAAA"}, e.alice},
		{"bad directive", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Metadata-Directive": "MOVE"}, e.alice},
		{"if-match fails", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Copy-Source-If-Match": `"0000"`}, e.alice},
		{"if-none-match fails", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Copy-Source-If-None-Match": `"` + src + `"`}, e.alice},
		{"if-modified-since fails", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Copy-Source-If-Modified-Since": future}, e.alice},
		{"if-unmodified-since fails", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Copy-Source-If-Unmodified-Since": past}, e.alice},
		{"if-none-match fails, if-modified-since holds", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/src/a%20b",
			"X-Amz-Copy-Source-If-None-Match": src, "X-Amz-Copy-Source-If-Modified-Since": past}, e.alice},
		{"source not readable", 403, s3.AccessDenied, map[string]string{"X-Amz-Copy-Source": "/src/a%20b"}, e.bob},
		{"canned and grants", 400, s3.InvalidRequest, map[string]string{"X-Amz-Copy-Source": "/src/a%20b", "X-Amz-Acl": "private",
			"X-Amz-Grant-Read": `uri="http://acs.amazonaws.com/groups/global/AllUsers"`}, e.alice},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.mustErr(tt.status, tt.code, mpReq{method: "PUT", path: "/dst/x", header: tt.h, as: tt.as})
		})
	}
	e.t = t
	// Conditions that hold: if-match with if-unmodified-since failing still copies (S3's rule).
	e.put("/dst/cond", "", e.alice, "X-Amz-Copy-Source", "/src/a%20b", "X-Amz-Copy-Source-If-Match", `"`+src+`"`,
		"X-Amz-Copy-Source-If-Unmodified-Since", past)
	e.put("/dst/cond", "", e.alice, "X-Amz-Copy-Source", "/src/a%20b", "X-Amz-Copy-Source-If-None-Match", `"other"`,
		"X-Amz-Copy-Source-If-Modified-Since", past, "X-Amz-Copy-Source-If-Unmodified-Since", future)
}

func TestUploadPartCopy(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	data := "0123456789abcdefghij"
	e.put("/bkt/src", data, e.alice)
	id := e.initiate("/bkt/dst", e.alice)
	r := e.put("/bkt/dst?partNumber=1&uploadId="+id, "", e.alice, "X-Amz-Copy-Source", "bkt/src", "X-Amz-Copy-Source-Range", "bytes=0-9")
	etag1, _ := copyResult(t, "CopyPartResult", r.body)
	if etag1 != `"`+md5hex(data[:10])+`"` {
		t.Fatalf("part 1: %s", r.body)
	}
	r = e.put("/bkt/dst?partNumber=2&uploadId="+id, "", e.alice, "X-Amz-Copy-Source", "/bkt/src?versionId=null",
		"X-Amz-Copy-Source-If-Match", md5hex(data))
	etag2, _ := copyResult(t, "CopyPartResult", r.body)
	if etag2 != `"`+md5hex(data)+`"` {
		t.Fatalf("part 2: %s", r.body)
	}
	for _, tt := range []struct {
		name   string
		status int
		code   s3.Code
		h      map[string]string
		query  string
	}{
		{"bad range", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/bkt/src", "X-Amz-Copy-Source-Range": "bytes=5-"}, ""},
		{"range past the end", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/bkt/src", "X-Amz-Copy-Source-Range": "bytes=0-20"}, ""},
		{"an unknown version", 404, s3.NoSuchVersion, map[string]string{"X-Amz-Copy-Source": "/bkt/src?versionId=AAAAAAAAAAAAAAAAAAAAAA"}, ""},
		{"missing source", 404, s3.NoSuchKey, map[string]string{"X-Amz-Copy-Source": "/bkt/nope"}, ""},
		{"condition", 412, s3.PreconditionFailed, map[string]string{"X-Amz-Copy-Source": "/bkt/src", "X-Amz-Copy-Source-If-None-Match": "*"}, ""},
		{"bad part number", 400, s3.InvalidArgument, map[string]string{"X-Amz-Copy-Source": "/bkt/src"}, "partNumber=0&uploadId=" + id},
		{"unknown upload", 404, s3.NoSuchUpload, map[string]string{"X-Amz-Copy-Source": "/bkt/src"}, "partNumber=3&uploadId=nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			q := tt.query
			if q == "" {
				q = "partNumber=3&uploadId=" + id
			}
			e.mustErr(tt.status, tt.code, mpReq{method: "PUT", path: "/bkt/dst", query: q, header: tt.h, as: e.alice})
		})
	}
	e.t = t
	r = e.must(200, mpReq{method: "POST", path: "/bkt/dst", query: "uploadId=" + id, as: e.alice,
		body: completeBody([2]string{"1", etag1}, [2]string{"2", etag2})})
	if !strings.Contains(r.body, multipartETag(data[:10], data)) {
		t.Fatalf("complete: %s", r.body)
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt/dst", as: e.alice})
	if r.body != data[:10]+data {
		t.Fatalf("object %q", r.body)
	}
}

// TestUploadPartCopyVersion: UploadPartCopy from a source version copies that version,
// not the current one (the null version, and a version named by its id), and answers
// x-amz-copy-source-version-id.
func TestUploadPartCopyVersion(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	e.put("/bkt/src", "NULL-VERSION", e.alice)
	e.must(200, mpReq{method: "PUT", path: "/bkt", query: "versioning", body: enabledDoc, as: e.alice})
	v2 := e.put("/bkt/src", "SECOND-VERSION", e.alice).header.Get("X-Amz-Version-Id")
	e.put("/bkt/src", "CURRENT-VERSION", e.alice)
	id := e.initiate("/bkt/dst", e.alice)
	var parts [][2]string
	for i, c := range []struct{ version, data string }{{"null", "NULL-VERSION"}, {v2, "SECOND-VERSION"}, {"", "CURRENT-VERSION"}} {
		src := "/bkt/src"
		if c.version != "" {
			src += "?versionId=" + c.version
		}
		n := strconv.Itoa(i + 1)
		r := e.put("/bkt/dst?partNumber="+n+"&uploadId="+id, "", e.alice, "X-Amz-Copy-Source", src)
		etag, _ := copyResult(t, "CopyPartResult", r.body)
		if etag != `"`+md5hex(c.data)+`"` || r.header.Get("X-Amz-Copy-Source-Version-Id") != c.version {
			t.Fatalf("part copy from version %q: %s %v", c.version, r.body, r.header)
		}
		parts = append(parts, [2]string{n, etag})
	}
	e.must(200, mpReq{method: "POST", path: "/bkt/dst", query: "uploadId=" + id, as: e.alice, body: completeBody(parts...)})
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/dst", as: e.alice}); r.body != "NULL-VERSIONSECOND-VERSIONCURRENT-VERSION" {
		t.Fatalf("object %q", r.body)
	}
}
