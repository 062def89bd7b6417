package s3api

import (
	"encoding/xml"
	"fmt"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

// Tests of the fixes of the review of versioning, Object Lock and lifecycle (issue
// 20) on the wire.

// lcAll expires every object 30 days after its creation.
const lcAll = `<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>`

// versionedEnv returns an env whose bucket "bkt", of alice, holds k's null version
// ("NULL") and, versioning enabled, its current version ("CURRENT"), whose id it
// returns.
func versionedEnv(t *testing.T) (*mpEnv, string) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	e.put("/bkt/k", "NULL", e.alice)
	e.must(200, mpReq{method: "PUT", path: "/bkt", query: "versioning", body: enabledDoc, as: e.alice})
	return e, e.put("/bkt/k", "CURRENT", e.alice).header.Get("X-Amz-Version-Id")
}

// TestExpirationOnlyOnCurrentVersion: x-amz-expiration answers a GET or HEAD of the
// current version, by version id too, never of a noncurrent one (Expiration does
// not expire it).
func TestExpirationOnlyOnCurrentVersion(t *testing.T) {
	e, cur := versionedEnv(t)
	e.must(200, mpReq{method: "PUT", path: "/bkt", query: "lifecycle", header: map[string]string{"Content-MD5": md5b64(lcAll)}, body: lcAll, as: e.alice})
	for _, tc := range []struct {
		method, query string
		want          bool
	}{
		{"GET", "", true}, {"HEAD", "", true},
		{"GET", "versionId=" + cur, true}, {"HEAD", "versionId=" + cur, true},
		{"GET", "versionId=null", false}, {"HEAD", "versionId=null", false},
	} {
		r := e.must(200, mpReq{method: tc.method, path: "/bkt/k", query: tc.query, as: e.alice})
		if got := r.header.Get("X-Amz-Expiration") != ""; got != tc.want {
			t.Errorf("%s ?%s: x-amz-expiration %q, want one: %v", tc.method, tc.query, r.header.Get("X-Amz-Expiration"), tc.want)
		}
	}
}

// TestRetriedCompletionVersion: a retried CompleteMultipartUpload answers the version
// id of the completion, not "null".
func TestRetriedCompletionVersion(t *testing.T) {
	e, _ := versionedEnv(t)
	up := e.initiate("/bkt/mp", e.alice)
	etag := e.must(200, mpReq{method: "PUT", path: "/bkt/mp", query: "partNumber=1&uploadId=" + up, body: "part", as: e.alice}).header.Get("ETag")
	body := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, etag)
	first := e.must(200, mpReq{method: "POST", path: "/bkt/mp", query: "uploadId=" + up, body: body, as: e.alice}).header.Get("X-Amz-Version-Id")
	again := e.must(200, mpReq{method: "POST", path: "/bkt/mp", query: "uploadId=" + up, body: body, as: e.alice}).header.Get("X-Amz-Version-Id")
	if first == "" || first == s3.NullVersionID || again != first {
		t.Fatalf("completion version %q, retried %q", first, again)
	}
}

// TestCopyFromMarkerVersion: a copy whose source version id is a delete marker is
// 400 InvalidRequest, without the marker's headers.
func TestCopyFromMarkerVersion(t *testing.T) {
	e, _ := versionedEnv(t)
	marker := e.must(204, mpReq{method: "DELETE", path: "/bkt/k", as: e.alice}).header.Get("X-Amz-Version-Id")
	q := mpReq{method: "PUT", path: "/bkt/c", header: map[string]string{"X-Amz-Copy-Source": "/bkt/k?versionId=" + marker}, as: e.alice}
	e.mustErr(400, s3.InvalidRequest, q)
	if r := e.do(q); r.header.Get("X-Amz-Delete-Marker") != "" || r.header.Get("Last-Modified") != "" {
		t.Errorf("marker headers on the copy's answer: %v", r.header)
	}
}

// TestCopySourceVersionHeader: a copy answers x-amz-copy-source-version-id with the
// version it copied when the source bucket keeps versions, asked for or not, and
// none from a bucket never versioned.
func TestCopySourceVersionHeader(t *testing.T) {
	e, cur := versionedEnv(t)
	e.bucket("plain", e.alice)
	e.put("/plain/k", "x", e.alice)
	for _, tc := range []struct{ source, want string }{
		{"/bkt/k", cur},
		{"/bkt/k?versionId=null", s3.NullVersionID},
		{"/bkt/k?versionId=" + cur, cur},
		{"/plain/k", ""},
	} {
		r := e.must(200, mpReq{method: "PUT", path: "/bkt/copy", header: map[string]string{"X-Amz-Copy-Source": tc.source}, as: e.alice})
		if got := r.header.Get("X-Amz-Copy-Source-Version-Id"); got != tc.want {
			t.Errorf("copy from %s: x-amz-copy-source-version-id %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestTaggingVersionAnswers: ?tagging with an empty versionId is 400 as GET's is, and
// the tagging answers of a versioned bucket name the version in x-amz-version-id.
func TestTaggingVersionAnswers(t *testing.T) {
	e, cur := versionedEnv(t)
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt/k", query: "tagging&versionId=", as: e.alice})
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt/k", query: "versionId=", as: e.alice})
	tagging := `<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>`
	for _, tc := range []struct {
		method, query string
		status        int
		want          string
	}{
		{"PUT", "tagging", 200, cur},
		{"GET", "tagging", 200, cur},
		{"PUT", "tagging&versionId=null", 200, s3.NullVersionID},
		{"GET", "tagging&versionId=null", 200, s3.NullVersionID},
		{"DELETE", "tagging&versionId=" + cur, 204, cur},
	} {
		body := ""
		if tc.method == "PUT" {
			body = tagging
		}
		r := e.must(tc.status, mpReq{method: tc.method, path: "/bkt/k", query: tc.query, body: body, as: e.alice})
		if got := r.header.Get("X-Amz-Version-Id"); got != tc.want {
			t.Errorf("%s ?%s: x-amz-version-id %q, want %q", tc.method, tc.query, got, tc.want)
		}
	}
	var doc struct {
		Tags []struct{ Key string } `xml:"TagSet>Tag"`
	}
	r := e.must(200, mpReq{method: "GET", path: "/bkt/k", query: "tagging&versionId=null", as: e.alice})
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || len(doc.Tags) != 1 {
		t.Fatalf("null version's tags: %s %v", r.body, err)
	}
	// A bucket never versioned answers none.
	e.bucket("plain", e.alice)
	e.put("/plain/k", "x", e.alice)
	if r := e.must(200, mpReq{method: "GET", path: "/plain/k", query: "tagging", as: e.alice}); r.header.Get("X-Amz-Version-Id") != "" {
		t.Errorf("never versioned: x-amz-version-id %q", r.header.Get("X-Amz-Version-Id"))
	}
}
