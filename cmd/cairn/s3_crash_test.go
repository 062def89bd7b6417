package main

// Crash tests of the object-storage interface: a server killed (SIGKILL) while an
// overwrite is arriving, or just after it arrived, must come back with one whole
// version of the object — never a mix — and leave no chunk behind once its collector
// has run, which `cairn check` verifies on the stopped store.

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/server"
)

// crashObjectSize is the size of the objects the crash tests write (20 chunks).
const crashObjectSize = 20 << 20

// randomBytes returns n random bytes (the collector and the blob store must see data
// that does not compress or repeat).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// s3GetWhole reads the object bucket/key and checks that the body is whole: its length
// is Content-Length and its MD5 is the ETag. It returns the body's hex MD5.
func s3GetWhole(t testing.TB, c s3c, bucket, key string) string {
	t.Helper()
	r := c.must(t, http.StatusOK, http.MethodGet, bucket, key, "", nil, "")
	sum := s3MD5Hex(r.Body)
	if r.ContentLength != int64(len(r.Body)) || r.Header.Get("ETag") != `"`+sum+`"` {
		t.Fatalf("GET %s/%s: %d bytes with MD5 %s, but Content-Length %d and ETag %s", bucket, key, len(r.Body), sum,
			r.ContentLength, r.Header.Get("ETag"))
	}
	return sum
}

// slowPut is a PUT whose body is fed through a pipe, so the test decides how much of it
// the server has received.
type slowPut struct {
	pw   *io.PipeWriter
	data []byte
	sent int
	done chan error // the request's outcome
}

// startSlowPut starts a PUT of data in c's style (announced with its full
// Content-Length) and returns before sending any of the body.
func startSlowPut(t testing.TB, c s3c, bucket, key string, data []byte) *slowPut {
	t.Helper()
	pr, pw := io.Pipe()
	q := c.req(http.MethodPut, bucket, key, "", hdr{"Content-Type", "application/octet-stream"}, "")
	q.bodyReader = pr
	req := s3Build(t, c.s, q)
	req.ContentLength = int64(len(data)) // not chunked: the server knows the size up front
	p := &slowPut{pw: pw, data: data, done: make(chan error, 1)}
	go func() {
		r, err := httpClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %s: %s", r.Status, b)
			}
		}
		pr.CloseWithError(errors.New("request over"))
		p.done <- err
	}()
	return p
}

// send writes the body up to byte n, in 256 KiB pieces with short pauses; each write
// returns once the client has taken the bytes.
func (p *slowPut) send(t testing.TB, n int) {
	t.Helper()
	const piece = 256 << 10
	for p.sent < n {
		end := min(p.sent+piece, n)
		if _, err := p.pw.Write(p.data[p.sent:end]); err != nil {
			t.Fatalf("sending the body at byte %d: %v", p.sent, err)
		}
		p.sent = end
		time.Sleep(2 * time.Millisecond)
	}
}

// finish ends the body (an error if it was cut short) and returns the request's outcome.
func (p *slowPut) finish(cut bool) error {
	if cut {
		p.pw.CloseWithError(errors.New("upload cut by the test"))
	} else {
		p.pw.Close()
	}
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute):
		return errors.New("the request did not end within a minute")
	}
}

func TestS3CrashDuringOverwrite(t *testing.T) {
	t.Parallel()
	s := startS3Process(t)
	u := s3CreateUser(t, s, "crash@example.com", "Crash Tester")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	const bucket, key = "crash", "object"
	c.mkBucket(t, bucket)

	a := randomBytes(crashObjectSize)
	c.put(t, bucket, key, string(a), "Content-Type", "application/octet-stream")

	// Killed in the middle of the upload: the object is still A.
	t.Run("mid-upload", func(t *testing.T) {
		b := randomBytes(crashObjectSize)
		old := s3BlobSizes(t, s)
		p := startSlowPut(t, c, bucket, key, b)
		const sent = 10 << 20
		p.send(t, sent)
		// Wait until the server has written what the connection holds to the new
		// object's blob: it is then waiting for the rest with about half the chunks
		// written. The client may still buffer the last few KiB of what it took, so
		// the blob is awaited at one chunk short of what was sent.
		waitFor(t, 30*time.Second, "the interrupted write's blob to hold most of the data sent", func() bool {
			for path, size := range s3BlobSizes(t, s) {
				if _, ok := old[path]; !ok && size >= sent-crashChunkSize {
					return true
				}
			}
			return false
		})
		s.Kill()
		if err := p.finish(true); err == nil {
			t.Fatal("the interrupted PUT succeeded")
		}
		s.Restart()
		// The chunks the interrupted write had stored are collected at start.
		waitFor(t, 20*time.Second, "the interrupted write's chunks to be collected", func() bool {
			return s3ChunksCollected(t, s) >= 1
		})
		t.Logf("chunk records and blobs of the interrupted write collected at restart: %d", s3ChunksCollected(t, s))
		if got := s3GetWhole(t, c, bucket, key); got != s3MD5Hex(a) {
			t.Fatalf("after a crash in the middle of an overwrite: object MD5 %s, want A's %s (B is %s)", got, s3MD5Hex(a), s3MD5Hex(b))
		}
	})

	// Killed just after the whole body was sent, at various delays: the object is the old
	// or the new version, whole.
	t.Run("after-body", func(t *testing.T) {
		cur := a
		seen := map[string]int{}
		for _, delay := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond} {
			b := randomBytes(crashObjectSize)
			p := startSlowPut(t, c, bucket, key, b)
			p.send(t, len(b))
			_ = p.pw.Close()
			time.Sleep(delay)
			s.Kill()
			putErr := p.finish(false)
			s.Restart()
			got := s3GetWhole(t, c, bucket, key)
			switch got {
			case s3MD5Hex(cur):
				seen["old"]++
				if putErr == nil {
					t.Fatalf("kill %v after the body: the PUT was acknowledged, but the object is the old version", delay)
				}
			case s3MD5Hex(b):
				seen["new"]++
				cur = b
			default:
				t.Fatalf("kill %v after the body: object MD5 %s is neither the old version's %s nor the new one's %s",
					delay, got, s3MD5Hex(cur), s3MD5Hex(b))
			}
		}
		t.Logf("outcomes: %v", seen)
	})

	// Deleted and overwritten objects give back all their chunks too.
	last := randomBytes(2<<20 + 1)
	t.Run("delete-and-overwrite", func(t *testing.T) {
		c.put(t, bucket, "deleted", string(randomBytes(3<<20+5)), "Content-Type", "application/octet-stream")
		c.must(t, http.StatusNoContent, http.MethodDelete, bucket, "deleted", "", nil, "")
		c.put(t, bucket, "overwritten", string(randomBytes(3<<20)), "Content-Type", "application/octet-stream")
		c.put(t, bucket, "overwritten", string(last), "Content-Type", "application/octet-stream")
		c.put(t, bucket, "small", "one chunk", "Content-Type", "application/octet-stream")
		c.put(t, bucket, "small", "another chunk", "Content-Type", "application/octet-stream")
		if got := s3GetWhole(t, c, bucket, "overwritten"); got != s3MD5Hex(last) {
			t.Fatalf("overwritten object: MD5 %s, want %s", got, s3MD5Hex(last))
		}
	})

	// After the collector has run, the stopped store holds the data of the live objects
	// only (object and overwritten are blobs, small one chunk record) and no collection
	// work: every chunk and blob of the interrupted, replaced and deleted versions is gone.
	sum := waitS3Clean(t, s)
	if want := (s3CheckSummary{Users: 2, Buckets: 1, Objects: 3, Chunks: 1, Blobs: 2}); sum != want {
		t.Fatalf("cairn check: %+v, want %+v", sum, want)
	}
	s.Restart()
	if got := s3GetWhole(t, c, bucket, "overwritten"); got != s3MD5Hex(last) {
		t.Fatalf("overwritten object after the check: MD5 %s, want %s", got, s3MD5Hex(last))
	}
	expectS3Error(t, c.do(t, http.MethodGet, bucket, "deleted", "", nil, ""), http.StatusNotFound, "NoSuchKey")
}

// crashChunkSize is the server's chunk size (the default): blobs grow a chunk at a time.
const crashChunkSize = s3.DefaultChunkSize

// s3BlobSizes returns the blob files under the server's data directory with their sizes.
func s3BlobSizes(t testing.TB, s *child) map[string]int64 {
	t.Helper()
	sizes := map[string]int64{}
	root := filepath.Join(s.DataDir, server.BlobsDir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile (an aborted or collected blob)
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		sizes[path] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatalf("listing the blobs: %v", err)
	}
	return sizes
}

// s3ChunksCollected reads the server's count of collected chunk records and blob files
// from the KV interface's /stats.
func s3ChunksCollected(t testing.TB, s *child) int64 {
	t.Helper()
	r := s.get(t, "/stats", "Accept", "application/json")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /stats: %s", r)
	}
	var stats struct {
		Collected *int64 `json:"s3_chunks_collected_total"`
		Blobs     *int64 `json:"s3_blobs_collected_total"`
	}
	if err := json.Unmarshal(r.Body, &stats); err != nil || stats.Collected == nil || stats.Blobs == nil {
		t.Fatalf("GET /stats: no s3_chunks_collected_total or s3_blobs_collected_total (%v) in %s", err, r.Body)
	}
	return *stats.Collected + *stats.Blobs
}

// s3CheckRE matches the S3 summary line of `cairn check`.
var s3CheckRE = regexp.MustCompile(`(?m)^cairn: s3: (\d+) users, (\d+) buckets, (\d+) objects, (\d+) chunks, (\d+) blobs, (\d+) chunk sets awaiting collection$`)

// s3CheckSummary is the S3 part of `cairn check`'s report.
type s3CheckSummary struct {
	Users, Buckets, Objects, Chunks, Blobs, Pending int
}

// waitS3Clean waits until the server's chunk collector is idle, stops the server and runs
// `cairn check` on its data directory, which must pass (it fails on a chunk that no
// manifest and no pending work owns, or a manifest whose chunks are missing) and report no
// collection work left. If work was left (the collector had not finished), it restarts
// the server, lets the collector resume, and checks again. It returns the summary; the
// server is left stopped.
func waitS3Clean(t testing.TB, s *child) s3CheckSummary {
	t.Helper()
	for attempt := 1; ; attempt++ {
		// The collector is idle once its count has not moved for half a second.
		last, since := s3ChunksCollected(t, s), time.Now()
		for time.Since(since) < 500*time.Millisecond {
			time.Sleep(50 * time.Millisecond)
			if n := s3ChunksCollected(t, s); n != last {
				last, since = n, time.Now()
			}
		}
		s.Stop()
		code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
		m := s3CheckRE.FindStringSubmatch(out)
		if code != 0 || errOut != "" || m == nil || !strings.Contains(out, "is consistent") {
			t.Fatalf("cairn check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		var sum s3CheckSummary
		for i, p := range []*int{&sum.Users, &sum.Buckets, &sum.Objects, &sum.Chunks, &sum.Blobs, &sum.Pending} {
			*p, _ = strconv.Atoi(m[i+1])
		}
		if sum.Pending == 0 {
			return sum
		}
		if attempt == 5 {
			t.Fatalf("cairn check: collection work still pending after %d runs of the collector:\n%s", attempt, out)
		}
		t.Logf("cairn check (attempt %d): collection work left, letting the collector resume:\n%s", attempt, out)
		s.Restart()
	}
}
