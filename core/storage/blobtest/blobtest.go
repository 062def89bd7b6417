// Package blobtest is the conformance suite of storage.BlobStore: every implementation
// (the local blob files, the in-memory store, a replicated store) runs it from its own
// tests with Run.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// Run runs the suite; open returns a new, empty store for each test.
func Run(t *testing.T, open func(t *testing.T) storage.BlobStore) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, storage.BlobStore)
	}{
		{"WriteCommitRead", testWriteCommitRead},
		{"Ranges", testRanges},
		{"CreateExisting", testCreateExisting},
		{"Missing", testMissing},
		{"Abort", testAbort},
		{"UseAfterEnd", testUseAfterEnd},
		{"RemoveWhileOpen", testRemoveWhileOpen},
		{"Walk", testWalk},
		{"WalkStops", testWalkStops},
		{"EmptyID", testEmptyID},
		{"Concurrent", testConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

// put writes data as the blob id in pieces of piece bytes and commits it.
func put(t *testing.T, s storage.BlobStore, id, data []byte, piece int) {
	t.Helper()
	ctx := context.Background()
	w, err := s.Create(ctx, id)
	if err != nil {
		t.Fatalf("create %x: %v", id, err)
	}
	for rest := data; len(rest) > 0; {
		k := min(piece, len(rest))
		if n, err := w.Write(rest[:k]); err != nil || n != k {
			t.Fatalf("write %x: %d, %v", id, n, err)
		}
		rest = rest[k:]
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("commit %x: %v", id, err)
	}
}

// pattern returns n bytes that differ at every offset of a small period.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// readAll reads the blob id whole through ReaderAt, checking Size and Stat.
func readAll(t *testing.T, s storage.BlobStore, id []byte) []byte {
	t.Helper()
	ctx := context.Background()
	r, err := s.Open(ctx, id)
	if err != nil {
		t.Fatalf("open %x: %v", id, err)
	}
	defer r.Close()
	size, err := s.Stat(ctx, id)
	if err != nil || size != r.Size() {
		t.Fatalf("stat %x = %d, %v; the reader says %d", id, size, err, r.Size())
	}
	got := make([]byte, r.Size())
	if n, err := r.ReadAt(got, 0); n != len(got) || err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("read %x: %d of %d, %v", id, n, len(got), err)
	}
	return got
}

func testWriteCommitRead(t *testing.T, s storage.BlobStore) {
	for _, c := range []struct {
		size, piece int
	}{{0, 1}, {1, 1}, {100, 7}, {64 << 10, 64 << 10}, {300 << 10, 64 << 10}, {300<<10 + 1, 4096}} {
		id := []byte(fmt.Sprintf("blob-%d-%d", c.size, c.piece))
		data := pattern(c.size)
		put(t, s, id, data, c.piece)
		if got := readAll(t, s, id); !bytes.Equal(got, data) {
			t.Errorf("blob of %d bytes in pieces of %d: read %d bytes, not the ones written", c.size, c.piece, len(got))
		}
	}
}

func testRanges(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	data := pattern(10_000)
	id := []byte{0xab, 0xcd, 1}
	put(t, s, id, data, 999)
	r, err := s.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		off, n int64
		ok     bool
	}{
		{0, 10_000, true}, {0, 0, true}, {1, 1, true}, {9_999, 1, true}, {10_000, 0, true},
		{4_321, 5_000, true}, {5_000, 100, true}, // out of order: each range seeks anew
		{-1, 1, false}, {0, -1, false}, {9_999, 2, false}, {10_001, 0, false}, {1, 1 << 62, false},
	} {
		var buf bytes.Buffer
		n, err := r.CopyRange(&buf, c.off, c.n)
		if !c.ok {
			if err == nil {
				t.Errorf("CopyRange(%d, %d) of 10000 bytes: no error", c.off, c.n)
			}
			continue
		}
		if err != nil || n != c.n || !bytes.Equal(buf.Bytes(), data[c.off:c.off+c.n]) {
			t.Errorf("CopyRange(%d, %d) = %d, %v (%d bytes right: %v)", c.off, c.n, n, err, buf.Len(), bytes.Equal(buf.Bytes(), data[c.off:c.off+c.n]))
		}
		p := make([]byte, c.n)
		if k, err := r.ReadAt(p, c.off); k != len(p) || err != nil && !errors.Is(err, io.EOF) || !bytes.Equal(p, data[c.off:c.off+c.n]) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v", c.n, c.off, k, err)
		}
	}
}

func testCreateExisting(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	put(t, s, []byte("a"), []byte("committed"), 4)
	if w, err := s.Create(ctx, []byte("a")); err == nil {
		w.Abort()
		t.Error("a committed blob was created again")
	}
	w, err := s.Create(ctx, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if w2, err := s.Create(ctx, []byte("b")); err == nil {
		w2.Abort()
		t.Error("a blob being written was created again")
	}
	if got := readAll(t, s, []byte("a")); string(got) != "committed" {
		t.Errorf("the committed blob reads %q after a second Create", got)
	}
}

func testMissing(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	if _, err := s.Open(ctx, []byte("nope")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("open of a missing blob: %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, []byte("nope")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("stat of a missing blob: %v, want ErrNotFound", err)
	}
	if ok, err := s.Remove(ctx, []byte("nope")); ok || err != nil {
		t.Errorf("remove of a missing blob = %v, %v", ok, err)
	}
}

func testAbort(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	w, err := s.Create(ctx, []byte("aborted"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort() // twice is harmless
	if _, err := s.Stat(ctx, []byte("aborted")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("stat of an aborted blob: %v, want ErrNotFound", err)
	}
	seen := 0
	if err := s.Walk(ctx, func([]byte, string, int64) error { seen++; return nil }); err != nil || seen != 0 {
		t.Errorf("walk after an abort: %d entries, %v", seen, err)
	}
	// The id is free again.
	put(t, s, []byte("aborted"), []byte("again"), 5)
	if got := readAll(t, s, []byte("aborted")); string(got) != "again" {
		t.Errorf("read %q", got)
	}
}

func testUseAfterEnd(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	w, err := s.Create(ctx, []byte("done"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("y")); err == nil {
		t.Error("a write after Commit succeeded")
	}
	if err := w.Commit(ctx); err == nil {
		t.Error("a second Commit succeeded")
	}
	w.Abort() // after Commit: nothing
	if got := readAll(t, s, []byte("done")); string(got) != "x" {
		t.Errorf("the committed blob reads %q after a late Write and Abort", got)
	}
}

func testRemoveWhileOpen(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	data := pattern(5000)
	put(t, s, []byte("r"), data, 1000)
	r, err := s.Open(ctx, []byte("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ok, err := s.Remove(ctx, []byte("r")); !ok || err != nil {
		t.Fatalf("remove = %v, %v", ok, err)
	}
	if ok, err := s.Remove(ctx, []byte("r")); ok || err != nil {
		t.Fatalf("second remove = %v, %v", ok, err)
	}
	if _, err := s.Open(ctx, []byte("r")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("open of a removed blob: %v, want ErrNotFound", err)
	}
	var buf bytes.Buffer
	if n, err := r.CopyRange(&buf, 0, 5000); n != 5000 || err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("a reader opened before Remove: %d bytes, %v", n, err)
	}
}

func testWalk(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	want := map[string]int64{}
	for i := range 20 {
		id := []byte{byte(i * 13), byte(i), 0xee}
		put(t, s, id, pattern(i*17), 64)
		want[string(id)] = int64(i * 17)
	}
	got := map[string]int64{}
	err := s.Walk(ctx, func(id []byte, name string, size int64) error {
		if id == nil {
			t.Errorf("walk reported a stray entry %q in a store only Create wrote", name)
			return nil
		}
		if _, dup := got[string(id)]; dup {
			t.Errorf("walk reported %x twice", id)
		}
		got[string(bytes.Clone(id))] = size
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("walk saw %d blobs, want %d", len(got), len(want))
	}
	for id, size := range want {
		if got[id] != size {
			t.Errorf("walk: blob %x of %d bytes, want %d", id, got[id], size)
		}
	}
}

func testWalkStops(t *testing.T, s storage.BlobStore) {
	for i := range 5 {
		put(t, s, []byte{byte(i + 1)}, []byte("x"), 1)
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.Walk(context.Background(), func([]byte, string, int64) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("walk whose fn fails: %d calls, %v", calls, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	if err := s.Walk(ctx, func([]byte, string, int64) error { calls++; return nil }); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("walk with a canceled context: %d calls, %v", calls, err)
	}
}

func testEmptyID(t *testing.T, s storage.BlobStore) {
	ctx := context.Background()
	if w, err := s.Create(ctx, nil); err == nil {
		w.Abort()
		t.Error("a blob with an empty id was created")
	}
	if _, err := s.Open(ctx, nil); err == nil {
		t.Error("an empty id opened")
	}
	if _, err := s.Remove(ctx, nil); err == nil {
		t.Error("an empty id removed without error")
	}
}

func testConcurrent(t *testing.T, s storage.BlobStore) {
	var wg sync.WaitGroup
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			id := []byte{0xcc, byte(i)}
			w, err := s.Create(ctx, id)
			if err != nil {
				errs <- err
				return
			}
			for range 16 {
				if _, err := w.Write(bytes.Repeat([]byte{byte(i)}, 1000)); err != nil {
					errs <- err
					return
				}
			}
			errs <- w.Commit(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if got := readAll(t, s, []byte{0xcc, byte(i)}); !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 16_000)) {
			t.Errorf("concurrent blob %d reads %d bytes, not the ones written", i, len(got))
		}
	}
}
