package storage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnkv/cairn/internal/tmpfs"
)

// TestDiskFullTmpfs fills a real 8 MiB filesystem: writes are refused with ErrNoSpace
// while reads go on, a blob that does not fit fails with ErrNoSpace and leaves neither
// file nor used space behind, and once a filler file is deleted writes resume on their
// own; after a reopen every acknowledged write is present and no refused one is.
func TestDiskFullTmpfs(t *testing.T) {
	skipCompactionFaultsUnderRace(t)
	mnt := tmpfs.Mount(t, "8m")
	dir := filepath.Join(mnt, "leveldb")
	o := fastRecovery(Options{WriteBuffer: 512 << 10})
	o.resumeFreeSpace = 256 << 10
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	filler := filepath.Join(mnt, "filler")
	tmpfs.FillUpTo(t, filler, 5<<20)

	l := newLedger()
	writeUntilRefused(t, db, l, "a", 4000)
	l.verify(t, db) // reads go on while the disk is full

	blobs, err := OpenBlobs(filepath.Join(mnt, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := freeSpace(mnt)
	w, err := blobs.Create(context.Background(), []byte{1, 2, 3})
	if err == nil {
		chunk := bytes.Repeat([]byte{7}, 256<<10)
		for i := 0; i < 64 && err == nil; i++ {
			_, err = w.Write(chunk)
		}
		w.Abort() // what a caller does; a no-op after the failed Write removed it
	}
	if !errors.Is(err, ErrNoSpace) {
		t.Errorf("a blob larger than the free space: %v, want ErrNoSpace", err)
	}
	if _, err := blobs.Stat(context.Background(), []byte{1, 2, 3}); !errors.Is(err, ErrNotFound) {
		t.Error("the failed blob is still there")
	}
	if after, _ := freeSpace(mnt); after < before {
		t.Errorf("free space %d after the failed blob, %d before: its space was not released", after, before)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitResumed(t, db, l, "b")
	for i := 0; i < 50; i++ {
		if err := l.put(db, "c"+string(rune('a'+i%26))+string(rune('a'+i/26)), value(i, 4000)); err != nil {
			t.Fatalf("after space was freed: %v", err)
		}
	}
	l.verify(t, db)
	db = reopenAndVerify(t, db, dir, l)
	if st := db.Stats(); st["writes_suspended"] != false {
		t.Errorf("reopened with room to spare, writes_suspended = %v", st["writes_suspended"])
	}
	t.Logf("%d writes acknowledged, %d refused", len(l.acked), len(l.failed))
}
