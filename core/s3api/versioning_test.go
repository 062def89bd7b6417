package s3api

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

const enabledDoc = `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`

// listVersionsDoc is a parsed ListVersionsResult: its entries in document order.
type listVersionsDoc struct {
	XMLName             xml.Name
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string `xml:"NextVersionIdMarker"`
	Entries             []struct {
		XMLName   xml.Name
		Key       string
		VersionID string `xml:"VersionId"`
		IsLatest  bool
		Size      int64
	} `xml:",any"`
}

// firstID is the version id of the first Version or DeleteMarker.
func (d listVersionsDoc) firstID() string {
	for _, e := range d.Entries {
		if e.XMLName.Local == "Version" || e.XMLName.Local == "DeleteMarker" {
			return e.VersionID
		}
	}
	return ""
}

func (d listVersionsDoc) summary() string {
	var s []string
	for _, e := range d.Entries {
		if e.XMLName.Local != "Version" && e.XMLName.Local != "DeleteMarker" {
			continue
		}
		x := e.Key + ":" + e.XMLName.Local[:1]
		if e.IsLatest {
			x += "L"
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

func TestVersioningHandlers(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	e.put("/bkt/k", "null version", e.alice)
	r := e.must(200, mpReq{method: "GET", path: "/bkt", query: "versioning", as: e.alice})
	if !strings.Contains(r.body, `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></VersioningConfiguration>`) {
		t.Fatalf("never versioned: %s", r.body)
	}
	for _, tc := range []struct {
		name, body string
		as         *s3.User
		status     int
		code       s3.Code
	}{
		{"not XML", "nope", e.alice, 400, s3.MalformedXML},
		{"another document", `<Tagging/>`, e.alice, 400, s3.MalformedXML},
		{"bad status", `<VersioningConfiguration><Status>Off</Status></VersioningConfiguration>`, e.alice, 400, s3.IllegalVersioningConfiguration},
		{"no status", `<VersioningConfiguration/>`, e.alice, 400, s3.IllegalVersioningConfiguration},
		{"MFA delete", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`, e.alice, 501, s3.NotImplemented},
		{"bad MFA delete", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>x</MfaDelete></VersioningConfiguration>`, e.alice, 400, s3.IllegalVersioningConfiguration},
		{"not the owner", enabledDoc, e.bob, 403, s3.AccessDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.mustErr(tc.status, tc.code, mpReq{method: "PUT", path: "/bkt", query: "versioning", body: tc.body, as: tc.as})
		})
	}
	e.t = t
	e.must(200, mpReq{method: "PUT", path: "/bkt", query: "versioning", body: enabledDoc, as: e.alice})
	r = e.must(200, mpReq{method: "GET", path: "/bkt", query: "versioning", as: e.alice})
	if !strings.Contains(r.body, "<Status>Enabled</Status>") {
		t.Fatalf("enabled: %s", r.body)
	}

	// PUT answers the new version's id; GET and HEAD answer it too.
	v1 := e.put("/bkt/k", "one", e.alice).header.Get("X-Amz-Version-Id")
	if s3.CheckVersionID(v1) != nil || v1 == "null" {
		t.Fatalf("version id %q", v1)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/k", as: e.alice}); r.body != "one" || r.header.Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("GET: %q %v", r.body, r.header)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/k", query: "versionId=null", as: e.alice}); r.body != "null version" || r.header.Get("X-Amz-Version-Id") != "null" {
		t.Fatalf("GET null: %q %v", r.body, r.header)
	}
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt/k", query: "versionId=nope", as: e.alice})
	e.mustErr(404, s3.NoSuchVersion, mpReq{method: "GET", path: "/bkt/k", query: "versionId=AAAAAAAAAAAAAAAAAAAAAA", as: e.alice})

	// DELETE makes a marker; GET and HEAD then answer 404 with its headers, GET of the
	// marker 405.
	r = e.must(204, mpReq{method: "DELETE", path: "/bkt/k", as: e.alice})
	marker := r.header.Get("X-Amz-Version-Id")
	if r.header.Get("X-Amz-Delete-Marker") != "true" || s3.CheckVersionID(marker) != nil {
		t.Fatalf("DELETE: %v", r.header)
	}
	for _, m := range []string{"GET", "HEAD"} {
		r = e.must(404, mpReq{method: m, path: "/bkt/k", as: e.alice})
		if r.header.Get("X-Amz-Delete-Marker") != "true" || r.header.Get("X-Amz-Version-Id") != marker {
			t.Fatalf("%s behind a marker: %v", m, r.header)
		}
		r = e.must(405, mpReq{method: m, path: "/bkt/k", query: "versionId=" + marker, as: e.alice})
		if r.header.Get("X-Amz-Delete-Marker") != "true" || r.header.Get("Last-Modified") == "" {
			t.Fatalf("%s of the marker: %v", m, r.header)
		}
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt", query: "versions", as: e.alice})
	var doc listVersionsDoc
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || doc.summary() != "k:DL k:V k:V" || doc.firstID() != marker {
		t.Fatalf("versions: %v %s\n%s", err, doc.summary(), r.body)
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt", query: "versions&max-keys=1", as: e.alice})
	doc = listVersionsDoc{}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || !doc.IsTruncated || doc.NextKeyMarker != "k" || doc.NextVersionIDMarker != marker {
		t.Fatalf("a page of one: %v %+v", err, doc)
	}
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt", query: "versions&version-id-marker=null", as: e.alice})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/bkt", query: "versions", as: e.bob})

	// DELETE of a version removes it: deleting the marker brings v1 back.
	r = e.must(204, mpReq{method: "DELETE", path: "/bkt/k", query: "versionId=" + marker, as: e.alice})
	if r.header.Get("X-Amz-Version-Id") != marker || r.header.Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("DELETE of the marker: %v", r.header)
	}
	e.must(200, mpReq{method: "GET", path: "/bkt/k", as: e.alice})
	e.must(405, mpReq{method: "DELETE", path: "/bkt/k", query: "versionId=null&acl", as: e.alice})

	// Copy from a version answers both ids.
	r = e.must(200, mpReq{method: "PUT", path: "/bkt/copy", header: map[string]string{"X-Amz-Copy-Source": "/bkt/k?versionId=null"}, as: e.alice})
	if r.header.Get("X-Amz-Copy-Source-Version-Id") != "null" || s3.CheckVersionID(r.header.Get("X-Amz-Version-Id")) != nil {
		t.Fatalf("copy: %v", r.header)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/copy", as: e.alice}); r.body != "null version" {
		t.Fatalf("copied %q", r.body)
	}

	// Multi-object delete: a marker for a key, a version for key@id.
	body := deleteBody(false, "copy", "k#"+v1)
	r = e.must(200, mpReq{method: "POST", path: "/bkt", query: "delete", header: map[string]string{"Content-MD5": md5b64(body)}, body: body, as: e.alice})
	var res struct {
		Deleted []struct {
			Key, VersionID, DeleteMarkerVersionID string
			DeleteMarker                          bool
		} `xml:"Deleted"`
	}
	if err := xml.Unmarshal([]byte(strings.NewReplacer("VersionId>", "VersionID>").Replace(r.body)), &res); err != nil || len(res.Deleted) != 2 {
		t.Fatalf("multi-delete: %v\n%s", err, r.body)
	}
	if d := res.Deleted[0]; !d.DeleteMarker || d.DeleteMarkerVersionID == "" || d.VersionID != "" {
		t.Fatalf("multi-delete of a key: %+v", d)
	}
	if d := res.Deleted[1]; d.DeleteMarker || d.VersionID != v1 {
		t.Fatalf("multi-delete of a version: %+v", d)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/k", as: e.alice}); r.body != "null version" {
		t.Fatalf("after deleting v1: %q", r.body)
	}
	// The bucket keeps versions: it is not empty.
	e.mustErr(409, s3.BucketNotEmpty, mpReq{method: "DELETE", path: "/bkt", as: e.alice})
}
