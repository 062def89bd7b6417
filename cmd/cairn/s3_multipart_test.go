package main

// End-to-end tests of multipart uploads on the object-storage interface: minio-go's
// multipart PutObject in the four signature × addressing combinations, and raw signed
// requests for everything a client library hides — parts out of order and re-uploaded,
// the paging of ListParts and ListMultipartUploads, every completion error, abort,
// part numbers out of range, a bucket that cannot be deleted while an upload is open,
// UploadPartCopy with a source range, and the abort of abandoned uploads by the
// collector. Every server is stopped at the end and `cairn check` must find its store
// consistent with no collection work left.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// mpMiB is a mebibyte; mpMinPart the smallest part but the last (S3's 5 MiB).
const (
	mpMiB     = 1 << 20
	mpMinPart = 5 * mpMiB
)

// mpETag is the S3 ETag of a multipart object made of parts, without quotes: the hex
// MD5 of the concatenated binary MD5s of the parts, "-", and the number of parts.
func mpETag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum(p)
		h.Write(s[:])
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
}

// mpSplit cuts data into parts of size bytes (the last one shorter).
func mpSplit(data []byte, size int) [][]byte {
	var parts [][]byte
	for len(data) > size {
		parts = append(parts, data[:size])
		data = data[size:]
	}
	return append(parts, data)
}

// mpQuery is the query of a part upload.
func mpQuery(uploadID string, n int) string {
	return "partNumber=" + strconv.Itoa(n) + "&uploadId=" + url.QueryEscape(uploadID)
}

// mpUploadQuery is the query naming an upload (list parts, complete, abort).
func mpUploadQuery(uploadID string) string { return "uploadId=" + url.QueryEscape(uploadID) }

// mpOwner is the Owner or Initiator element of a multipart listing.
type mpOwner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

// mpInitiateResult is InitiateMultipartUploadResult.
type mpInitiateResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// mpCompleteResult is CompleteMultipartUploadResult.
type mpCompleteResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// mpPartsResult is ListPartsResult.
type mpPartsResult struct {
	XMLName              xml.Name `xml:"ListPartsResult"`
	Bucket               string   `xml:"Bucket"`
	Key                  string   `xml:"Key"`
	UploadID             string   `xml:"UploadId"`
	Initiator            mpOwner  `xml:"Initiator"`
	Owner                mpOwner  `xml:"Owner"`
	StorageClass         string   `xml:"StorageClass"`
	PartNumberMarker     int      `xml:"PartNumberMarker"`
	NextPartNumberMarker int      `xml:"NextPartNumberMarker"`
	MaxParts             int      `xml:"MaxParts"`
	IsTruncated          bool     `xml:"IsTruncated"`
	Parts                []struct {
		PartNumber   int    `xml:"PartNumber"`
		LastModified string `xml:"LastModified"`
		ETag         string `xml:"ETag"`
		Size         int64  `xml:"Size"`
	} `xml:"Part"`
}

// numbers lists the part numbers of the page.
func (p *mpPartsResult) numbers() []int {
	var ns []int
	for _, x := range p.Parts {
		ns = append(ns, x.PartNumber)
	}
	return ns
}

// mpUploadsResult is ListMultipartUploadsResult.
type mpUploadsResult struct {
	XMLName            xml.Name `xml:"ListMultipartUploadsResult"`
	Bucket             string   `xml:"Bucket"`
	KeyMarker          string   `xml:"KeyMarker"`
	UploadIDMarker     string   `xml:"UploadIdMarker"`
	NextKeyMarker      string   `xml:"NextKeyMarker"`
	NextUploadIDMarker string   `xml:"NextUploadIdMarker"`
	Prefix             string   `xml:"Prefix"`
	Delimiter          string   `xml:"Delimiter"`
	MaxUploads         int      `xml:"MaxUploads"`
	IsTruncated        bool     `xml:"IsTruncated"`
	Uploads            []struct {
		Key          string  `xml:"Key"`
		UploadID     string  `xml:"UploadId"`
		Initiator    mpOwner `xml:"Initiator"`
		Owner        mpOwner `xml:"Owner"`
		StorageClass string  `xml:"StorageClass"`
		Initiated    string  `xml:"Initiated"`
	} `xml:"Upload"`
	CommonPrefixes []struct {
		Prefix string `xml:"Prefix"`
	} `xml:"CommonPrefixes"`
}

// entries renders the page as "key uploadID" lines and "prefix/" lines.
func (l *mpUploadsResult) entries() []string {
	var out []string
	for _, u := range l.Uploads {
		out = append(out, u.Key+" "+u.UploadID)
	}
	for _, p := range l.CommonPrefixes {
		out = append(out, "prefix "+p.Prefix)
	}
	return out
}

// mpCopyResult is CopyPartResult or CopyObjectResult.
type mpCopyResult struct {
	XMLName      xml.Name
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
}

// mpXML requires a 200 answer with an application/xml body whose root element is root
// in the S3 namespace, and decodes it into v.
func mpXML(t testing.TB, r *resp, root string, v any) {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("want 200 with %s, got\n%s", root, r)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Errorf("%s: Content-Type %q, want application/xml", root, ct)
	}
	dec := xml.NewDecoder(bytes.NewReader(r.Body))
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: no root element: %v\n%s", root, err, r)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != root || se.Name.Space != s3NS {
				t.Fatalf("root element {%s}%s, want {%s}%s:\n%s", se.Name.Space, se.Name.Local, s3NS, root, r)
			}
			break
		}
	}
	if err := xml.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s: %v\n%s", root, err, r)
	}
}

// mpTime parses an S3 XML timestamp (2006-01-02T15:04:05.000Z) and requires it to be
// within a few minutes of now.
func mpTime(t testing.TB, what, v string) time.Time {
	t.Helper()
	ts, err := time.Parse("2006-01-02T15:04:05.000Z", v)
	if err != nil {
		t.Errorf("%s %q: not an S3 timestamp: %v", what, v, err)
		return ts
	}
	if d := time.Since(ts); d < -time.Minute || d > 10*time.Minute {
		t.Errorf("%s %q is not about now", what, v)
	}
	return ts
}

// mpInitiate starts an upload (headers h) and returns its id.
func mpInitiate(t testing.TB, c s3c, bucket, key string, h ...string) string {
	t.Helper()
	r := c.do(t, http.MethodPost, bucket, key, "uploads", h, "")
	var res mpInitiateResult
	mpXML(t, r, "InitiateMultipartUploadResult", &res)
	if res.Bucket != bucket || res.Key != key || res.UploadID == "" {
		t.Fatalf("initiate %s/%s: answer %+v", bucket, key, res)
	}
	return res.UploadID
}

// mpPutPart uploads part n and returns its ETag, which must be the quoted MD5.
func mpPutPart(t testing.TB, c s3c, bucket, key, id string, n int, data []byte) string {
	t.Helper()
	r := c.do(t, http.MethodPut, bucket, key, mpQuery(id, n), nil, string(data))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("upload part %d of %s/%s: want 200, got\n%s", n, bucket, key, r)
	}
	want := `"` + s3MD5Hex(data) + `"`
	if got := r.Header.Get("ETag"); got != want {
		t.Fatalf("upload part %d of %s/%s: ETag %q, want %q", n, bucket, key, got, want)
	}
	return want
}

// mpPart names a part in a completion body.
type mpPart struct {
	n    int
	etag string
}

// mpCompleteBody renders a CompleteMultipartUpload document (with the S3 namespace when
// ns is set, as awscli sends it).
func mpCompleteBody(ns bool, parts ...mpPart) string {
	var b strings.Builder
	if ns {
		b.WriteString(`<CompleteMultipartUpload xmlns="` + s3NS + `">`)
	} else {
		b.WriteString("<CompleteMultipartUpload>")
	}
	for _, p := range parts {
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", p.n, xmlEscape(p.etag))
	}
	b.WriteString("</CompleteMultipartUpload>")
	return b.String()
}

// xmlEscape escapes text for an XML element.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// mpComplete completes an upload and checks the answer; it returns the quoted ETag.
func mpComplete(t testing.TB, c s3c, bucket, key, id string, parts ...mpPart) string {
	t.Helper()
	r := c.do(t, http.MethodPost, bucket, key, mpUploadQuery(id), nil, mpCompleteBody(false, parts...))
	var res mpCompleteResult
	mpXML(t, r, "CompleteMultipartUploadResult", &res)
	if res.Bucket != bucket || res.Key != key || res.Location == "" || !strings.HasPrefix(res.ETag, `"`) ||
		!strings.HasSuffix(res.ETag, `-`+strconv.Itoa(len(parts))+`"`) {
		t.Fatalf("complete %s/%s: answer %+v", bucket, key, res)
	}
	return res.ETag
}

// mpUpload stores data as a multipart object of the given parts (initiated with headers
// h) and returns the quoted ETag, which it checks against mpETag.
func mpUpload(t testing.TB, c s3c, bucket, key string, parts [][]byte, h ...string) string {
	t.Helper()
	id := mpInitiate(t, c, bucket, key, h...)
	var list []mpPart
	for i, p := range parts {
		list = append(list, mpPart{i + 1, mpPutPart(t, c, bucket, key, id, i+1, p)})
	}
	etag := mpComplete(t, c, bucket, key, id, list...)
	if want := `"` + mpETag(parts...) + `"`; etag != want {
		t.Fatalf("complete %s/%s: ETag %s, want %s", bucket, key, etag, want)
	}
	return etag
}

// mpListParts lists an upload's parts (extra query, e.g. "max-parts=1").
func mpListParts(t testing.TB, c s3c, bucket, key, id, extra string) *mpPartsResult {
	t.Helper()
	q := mpUploadQuery(id)
	if extra != "" {
		q += "&" + extra
	}
	var res mpPartsResult
	mpXML(t, c.do(t, http.MethodGet, bucket, key, q, nil, ""), "ListPartsResult", &res)
	if res.Bucket != bucket || res.Key != key || res.UploadID != id {
		t.Errorf("list parts %s/%s?%s: Bucket %q Key %q UploadId %q", bucket, key, q, res.Bucket, res.Key, res.UploadID)
	}
	return &res
}

// mpListUploads lists a bucket's uploads (extra query, e.g. "prefix=a/").
func mpListUploads(t testing.TB, c s3c, bucket, extra string) *mpUploadsResult {
	t.Helper()
	q := "uploads"
	if extra != "" {
		q += "&" + extra
	}
	var res mpUploadsResult
	mpXML(t, c.do(t, http.MethodGet, bucket, "", q, nil, ""), "ListMultipartUploadsResult", &res)
	if res.Bucket != bucket {
		t.Errorf("list uploads of %s?%s: Bucket %q", bucket, q, res.Bucket)
	}
	return &res
}

// mpGetObject reads an object with c and requires its bytes, its ETag (quoted) and its
// length.
func mpGetObject(t testing.TB, c s3c, bucket, key string, data []byte, etag string) *resp {
	t.Helper()
	r := c.must(t, http.StatusOK, http.MethodGet, bucket, key, "", nil, "")
	if !bytes.Equal(r.Body, data) {
		t.Fatalf("GET %s/%s: %d bytes (MD5 %s), want %d (MD5 %s)", bucket, key, len(r.Body), s3MD5Hex(r.Body), len(data), s3MD5Hex(data))
	}
	if got := r.Header.Get("ETag"); got != etag {
		t.Errorf("GET %s/%s: ETag %q, want %q", bucket, key, got, etag)
	}
	if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(data)) {
		t.Errorf("GET %s/%s: Content-Length %q, want %d", bucket, key, got, len(data))
	}
	return r
}

// TestS3MultipartMinio uploads a 17 MiB object through minio-go's multipart PutObject
// (5 MiB parts: 5+5+5+2) in the four signature × addressing combinations and reads it
// back; minio-go streams every part aws-chunked with V4.
func TestS3MultipartMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "mp-minio@example.com", "Multipart Minio")
	data := randomBytes(17 * mpMiB)
	parts := mpSplit(data, mpMinPart)
	wantETag := mpETag(parts...)
	if len(parts) != 4 || !strings.HasSuffix(wantETag, "-4") {
		t.Fatalf("test setup: %d parts, ETag %s", len(parts), wantETag)
	}
	t.Run("group", func(t *testing.T) {
		for _, combo := range minioCombos {
			t.Run(combo.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				c := newMinio(t, s, u.cred(), combo)
				b := "mpm-" + combo.name
				if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
					t.Fatalf("MakeBucket: %v", err)
				}
				key := "dir/seventeen mib.bin"
				info, err := c.PutObject(ctx, b, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
					PartSize: mpMinPart, ContentType: "application/x-multipart-test",
					UserMetadata: map[string]string{"Origin": "minio " + combo.name},
				})
				if err != nil {
					t.Fatalf("PutObject (multipart): %v", err)
				}
				if info.ETag != wantETag || info.Size != int64(len(data)) {
					t.Errorf("PutObject: ETag %q size %d, want %q %d", info.ETag, info.Size, wantETag, len(data))
				}
				obj, err := c.GetObject(ctx, b, key, minio.GetObjectOptions{})
				if err != nil {
					t.Fatalf("GetObject: %v", err)
				}
				got, err := io.ReadAll(obj)
				obj.Close()
				if err != nil {
					t.Fatalf("GetObject: reading: %v", err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("GetObject: %d bytes (MD5 %s) differ from the %d stored (MD5 %s)", len(got), s3MD5Hex(got), len(data), s3MD5Hex(data))
				}
				st, err := c.StatObject(ctx, b, key, minio.StatObjectOptions{})
				if err != nil {
					t.Fatalf("StatObject: %v", err)
				}
				if st.ETag != wantETag || st.Size != int64(len(data)) || st.ContentType != "application/x-multipart-test" ||
					st.UserMetadata["Origin"] != "minio "+combo.name {
					t.Errorf("StatObject: ETag %q size %d type %q meta %v", st.ETag, st.Size, st.ContentType, st.UserMetadata)
				}
				var listed []minio.ObjectInfo
				for o := range c.ListObjects(ctx, b, minio.ListObjectsOptions{Recursive: true, UseV1: true}) {
					if o.Err != nil {
						t.Fatalf("ListObjects: %v", o.Err)
					}
					listed = append(listed, o)
				}
				if len(listed) != 1 || listed[0].Key != key || listed[0].ETag != wantETag || listed[0].Size != int64(len(data)) {
					t.Errorf("ListObjects: %+v", listed)
				}
				// Nothing is left in progress.
				for up := range c.ListIncompleteUploads(ctx, b, "", true) {
					if up.Err != nil {
						t.Fatalf("ListIncompleteUploads: %v", up.Err)
					}
					t.Errorf("upload left in progress: %+v", up)
				}
			})
		}
	})
	sum := waitS3Clean(t, s)
	// Completion names the parts' data without copying it: one blob per part (each is
	// larger than a chunk), nothing else.
	if want := (s3CheckSummary{Users: 2, Buckets: 4, Objects: 4, Chunks: 0, Blobs: 16}); sum != want {
		t.Errorf("cairn check: %+v, want %+v", sum, want)
	}
}

// TestS3MultipartRaw drives multipart uploads with raw signed requests.
func TestS3MultipartRaw(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "mp-raw@example.com", "Multipart Raw")
	other := s3CreateUser(t, s, "mp-other@example.com", "Multipart Other")
	owner := s3c{s: s, cred: u.cred(), sign: s3V4}

	t.Run("group", func(t *testing.T) {
		// The whole life of an upload in each signature × addressing combination.
		for _, sign := range []s3SigVer{s3V2, s3V4} {
			for _, host := range []bool{false, true} {
				name := sign.String() + "-path"
				if host {
					name = sign.String() + "-host"
				}
				t.Run("lifecycle/"+name, func(t *testing.T) {
					t.Parallel()
					mpLifecycle(t, s3c{s: s, cred: u.cred(), sign: sign, host: host}, "mpr-"+name, u)
				})
			}
		}
		t.Run("errors", func(t *testing.T) {
			t.Parallel()
			mpErrors(t, owner, other)
		})
		t.Run("list-uploads", func(t *testing.T) {
			t.Parallel()
			mpListUploadsPaging(t, owner, other)
		})
		t.Run("copy-part", func(t *testing.T) {
			t.Parallel()
			mpCopyPart(t, owner.withSign(s3V2), other)
		})
		t.Run("busy-bucket", func(t *testing.T) {
			t.Parallel()
			c := owner
			c.mkBucket(t, "mpr-busy")
			id := mpInitiate(t, c, "mpr-busy", "pending")
			mpPutPart(t, c, "mpr-busy", "pending", id, 1, []byte("a part"))
			r := c.do(t, http.MethodDelete, "mpr-busy", "", "", nil, "")
			expectS3Error(t, r, http.StatusConflict, "MultipartUploadRemaining")
			if r := c.do(t, http.MethodHead, "mpr-busy", "", "", nil, ""); r.StatusCode != http.StatusOK {
				t.Fatalf("bucket gone after a refused DELETE:\n%s", r)
			}
			c.must(t, http.StatusNoContent, http.MethodDelete, "mpr-busy", "pending", mpUploadQuery(id), nil, "")
			c.must(t, http.StatusNoContent, http.MethodDelete, "mpr-busy", "", "", nil, "")
		})
		// An upload left open on purpose: `cairn check` must count its part as owned.
		t.Run("left-open", func(t *testing.T) {
			t.Parallel()
			c := owner
			c.mkBucket(t, "mpr-open")
			id := mpInitiate(t, c, "mpr-open", "open")
			mpPutPart(t, c, "mpr-open", "open", id, 1, randomBytes(mpMiB+5))
			mpPutPart(t, c, "mpr-open", "open", id, 2, []byte("small part"))
		})
	})
	sum := waitS3Clean(t, s)
	t.Logf("cairn check after the multipart tests: %+v", sum)
}

// mpLifecycle is one upload from initiation to completion, with parts uploaded out of
// order and one re-uploaded, then the upload id is gone.
func mpLifecycle(t *testing.T, c s3c, bucket string, u s3User) {
	c.mkBucket(t, bucket)
	key := "life/obj ü+%.bin"
	id := mpInitiate(t, c, bucket, key, "Content-Type", "text/x-multipart", "x-amz-meta-color", "red",
		"x-amz-acl", "public-read", "Cache-Control", "max-age=60")

	// Out of order: 3 (the last, small), 1, 2; then 2 again with other data.
	p1, p2old, p2, p3 := randomBytes(mpMinPart), randomBytes(mpMinPart+7), randomBytes(mpMinPart+1), []byte("the last part")
	e3 := mpPutPart(t, c, bucket, key, id, 3, p3)
	e1 := mpPutPart(t, c, bucket, key, id, 1, p1)
	e2old := mpPutPart(t, c, bucket, key, id, 2, p2old)
	e2 := mpPutPart(t, c, bucket, key, id, 2, p2)

	// List parts: all, then paged one by one.
	all := mpListParts(t, c, bucket, key, id, "")
	if !slices.Equal(all.numbers(), []int{1, 2, 3}) || all.IsTruncated || all.MaxParts != 1000 {
		t.Errorf("list parts: numbers %v truncated %v MaxParts %d", all.numbers(), all.IsTruncated, all.MaxParts)
	}
	if all.Initiator.ID != u.ID || all.Owner.ID != u.ID || all.Owner.DisplayName != u.DisplayName {
		t.Errorf("list parts: Initiator %+v Owner %+v, want %s %s", all.Initiator, all.Owner, u.ID, u.DisplayName)
	}
	wantParts := map[int]struct {
		etag string
		size int
	}{1: {e1, len(p1)}, 2: {e2, len(p2)}, 3: {e3, len(p3)}}
	for _, p := range all.Parts {
		w := wantParts[p.PartNumber]
		if p.ETag != w.etag || p.Size != int64(w.size) {
			t.Errorf("list parts: part %d ETag %s size %d, want %s %d", p.PartNumber, p.ETag, p.Size, w.etag, w.size)
		}
		mpTime(t, "part LastModified", p.LastModified)
	}
	marker := 0
	var paged []int
	for page := 0; page < 5; page++ {
		l := mpListParts(t, c, bucket, key, id, "max-parts=1&part-number-marker="+strconv.Itoa(marker))
		if l.MaxParts != 1 || l.PartNumberMarker != marker {
			t.Errorf("list parts page %d: MaxParts %d PartNumberMarker %d", page, l.MaxParts, l.PartNumberMarker)
		}
		paged = append(paged, l.numbers()...)
		if len(l.Parts) != 1 {
			t.Fatalf("list parts after %d with max-parts=1: parts %v", marker, l.numbers())
		}
		if !l.IsTruncated {
			break
		}
		if l.NextPartNumberMarker != l.Parts[0].PartNumber {
			t.Fatalf("list parts after %d: NextPartNumberMarker %d, last part %d", marker, l.NextPartNumberMarker, l.Parts[0].PartNumber)
		}
		marker = l.NextPartNumberMarker
	}
	if !slices.Equal(paged, []int{1, 2, 3}) {
		t.Errorf("list parts paged one by one: %v, want [1 2 3]", paged)
	}
	if l := mpListParts(t, c, bucket, key, id, "part-number-marker=3"); len(l.Parts) != 0 || l.IsTruncated {
		t.Errorf("list parts after the last: %v truncated %v", l.numbers(), l.IsTruncated)
	}

	// The upload is listed.
	ups := mpListUploads(t, c, bucket, "")
	if got := ups.entries(); !slices.Equal(got, []string{key + " " + id}) {
		t.Errorf("list uploads: %v", got)
	}

	// Completion errors: the replaced ETag of part 2, a part never uploaded, parts out of
	// order.
	complete := func(ns bool, parts ...mpPart) *resp {
		return c.do(t, http.MethodPost, bucket, key, mpUploadQuery(id), nil, mpCompleteBody(ns, parts...))
	}
	expectS3Error(t, complete(false, mpPart{1, e1}, mpPart{2, e2old}, mpPart{3, e3}), http.StatusBadRequest, "InvalidPart")
	expectS3Error(t, complete(false, mpPart{1, e1}, mpPart{2, e2}, mpPart{4, e3}), http.StatusBadRequest, "InvalidPart")
	expectS3Error(t, complete(false, mpPart{2, e2}, mpPart{1, e1}, mpPart{3, e3}), http.StatusBadRequest, "InvalidPartOrder")
	// The failed attempts changed nothing.
	if l := mpListParts(t, c, bucket, key, id, ""); !slices.Equal(l.numbers(), []int{1, 2, 3}) {
		t.Fatalf("parts after failed completions: %v", l.numbers())
	}

	// Complete, with the namespace awscli sends and, in host style, ETags without quotes
	// (S3 takes both).
	parts := []mpPart{{1, e1}, {2, e2}, {3, e3}}
	if c.host {
		for i := range parts {
			parts[i].etag = strings.Trim(parts[i].etag, `"`)
		}
	}
	var res mpCompleteResult
	mpXML(t, complete(true, parts...), "CompleteMultipartUploadResult", &res)
	wantETag := `"` + mpETag(p1, p2, p3) + `"`
	if res.ETag != wantETag || res.Bucket != bucket || res.Key != key || res.Location == "" {
		t.Errorf("complete: %+v, want ETag %s", res, wantETag)
	}

	// The object: the parts' bytes in order, the initiation's type, metadata, headers and
	// ACL (public-read: anyone reads it).
	data := slices.Concat(p1, p2, p3)
	r := mpGetObject(t, c, bucket, key, data, wantETag)
	if r.Header.Get("Content-Type") != "text/x-multipart" || r.Header.Get("X-Amz-Meta-Color") != "red" ||
		r.Header.Get("Cache-Control") != "max-age=60" {
		t.Errorf("GET: type %q, meta color %q, Cache-Control %q", r.Header.Get("Content-Type"),
			r.Header.Get("X-Amz-Meta-Color"), r.Header.Get("Cache-Control"))
	}
	mpGetObject(t, c.anon(), bucket, key, data, wantETag)
	h := c.must(t, http.StatusOK, http.MethodHead, bucket, key, "", nil, "")
	if h.Header.Get("ETag") != wantETag || h.Header.Get("Content-Length") != strconv.Itoa(len(data)) {
		t.Errorf("HEAD: %s", h)
	}
	l := s3ParseList(t, c.do(t, http.MethodGet, bucket, "", "", nil, ""))
	if len(l.Contents) != 1 || l.Contents[0].Key != key || l.Contents[0].ETag != wantETag || l.Contents[0].Size != int64(len(data)) {
		t.Errorf("listing after completion: %+v", l.Contents)
	}

	// The upload id is gone: every multipart request on it is NoSuchUpload, but a
	// retried completion with the same parts, which answers as the first did.
	if got := mpComplete(t, c, bucket, key, id, parts...); got != wantETag {
		t.Errorf("retried completion: ETag %s, want %s", got, wantETag)
	}
	for _, q := range []struct {
		method, query, body string
	}{
		{http.MethodGet, mpUploadQuery(id), ""},
		{http.MethodPut, mpQuery(id, 4), "late part"},
		{http.MethodPost, mpUploadQuery(id), mpCompleteBody(false, parts[1:]...)},
		{http.MethodDelete, mpUploadQuery(id), ""},
	} {
		expectS3Error(t, c.do(t, q.method, bucket, key, q.query, nil, q.body), http.StatusNotFound, "NoSuchUpload")
	}
	if ups := mpListUploads(t, c, bucket, ""); len(ups.Uploads) != 0 || len(ups.CommonPrefixes) != 0 {
		t.Errorf("list uploads after completion: %v", ups.entries())
	}
	// The object is unchanged by the late requests.
	mpGetObject(t, c, bucket, key, data, wantETag)
}

// mpErrors checks the error answers of the multipart requests.
func mpErrors(t *testing.T, c s3c, other s3User) {
	const b = "mpr-errors"
	c.mkBucket(t, b)
	id := mpInitiate(t, c, b, "k")

	// Part numbers outside 1..10000, or not numbers.
	for _, n := range []string{"0", "10001", "-1", "abc"} {
		r := c.do(t, http.MethodPut, b, "k", "partNumber="+n+"&uploadId="+url.QueryEscape(id), nil, "data")
		expectS3Error(t, r, http.StatusBadRequest, "InvalidArgument")
	}
	mpPutPart(t, c, b, "k", id, 10000, []byte("the highest part number"))

	// Unknown upload ids, and an id used with another key.
	for _, q := range []struct {
		method, key, query, body string
	}{
		{http.MethodPut, "k", mpQuery("no-such-upload", 1), "data"},
		{http.MethodGet, "k", mpUploadQuery("no-such-upload"), ""},
		{http.MethodPost, "k", mpUploadQuery("no-such-upload"), mpCompleteBody(false, mpPart{1, `"x"`})},
		{http.MethodDelete, "k", mpUploadQuery("no-such-upload"), ""},
		{http.MethodPut, "other-key", mpQuery(id, 1), "data"},
		{http.MethodGet, "other-key", mpUploadQuery(id), ""},
		{http.MethodDelete, "other-key", mpUploadQuery(id), ""},
	} {
		r := c.do(t, q.method, b, q.key, q.query, nil, q.body)
		expectS3Error(t, r, http.StatusNotFound, "NoSuchUpload")
	}

	// Absent bucket.
	expectS3Error(t, c.do(t, http.MethodPost, "mpr-no-such-bucket", "k", "uploads", nil, ""), http.StatusNotFound, "NoSuchBucket")
	expectS3Error(t, c.do(t, http.MethodPut, "mpr-no-such-bucket", "k", mpQuery(id, 1), nil, "x"), http.StatusNotFound, "NoSuchBucket")
	expectS3Error(t, c.do(t, http.MethodGet, "mpr-no-such-bucket", "", "uploads", nil, ""), http.StatusNotFound, "NoSuchBucket")

	// Another user without WRITE on the bucket can neither start, feed, complete,
	// list nor abort uploads in it.
	o := c.as(other.cred())
	expectS3Error(t, o.do(t, http.MethodPost, b, "k2", "uploads", nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, o.do(t, http.MethodPut, b, "k", mpQuery(id, 1), nil, "intruder"), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, o.do(t, http.MethodGet, b, "k", mpUploadQuery(id), nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, o.do(t, http.MethodGet, b, "", "uploads", nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, o.do(t, http.MethodPost, b, "k", mpUploadQuery(id), nil, mpCompleteBody(false, mpPart{10000, "x"})),
		http.StatusForbidden, "AccessDenied")
	expectS3Error(t, o.do(t, http.MethodDelete, b, "k", mpUploadQuery(id), nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, c.anon().do(t, http.MethodPost, b, "k3", "uploads", nil, ""), http.StatusForbidden, "AccessDenied")

	// Malformed completion bodies.
	for _, body := range []string{
		"this is not XML",
		"<CompleteMultipartUpload></CompleteMultipartUpload>",
		"<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>",
		"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>",
		"",
	} {
		r := c.do(t, http.MethodPost, b, "k", mpUploadQuery(id), nil, body)
		expectS3Error(t, r, http.StatusBadRequest, "MalformedXML")
	}

	// EntityTooSmall: a part but the last below 5 MiB (one byte short), then the same
	// upload completes once that part has the minimum size.
	small := randomBytes(mpMinPart - 1)
	es := mpPutPart(t, c, b, "k", id, 1, small)
	e2 := mpPutPart(t, c, b, "k", id, 2, []byte("tail"))
	r := c.do(t, http.MethodPost, b, "k", mpUploadQuery(id), nil, mpCompleteBody(false, mpPart{1, es}, mpPart{2, e2}))
	expectS3Error(t, r, http.StatusBadRequest, "EntityTooSmall")
	exact := randomBytes(mpMinPart)
	ee := mpPutPart(t, c, b, "k", id, 1, exact)
	// Part 10000 is left out of the completion: it is dropped with the upload.
	etag := mpComplete(t, c, b, "k", id, mpPart{1, ee}, mpPart{2, e2})
	if want := `"` + mpETag(exact, []byte("tail")) + `"`; etag != want {
		t.Errorf("complete: ETag %s, want %s", etag, want)
	}
	mpGetObject(t, c, b, "k", slices.Concat(exact, []byte("tail")), etag)

	// A single small part is a valid upload (the last part may be small), also an empty
	// one.
	for _, data := range [][]byte{[]byte("just one small part"), {}} {
		key := "single-" + strconv.Itoa(len(data))
		etag := mpUpload(t, c, b, key, [][]byte{data})
		mpGetObject(t, c, b, key, data, etag)
	}

	// Abort: 204, then the upload is gone for every request, and its parts with it.
	id = mpInitiate(t, c, b, "aborted")
	mpPutPart(t, c, b, "aborted", id, 1, randomBytes(mpMiB+1))
	mpPutPart(t, c, b, "aborted", id, 2, []byte("small"))
	r = c.must(t, http.StatusNoContent, http.MethodDelete, b, "aborted", mpUploadQuery(id), nil, "")
	if len(r.Body) != 0 {
		t.Errorf("abort: 204 with a body %q", r.Body)
	}
	for _, q := range []struct{ method, query, body string }{
		{http.MethodGet, mpUploadQuery(id), ""},
		{http.MethodPut, mpQuery(id, 3), "late"},
		{http.MethodPost, mpUploadQuery(id), mpCompleteBody(false, mpPart{2, `"` + s3MD5Hex([]byte("small")) + `"`})},
		{http.MethodDelete, mpUploadQuery(id), ""},
	} {
		expectS3Error(t, c.do(t, q.method, b, "aborted", q.query, nil, q.body), http.StatusNotFound, "NoSuchUpload")
	}
	expectS3Error(t, c.do(t, http.MethodGet, b, "aborted", "", nil, ""), http.StatusNotFound, "NoSuchKey")
	if ups := mpListUploads(t, c, b, ""); len(ups.Uploads) != 0 {
		t.Errorf("uploads left: %v", ups.entries())
	}
}

// mpListUploadsPaging checks ListMultipartUploads: order, prefix, delimiter, and paging
// with key-marker, upload-id-marker and max-uploads.
func mpListUploadsPaging(t *testing.T, c s3c, other s3User) {
	const b = "mpr-list"
	c.mkBucket(t, b)
	keys := []string{"a/1", "a/2", "b", "b", "c/x/y", "d", "b"}
	ids := map[string][]string{}
	start := time.Now()
	for _, k := range keys {
		ids[k] = append(ids[k], mpInitiate(t, c, b, k))
	}
	// Uploads are listed by key, then (for one key) by upload id: the order in which
	// upload-id-marker pages.
	var want []string
	for _, k := range []string{"a/1", "a/2", "b", "c/x/y", "d"} {
		s := slices.Clone(ids[k])
		slices.Sort(s)
		for _, id := range s {
			want = append(want, k+" "+id)
		}
	}
	all := mpListUploads(t, c, b, "")
	if got := all.entries(); !slices.Equal(got, want) {
		t.Fatalf("list uploads:\n got %q\nwant %q", got, want)
	}
	if all.IsTruncated || all.MaxUploads != 1000 {
		t.Errorf("list uploads: truncated %v MaxUploads %d", all.IsTruncated, all.MaxUploads)
	}
	for _, up := range all.Uploads {
		if up.Initiator.ID == "" || up.Owner.ID != up.Initiator.ID {
			t.Errorf("upload %s: Initiator %+v Owner %+v", up.Key, up.Initiator, up.Owner)
		}
		if ts := mpTime(t, "Initiated", up.Initiated); ts.Before(start.Add(-time.Second).Truncate(time.Second)) {
			t.Errorf("upload %s: Initiated %s before the test started", up.Key, up.Initiated)
		}
	}

	// Paging one at a time with the Next markers gives the same list.
	for _, max := range []int{1, 2, 3} {
		var paged []string
		km, um := "", ""
		for page := 0; page <= len(want); page++ {
			q := "max-uploads=" + strconv.Itoa(max) + "&key-marker=" + url.QueryEscape(km) + "&upload-id-marker=" + url.QueryEscape(um)
			l := mpListUploads(t, c, b, q)
			if l.MaxUploads != max || l.KeyMarker != km || l.UploadIDMarker != um {
				t.Errorf("?%s: MaxUploads %d KeyMarker %q UploadIdMarker %q", q, l.MaxUploads, l.KeyMarker, l.UploadIDMarker)
			}
			if len(l.Uploads) > max {
				t.Fatalf("?%s: %d uploads", q, len(l.Uploads))
			}
			paged = append(paged, l.entries()...)
			if !l.IsTruncated {
				break
			}
			if n := len(l.Uploads); n == 0 || l.NextKeyMarker != l.Uploads[n-1].Key || l.NextUploadIDMarker != l.Uploads[n-1].UploadID {
				t.Fatalf("?%s: truncated, NextKeyMarker %q NextUploadIdMarker %q, page %v", q, l.NextKeyMarker, l.NextUploadIDMarker, l.entries())
			}
			km, um = l.NextKeyMarker, l.NextUploadIDMarker
		}
		if !slices.Equal(paged, want) {
			t.Errorf("list uploads paged by %d:\n got %q\nwant %q", max, paged, want)
		}
	}

	// key-marker alone: keys after it; with upload-id-marker: that key's later ids too.
	l := mpListUploads(t, c, b, "key-marker=b")
	if got := l.entries(); !slices.Equal(got, want[len(want)-2:]) {
		t.Errorf("?key-marker=b: %q, want %q", got, want[len(want)-2:])
	}
	bs := slices.Clone(ids["b"])
	slices.Sort(bs)
	l = mpListUploads(t, c, b, "key-marker=b&upload-id-marker="+url.QueryEscape(bs[0]))
	wantAfter := []string{"b " + bs[1], "b " + bs[2], want[len(want)-2], want[len(want)-1]}
	if got := l.entries(); !slices.Equal(got, wantAfter) {
		t.Errorf("?key-marker=b&upload-id-marker=first: %q, want %q", got, wantAfter)
	}

	// Prefix and delimiter.
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"prefix=a/", []string{"a/1 " + ids["a/1"][0], "a/2 " + ids["a/2"][0]}},
		{"prefix=c", []string{"c/x/y " + ids["c/x/y"][0]}},
		{"prefix=zzz", nil},
		{"delimiter=/", append(slices.Clone(want[2:5]), "d "+ids["d"][0], "prefix a/", "prefix c/")},
		{"prefix=c/&delimiter=/", []string{"prefix c/x/"}},
		{"prefix=a/&delimiter=/", []string{"a/1 " + ids["a/1"][0], "a/2 " + ids["a/2"][0]}},
	} {
		l := mpListUploads(t, c, b, tc.query)
		if got := l.entries(); !s3SameStrings(got, tc.want) {
			t.Errorf("?%s:\n got %q\nwant %q", tc.query, got, tc.want)
		}
		q, _ := url.ParseQuery(tc.query)
		if l.Prefix != q.Get("prefix") || l.Delimiter != q.Get("delimiter") {
			t.Errorf("?%s: Prefix %q Delimiter %q echoed", tc.query, l.Prefix, l.Delimiter)
		}
	}
	// With a delimiter, a common prefix counts as one entry and paging goes past it.
	var paged []string
	km, um := "", ""
	for page := 0; page < 10; page++ {
		l := mpListUploads(t, c, b, "delimiter=/&max-uploads=1&key-marker="+url.QueryEscape(km)+"&upload-id-marker="+url.QueryEscape(um))
		paged = append(paged, l.entries()...)
		if len(l.Uploads)+len(l.CommonPrefixes) > 1 {
			t.Fatalf("max-uploads=1 with a delimiter: %v", l.entries())
		}
		if !l.IsTruncated {
			break
		}
		km, um = l.NextKeyMarker, l.NextUploadIDMarker
	}
	wantDelim := []string{"prefix a/", want[2], want[3], want[4], "prefix c/", "d " + ids["d"][0]}
	if !slices.Equal(paged, wantDelim) {
		t.Errorf("delimiter=/ paged by 1:\n got %q\nwant %q", paged, wantDelim)
	}

	// max-uploads=0 or not a number.
	for _, q := range []string{"max-uploads=abc", "max-uploads=-1"} {
		expectS3Error(t, c.do(t, http.MethodGet, b, "", "uploads&"+q, nil, ""), http.StatusBadRequest, "InvalidArgument")
	}

	// Another user needs READ on the bucket.
	expectS3Error(t, c.as(other.cred()).do(t, http.MethodGet, b, "", "uploads", nil, ""), http.StatusForbidden, "AccessDenied")

	// Abort them all; the listing empties.
	for _, e := range want {
		k, id, _ := strings.Cut(e, " ")
		c.must(t, http.StatusNoContent, http.MethodDelete, b, k, mpUploadQuery(id), nil, "")
	}
	if l := mpListUploads(t, c, b, ""); len(l.Uploads) != 0 || l.IsTruncated {
		t.Errorf("after aborting all: %v", l.entries())
	}
}

// mpCopyPart checks UploadPartCopy: parts copied from a range of an object (across its
// chunk boundaries), from a whole object, mixed with uploaded parts.
func mpCopyPart(t *testing.T, c s3c, other s3User) {
	const b = "mpr-copy"
	c.mkBucket(t, b)
	src := randomBytes(6*mpMiB + 123)
	c.put(t, b, "src.bin", string(src))
	small := []byte("a small source object")
	c.put(t, b, "small.txt", string(small))

	id := mpInitiate(t, c, b, "assembled")
	copyPart := func(n int, source, rng string) *resp {
		h := hdr{"x-amz-copy-source", source}
		if rng != "" {
			h = append(h, "x-amz-copy-source-range", rng)
		}
		return c.do(t, http.MethodPut, b, "assembled", mpQuery(id, n), h, "")
	}
	checkCopied := func(r *resp, n int, want []byte) string {
		t.Helper()
		var res mpCopyResult
		mpXML(t, r, "CopyPartResult", &res)
		if res.ETag != `"`+s3MD5Hex(want)+`"` {
			t.Errorf("copy part %d: ETag %s, want the MD5 of the copied bytes %s", n, res.ETag, s3MD5Hex(want))
		}
		mpTime(t, "CopyPartResult LastModified", res.LastModified)
		return res.ETag
	}
	// Part 1: 5 MiB from byte 1000 (crosses five chunk boundaries of the source).
	p1 := src[1000 : 1000+mpMinPart]
	e1 := checkCopied(copyPart(1, "/"+b+"/src.bin", fmt.Sprintf("bytes=1000-%d", 1000+mpMinPart-1)), 1, p1)
	// Part 2: uploaded.
	p2 := randomBytes(mpMinPart)
	e2 := mpPutPart(t, c, b, "assembled", id, 2, p2)
	// Part 3: a whole small object, the source named without the leading slash.
	_ = checkCopied(copyPart(3, b+"/small.txt", ""), 3, small)
	// Part 3 again: the tail of the big source (replaces the previous part 3).
	p3 := src[len(src)-500:]
	e3 := checkCopied(copyPart(3, "/"+b+"/src.bin", fmt.Sprintf("bytes=%d-%d", len(src)-500, len(src)-1)), 3, p3)

	// Bad ranges and sources. A range past the source's end is 400 InvalidArgument
	// ("Range specified is not valid for source object of size: N") on AWS, not the 416
	// of GET; so is a range not of the form bytes=first-last.
	for _, rng := range []string{fmt.Sprintf("bytes=0-%d", len(src)), fmt.Sprintf("bytes=%d-%d", len(src), len(src)+10),
		"0-1000", "bytes=abc-def", "bytes=100-", "bytes=-100", "bytes=10-5", "bytes=0-1,5-9"} {
		r := copyPart(4, "/"+b+"/src.bin", rng)
		expectS3Error(t, r, http.StatusBadRequest, "InvalidArgument")
	}
	expectS3Error(t, copyPart(4, "/"+b+"/absent", ""), http.StatusNotFound, "NoSuchKey")
	expectS3Error(t, copyPart(4, "/mpr-copy-absent-bucket/src.bin", ""), http.StatusNotFound, "NoSuchBucket")

	// A user who cannot read the source cannot copy from it into an upload of their own.
	o := c.as(other.cred())
	o.mkBucket(t, "mpr-copy-other")
	oid := mpInitiate(t, o, "mpr-copy-other", "stolen")
	r := o.do(t, http.MethodPut, "mpr-copy-other", "stolen", mpQuery(oid, 1), hdr{"x-amz-copy-source", "/" + b + "/small.txt"}, "")
	expectS3Error(t, r, http.StatusForbidden, "AccessDenied")
	o.must(t, http.StatusNoContent, http.MethodDelete, "mpr-copy-other", "stolen", mpUploadQuery(oid), nil, "")

	l := mpListParts(t, c, b, "assembled", id, "")
	if !slices.Equal(l.numbers(), []int{1, 2, 3}) || l.Parts[0].Size != mpMinPart || l.Parts[2].Size != 500 {
		t.Errorf("parts: %+v", l.Parts)
	}
	etag := mpComplete(t, c, b, "assembled", id, mpPart{1, e1}, mpPart{2, e2}, mpPart{3, e3})
	if want := `"` + mpETag(p1, p2, p3) + `"`; etag != want {
		t.Errorf("complete: ETag %s, want %s", etag, want)
	}
	mpGetObject(t, c, b, "assembled", slices.Concat(p1, p2, p3), etag)
	// The source is untouched.
	mpGetObject(t, c, b, "src.bin", src, `"`+s3MD5Hex(src)+`"`)
}

// TestS3MultipartAbandoned checks that a server started with a short --s3-upload-ttl
// aborts an upload left open: it leaves the listing, its id is NoSuchUpload, and the
// collector removes its parts' chunk record and blob. A completed upload is not touched.
func TestS3MultipartAbandoned(t *testing.T) {
	t.Parallel()
	s := startS3Server(t, "--s3-upload-ttl", "3s")
	u := s3CreateUser(t, s, "mp-ttl@example.com", "Multipart TTL")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	const b = "mp-ttl"
	c.mkBucket(t, b)

	// The parts must arrive within the TTL of their upload; should a slow machine let an
	// upload expire first, the attempt starts over.
	var abandoned string
	var before int64
	keptData := []byte("a completed upload of one small part")
	for attempt := 1; ; attempt++ {
		if attempt > 3 {
			t.Fatal("could not upload the parts within the 3 s TTL in three attempts")
		}
		before = s3ChunksCollected(t, s)
		abandoned = mpInitiate(t, c, b, "abandoned")
		if !mpTryParts(t, c, b, "abandoned", abandoned, randomBytes(mpMiB+mpMiB/2), []byte("a small part")) {
			continue
		}
		kept := mpInitiate(t, c, b, "kept")
		if !mpTryParts(t, c, b, "kept", kept, keptData) {
			continue
		}
		r := c.do(t, http.MethodPost, b, "kept", mpUploadQuery(kept), nil,
			mpCompleteBody(false, mpPart{1, `"` + s3MD5Hex(keptData) + `"`}))
		if r.StatusCode != http.StatusOK {
			expectS3Error(t, r, http.StatusNotFound, "NoSuchUpload")
			continue
		}
		break
	}

	// The collector looks for expired uploads every TTL/4.
	waitFor(t, 30*time.Second, "the abandoned upload to be aborted", func() bool {
		l := mpListUploads(t, c, b, "")
		return len(l.Uploads) == 0
	})
	expectS3Error(t, c.do(t, http.MethodGet, b, "abandoned", mpUploadQuery(abandoned), nil, ""), http.StatusNotFound, "NoSuchUpload")
	expectS3Error(t, c.do(t, http.MethodPut, b, "abandoned", mpQuery(abandoned, 3), nil, "late"), http.StatusNotFound, "NoSuchUpload")
	// Its two parts: a blob (1.5 MiB) and a chunk record (small).
	waitFor(t, 30*time.Second, "the abandoned upload's chunks to be collected", func() bool {
		return s3ChunksCollected(t, s) >= before+2
	})
	t.Logf("collected chunk records and blobs: %d before, %d after", before, s3ChunksCollected(t, s))
	mpGetObject(t, c, b, "kept", keptData, `"`+mpETag(keptData)+`"`)
	expectS3Error(t, c.do(t, http.MethodGet, b, "abandoned", "", nil, ""), http.StatusNotFound, "NoSuchKey")
	sum := waitS3Clean(t, s)
	if want := (s3CheckSummary{Users: 2, Buckets: 1, Objects: 1, Chunks: 1, Blobs: 0}); sum != want {
		t.Errorf("cairn check: %+v, want %+v (only the completed one-part object left)", sum, want)
	}
}

// mpTryParts uploads parts 1, 2, … of an upload that may expire meanwhile: false when
// the server answered NoSuchUpload (any other failure ends the test).
func mpTryParts(t testing.TB, c s3c, bucket, key, id string, parts ...[]byte) bool {
	t.Helper()
	for i, data := range parts {
		r := c.do(t, http.MethodPut, bucket, key, mpQuery(id, i+1), nil, string(data))
		if r.StatusCode != http.StatusOK {
			expectS3Error(t, r, http.StatusNotFound, "NoSuchUpload")
			return false
		}
	}
	return true
}
