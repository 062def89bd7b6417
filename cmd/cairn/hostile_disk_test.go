package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/internal/tmpfs"
)

// diskFullKV puts 16 KiB values under new keys until the server refuses one with 507
// (the disk is full), and checks the refusal's body; it returns the keys it stored.
func diskFullKV(t *testing.T, s *child, prefix string) []string {
	t.Helper()
	var stored []string
	val := strings.Repeat("x", 16<<10)
	for i := 0; i < 200; i++ {
		key := fmt.Sprintf("%s%03d", prefix, i)
		r := s.do(t, http.MethodPut, "/buckets/df/keys/"+key, hdr{"Content-Type", "text/plain"}, val)
		switch r.StatusCode {
		case http.StatusNoContent:
			stored = append(stored, key)
			continue
		case http.StatusInsufficientStorage:
		default:
			t.Fatalf("PUT on a full disk: want 204 or 507, got\n%s", r)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/plain" || !strings.HasPrefix(string(r.Body), "Insufficient storage:") {
			t.Errorf("507 body: want Riak-style plain text, got\n%s", r)
		}
		return stored
	}
	t.Fatalf("200 PUTs of 16 KiB on a full disk were all accepted\n%s", s.output())
	return nil
}

// waitWritable retries a KV PUT until it succeeds (writes resume on their own), within
// 15 s.
func waitWritable(t *testing.T, s *child) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := s.do(t, http.MethodPut, "/buckets/df/keys/resumed", hdr{"Content-Type", "text/plain"}, "back")
		if r.StatusCode == http.StatusNoContent {
			return
		}
		if r.StatusCode != http.StatusInsufficientStorage || time.Now().After(deadline) {
			t.Fatalf("writes did not resume after space was freed: \n%s\n%s", r, s.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHostileDiskFull runs the real binary with its data directory on a small tmpfs
// and fills the filesystem: KV writes (deletes too) answer 507 with a plain-text body,
// S3 writes 503 SlowDown (a small object, a blob-sized one), reads of both go on; once
// a filler file is deleted, writes succeed again without a restart. A restart on the
// full disk starts and serves reads with writes refused, and resumes once space is
// freed. After the stop, `cairn check` finds the store consistent.
func TestHostileDiskFull(t *testing.T) {
	mnt := tmpfs.Mount(t, "32m")
	s := startServerOpts(t, serverOpts{dataDir: filepath.Join(mnt, "data"), args: []string{"--dialect", "riak"}})
	c := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V4}
	c.mkBucket(t, "dfull")
	big := strings.Repeat("b", 3<<20) // over one chunk: a blob file
	c.put(t, "dfull", "small", "small object")
	c.put(t, "dfull", "big", big)
	s.do(t, http.MethodPut, "/buckets/df/keys/k", hdr{"Content-Type", "text/plain"}, "kept")

	filler := filepath.Join(mnt, "filler")
	tmpfs.Fill(t, filler)
	stored := diskFullKV(t, s, "a")
	if r := s.do(t, http.MethodDelete, "/buckets/df/keys/k", nil, ""); r.StatusCode != http.StatusInsufficientStorage {
		t.Errorf("DELETE on a full disk: want 507, got\n%s", r)
	}
	for _, body := range []string{"another small object", big} {
		r := c.do(t, http.MethodPut, "dfull", "refused", "", nil, body)
		if r.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(r.Body, []byte("<Code>SlowDown</Code>")) {
			t.Errorf("S3 PUT of %d bytes on a full disk: want 503 SlowDown, got\n%s", len(body), r)
		}
	}
	// Reads go on.
	diskFullReads(t, s, c, big, stored)
	if st := statsOf(t, s); st["writes_suspended"] != true {
		t.Errorf("/stats writes_suspended = %v on a full disk", st["writes_suspended"])
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitWritable(t, s)
	c.put(t, "dfull", "after", "written after space was freed")
	c.must(t, http.StatusNoContent, http.MethodDelete, "dfull", "after", "", nil, "")
	if r := s.do(t, http.MethodDelete, "/buckets/df/keys/k", nil, ""); r.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE after space was freed: want 204, got\n%s", r)
	}
	assertServing(t, s)
	s.Stop()
	if log := s.stderr.String(); !strings.Contains(log, "disk is full") || !strings.Contains(log, "writes resumed") {
		t.Errorf("no warning about the full disk, or no word of writes resuming, in the log\n%s", log)
	}

	// Start on a full disk: reads are served, writes refused, and resumed once freed.
	tmpfs.Fill(t, filler)
	s.Restart()
	c.s = s
	diskFullReads(t, s, c, big, stored)
	diskFullKV(t, s, "b")
	assertServing(t, s)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitWritable(t, s)
	s.Stop() // and its log is complete
	if log := s.stderr.String(); !strings.Contains(log, "opened read-only") || !strings.Contains(log, "writes resumed") {
		t.Errorf("the start on a full disk did not open read-only and resume\n%s", log)
	}
	if out, err := exec.Command(cairnBin, "check", "--data-dir", s.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("cairn check after the disk filled: %v\n%s", err, out)
	}
}

// diskFullReads checks that the objects stored before the disk filled are served.
func diskFullReads(t *testing.T, s *child, c s3c, big string, stored []string) {
	t.Helper()
	if r := c.must(t, http.StatusOK, http.MethodGet, "dfull", "big", "", nil, ""); string(r.Body) != big {
		t.Errorf("S3 GET of the blob object on a full disk: %d bytes, want %d", len(r.Body), len(big))
	}
	if r := c.must(t, http.StatusOK, http.MethodGet, "dfull", "small", "", nil, ""); string(r.Body) != "small object" {
		t.Errorf("S3 GET on a full disk: %q", r.Body)
	}
	for _, key := range stored {
		if r := s.do(t, http.MethodGet, "/buckets/df/keys/"+key, nil, ""); r.StatusCode != http.StatusOK || len(r.Body) != 16<<10 {
			t.Fatalf("GET of an acknowledged write on a full disk: want 200 with 16 KiB, got\n%s", r)
		}
	}
	if r := s.do(t, http.MethodGet, "/buckets/df/keys?keys=true", nil, ""); r.StatusCode != http.StatusOK {
		t.Errorf("key listing on a full disk: want 200, got\n%s", r)
	}
}

// TestHostileDataDirPermissions: with the data directory pre-created 0755 by the
// operator, the server warns (at warn level) that it is open to other users, and every
// directory and file it creates under it (LevelDB files holding S3 secrets in clear,
// blobs, the WebAssembly cache, the admin credentials) is 0700 or 0600.
func TestHostileDataDirPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	s := startServerOpts(t, serverOpts{dataDir: dir, args: []string{"--dialect", "riak"}})
	c := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V4}
	s3CreateUser(t, s, "perm@example.com", "perm")
	c.mkBucket(t, "perm")
	c.put(t, "perm", "big", strings.Repeat("s", 2<<20))
	c.put(t, "perm", "small", "small")
	s.do(t, http.MethodPut, "/buckets/perm/keys/k", hdr{"Content-Type", "text/plain"}, "v")
	assertServing(t, s)
	s.Stop() // and its log is complete
	if !regexp.MustCompile(`(?m)^.*level=WARN.*open to other users.*mode=0755`).MatchString(s.stderr.String()) {
		t.Errorf("no warning about the 0755 data directory\n%s", s.output())
	}
	var dirs, files int
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want, dirs = 0o700, dirs+1
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"leveldb", "blobs", "wasm-cache", "admin-credentials.json"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err != nil {
			t.Errorf("expected %s under the data directory: %v", sub, err)
		}
	}
	t.Logf("%d directories and %d files checked", dirs, files)
}
