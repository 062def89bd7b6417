package s3api

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/s3api/sig"
	"github.com/cairnkv/cairn/core/storage"
)

// mpEnv is an API over a fresh store with two users, for handler tests.
type mpEnv struct {
	t          *testing.T
	svc        *s3.Service
	api        *API
	alice, bob *s3.User
}

// mpMinPart is the smallest part but the last in these tests.
const mpMinPart = 4

func newMPEnv(t *testing.T) *mpEnv {
	t.Helper()
	mk, err := sse.NewMasterKey(make([]byte, sse.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return newMPEnvKey(t, mk)
}

// newMPEnvKey is newMPEnv with the SSE master key mk (nil: none, as a cluster node
// started without --sse-master-key).
func newMPEnvKey(t *testing.T, mk *sse.MasterKey) *mpEnv {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := s3.New(db, s3.Config{ChunkSize: 16, MinPartSize: mpMinPart, MasterKey: mk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Queued collection work is a valid state: no need to wait for the collector.
		svc.Close()
		if _, err := s3.Check(db, nil); err != nil {
			t.Errorf("invariants after the test: %v", err)
		}
		db.Close()
	})
	e := &mpEnv{t: t, svc: svc, api: New(svc, Config{Dialect: "riak"})}
	for _, name := range []string{"alice", "bob"} {
		u, err := svc.CreateUser(context.Background(), s3.NewUser{Name: name, Email: name + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if name == "alice" {
			e.alice = u
		} else {
			e.bob = u
		}
	}
	return e
}

// mpReq is one request of a handler test: path style on host s3.localhost.
type mpReq struct {
	method, path, query string
	header              map[string]string
	body                string
	// as signs the request (V2) as this user; nil is anonymous.
	as *s3.User
	// noLength sends the body without a Content-Length.
	noLength bool
}

// mpResp is a recorded answer.
type mpResp struct {
	status int
	header http.Header
	body   string
}

func (e *mpEnv) do(q mpReq) mpResp {
	e.t.Helper()
	target := q.path
	if q.query != "" {
		target += "?" + q.query
	}
	r := httptest.NewRequest(q.method, target, strings.NewReader(q.body))
	r.Host = "s3.localhost"
	if q.noLength {
		r.ContentLength = -1
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	if h := r.Header.Get("Host"); h != "" {
		r.Host = h // host-style addressing
	}
	if q.as != nil {
		sreq := &sig.Request{Method: r.Method, Host: r.Host, RawPath: q.path, RawQuery: q.query, Header: r.Header}
		sig.SignRequestV2(sreq, q.as.KeyID, q.as.KeySecret, time.Now())
	}
	w := httptest.NewRecorder()
	e.api.Handler().ServeHTTP(w, r)
	return mpResp{status: w.Code, header: canonicalHeader(w.Header()), body: w.Body.String()}
}

// canonicalHeader returns h as an HTTP client reads it: names canonicalised (the server
// writes user metadata names in lower case).
func canonicalHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out.Add(k, v)
		}
	}
	return out
}

// must runs the request and fails the test unless the status is want.
func (e *mpEnv) must(want int, q mpReq) mpResp {
	e.t.Helper()
	r := e.do(q)
	if r.status != want {
		e.t.Fatalf("%s %s?%s: status %d, want %d\n%s", q.method, q.path, q.query, r.status, want, r.body)
	}
	return r
}

// mustErr runs the request and fails the test unless it answers status with the error
// code.
func (e *mpEnv) mustErr(status int, code s3.Code, q mpReq) {
	e.t.Helper()
	r := e.must(status, q)
	var doc struct {
		Code, Message string
	}
	if q.method == http.MethodHead {
		return
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		e.t.Fatalf("%s %s?%s: error body: %v\n%s", q.method, q.path, q.query, err, r.body)
	}
	if doc.Code != string(code) {
		e.t.Fatalf("%s %s?%s: code %s (%s), want %s", q.method, q.path, q.query, doc.Code, doc.Message, code)
	}
}

func (e *mpEnv) bucket(name string, owner *s3.User, headers ...string) {
	e.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	e.must(200, mpReq{method: "PUT", path: "/" + name, header: h, as: owner})
}

func (e *mpEnv) put(path, body string, as *s3.User, headers ...string) mpResp {
	e.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	path, query, _ := strings.Cut(path, "?")
	return e.must(200, mpReq{method: "PUT", path: path, query: query, header: h, body: body, as: as})
}

func (e *mpEnv) initiate(path string, as *s3.User, headers ...string) string {
	e.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	r := e.must(200, mpReq{method: "POST", path: path, query: "uploads", header: h, as: as})
	var doc struct {
		XMLName       xml.Name
		Bucket, Key   string
		UploadID      string `xml:"UploadId"`
		NamespaceAttr string `xml:"xmlns,attr"`
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		e.t.Fatal(err)
	}
	if p, _ := url.PathUnescape(path); doc.XMLName.Local != "InitiateMultipartUploadResult" || doc.UploadID == "" || "/"+doc.Bucket+"/"+doc.Key != p {
		e.t.Fatalf("initiate answered %s", r.body)
	}
	return doc.UploadID
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func md5b64(s string) string {
	sum := md5.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// multipartETag is S3's ETag of an object assembled from parts with these contents.
func multipartETag(parts ...string) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum([]byte(p))
		h.Write(s[:])
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts))
}

func completeBody(parts ...[2]string) string {
	var b strings.Builder
	b.WriteString(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, p := range parts {
		b.WriteString("<Part><PartNumber>" + p[0] + "</PartNumber><ETag>" + p[1] + "</ETag></Part>")
	}
	b.WriteString("</CompleteMultipartUpload>")
	return b.String()
}

type listPartsDoc struct {
	Bucket, Key          string
	UploadID             string `xml:"UploadId"`
	Initiator, Owner     struct{ ID, DisplayName string }
	StorageClass         string
	PartNumberMarker     int
	NextPartNumberMarker int
	MaxParts             int
	IsTruncated          bool
	Parts                []struct {
		PartNumber int
		ETag       string
		Size       int64
	} `xml:"Part"`
}

func TestMultipartRoundTrip(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	id := e.initiate("/bkt/dir/a%20b+c", e.alice, "Content-Type", "text/x-parts", "X-Amz-Meta-Color", "blue",
		"Cache-Control", "no-cache", "X-Amz-Acl", "public-read")
	p1, p2 := "hello", "world!"
	r := e.put("/bkt/dir/a%20b+c?partNumber=2&uploadId="+id, p2, e.alice)
	if got := r.header.Get("ETag"); got != `"`+md5hex(p2)+`"` {
		t.Fatalf("part ETag %q", got)
	}
	e.must(200, mpReq{method: "PUT", path: "/bkt/dir/a%20b+c", query: "partNumber=1&uploadId=" + id, body: p1, as: e.alice,
		header: map[string]string{"Content-MD5": md5b64(p1)}})

	// List parts, one page at a time.
	r = e.must(200, mpReq{method: "GET", path: "/bkt/dir/a%20b+c", query: "uploadId=" + id + "&max-parts=1", as: e.alice})
	var lp listPartsDoc
	if err := xml.Unmarshal([]byte(r.body), &lp); err != nil {
		t.Fatal(err)
	}
	if lp.Bucket != "bkt" || lp.Key != "dir/a b+c" || lp.UploadID != id || lp.Initiator.ID != e.alice.ID || lp.Owner.DisplayName != e.alice.DisplayName ||
		lp.MaxParts != 1 || !lp.IsTruncated || lp.NextPartNumberMarker != 1 || len(lp.Parts) != 1 || lp.Parts[0].PartNumber != 1 ||
		lp.Parts[0].Size != 5 || lp.Parts[0].ETag != `"`+md5hex(p1)+`"` || lp.StorageClass != "STANDARD" {
		t.Fatalf("list parts page 1: %+v\n%s", lp, r.body)
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt/dir/a%20b+c", query: "uploadId=" + id + "&part-number-marker=1", as: e.alice})
	lp = listPartsDoc{}
	if err := xml.Unmarshal([]byte(r.body), &lp); err != nil {
		t.Fatal(err)
	}
	if lp.PartNumberMarker != 1 || lp.MaxParts != 1000 || lp.IsTruncated || len(lp.Parts) != 1 || lp.Parts[0].PartNumber != 2 {
		t.Fatalf("list parts page 2: %+v", lp)
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt/dir/a%20b+c", query: "uploadId=" + id + "&max-parts=0", as: e.alice})
	lp = listPartsDoc{}
	if err := xml.Unmarshal([]byte(r.body), &lp); err != nil {
		t.Fatal(err)
	}
	if lp.MaxParts != 0 || !lp.IsTruncated || len(lp.Parts) != 0 {
		t.Fatalf("max-parts=0: %+v", lp)
	}

	// The upload is listed.
	r = e.must(200, mpReq{method: "GET", path: "/bkt", query: "uploads", as: e.alice})
	if !strings.Contains(r.body, "<Upload><Key>dir/a b+c</Key><UploadId>"+id+"</UploadId>") {
		t.Fatalf("list uploads: %s", r.body)
	}

	// Complete; the answer names the object.
	r = e.must(200, mpReq{method: "POST", path: "/bkt/dir/a%20b+c", query: "uploadId=" + id, as: e.alice,
		body: completeBody([2]string{"1", `"` + md5hex(p1) + `"`}, [2]string{"2", md5hex(p2)})})
	var cr struct {
		XMLName               xml.Name
		Location, Bucket, Key string
		ET                    string `xml:"ETag"`
	}
	if err := xml.Unmarshal([]byte(r.body), &cr); err != nil {
		t.Fatal(err)
	}
	etag := multipartETag(p1, p2)
	if cr.XMLName.Local != "CompleteMultipartUploadResult" || cr.Location != "http://s3.localhost/bkt/dir/a%20b%2Bc" ||
		cr.Bucket != "bkt" || cr.Key != "dir/a b+c" || cr.ET != `"`+etag+`"` {
		t.Fatalf("complete: %+v\n%s", cr, r.body)
	}

	// The object has the data, type, metadata, headers and ACL the initiation gave.
	r = e.must(200, mpReq{method: "GET", path: "/bkt/dir/a%20b+c"}) // anonymous: public-read
	if r.body != p1+p2 || r.header.Get("Content-Type") != "text/x-parts" || r.header.Get("X-Amz-Meta-Color") != "blue" ||
		r.header.Get("Cache-Control") != "no-cache" || r.header.Get("ETag") != `"`+etag+`"` {
		t.Fatalf("object: %q %v", r.body, r.header)
	}
	// The upload is gone.
	e.mustErr(404, s3.NoSuchUpload, mpReq{method: "GET", path: "/bkt/dir/a%20b+c", query: "uploadId=" + id, as: e.alice})
	r = e.must(200, mpReq{method: "GET", path: "/bkt", query: "uploads", as: e.alice})
	if strings.Contains(r.body, "<Upload>") {
		t.Fatalf("list uploads after completion: %s", r.body)
	}
}

func TestMultipartHostStyleLocation(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	id := e.initiate("/bkt/k", e.alice)
	e.put("/bkt/k?partNumber=1&uploadId="+id, "x", e.alice)
	r := httptest.NewRequest("POST", "/k?uploadId="+id, strings.NewReader(completeBody([2]string{"1", md5hex("x")})))
	r.Host = "bkt.s3.localhost:9000"
	sreq := &sig.Request{Method: "POST", Host: r.Host, RawPath: "/k", RawQuery: "uploadId=" + id, Header: r.Header, HostBucket: "bkt"}
	sig.SignRequestV2(sreq, e.alice.KeyID, e.alice.KeySecret, time.Now())
	w := httptest.NewRecorder()
	e.api.Handler().ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<Location>http://bkt.s3.localhost:9000/k</Location>") {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}

func TestMultipartErrors(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	id := e.initiate("/bkt/k", e.alice)
	big := strings.Repeat("a", mpMinPart)
	e.put("/bkt/k?partNumber=1&uploadId="+id, big, e.alice)
	e.put("/bkt/k?partNumber=2&uploadId="+id, "b", e.alice)
	e.put("/bkt/k?partNumber=3&uploadId="+id, "c", e.alice)
	ok1, ok2, ok3 := md5hex(big), md5hex("b"), md5hex("c")

	tests := []struct {
		name   string
		status int
		code   s3.Code
		q      mpReq
	}{
		{"part number 0", 400, s3.InvalidArgument, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=0&uploadId=" + id, body: "x"}},
		{"part number 10001", 400, s3.InvalidArgument, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=10001&uploadId=" + id, body: "x"}},
		{"part number not a number", 400, s3.InvalidArgument, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=one&uploadId=" + id, body: "x"}},
		{"part number without upload id", 400, s3.InvalidArgument, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=1", body: "x"}},
		{"upload id without part number", 400, s3.InvalidArgument, mpReq{method: "PUT", path: "/bkt/k", query: "uploadId=" + id, body: "x"}},
		{"unknown upload", 404, s3.NoSuchUpload, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=1&uploadId=nope", body: "x"}},
		{"upload of another key", 404, s3.NoSuchUpload, mpReq{method: "PUT", path: "/bkt/other", query: "partNumber=1&uploadId=" + id, body: "x"}},
		{"no content length", 411, s3.MissingContentLength, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=1&uploadId=" + id, body: "x", noLength: true}},
		{"bad content-md5", 400, s3.InvalidDigest, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=1&uploadId=" + id, body: "x",
			header: map[string]string{"Content-MD5": "nope"}}},
		{"content-md5 mismatch", 400, s3.BadDigest, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=4&uploadId=" + id, body: "x",
			header: map[string]string{"Content-MD5": md5b64("y")}}},
		{"part by another user", 403, s3.AccessDenied, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=1&uploadId=" + id, body: "x", as: e.bob}},
		{"initiate in a missing bucket", 404, s3.NoSuchBucket, mpReq{method: "POST", path: "/nobkt/k", query: "uploads"}},
		{"initiate with a bad canned acl", 400, s3.InvalidArgument, mpReq{method: "POST", path: "/bkt/k", query: "uploads",
			header: map[string]string{"X-Amz-Acl": "bogus"}}},
		{"initiate with canned acl and grants", 400, s3.InvalidRequest, mpReq{method: "POST", path: "/bkt/k", query: "uploads",
			header: map[string]string{"X-Amz-Acl": "private", "X-Amz-Grant-Read": `uri="http://acs.amazonaws.com/groups/global/AllUsers"`}}},
		{"complete, not xml", 400, s3.MalformedXML, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id, body: "parts"}},
		{"complete, no parts", 400, s3.MalformedXML, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id, body: completeBody()}},
		{"complete, wrong etag", 400, s3.InvalidPart, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id,
			body: completeBody([2]string{"1", ok2})}},
		{"complete, missing part", 400, s3.InvalidPart, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id,
			body: completeBody([2]string{"1", ok1}, [2]string{"9", ok2})}},
		{"complete, unordered", 400, s3.InvalidPartOrder, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id,
			body: completeBody([2]string{"2", ok2}, [2]string{"1", ok1})}},
		{"complete, small part", 400, s3.EntityTooSmall, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id,
			body: completeBody([2]string{"1", ok1}, [2]string{"2", ok2}, [2]string{"3", ok3})}},
		{"complete, unknown upload", 404, s3.NoSuchUpload, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=nope",
			body: completeBody([2]string{"1", ok1})}},
		{"list parts, bad marker", 400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt/k", query: "uploadId=" + id + "&part-number-marker=x"}},
		{"list parts, bad max", 400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt/k", query: "uploadId=" + id + "&max-parts=-1"}},
		{"list parts, anonymous", 403, s3.AccessDenied, mpReq{method: "GET", path: "/bkt/k", query: "uploadId=" + id, as: &s3.User{}}},
		{"list uploads, bad max", 400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt", query: "uploads&max-uploads=x"}},
		{"list uploads, bad encoding", 400, s3.InvalidArgument, mpReq{method: "GET", path: "/bkt", query: "uploads&encoding-type=base64"}},
		{"abort unknown", 404, s3.NoSuchUpload, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=nope"}},
		{"get a part of an object", 501, s3.NotImplemented, mpReq{method: "GET", path: "/bkt/k", query: "partNumber=1"}},
		{"uploads with put", 405, s3.MethodNotAllowed, mpReq{method: "PUT", path: "/bkt/k", query: "uploads"}},
		{"head of an upload", 405, s3.MethodNotAllowed, mpReq{method: "HEAD", path: "/bkt/k", query: "uploadId=" + id}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			if tt.q.as == nil {
				tt.q.as = e.alice
			} else if tt.q.as.KeyID == "" {
				tt.q.as = nil // anonymous
			}
			e.mustErr(tt.status, tt.code, tt.q)
		})
	}
	e.t = t
	// A failed completion leaves the upload as it was: it still completes.
	r := e.must(200, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id, as: e.alice,
		body: completeBody([2]string{"1", ok1}, [2]string{"3", ok3})})
	if !strings.Contains(r.body, multipartETag(big, "c")) {
		t.Fatalf("complete: %s", r.body)
	}
	r = e.must(200, mpReq{method: "GET", path: "/bkt/k", as: e.alice})
	if r.body != big+"c" {
		t.Fatalf("object %q", r.body)
	}
}

func TestMultipartAbort(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	id := e.initiate("/bkt/k", e.alice)
	e.put("/bkt/k?partNumber=1&uploadId="+id, "data", e.alice)
	e.mustErr(403, s3.AccessDenied, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=" + id, as: e.bob})
	e.must(204, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=" + id, as: e.alice})
	e.mustErr(404, s3.NoSuchUpload, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=" + id, as: e.alice})
	e.mustErr(404, s3.NoSuchUpload, mpReq{method: "PUT", path: "/bkt/k", query: "partNumber=2&uploadId=" + id, body: "x", as: e.alice})
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/bkt/k", as: e.alice})
}

// listUploadsDoc is the part of a ListMultipartUploadsResult the tests read.
type listUploadsDoc struct {
	KeyMarker, NextKeyMarker        string
	UploadIDMarker                  string `xml:"UploadIdMarker"`
	NextUploadIDMarker              string `xml:"NextUploadIdMarker"`
	Prefix, Delimiter, EncodingType string
	MaxUploads                      int
	IsTruncated                     bool
	Uploads                         []struct {
		Key      string
		UploadID string `xml:"UploadId"`
	} `xml:"Upload"`
	CommonPrefixes []string `xml:"CommonPrefixes>Prefix"`
}

func TestListUploads(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	ids := map[string]string{}
	for _, k := range []string{"a", "b/1", "b/2", "c d", "c+e"} {
		ids[k] = e.initiate("/bkt/"+strings.ReplaceAll(k, " ", "%20"), e.alice)
	}
	list := func(query string) listUploadsDoc {
		t.Helper()
		r := e.must(200, mpReq{method: "GET", path: "/bkt", query: "uploads" + query, as: e.alice})
		var d listUploadsDoc
		if err := xml.Unmarshal([]byte(r.body), &d); err != nil {
			t.Fatal(err)
		}
		d.NextKeyMarker = strings.TrimSpace(d.NextKeyMarker)
		return d
	}
	keys := func(d listUploadsDoc) string {
		var ks []string
		for _, u := range d.Uploads {
			ks = append(ks, u.Key)
		}
		return strings.Join(ks, ",") + "|" + strings.Join(d.CommonPrefixes, ",")
	}
	d := list("&delimiter=/")
	if keys(d) != "a,c d,c+e|b/" || d.IsTruncated || d.Delimiter != "/" {
		t.Fatalf("delimiter: %+v", d)
	}
	d = list("&max-uploads=2")
	if keys(d) != "a,b/1|" || !d.IsTruncated || d.MaxUploads != 2 || d.NextKeyMarker != "b/1" || d.NextUploadIDMarker != ids["b/1"] {
		t.Fatalf("page 1: %+v", d)
	}
	d = list("&max-uploads=2&key-marker=" + d.NextKeyMarker + "&upload-id-marker=" + d.NextUploadIDMarker)
	if keys(d) != "b/2,c d|" || !d.IsTruncated || d.KeyMarker != "b/1" {
		t.Fatalf("page 2: %+v", d)
	}
	d = list("&prefix=c&encoding-type=url")
	if keys(d) != "c%20d,c%2Be|" || d.EncodingType != "url" || d.Prefix != "c" {
		t.Fatalf("encoded: %+v", d)
	}
	d = list("&max-uploads=0")
	if keys(d) != "|" || !d.IsTruncated || d.MaxUploads != 0 {
		t.Fatalf("max-uploads=0: %+v", d)
	}
	d = list("&max-uploads=5000&upload-id-marker=zzz")
	if len(d.Uploads) != 5 || d.MaxUploads != 1000 {
		t.Fatalf("upload-id-marker without key-marker: %+v", d)
	}
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/bkt", query: "uploads", as: e.bob})
	e.mustErr(404, s3.NoSuchBucket, mpReq{method: "GET", path: "/nobkt", query: "uploads", as: e.alice})
	for k, id := range ids {
		e.must(204, mpReq{method: "DELETE", path: "/bkt/" + strings.ReplaceAll(k, " ", "%20"), query: "uploadId=" + id, as: e.alice})
	}
}

// TestUploadPartStreaming uploads a part as an aws-chunked V4 body (unsigned chunks
// with a trailer), as newer SDKs do.
func TestUploadPartStreaming(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	id := e.initiate("/bkt/k", e.alice)
	body := "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n"
	r := httptest.NewRequest("PUT", "/bkt/k?partNumber=1&uploadId="+id, strings.NewReader(body))
	r.Host = "s3.localhost"
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "5")
	r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	sreq := &sig.Request{Method: "PUT", Host: r.Host, RawPath: "/bkt/k", RawQuery: "partNumber=1&uploadId=" + id, Header: r.Header}
	sig.SignRequestV4(sreq, e.alice.KeyID, e.alice.KeySecret, "us-east-1", time.Now(), sig.StreamingUnsignedPayload)
	w := httptest.NewRecorder()
	e.api.Handler().ServeHTTP(w, r)
	if w.Code != 200 || w.Header().Get("ETag") != `"`+md5hex("hello")+`"` {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body.String())
	}
	e.must(204, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=" + id, as: e.alice})
}

// TestConditionalWritesHTTP: PUT and multipart completion with If-None-Match "*" and
// If-Match answer as S3: 412 PreconditionFailed, 404 NoSuchKey, 501 for If-None-Match
// with an ETag; a completion refused leaves the upload to complete or abort.
func TestConditionalWritesHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	cond := func(h ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(h); i += 2 {
			m[h[i]] = h[i+1]
		}
		return m
	}
	r := e.must(200, mpReq{method: "PUT", path: "/bkt/k", body: "one", as: e.alice, header: cond("If-None-Match", "*")})
	etag := r.header.Get("ETag")
	e.mustErr(412, s3.PreconditionFailed, mpReq{method: "PUT", path: "/bkt/k", body: "two", as: e.alice, header: cond("If-None-Match", "*")})
	e.mustErr(501, s3.NotImplemented, mpReq{method: "PUT", path: "/bkt/k", body: "two", as: e.alice, header: cond("If-None-Match", etag)})
	e.mustErr(412, s3.PreconditionFailed, mpReq{method: "PUT", path: "/bkt/k", body: "two", as: e.alice, header: cond("If-Match", `"00"`)})
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "PUT", path: "/bkt/nope", body: "two", as: e.alice, header: cond("If-Match", etag)})
	e.must(200, mpReq{method: "PUT", path: "/bkt/k", body: "two", as: e.alice, header: cond("If-Match", etag)})

	id := e.initiate("/bkt/k", e.alice)
	e.put("/bkt/k?partNumber=1&uploadId="+id, "part", e.alice)
	body := completeBody([2]string{"1", `"` + md5hex("part") + `"`})
	e.mustErr(412, s3.PreconditionFailed, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id, body: body, as: e.alice,
		header: cond("If-None-Match", "*")})
	e.must(200, mpReq{method: "POST", path: "/bkt/k", query: "uploadId=" + id, body: body, as: e.alice,
		header: cond("If-Match", `"`+md5hex("two")+`"`)})
	if r := e.must(200, mpReq{method: "GET", path: "/bkt/k", as: e.alice}); r.body != "part" {
		t.Fatalf("after the conditional completion: %q", r.body)
	}
}
