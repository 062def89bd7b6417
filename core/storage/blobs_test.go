package storage

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestBlobsStray: a file in the blob directory that is no blob (a wrong name, or a
// blob name in the wrong subdirectory) is walked with a nil id, for check to report.
func TestBlobsStray(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := b.Create(ctx, []byte{2, 2})
	w.Write([]byte("xyz"))
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(b.Dir(), "stray"), nil, 0o600)
	os.MkdirAll(filepath.Join(b.Dir(), "ff"), 0o700)
	os.WriteFile(filepath.Join(b.Dir(), "ff", "0202"), nil, 0o600)
	var ids [][]byte
	strays := 0
	if err := b.Walk(ctx, func(id []byte, name string, size int64) error {
		if id == nil {
			strays++
			return nil
		}
		ids = append(ids, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || !bytes.Equal(ids[0], []byte{2, 2}) || strays != 2 {
		t.Fatalf("walk: %x, strays %d", ids, strays)
	}
}

// readerFromRecorder is an io.Writer with ReadFrom, as net/http's response writer:
// it records what it was handed.
type readerFromRecorder struct {
	bytes.Buffer
	got []io.Reader
}

func (r *readerFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.got = append(r.got, src)
	return r.Buffer.ReadFrom(src)
}

// TestBlobsCopyRangeHandsTheFile: the local store's CopyRange hands the writer an
// *io.LimitedReader of the *os.File, which net/http's connection sends with sendfile
// (see core/httpx's TestTrackedConnReadFrom), and the range is right.
func TestBlobsCopyRangeHandsTheFile(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Create(ctx, []byte{9, 9})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("0123456789"))
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := b.Open(ctx, []byte{9, 9})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec readerFromRecorder
	if n, err := r.CopyRange(&rec, 3, 4); n != 4 || err != nil || rec.String() != "3456" {
		t.Fatalf("CopyRange(3, 4) = %d, %v, %q", n, err, rec.String())
	}
	lr, ok := rec.got[0].(*io.LimitedReader)
	if len(rec.got) != 1 || !ok {
		t.Fatalf("the writer was handed %T, want an *io.LimitedReader", rec.got)
	}
	if _, ok := lr.R.(*os.File); !ok {
		t.Fatalf("the limited reader reads a %T, want an *os.File", lr.R)
	}
}
