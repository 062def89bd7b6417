package storage

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"sync"
)

// MemBlobs is a BlobStore in memory, for tests: it shows that the BlobStore contract
// is all a service needs (core/s3's tests run against it and against Blobs). It holds
// every byte written to it; nothing bounds it but the tests that use it.
type MemBlobs struct {
	mu      sync.Mutex        // guards blobs and writing
	blobs   map[string][]byte // committed blobs by id; a value is never changed
	writing map[string]bool   // ids being written
}

var _ BlobStore = (*MemBlobs)(nil)

// NewMemBlobs returns an empty in-memory blob store.
func NewMemBlobs() *MemBlobs {
	return &MemBlobs{blobs: map[string][]byte{}, writing: map[string]bool{}}
}

// memBlobWriter buffers a new blob until Commit.
type memBlobWriter struct {
	m    *MemBlobs
	id   string
	buf  bytes.Buffer
	done bool
}

// Create starts the blob id, which must be neither committed nor being written.
func (m *MemBlobs) Create(_ context.Context, id []byte) (BlobWriter, error) {
	if len(id) == 0 {
		return nil, errEmptyBlobID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := string(id)
	if _, ok := m.blobs[k]; ok || m.writing[k] {
		return nil, fmt.Errorf("storage: blobs: create %x: the blob exists", id)
	}
	m.writing[k] = true
	return &memBlobWriter{m: m, id: k}, nil
}

// Write appends p to the blob.
func (w *memBlobWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errBlobDone
	}
	return w.buf.Write(p)
}

// Commit makes the blob readable.
func (w *memBlobWriter) Commit(ctx context.Context) error {
	if w.done {
		return errBlobDone
	}
	if err := ctx.Err(); err != nil {
		w.Abort()
		return fmt.Errorf("storage: blobs: commit: %w", err)
	}
	w.done = true
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	delete(w.m.writing, w.id)
	w.m.blobs[w.id] = bytes.Clone(w.buf.Bytes())
	return nil
}

// Abort discards the blob.
func (w *memBlobWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	delete(w.m.writing, w.id)
}

// memBlobReader reads a committed blob's bytes (which nothing changes).
type memBlobReader struct {
	*bytes.Reader
}

func (r memBlobReader) Close() error { return nil }

// CopyRange writes the n bytes from off to w.
func (r memBlobReader) CopyRange(w io.Writer, off, n int64) (int64, error) {
	return CopyRangeAt(w, r.Reader, r.Size(), off, n)
}

// get returns the committed blob id.
func (m *MemBlobs) get(id []byte) ([]byte, error) {
	if len(id) == 0 {
		return nil, errEmptyBlobID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[string(id)]
	if !ok {
		return nil, fmt.Errorf("storage: blob %x: %w", id, ErrNotFound)
	}
	return b, nil
}

// Open opens the committed blob id; it stays readable after Remove.
func (m *MemBlobs) Open(_ context.Context, id []byte) (BlobReader, error) {
	b, err := m.get(id)
	if err != nil {
		return nil, err
	}
	return memBlobReader{bytes.NewReader(b)}, nil
}

// Stat returns the size of the committed blob id.
func (m *MemBlobs) Stat(_ context.Context, id []byte) (int64, error) {
	b, err := m.get(id)
	return int64(len(b)), err
}

// Remove deletes the committed blob id and reports whether it existed. (A writer in
// progress keeps its id: in memory no crash can leave one behind.)
func (m *MemBlobs) Remove(_ context.Context, id []byte) (bool, error) {
	if len(id) == 0 {
		return false, errEmptyBlobID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := string(id)
	_, ok := m.blobs[k]
	delete(m.blobs, k)
	return ok, nil
}

// Walk calls fn for every committed blob, in id order. The name is the id in hex.
func (m *MemBlobs) Walk(ctx context.Context, fn func(id []byte, name string, size int64) error) error {
	m.mu.Lock()
	ids := make([]string, 0, len(m.blobs))
	sizes := make(map[string]int64, len(m.blobs))
	for k, b := range m.blobs {
		ids = append(ids, k)
		sizes[k] = int64(len(b))
	}
	m.mu.Unlock()
	slices.Sort(ids)
	for _, k := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn([]byte(k), hex.EncodeToString([]byte(k)), sizes[k]); err != nil {
			return err
		}
	}
	return nil
}
