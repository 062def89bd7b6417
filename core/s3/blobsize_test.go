package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// TestBlobMinSize: objects from Config.BlobMinSize bytes are blob files, smaller ones
// chunk records in the commit batch, larger than one chunk blobs whatever the setting;
// each reads back whole with its MD5 as ETag, and replacing them leaves nothing behind.
func TestBlobMinSize(t *testing.T) {
	for _, c := range []struct {
		blobMin  int64
		size     int
		wantBlob bool
	}{
		{8, 0, false}, {8, 7, false}, {8, 8, true}, {8, 16, true}, {8, 40, true},
		{0, 16, false}, {0, 17, true}, // the default (256 KiB) is above the 16-byte chunk: chunk+1
		{100, 16, false}, {100, 17, true},
	} {
		t.Run(fmt.Sprintf("min=%d/size=%d", c.blobMin, c.size), func(t *testing.T) {
			db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			blobs, err := storage.OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(db, Config{ChunkSize: 16, Blobs: blobs, BlobMinSize: c.blobMin})
			if err != nil {
				t.Fatal(err)
			}
			alice := mustUser(t, s, "alice")
			mustBucket(t, s, alice, "blobs", "")
			data := bytes.Repeat([]byte("x"), c.size)
			m := put(t, s, alice, "blobs", "k", data)
			sum := md5.Sum(data)
			if m.Blob != c.wantBlob || m.ETag != hex.EncodeToString(sum[:]) {
				t.Errorf("blob %v etag %s, want blob %v etag %x", m.Blob, m.ETag, c.wantBlob, sum)
			}
			if got := read(t, s, alice, "blobs", "k"); !bytes.Equal(got, data) {
				t.Errorf("read %d bytes back, want %d", len(got), len(data))
			}
			put(t, s, alice, "blobs", "k", []byte("y"))
			waitCollected(t, s)
			s.Close()
			if rep, err := Check(db, blobs); err != nil || rep.Blobs != 0 || rep.Pending != 0 {
				t.Errorf("after replacing: %+v %v", rep, err)
			}
		})
	}
}

// collectorPasses is how many passes the collector has made.
func collectorPasses(s *Service) int64 {
	s.gc.mu.Lock()
	defer s.gc.mu.Unlock()
	return s.gc.passes
}

// TestCollectorWakes: reading a blob object does not wake the collector (each pass
// scans the garbage queue), but closing the last reader of a blob the collector had to
// skip does, so the blob goes without waiting for the periodic pass.
func TestCollectorWakes(t *testing.T) {
	s, _ := newTestServiceBlobs(t, fileBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "wakes", "")
	put(t, s, alice, "wakes", "k", bytes.Repeat([]byte("a"), 100))
	waitCollected(t, s)
	time.Sleep(2 * gcPause)
	before := collectorPasses(s)
	for range 20 {
		read(t, s, alice, "wakes", "k")
	}
	time.Sleep(3 * gcPause)
	if n := collectorPasses(s) - before; n != 0 {
		t.Fatalf("20 reads made %d collector passes", n)
	}

	// A reader pins the blob while the object is replaced: the collector skips it.
	o, err := s.OpenObject(context.Background(), alice, "wakes", "k")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, alice, "wakes", "k", bytes.Repeat([]byte("b"), 100))
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.blobMu.Lock()
		deferred := len(s.deferred)
		s.blobMu.Unlock()
		if deferred == 1 {
			break
		}
		if time.Now().After(deadline) {
			o.Close()
			t.Fatal("the collector did not skip the pinned blob")
		}
		time.Sleep(5 * time.Millisecond)
	}
	o.Close() // wakes the collector: the periodic pass is a minute away
	for deadline = time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if p, err := s.Pending(); err != nil || !p {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the skipped blob was not collected after its reader closed")
		}
	}
	if _, blobs := s.Collected(); blobs != 1 {
		t.Fatalf("%d blobs collected, want 1", blobs)
	}
}
