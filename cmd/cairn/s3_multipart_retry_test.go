package main

// End-to-end tests of multipart retries: a completion sent again gets the same answer,
// and a part uploaded twice at once is the one that finished last.

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestS3MultipartRetriedComplete: with minio-go, completing an upload that already
// completed, with the same parts, answers 200 with the same ETag, and the object is
// unchanged; through raw requests the answer's body is the same byte for byte, and a
// retry naming other parts answers 404 NoSuchUpload.
func TestS3MultipartRetriedComplete(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "retry@example.com", "Retry")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "retry")
	ctx := context.Background()
	core := minio.Core{Client: newMinio(t, s, u.cred(), minioCombo{"v4-path", true, false})}
	id, err := core.NewMultipartUpload(ctx, "retry", "obj", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := [][]byte{make([]byte, 5<<20), []byte("the tail")}
	_, _ = rand.Read(data[0])
	var parts []minio.CompletePart
	for i, d := range data {
		p, err := core.PutObjectPart(ctx, "retry", "obj", id, i+1, bytes.NewReader(d), int64(len(d)), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: i + 1, ETag: p.ETag})
	}
	first, err := core.CompleteMultipartUpload(ctx, "retry", "obj", id, parts, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := core.CompleteMultipartUpload(ctx, "retry", "obj", id, parts, minio.PutObjectOptions{})
	if err != nil || again.ETag != first.ETag || !strings.HasSuffix(first.ETag, "-2") {
		t.Fatalf("retried completion: %+v %v, first %+v", again, err, first)
	}
	want := append(bytes.Clone(data[0]), data[1]...)
	if r := c.must(t, http.StatusOK, http.MethodGet, "retry", "obj", "", nil, ""); !bytes.Equal(r.Body, want) || r.Header.Get("ETag") != `"`+first.ETag+`"` {
		t.Errorf("object after the retried completion: %d bytes, ETag %s", len(r.Body), r.Header.Get("ETag"))
	}
	// Raw: the same body byte for byte; other parts are NoSuchUpload.
	body := mpCompleteBody(false, mpPart{1, parts[0].ETag}, mpPart{2, parts[1].ETag})
	r1 := c.must(t, http.StatusOK, http.MethodPost, "retry", "obj", mpUploadQuery(id), nil, body)
	r2 := c.must(t, http.StatusOK, http.MethodPost, "retry", "obj", mpUploadQuery(id), nil, body)
	if !bytes.Equal(r1.Body, r2.Body) || !bytes.Contains(r1.Body, []byte(first.ETag)) {
		t.Errorf("retried completions answer differently:\n%s\n%s", r1.Body, r2.Body)
	}
	expectS3Error(t, c.do(t, http.MethodPost, "retry", "obj", mpUploadQuery(id), nil, mpCompleteBody(false, mpPart{1, parts[0].ETag})),
		http.StatusNotFound, "NoSuchUpload")
	expectS3Error(t, c.do(t, http.MethodPost, "retry", "other", mpUploadQuery(id), nil, body), http.StatusNotFound, "NoSuchUpload")
}

// gatedReader yields its first half, then waits for open to be closed before the rest.
type gatedReader struct {
	data     []byte
	off      int
	halfSent chan struct{}
	open     chan struct{}
	once     sync.Once
}

func (g *gatedReader) Read(p []byte) (int, error) {
	half := len(g.data) / 2
	if g.off == half {
		g.once.Do(func() { close(g.halfSent) })
		<-g.open
	}
	end := len(g.data)
	if g.off < half {
		end = half
	}
	if g.off == len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:end])
	g.off += n
	return n, nil
}

// TestS3MultipartPartRace: two uploads of part 1 at once; the one that started first
// finishes last and wins: the part list shows its ETag, completing with it works and
// the object holds its data, completing with the other's ETag is 400 InvalidPart; the
// loser's data is collected (the stopped store checks consistent, no leak).
func TestS3MultipartPartRace(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "race@example.com", "Race")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "race")
	id := mpInitiate(t, c, "race", "obj")
	slow, fast := make([]byte, 300<<10), make([]byte, 200<<10)
	_, _ = rand.Read(slow)
	_, _ = rand.Read(fast)
	g := &gatedReader{data: slow, halfSent: make(chan struct{}), open: make(chan struct{})}
	req := s3Build(t, s, c.req(http.MethodPut, "race", "obj", mpQuery(id, 1), nil, string(slow)))
	req.Body, req.GetBody = io.NopCloser(g), nil // the declared length, the data held back halfway
	slowDone := make(chan *resp, 1)
	go func() {
		hr, err := s.client(s3HTTPClient).Do(req)
		if err != nil {
			t.Error(err)
			slowDone <- nil
			return
		}
		defer hr.Body.Close()
		b, _ := io.ReadAll(hr.Body)
		slowDone <- &resp{Response: hr, Body: b}
	}()
	<-g.halfSent
	fastETag := mpPutPart(t, c, "race", "obj", id, 1, fast)
	close(g.open)
	r := <-slowDone
	if r == nil {
		t.FailNow()
	}
	slowETag := `"` + s3MD5Hex(slow) + `"`
	if r.StatusCode != http.StatusOK || r.Header.Get("ETag") != slowETag {
		t.Fatalf("the slow upload of part 1: want 200 ETag %s, got\n%s", slowETag, r)
	}
	if l := mpListParts(t, c, "race", "obj", id, ""); len(l.Parts) != 1 || l.Parts[0].ETag != slowETag {
		t.Errorf("parts after the race: %+v, want part 1 with %s", l.Parts, slowETag)
	}
	expectS3Error(t, c.do(t, http.MethodPost, "race", "obj", mpUploadQuery(id), nil, mpCompleteBody(false, mpPart{1, fastETag})),
		http.StatusBadRequest, "InvalidPart")
	mpComplete(t, c, "race", "obj", id, mpPart{1, slowETag})
	if got := c.must(t, http.StatusOK, http.MethodGet, "race", "obj", "", nil, ""); !bytes.Equal(got.Body, slow) {
		t.Errorf("object holds %d bytes, not the last-finished part's", len(got.Body))
	}
	s.Stop()
	code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	if code != 0 || !strings.Contains(out, "is consistent") {
		t.Errorf("cairn check after the race: exit %d\n%s%s", code, out, errOut)
	}
}
