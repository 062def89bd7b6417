package storage

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Blobs is a directory of immutable blob files named by 16-byte ids: the data of large
// S3 objects, which an LSM tree would write several times over (journal, level 0, every
// compaction) and hold in its memtables. A blob is written once, synced, and then only
// read or removed; the record that makes it reachable (a manifest in the DB) is written
// after Commit, so a crash can leave an unreferenced blob but never a dangling reference.
type Blobs struct {
	dir string
}

// OpenBlobs opens (creating it if needed) the blob directory dir.
func OpenBlobs(dir string) (*Blobs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	return &Blobs{dir: dir}, nil
}

// Dir returns the blob directory.
func (b *Blobs) Dir() string { return b.dir }

// path returns where the blob id lives: dir/<first byte in hex>/<id in hex>.
func (b *Blobs) path(id []byte) string {
	h := hex.EncodeToString(id)
	return filepath.Join(b.dir, h[:2], h)
}

// BlobWriter writes a new blob. Commit makes it durable; Abort removes it.
type BlobWriter struct {
	f    *os.File
	dir  string
	path string
}

// Create starts the blob id, which must not exist.
func (b *Blobs) Create(id []byte) (*BlobWriter, error) {
	if len(id) == 0 {
		return nil, errors.New("storage: blobs: empty id")
	}
	p := b.path(id)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	return &BlobWriter{f: f, dir: dir, path: p}, nil
}

// Write appends p to the blob.
func (w *BlobWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("storage: blobs: %w", err)
	}
	return n, err
}

// Commit syncs the blob and its directory entry and closes it.
func (w *BlobWriter) Commit() error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(w.dir)
	}
	if err != nil {
		os.Remove(w.path)
		return fmt.Errorf("storage: blobs: commit: %w", err)
	}
	return nil
}

// Abort closes and removes the unfinished blob.
func (w *BlobWriter) Abort() {
	w.f.Close()
	os.Remove(w.path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open opens the blob id for reading. The file stays readable after Remove until it is
// closed.
func (b *Blobs) Open(id []byte) (*os.File, error) {
	f, err := os.Open(b.path(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("storage: blob %x: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	return f, nil
}

// Exists reports whether the blob id exists.
func (b *Blobs) Exists(id []byte) bool {
	_, err := os.Stat(b.path(id))
	return err == nil
}

// Remove deletes the blob id and reports whether it existed (a blob that does not
// exist is not an error).
func (b *Blobs) Remove(id []byte) (bool, error) {
	err := os.Remove(b.path(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("storage: blobs: %w", err)
}

// Walk calls fn with the id and size of every blob. A file whose name is not a blob id
// is reported with a nil id.
func (b *Blobs) Walk(fn func(id []byte, name string, size int64) error) error {
	return filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		id, derr := hex.DecodeString(d.Name())
		if derr != nil || len(id) == 0 || filepath.Base(filepath.Dir(p)) != d.Name()[:2] {
			id = nil
		}
		return fn(id, p, info.Size())
	})
}
