package s3

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// commitSizes is a storage.Store that records the size of each commit of more than
// one write (a backfill chunk), so that a test can see how big they were.
type commitSizes struct {
	storage.Store
	mu      sync.Mutex // guards lens and sizes
	lens    []int
	sizes   []int
	disable bool
}

// Commit records b's length and size, then commits it.
func (c *commitSizes) Commit(ctx context.Context, b *storage.Batch, sync bool) error {
	c.mu.Lock()
	if !c.disable {
		c.lens, c.sizes = append(c.lens, b.Len()), append(c.sizes, b.Size())
	}
	c.mu.Unlock()
	return c.Store.Commit(ctx, b, sync)
}

// longHistory writes n delete markers of bkt/k in a versioned bucket (the newest by
// the service, the others directly, older and without noncurrent_since, as a store
// written before the versions index was) and removes the "lv" "versions" record, as
// such a store has none. The head keeps the Lone the service gave it when the key
// had one version: wrong once it has n, as only a backfill would fix.
func longHistory(t *testing.T, s *Service, db *storage.DB, n int) (Requester, []versionSlot) {
	t.Helper()
	ctx := context.Background()
	waitVersionsBackfill(t, db) // the worker's own, at start (an empty store)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	res, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	newest, err := parseSlot(res.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	mustUnmarshal(t, mustGet(t, db, versionKey("bkt", "k", newest)), &m)
	slots := []versionSlot{newest}
	b := new(storage.Batch)
	for i := 1; i < n; i++ {
		slot := newSlot(newest.seq() - uint64(i))
		old := m
		old.VersionID = slot.id()
		old.LastModified = m.LastModified.Add(-time.Duration(i) * time.Millisecond)
		b.Put(versionKey("bkt", "k", slot), mustMarshal(t, &old))
		slots = append(slots, slot)
	}
	if err := db.Commit(ctx, b, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(versionsIndexKey(), false); err != nil {
		t.Fatal(err)
	}
	return alice, slots
}

// newCountingService is newTestService over a commitSizes wrapping its DB.
func newCountingService(t *testing.T) (*Service, *storage.DB, *commitSizes) {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := &commitSizes{Store: db}
	s, err := New(store, Config{ChunkSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if _, err := Check(db, nil); err != nil {
			t.Errorf("invariants after the test: %v", err)
		}
		db.Close()
	})
	return s, db, store
}

// fixed counts the versions of bkt/k in slots that have their noncurrent_since.
func fixed(t *testing.T, db *storage.DB, slots []versionSlot) int {
	t.Helper()
	n := 0
	for _, slot := range slots {
		var m Manifest
		mustUnmarshal(t, mustGet(t, db, versionKey("bkt", "k", slot)), &m)
		if !m.NoncurrentSince.IsZero() {
			n++
		}
	}
	return n
}

func mustGet(t *testing.T, db *storage.DB, k []byte) []byte {
	t.Helper()
	v, err := db.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// wantBackfilled fails unless every version of bkt/k in slots (newest first) but the
// newest is noncurrent since its successor's creation, the head has no Lone, and the
// backfill is marked done.
func wantBackfilled(t *testing.T, db *storage.DB, slots []versionSlot) {
	t.Helper()
	var newer Manifest
	for i, slot := range slots {
		v, err := db.Get(versionKey("bkt", "k", slot))
		if errors.Is(err, storage.ErrNotFound) {
			continue // removed by the test
		}
		if err != nil {
			t.Fatal(err)
		}
		var m Manifest
		mustUnmarshal(t, v, &m)
		switch {
		case i == 0 && !m.NoncurrentSince.IsZero():
			t.Fatalf("the newest version is noncurrent since %v", m.NoncurrentSince)
		case i > 0 && !m.NoncurrentSince.Equal(newer.LastModified):
			t.Fatalf("version %d of %d is noncurrent since %v, want %v", i, len(slots), m.NoncurrentSince, newer.LastModified)
		}
		newer = m
	}
	var h versionHead
	mustUnmarshal(t, mustGet(t, db, headKey("bkt", "k")), &h)
	if h.Lone != nil {
		t.Fatalf("the head of %d versions has Lone %+v", len(slots), h.Lone)
	}
	if v, err := db.Get(versionsIndexKey()); err != nil || string(v) != versionsIndexVersion {
		t.Fatalf("the backfill is not marked done: %q %v", v, err)
	}
}

// TestVersionsBackfillChunks: the versions-index backfill of a key with 3000 versions
// commits in chunks no bigger than backfillChunkVersions records or (give or take one
// record) backfillChunkBytes bytes, and leaves every version noncurrent since its
// successor, the head's Lone cleared and Check content.
func TestVersionsBackfillChunks(t *testing.T) {
	const n = 3000
	for _, tc := range []struct {
		name            string
		versions, bytes int
		commits         int // at least
	}{
		{"by count", 100, 1 << 20, (n - 1) / 100},
		{"by size", 1 << 20, 16 << 10, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v, b int) { backfillChunkVersions, backfillChunkBytes = v, b }(backfillChunkVersions, backfillChunkBytes)
			backfillChunkVersions, backfillChunkBytes = tc.versions, tc.bytes
			s, db, store := newCountingService(t)
			_, slots := longHistory(t, s, db, n)
			store.mu.Lock()
			store.lens, store.sizes = nil, nil
			store.mu.Unlock()
			if err := s.backfillVersionsIndex(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantBackfilled(t, db, slots)
			store.mu.Lock()
			defer store.mu.Unlock()
			chunks := 0
			for i, l := range store.lens {
				if l <= 1 {
					continue // the "lv" record
				}
				chunks++
				if l > tc.versions+1 { // the records and the head
					t.Errorf("a commit of %d writes, bound %d", l, tc.versions)
				}
				if max := tc.bytes + 2<<10; store.sizes[i] > max {
					t.Errorf("a commit of %d bytes, bound %d", store.sizes[i], tc.bytes)
				}
			}
			if chunks < tc.commits {
				t.Errorf("%d commits, want at least %d", chunks, tc.commits)
			}
		})
	}
}

// TestVersionsBackfillResumes: a backfill stopped after a few chunks (its context
// done) is not marked done, leaves a store Check accepts, and the next run finishes
// it; a chunk whose starting version was removed meanwhile starts again from the
// newest version, and every version still ends noncurrent since its successor.
func TestVersionsBackfillResumes(t *testing.T) {
	defer func(v int) { backfillChunkVersions = v }(backfillChunkVersions)
	backfillChunkVersions = 100
	s, db, store := newCountingService(t)
	store.disable = true
	alice, slots := longHistory(t, s, db, 1000)
	what := "backfill versions index bkt/k"
	ctx, cancel := context.WithCancel(context.Background())
	chunks := 0
	testHookCommit = func(by *Service, w string) {
		if by == s && w == what {
			if chunks++; chunks == 4 {
				cancel()
			}
		}
	}
	defer func() { testHookCommit = nil }()
	if err := s.backfillVersionsIndex(ctx); err == nil {
		t.Fatal("a cancelled backfill succeeded")
	}
	if _, err := db.Get(versionsIndexKey()); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a stopped backfill is marked done: %v", err)
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("check of a half-done backfill: %v", err)
	}
	// The next run's third chunk's last version (the fourth's start) is removed
	// before the fourth chunk commits: the chunk conflicts and starts over.
	done := fixed(t, db, slots)
	if done < 300 || done >= len(slots)-1 {
		t.Fatalf("%d versions fixed by the stopped backfill", done)
	}
	removed := slots[done+300]
	chunks = 0
	testHookCommit = func(by *Service, w string) {
		if by == s && w == what {
			if chunks++; chunks == 4 {
				testHookCommit = nil
				if _, err := s.DeleteObjectVersion(context.Background(), alice, "bkt", "k", removed.id()); err != nil {
					t.Error(err)
				}
			}
		}
	}
	if err := s.backfillVersionsIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantBackfilled(t, db, slots)
}

// waitVersionsBackfill waits for the versions-index backfill to be marked done.
func waitVersionsBackfill(t *testing.T, db *storage.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, err := db.Get(versionsIndexKey()); err == nil && string(v) == versionsIndexVersion {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the versions-index backfill never finished")
		}
		time.Sleep(time.Millisecond)
	}
}
