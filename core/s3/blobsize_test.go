package s3

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

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

// TestMD5HashersConcurrent: bodies hashed at the same time (md5-simd) and alone
// (crypto/md5) get the right sums, and close waits for the last md5-simd hasher.
func TestMD5HashersConcurrent(t *testing.T) {
	var m md5Hashers
	const n = 20
	datas := make([][]byte, n)
	for i := range datas {
		datas[i] = bytes.Repeat([]byte{byte(i)}, 100_000+i*4099)
	}
	h, release := m.get() // held: every body below is concurrent with it
	var wg sync.WaitGroup
	sums := make([]string, n)
	for i := range n {
		wg.Go(func() {
			h, release := m.get()
			defer release()
			for p := datas[i]; len(p) > 0; p = p[min(len(p), 7000):] {
				h.Write(p[:min(len(p), 7000)])
			}
			sums[i] = hex.EncodeToString(h.Sum(nil))
		})
	}
	wg.Wait()
	for i, d := range datas {
		if want := md5.Sum(d); sums[i] != hex.EncodeToString(want[:]) {
			t.Errorf("body %d: %s, want %x", i, sums[i], want)
		}
	}
	if m.srv == nil || m.simd != 0 || m.active != 1 {
		t.Errorf("after the concurrent bodies: server %v, simd %d, active %d", m.srv != nil, m.simd, m.active)
	}
	h2, release2 := m.get() // concurrent with h: md5-simd, still open at close
	m.close()
	if m.srv == nil {
		t.Error("close stopped the server under an open hasher")
	}
	h2.Write([]byte("abc"))
	if got, want := hex.EncodeToString(h2.Sum(nil)), "900150983cd24fb0d6963f7d28e17f72"; got != want {
		t.Errorf("md5(abc) = %s", got)
	}
	release2()
	if m.srv != nil {
		t.Error("the server outlived its last hasher after close")
	}
	h.Write([]byte("abc"))
	if got := hex.EncodeToString(h.Sum(nil)); got != "900150983cd24fb0d6963f7d28e17f72" {
		t.Errorf("md5(abc) alone = %s", got)
	}
	release()
	h3, release3 := m.get()
	defer release3()
	if h3.Size() != md5.Size || m.srv != nil {
		t.Error("a body after close started a server")
	}
}
