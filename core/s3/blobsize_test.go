package s3

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"path/filepath"
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
