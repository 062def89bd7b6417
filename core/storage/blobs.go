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

// OpenBlobs opens (creating it if needed) the blob directory dir. Directories it
// creates are 0700 and blob files 0600: blobs hold object data.
func OpenBlobs(dir string) (*Blobs, error) {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, blobErr("open", err)
	}
	return &Blobs{dir: dir}, nil
}

// blobErr adds context to a failed blob operation; a full device wraps ErrNoSpace.
func blobErr(op string, err error) error {
	if isNoSpace(err) {
		return fmt.Errorf("storage: blobs: %s: %w: %w", op, ErrNoSpace, err)
	}
	return fmt.Errorf("storage: blobs: %s: %w", op, err)
}

// Dir returns the blob directory.
func (b *Blobs) Dir() string { return b.dir }

// path returns where the blob id lives: dir/<first byte in hex>/<id in hex>.
func (b *Blobs) path(id []byte) string {
	h := hex.EncodeToString(id)
	return filepath.Join(b.dir, h[:2], h)
}

// BlobWriter writes a new blob. Commit makes it durable; Abort removes it. A failed
// Write or Commit removes it at once (a full disk gets its space back): only Abort is
// then left to call, and it does nothing.
type BlobWriter struct {
	f    *os.File // nil once committed or removed
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
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, blobErr("create", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, blobErr("create", err)
	}
	return &BlobWriter{f: f, dir: dir, path: p}, nil
}

// errBlobDone is returned by a BlobWriter used after Commit, Abort or a failure.
var errBlobDone = errors.New("storage: blobs: the blob is already committed or removed")

// Write appends p to the blob. On failure the blob is removed.
func (w *BlobWriter) Write(p []byte) (int, error) {
	if w.f == nil {
		return 0, errBlobDone
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.Abort()
		return n, blobErr("write", err)
	}
	return n, nil
}

// Commit syncs the blob and its directory entry and closes it. On failure the blob is
// removed.
func (w *BlobWriter) Commit() error {
	if w.f == nil {
		return errBlobDone
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err == nil {
		err = syncDir(w.dir)
	}
	if err != nil {
		_ = os.Remove(w.path)
		return blobErr("commit", err)
	}
	return nil
}

// Abort closes and removes the unfinished blob (nothing, once committed or removed).
func (w *BlobWriter) Abort() {
	if w.f == nil {
		return
	}
	_ = w.f.Close()
	_ = os.Remove(w.path)
	w.f = nil
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
		return nil, blobErr("open", err)
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
	return false, blobErr("remove", err)
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
