package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

func TestMultipart(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(fmt.Sprintf("blobs=%s", kind), func(t *testing.T) { testMultipart(t, kind) })
	}
}

func testMultipart(t *testing.T, kind blobKind) {
	s, db := newTestServiceBlobs(t, kind)
	s.cfg.MinPartSize = 20
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "mpb", "")
	put(t, s, alice, "mpb", "obj", []byte("the previous version, to be collected"))

	u, err := s.CreateUpload(ctx, alice, "mpb", "obj", PutInput{ContentType: "text/plain", Meta: []MetaPair{{"a", "1"}}, Canned: CannedPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateUpload(ctx, bob, "mpb", "obj", PutInput{})
	wantCode(t, err, AccessDenied)
	part := func(n int, data []byte) *PartInfo {
		t.Helper()
		p, err := s.PutPart(ctx, alice, "mpb", "obj", u.ID, n, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		return p
	}
	p1 := part(1, bytes.Repeat([]byte("a"), 25))
	part(2, bytes.Repeat([]byte("x"), 30)) // replaced below
	p2 := part(2, bytes.Repeat([]byte("b"), 21))
	p3 := part(3, []byte("tail"))
	part(4, bytes.Repeat([]byte("u"), 40)) // uploaded, never used
	for _, n := range []int{0, 10001} {
		_, err := s.PutPart(ctx, alice, "mpb", "obj", u.ID, n, PutInput{Body: bytes.NewReader(nil)})
		wantCode(t, err, InvalidArgument)
	}
	_, err = s.PutPart(ctx, alice, "mpb", "obj", "nope", 1, PutInput{Body: bytes.NewReader(nil)})
	wantCode(t, err, NoSuchUpload)

	_, ps, trunc, err := s.ListParts(ctx, alice, "mpb", "obj", u.ID, 1, 2)
	if err != nil || len(ps) != 2 || ps[0].Number != 2 || ps[1].Number != 3 || !trunc || ps[0].ETag != p2.ETag {
		t.Fatalf("list parts: %+v %v %v", ps, trunc, err)
	}
	l, err := s.ListUploads(ctx, alice, "mpb", UploadListOptions{})
	if err != nil || len(l.Uploads) != 1 || l.Uploads[0].ID != u.ID {
		t.Fatalf("list uploads: %+v %v", l, err)
	}
	wantCode(t, s.DeleteBucket(ctx, alice, "mpb"), BucketNotEmpty)

	cp := func(n int, etag string) CompletePart { return CompletePart{Number: n, ETag: `"` + etag + `"`} }
	for _, c := range []struct {
		parts []CompletePart
		code  Code
	}{
		{[]CompletePart{cp(2, p2.ETag), cp(1, p1.ETag)}, InvalidPartOrder},
		{[]CompletePart{cp(1, p1.ETag), cp(2, p1.ETag)}, InvalidPart},
		{[]CompletePart{cp(1, p1.ETag), cp(5, p1.ETag)}, InvalidPart},
		{[]CompletePart{cp(1, p1.ETag), cp(4, "x")}, InvalidPart},
		{[]CompletePart{cp(1, p1.ETag), cp(2, p2.ETag), cp(4, "")}, InvalidPart},
		{nil, MalformedXML},
	} {
		_, err := s.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, c.parts, WriteConditions{})
		wantCode(t, err, c.code)
	}
	p3small := part(5, []byte("ab"))
	_, err = s.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, []CompletePart{cp(1, p1.ETag), cp(3, p3.ETag), cp(5, p3small.ETag)}, WriteConditions{})
	wantCode(t, err, EntityTooSmall)

	m, err := s.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, []CompletePart{cp(1, p1.ETag), cp(2, p2.ETag), cp(3, p3.ETag)}, WriteConditions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(bytes.Repeat([]byte("a"), 25), bytes.Repeat([]byte("b"), 21)...), "tail"...)
	h := md5.New()
	for _, e := range []string{p1.ETag, p2.ETag, p3.ETag} {
		b, _ := hex.DecodeString(e)
		h.Write(b)
	}
	if m.ETag != hex.EncodeToString(h.Sum(nil))+"-3" || m.Size != int64(len(want)) || m.ContentType != "text/plain" {
		t.Fatalf("manifest %+v", m)
	}
	if got := read(t, s, AnonymousRequester, "mpb", "obj"); !bytes.Equal(got, want) {
		t.Fatalf("assembled %q", got)
	}
	// Every range, across part boundaries.
	o, err := s.OpenObject(ctx, alice, "mpb", "obj")
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off <= len(want); off += 3 {
		for n := 0; off+n <= len(want); n += 7 {
			var b bytes.Buffer
			if err := o.WriteRange(context.Background(), &b, int64(off), int64(n)); err != nil || !bytes.Equal(b.Bytes(), want[off:off+n]) {
				t.Fatalf("range %d+%d: %v %q", off, n, err, b.Bytes())
			}
		}
	}
	o.Close()
	_, err = s.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, []CompletePart{cp(1, p1.ETag)}, WriteConditions{})
	wantCode(t, err, NoSuchUpload)

	// Abort: parts go; the upload is gone.
	u2, _ := s.CreateUpload(ctx, alice, "mpb", "other", PutInput{})
	if _, err := s.PutPart(ctx, alice, "mpb", "other", u2.ID, 1, PutInput{Body: bytes.NewReader(make([]byte, 50)), Size: 50}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortUpload(ctx, alice, "mpb", "other", u2.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.AbortUpload(ctx, alice, "mpb", "other", u2.ID), NoSuchUpload)
	// Abandoned: aborted by age.
	u3, _ := s.CreateUpload(ctx, alice, "mpb", "old", PutInput{})
	if _, err := s.PutPart(ctx, alice, "mpb", "old", u3.ID, 1, PutInput{Body: bytes.NewReader(make([]byte, 50)), Size: 50}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.abortExpired(context.Background(), time.Now().Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	// Overwriting and deleting a multipart object collects every part.
	waitCollected(t, s)
	rep, err := Check(db, s.cfg.Blobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObject(ctx, alice, "mpb", "obj"); err != nil {
		t.Fatal(err)
	}
	waitCollected(t, s)
	after, err := Check(db, s.cfg.Blobs)
	if err != nil || after.Chunks+after.Blobs != 0 || rep.Chunks+rep.Blobs == 0 {
		t.Fatalf("before delete %+v, after %+v %v", rep, after, err)
	}
	if err := s.DeleteBucket(ctx, alice, "mpb"); err != nil {
		t.Fatal(err)
	}
}

func TestUploadsBlockBucketDelete(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "busy", "")
	u, _ := s.CreateUpload(ctx, alice, "busy", "k", PutInput{})
	wantCode(t, s.DeleteBucket(ctx, alice, "busy"), MultipartUploadRemaining)
	if err := s.AbortUpload(ctx, alice, "busy", "k", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket(ctx, alice, "busy"); err != nil {
		t.Fatal(err)
	}
	_ = filepath.Join
	_ = storage.ErrNotFound
}

func TestCopy(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(fmt.Sprintf("blobs=%s", kind), func(t *testing.T) {
			s, _ := newTestServiceBlobs(t, kind)
			s.cfg.MinPartSize = 10
			ctx := context.Background()
			alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
			mustBucket(t, s, alice, "src", "")
			mustBucket(t, s, bob, "dst", "")
			data := bytes.Repeat([]byte("0123456789"), 7)
			put(t, s, alice, "src", "k", data)
			// Bob cannot read Alice's object; Alice cannot write Bob's bucket.
			_, err := s.CopyObject(ctx, bob, "src", "k", "dst", "k", CopyInput{})
			wantCode(t, err, AccessDenied)
			_, err = s.CopyObject(ctx, alice, "src", "k", "dst", "k", CopyInput{})
			wantCode(t, err, AccessDenied)
			m, err := s.CopyObject(ctx, alice, "src", "k", "src", "copy", CopyInput{})
			if err != nil || m.ETag != fmt.Sprintf("%x", md5.Sum(data)) {
				t.Fatalf("copy: %+v %v", m, err)
			}
			if got := read(t, s, alice, "src", "copy"); !bytes.Equal(got, data) {
				t.Fatal("copied data differs")
			}
			_, err = s.CopyObject(ctx, alice, "src", "k", "src", "k", CopyInput{})
			wantCode(t, err, InvalidRequest)
			m, err = s.CopyObject(ctx, alice, "src", "k", "src", "k", CopyInput{ReplaceMeta: true, In: PutInput{ContentType: "text/x"}})
			if err != nil || m.ContentType != "text/x" {
				t.Fatalf("self copy: %+v %v", m, err)
			}
			stop := fmt.Errorf("condition")
			_, err = s.CopyObject(ctx, alice, "src", "k", "src", "c2", CopyInput{Check: func(*Manifest) error { return stop }})
			if !errors.Is(err, stop) {
				t.Fatalf("check: %v", err)
			}
			// Part copy: ranges of the source into an upload.
			u, err := s.CreateUpload(ctx, alice, "src", "assembled", PutInput{})
			if err != nil {
				t.Fatal(err)
			}
			p1, err := s.CopyPart(ctx, alice, "src", "k", "", "src", "assembled", u.ID, 1, 10, 30, nil, CopyKeys{})
			if err != nil {
				t.Fatal(err)
			}
			p2, err := s.CopyPart(ctx, alice, "src", "k", "", "src", "assembled", u.ID, 2, -1, -1, nil, CopyKeys{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.CopyPart(ctx, alice, "src", "k", "", "src", "assembled", u.ID, 3, 60, 20, nil, CopyKeys{})
			wantCode(t, err, InvalidArgument)
			if _, err := s.CompleteUpload(ctx, alice, "src", "assembled", u.ID, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, WriteConditions{}); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, alice, "src", "assembled"); !bytes.Equal(got, append(bytes.Clone(data[10:40]), data...)) {
				t.Fatalf("assembled %q", got)
			}
		})
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

// TestPutPartSizeLimits: a part larger than the largest object is refused before any of
// its data is read; a part of exactly that size is stored.
func TestPutPartSizeLimits(t *testing.T) {
	s, _ := newTestService(t)
	s.cfg.MaxObjectSize = 50
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "mpl", "")
	u, err := s.CreateUpload(ctx, alice, "mpl", "obj", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int
		want Code // "" stores the part
	}{
		{"over the object limit", 51, EntityTooLarge},
		{"far over", 10_000, EntityTooLarge},
		{"negative", -1, InvalidArgument},
		{"at the limit", 50, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte("p"), max(tc.size, 0)))}
			_, err := s.PutPart(ctx, alice, "mpl", "obj", u.ID, 1, PutInput{Body: body, Size: int64(tc.size)})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.want)
			if body.n != 0 {
				t.Fatalf("%d bytes read from a refused part", body.n)
			}
			if _, ps, _, err := s.ListParts(ctx, alice, "mpl", "obj", u.ID, 0, 0); err != nil || len(ps) != 0 {
				t.Fatalf("parts after a refused part: %+v %v", ps, err)
			}
		})
	}
	if err := s.AbortUpload(ctx, alice, "mpl", "obj", u.ID); err != nil {
		t.Fatal(err)
	}
}

// TestRetriedCompletion: completing an upload again with the same parts answers the
// same ETag (AWS keeps completed uploads answerable for a while); other parts, another
// upload id, or a record past its time answer NoSuchUpload; the collector's sweep
// deletes records past their time, and only those.
func TestRetriedCompletion(t *testing.T) {
	s, db := newTestService(t)
	s.cfg.MinPartSize = 1
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "retried", "")
	etags := map[string]string{}
	complete := func(key string, n int) (string, []CompletePart) {
		t.Helper()
		u, err := s.CreateUpload(ctx, alice, "retried", key, PutInput{})
		if err != nil {
			t.Fatal(err)
		}
		var want []CompletePart
		for i := 1; i <= n; i++ {
			p, err := s.PutPart(ctx, alice, "retried", key, u.ID, i, PutInput{Body: bytes.NewReader([]byte(key)), Size: int64(len(key))})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, CompletePart{Number: i, ETag: `"` + p.ETag + `"`})
		}
		m, err := s.CompleteUpload(ctx, alice, "retried", key, u.ID, want, WriteConditions{})
		if err != nil {
			t.Fatal(err)
		}
		etags[key] = m.ETag
		return u.ID, want
	}
	id, want := complete("k", 2)
	tests := []struct {
		name string
		key  string
		id   string
		want []CompletePart
		ok   bool
	}{
		{"same parts", "k", id, want, true},
		{"etag in other case, unquoted", "k", id, []CompletePart{{Number: 1, ETag: strings.ToUpper(strings.Trim(want[0].ETag, `"`))}, want[1]}, true},
		{"fewer parts", "k", id, want[:1], false},
		{"other upload id", "k", "nope", want, false},
		{"other key", "other", id, want, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := s.CompleteUpload(ctx, alice, "retried", tt.key, tt.id, tt.want, WriteConditions{})
			if !tt.ok {
				wantCode(t, err, NoSuchUpload)
				return
			}
			if err != nil || m.ETag != etags["k"] || !strings.HasSuffix(m.ETag, "-2") {
				t.Fatalf("retried completion: %+v %v, want ETag %s", m, err, etags["k"])
			}
		})
	}
	// The sweep keeps a fresh record and deletes an old one.
	if err := s.expireCompleted(context.Background(), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteUpload(ctx, alice, "retried", "k", id, want, WriteConditions{}); err != nil {
		t.Fatalf("a fresh record was swept: %v", err)
	}
	if err := s.expireCompleted(context.Background(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err := s.CompleteUpload(ctx, alice, "retried", "k", id, want, WriteConditions{})
	wantCode(t, err, NoSuchUpload)
	if it := db.IteratePrefix(storage.KeyString(storage.TagS3, "mc")); it.Next() {
		t.Errorf("a completion record is left after the sweep: %q", it.Key())
		it.Release()
	} else {
		it.Release()
	}
	// A record older than the TTL does not answer even before the sweep.
	id2, want2 := complete("k2", 1)
	s.cfg.UploadTTL = time.Nanosecond
	_, err = s.CompleteUpload(ctx, alice, "retried", "k2", id2, want2, WriteConditions{})
	wantCode(t, err, NoSuchUpload)
}
