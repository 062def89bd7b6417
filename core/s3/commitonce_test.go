package s3

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// refusingStore is a store that applies an armed commit and answers it with a
// conflict, as a cluster does when a deposed stream leader's refusal reaches the
// client before the new leader's acknowledgement of the same commit.
type refusingStore struct {
	storage.Store
	mu sync.Mutex // guards armed and after
	// armed makes the request's next commit a refused one; after runs once such a
	// commit is applied, before it is answered.
	armed bool
	after func()
}

// Commit applies b and, when armed, answers a conflict all the same if ctx is the
// request's (refusedCtxKey).
func (s *refusingStore) Commit(ctx context.Context, b *storage.Batch, sync bool) error {
	if err := s.Store.Commit(ctx, b, sync); err != nil {
		return err
	}
	if ctx.Value(refusedCtxKey{}) == nil {
		return nil // the service's background work, which may come between arm and the PUT
	}
	s.mu.Lock()
	armed, after := s.armed, s.after
	s.armed = false
	s.mu.Unlock()
	if !armed {
		return nil
	}
	if after != nil {
		after()
	}
	return fmt.Errorf("test: stored, answered as refused: %w", storage.ErrConflict)
}

// refusedCtxKey marks the context of the request whose commit refusingStore refuses.
type refusedCtxKey struct{}

// arm makes the request's next commit a refused one, running after once it is applied.
func (s *refusingStore) arm(after func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.after = true, after
}

// TestCommitAppliedButRefused: a PUT whose first commit attempt the store applied but
// answered with a conflict succeeds, and its data stays readable after the collection
// (before appliedEarlier, the retry queued its own data, replaced by itself, for
// collection: the manifest stayed without its data, the loss TestClusterCrashStop
// found). In a versioned bucket the retry adds no second version. When another writer
// replaced the applied version before the retry, the PUT is done (its version was
// current, then replaced) and the other writer's object stays whole.
func TestCommitAppliedButRefused(t *testing.T) {
	for _, kind := range blobKinds {
		for _, c := range []struct {
			name       string
			size       int
			versioning string
			conds      WriteConditions
			replaced   bool // another writer replaces the version before the retry
		}{
			{name: "one chunk", size: 10},
			{name: "chunks", size: 100},
			{name: "if-none-match", size: 10, conds: WriteConditions{IfNoneMatch: "*"}},
			{name: "versioned", size: 100, versioning: VersioningEnabled},
			{name: "suspended", size: 10, versioning: VersioningSuspended},
			{name: "replaced one chunk", size: 10, replaced: true},
			{name: "replaced chunks", size: 100, replaced: true},
			{name: "versioned replaced one chunk", size: 10, versioning: VersioningEnabled, replaced: true},
			{name: "versioned replaced chunks", size: 100, versioning: VersioningEnabled, replaced: true},
		} {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				testCommitAppliedButRefused(t, kind, c.size, c.versioning, c.conds, c.replaced)
			})
		}
	}
}

func testCommitAppliedButRefused(t *testing.T, kind blobKind, size int, versioning string, conds WriteConditions, replaced bool) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobStore(t, kind)
	st := &refusingStore{Store: db}
	cfg := Config{ChunkSize: 16, Blobs: blobs}
	s, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(db, cfg) // another node's service: its commits are answered truly
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testHookCommit = nil
		for _, x := range []*Service{s, other} {
			waitCollected(t, x)
			x.Close()
		}
		if rep, err := Check(db, blobs); err != nil || rep.Pending != 0 {
			t.Errorf("invariants after the test: %+v, %v", rep, err)
		}
		db.Close()
	})
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	if versioning != "" {
		setVersioning(t, s, alice, "bkt", versioning)
	}
	theirs := bytes.Repeat([]byte("t"), size)
	after := func() {}
	if replaced {
		after = func() { put(t, other, alice, "bkt", "k", theirs) }
	}
	var once sync.Once
	testHookCommit = func(by *Service, what string) {
		if by == s && what == "commit bkt/k" {
			once.Do(func() { st.arm(after) })
		}
	}
	before := s.conflicts.Load()
	mine := bytes.Repeat([]byte("m"), size)
	ctx := context.WithValue(context.Background(), refusedCtxKey{}, true)
	m, err := s.PutObject(ctx, alice, "bkt", "k", PutInput{Body: bytes.NewReader(mine), Size: int64(size), Conditions: conds})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if s.conflicts.Load() == before {
		t.Fatal("the commit was not answered with a conflict")
	}
	waitCollected(t, s)
	want := mine
	if replaced {
		want = theirs
	}
	if got := read(t, s, alice, "bkt", "k"); !bytes.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	if versioning == "" {
		return
	}
	// The PUT's version, once (and the other writer's, newer, when it replaced it).
	id, n := cmp.Or(m.VersionID, NullVersionID), 1
	if replaced {
		n++
	}
	if _, ids := versionsOf(t, s, alice, "bkt", 100); len(ids) != n || ids[n-1] != id {
		t.Fatalf("versions %q, want the PUT's %q last of %d", ids, id, n)
	}
	if replaced {
		if got := readVersion(t, s, alice, "bkt", "k", id); !bytes.Equal(got, mine) {
			t.Fatalf("the PUT's version reads %q, want %q", got, mine)
		}
	}
}
