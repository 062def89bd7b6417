package storage

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestBlobs(t *testing.T) {
	b, err := OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	id := []byte{0xab, 1, 2, 3}
	w, err := b.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello "))
	w.Write([]byte("world"))
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(id); err == nil {
		t.Fatal("a blob was created twice")
	}
	f, err := b.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	// Removed while open: still readable through the open file.
	if ok, err := b.Remove(id); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if string(got) != "hello world" {
		t.Fatalf("read %q", got)
	}
	if ok, err := b.Remove(id); ok || err != nil {
		t.Fatalf("second remove: %v %v", ok, err)
	}
	if _, err := b.Open(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open removed: %v", err)
	}
	// Abort leaves nothing; Walk sees committed blobs and stray files.
	w, _ = b.Create([]byte{1})
	w.Write([]byte("x"))
	w.Abort()
	w, _ = b.Create([]byte{2, 2})
	w.Write([]byte("xyz"))
	w.Commit()
	os.WriteFile(filepath.Join(b.Dir(), "stray"), nil, 0o644)
	var ids [][]byte
	var sizes []int64
	strays := 0
	if err := b.Walk(func(id []byte, name string, size int64) error {
		if id == nil {
			strays++
			return nil
		}
		ids, sizes = append(ids, id), append(sizes, size)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || !bytes.Equal(ids[0], []byte{2, 2}) || sizes[0] != 3 || strays != 1 {
		t.Fatalf("walk: %x %v strays %d", ids, sizes, strays)
	}
}
