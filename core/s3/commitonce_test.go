package s3

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// failingStore is a store that fails an armed commit of the request (refusedCtxKey):
// it applies it or not, and answers it with an error all the same, as a cluster does
// when a deposed stream leader's refusal reaches the client before the new leader's
// acknowledgement of the same commit (applied, a conflict), or when a commit's stream
// did not answer in time (applied or not, outcome unknown).
type failingStore struct {
	storage.Store
	mu sync.Mutex // guards armed
	// armed, when not nil, is how the request's next commit fails.
	armed *commitFailure
}

// commitFailure is how failingStore fails a commit.
type commitFailure struct {
	apply  bool  // the commit is applied
	answer error // what the commit returns
	after  func()
}

// refusedCtxKey marks the context of the request whose commit failingStore fails.
type refusedCtxKey struct{}

// Commit applies b unless an armed failure says not to, and answers the failure's error.
func (s *failingStore) Commit(ctx context.Context, b *storage.Batch, sync bool) error {
	var f *commitFailure
	if ctx.Value(refusedCtxKey{}) != nil { // not the service's background work
		s.mu.Lock()
		f, s.armed = s.armed, nil
		s.mu.Unlock()
	}
	if f == nil {
		return s.Store.Commit(ctx, b, sync)
	}
	if f.apply {
		if err := s.Store.Commit(ctx, b, sync); err != nil {
			return err
		}
	}
	if f.after != nil {
		f.after()
	}
	return f.answer
}

// errRefusedApplied is the answer of a commit applied and refused all the same.
var errRefusedApplied = fmt.Errorf("test: stored, answered as refused: %w", storage.ErrConflict)

// errUnknownOutcome is the answer of a commit whose outcome is unknown.
var errUnknownOutcome = errors.New("test: the commit may or may not have been applied")

// failingServices returns a Service over a failingStore of a new DB and blob store of
// kind, and another Service over the DB itself (another node's: its commits are
// answered truly), with a user and its bucket "bkt". At the end of the test it waits
// for the collection and checks the S3 invariants (no leaked data, no manifest without
// its data).
func failingServices(t *testing.T, kind blobKind) (s, other *Service, st *failingStore, alice Requester) {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobStore(t, kind)
	st = &failingStore{Store: db}
	cfg := Config{ChunkSize: 16, Blobs: blobs}
	if s, err = New(st, cfg); err != nil {
		t.Fatal(err)
	}
	if other, err = New(db, cfg); err != nil {
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
	alice = mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	return s, other, st, alice
}

// armAt makes the first commit attempt of the update what by s fail with f: hook, when
// not nil, runs first (before the attempt's commit).
func armAt(s *Service, st *failingStore, what string, f *commitFailure, hook func()) {
	var once sync.Once
	testHookCommit = func(by *Service, w string) {
		if by == s && w == what {
			once.Do(func() {
				if hook != nil {
					hook()
				}
				if f != nil {
					st.mu.Lock()
					st.armed = f
					st.mu.Unlock()
				}
			})
		}
	}
}

// putCtx is the context of the PUTs whose commits failingStore fails.
var putCtx = context.WithValue(context.Background(), refusedCtxKey{}, true)

// TestCommitAppliedButRefused: a PUT whose first commit attempt the store applied but
// answered with a conflict succeeds, and its data stays readable after the collection
// (before appliedEarlier, the retry queued its own data, replaced by itself, for
// collection: the manifest stayed without its data, the loss TestClusterCrashStop
// found). In a versioned bucket the retry adds no second version. When another writer
// replaced the applied version before the retry, the other writer's object stays
// whole and the PUT is done (its version was current, then replaced) or, for data
// stored before the commit and still queued, fails with 500 InternalError
// (errDataQueued: a recovered write looks the same); an unversioned one-chunk PUT may
// also find its replaced data collected already and commit again (then its object is
// current, whole).
func TestCommitAppliedButRefused(t *testing.T) {
	for _, kind := range blobKinds {
		for _, c := range []appliedCase{
			{name: "one chunk", size: 10},
			{name: "chunks", size: 100},
			{name: "if-none-match", size: 10, conds: WriteConditions{IfNoneMatch: "*"}},
			{name: "versioned", size: 100, versioning: VersioningEnabled},
			{name: "suspended", size: 10, versioning: VersioningSuspended},
			{name: "replaced one chunk", size: 10, replaced: true, mayRecommit: true},
			{name: "replaced chunks", size: 100, replaced: true, mayFail: InternalError},
			{name: "versioned replaced one chunk", size: 10, versioning: VersioningEnabled, replaced: true},
			{name: "versioned replaced chunks", size: 100, versioning: VersioningEnabled, replaced: true},
		} {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) { testCommitAppliedButRefused(t, kind, c) })
		}
	}
}

// appliedCase is a case of TestCommitAppliedButRefused.
type appliedCase struct {
	name       string
	size       int
	versioning string
	conds      WriteConditions
	replaced   bool // another writer replaces the version before the retry
	// mayRecommit: the PUT's object may be current in the end (see the test).
	mayRecommit bool
	mayFail     Code // the PUT may fail with this error (see the test)
}

func testCommitAppliedButRefused(t *testing.T, kind blobKind, c appliedCase) {
	s, other, st, alice := failingServices(t, kind)
	if c.versioning != "" {
		setVersioning(t, s, alice, "bkt", c.versioning)
	}
	mine, theirs := bytes.Repeat([]byte("m"), c.size), bytes.Repeat([]byte("t"), c.size)
	after := func() {}
	if c.replaced {
		after = func() { put(t, other, alice, "bkt", "k", theirs) }
	}
	armAt(s, st, "commit bkt/k", &commitFailure{apply: true, answer: errRefusedApplied, after: after}, nil)
	before := s.conflicts.Load()
	m, err := s.PutObject(putCtx, alice, "bkt", "k", PutInput{Body: bytes.NewReader(mine), Size: int64(c.size), Conditions: c.conds})
	if err != nil && (c.mayFail == "" || !IsCode(err, c.mayFail)) {
		t.Fatalf("put: %v", err)
	}
	if s.conflicts.Load() == before {
		t.Fatal("the commit was not answered with a conflict")
	}
	waitCollected(t, s)
	want := mine
	if c.replaced {
		want = theirs
	}
	if got := read(t, s, alice, "bkt", "k"); !bytes.Equal(got, want) && (!c.mayRecommit || !bytes.Equal(got, mine)) {
		t.Fatalf("read %q, want %q", got, want)
	}
	if c.versioning == "" {
		return
	}
	// The PUT's version, once (and the other writer's, newer, when it replaced it).
	id, n := cmp.Or(m.VersionID, NullVersionID), 1
	if c.replaced {
		n++
	}
	if _, ids := versionsOf(t, s, alice, "bkt", 100); len(ids) != n || ids[n-1] != id {
		t.Fatalf("versions %q, want the PUT's %q last of %d", ids, id, n)
	}
	if c.replaced {
		if got := readVersion(t, s, alice, "bkt", "k", id); !bytes.Equal(got, mine) {
			t.Fatalf("the PUT's version reads %q, want %q", got, mine)
		}
	}
}

// TestAbandonAfterFailedCommit: a PUT whose commit fails has its data, stored before
// the commit (chunks or a blob), queued for collection only if the commit was not
// applied: one applied but answered with an unknown outcome keeps its object whole
// (before abandonUnapplied, its data was collected under its manifest). The
// cleanup's check finds no leaked data either way.
func TestAbandonAfterFailedCommit(t *testing.T) {
	for _, kind := range blobKinds {
		for _, applied := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/applied=%v", kind, applied), func(t *testing.T) {
				s, _, st, alice := failingServices(t, kind)
				armAt(s, st, "commit bkt/k", &commitFailure{apply: applied, answer: errUnknownOutcome}, nil)
				mine := bytes.Repeat([]byte("m"), 100)
				_, err := s.PutObject(putCtx, alice, "bkt", "k", PutInput{Body: bytes.NewReader(mine), Size: int64(len(mine))})
				if !errors.Is(err, errUnknownOutcome) {
					t.Fatalf("put: %v, want the store's error", err)
				}
				waitCollected(t, s)
				_, err = s.StatObject(context.Background(), alice, "bkt", "k")
				switch {
				case applied && err != nil:
					t.Fatalf("stat after an applied commit: %v", err)
				case applied:
					if got := read(t, s, alice, "bkt", "k"); !bytes.Equal(got, mine) {
						t.Fatalf("read %q, want %q", got, mine)
					}
				case !IsCode(err, NoSuchKey):
					t.Fatalf("stat after a failed commit: %v, want NoSuchKey", err)
				}
			})
		}
	}
}

// TestCommitAfterWriteRecovered: a PUT whose "w" record was turned into a "g" one
// while its data arrived (what a restarting node's recoverWrites did to every write in
// progress before i20-k, and still does to one a day old) fails with 500 InternalError
// instead of committing a manifest that names data queued for collection.
func TestCommitAfterWriteRecovered(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(string(kind), func(t *testing.T) {
			s, other, _, alice := failingServices(t, kind)
			mine := bytes.Repeat([]byte("m"), 100)
			body := &recoveringReader{r: bytes.NewReader(mine), recover: func() {
				if n, err := other.recoverWrites(); err != nil || n != 1 {
					t.Errorf("recovered %d writes, %v; want 1", n, err)
				}
			}}
			_, err := s.PutObject(context.Background(), alice, "bkt", "k", PutInput{Body: body, Size: int64(len(mine))})
			wantCode(t, err, InternalError)
			waitCollected(t, s)
			if _, err := s.StatObject(context.Background(), alice, "bkt", "k"); !IsCode(err, NoSuchKey) {
				t.Fatalf("stat: %v, want NoSuchKey", err)
			}
		})
	}
}

// recoveringReader reads r and runs recover once when r is at its end (the PUT's
// data is stored, its commit not begun).
type recoveringReader struct {
	r       *bytes.Reader
	recover func()
	once    sync.Once
}

func (b *recoveringReader) Read(p []byte) (int, error) {
	if b.r.Len() == 0 {
		b.once.Do(b.recover)
	}
	return b.r.Read(p)
}
