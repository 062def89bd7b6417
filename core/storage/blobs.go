package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// BlobStore holds the data of large S3 objects as immutable blobs named by opaque ids
// (the caller chooses them: 16 random bytes for S3). Records in the DB (manifests)
// name a blob by its id only, never by where an implementation keeps it, so another
// implementation (a replicated object store) can replace the local one. Blobs is the
// local implementation (files in a directory), MemBlobs an in-memory one for tests.
//
// The contract every implementation keeps (the suite in core/storage/blobtest checks
// it):
//   - Create starts a blob under an id that is neither committed nor being written;
//     the writer takes its bytes in any number of Writes, and Commit makes the blob
//     durable before it returns: a caller writes the record that names a blob only
//     after Commit, so a crash leaves at most an unreferenced blob.
//   - A blob is never changed after Commit. Abort, or a failed Write or Commit, leaves
//     no blob under the id.
//   - Open returns a reader of a committed blob that keeps reading the same bytes
//     until Close, even if the blob is removed meanwhile. Open and Stat of an id with
//     no committed blob fail with an error wrapping ErrNotFound.
//   - Remove deletes a blob, committed or left behind by a writer that never finished
//     (a crash), and reports whether there was one; removing a missing id is no error.
//   - Walk reports every blob with its size, and anything else the store holds that is
//     no blob with a nil id (a stray file), so that `cairn check` can tell leaks.
//
// Errors for lack of space wrap ErrNoSpace. Methods are safe for concurrent use; one
// BlobWriter or BlobReader is used by one goroutine at a time.
type BlobStore interface {
	// Create starts the blob id, which must not exist.
	Create(ctx context.Context, id []byte) (BlobWriter, error)
	// Open opens the committed blob id for reading.
	Open(ctx context.Context, id []byte) (BlobReader, error)
	// Stat returns the size of the committed blob id.
	Stat(ctx context.Context, id []byte) (int64, error)
	// Remove deletes the blob id and reports whether it existed.
	Remove(ctx context.Context, id []byte) (bool, error)
	// Walk calls fn for every blob: its id and size, and a name for messages (where
	// the blob is). Something in the store that is no blob comes with a nil id. Walk
	// stops at the first error fn returns, and when ctx is done.
	Walk(ctx context.Context, fn func(id []byte, name string, size int64) error) error
}

// BlobWriter writes one new blob. Commit makes it durable; Abort removes it. After a
// failed Write or Commit the blob is gone already (a full disk gets its space back):
// only Abort is then left to call, and it does nothing.
type BlobWriter interface {
	// Write appends p to the blob.
	io.Writer
	// Commit makes the blob durable and readable, and ends the writer.
	Commit(ctx context.Context) error
	// Abort discards the unfinished blob (nothing once committed or failed).
	Abort()
}

// BlobReader reads one committed blob.
type BlobReader interface {
	io.ReaderAt
	io.Closer
	// Size is the blob's length in bytes.
	Size() int64
	// CopyRange writes the n bytes from off to w, and returns how many it wrote. The
	// local implementation hands w its file (an *io.LimitedReader of an *os.File), so
	// that net/http's connection sends it with sendfile; an io.SectionReader does for
	// the others (see CopyRangeAt).
	CopyRange(w io.Writer, off, n int64) (int64, error)
}

// errRange is returned by CopyRange for a range outside the blob.
var errRange = errors.New("storage: blob: range outside the blob")

// CopyRangeAt is CopyRange for any io.ReaderAt of size bytes.
func CopyRangeAt(w io.Writer, r io.ReaderAt, size, off, n int64) (int64, error) {
	if off < 0 || n < 0 || off > size || n > size-off {
		return 0, errRange
	}
	return io.Copy(w, io.NewSectionReader(r, off, n))
}

// errBlobDone is returned by a BlobWriter used after Commit, Abort or a failure.
var errBlobDone = errors.New("storage: blobs: the blob is already committed or removed")

// errEmptyBlobID refuses an empty blob id.
var errEmptyBlobID = errors.New("storage: blobs: empty id")

// Blobs is the local BlobStore: a directory of blob files named by their ids in hex,
// the data of large S3 objects, which an LSM tree would write several times over
// (journal, level 0, every compaction) and hold in its memtables. A blob is written
// once, synced with its directory entry, and then only read or removed.
type Blobs struct {
	dir string
}

var _ BlobStore = (*Blobs)(nil)

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

// fileBlobWriter writes a new blob file.
type fileBlobWriter struct {
	f    *os.File // nil once committed or removed
	dir  string
	path string
}

// Create starts the blob id, which must not exist (committed or being written).
func (b *Blobs) Create(_ context.Context, id []byte) (BlobWriter, error) {
	if len(id) == 0 {
		return nil, errEmptyBlobID
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
	return &fileBlobWriter{f: f, dir: dir, path: p}, nil
}

// Write appends p to the blob. On failure the blob is removed.
func (w *fileBlobWriter) Write(p []byte) (int, error) {
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
func (w *fileBlobWriter) Commit(context.Context) error {
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
func (w *fileBlobWriter) Abort() {
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

// fileBlobReader reads a blob file.
type fileBlobReader struct {
	f    *os.File
	size int64
}

// Open opens the blob id for reading. The file stays readable after Remove until it is
// closed.
func (b *Blobs) Open(_ context.Context, id []byte) (BlobReader, error) {
	if len(id) == 0 {
		return nil, errEmptyBlobID
	}
	f, err := os.Open(b.path(id))
	if err != nil {
		return nil, b.notFound(id, "open", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, blobErr("open", err)
	}
	return &fileBlobReader{f: f, size: fi.Size()}, nil
}

// notFound wraps err, the failure of op on the blob id, in ErrNotFound when the file
// does not exist.
func (b *Blobs) notFound(id []byte, op string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: blob %x: %w", id, ErrNotFound)
	}
	return blobErr(op, err)
}

func (r *fileBlobReader) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }
func (r *fileBlobReader) Size() int64                             { return r.size }
func (r *fileBlobReader) Close() error                            { return r.f.Close() }

// CopyRange seeks the file to off and copies n bytes of it to w as an
// *io.LimitedReader of the *os.File: net/http's response writer hands that to the
// connection's ReadFrom, which sends it with sendfile.
func (r *fileBlobReader) CopyRange(w io.Writer, off, n int64) (int64, error) {
	if off < 0 || n < 0 || off > r.size || n > r.size-off {
		return 0, errRange
	}
	if _, err := r.f.Seek(off, io.SeekStart); err != nil {
		return 0, blobErr("read", err)
	}
	return io.Copy(w, &io.LimitedReader{R: r.f, N: n})
}

// Stat returns the size of the blob id.
func (b *Blobs) Stat(_ context.Context, id []byte) (int64, error) {
	if len(id) == 0 {
		return 0, errEmptyBlobID
	}
	fi, err := os.Stat(b.path(id))
	if err != nil {
		return 0, b.notFound(id, "stat", err)
	}
	return fi.Size(), nil
}

// Remove deletes the blob id and reports whether it existed (a blob that does not
// exist is not an error).
func (b *Blobs) Remove(_ context.Context, id []byte) (bool, error) {
	if len(id) == 0 {
		return false, errEmptyBlobID
	}
	err := os.Remove(b.path(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, blobErr("remove", err)
}

// Walk calls fn with the id, path and size of every blob file. A file whose name is
// not a blob id in its right subdirectory is reported with a nil id.
func (b *Blobs) Walk(ctx context.Context, fn func(id []byte, name string, size int64) error) error {
	return filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
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
