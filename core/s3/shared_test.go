package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// newSharedServices returns two Services over one store and one blob store of kind, as
// two nodes of a cluster would share a replicated store: nothing but the store's
// conditional commits and notifications coordinates them. At the end of the test it
// waits for the collection and checks the S3 invariants (no leaked chunk or blob).
func newSharedServices(t *testing.T, kind blobKind) (a, b *Service, db *storage.DB) {
	t.Helper()
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobStore(t, kind)
	var svcs [2]*Service
	for i := range svcs {
		if svcs[i], err = New(db, Config{ChunkSize: 16, MinPartSize: 20, Blobs: blobs}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		testHookCommit = nil
		for _, s := range svcs {
			waitCollected(t, s)
		}
		for _, s := range svcs {
			s.Close()
		}
		if rep, err := Check(db, blobs); err != nil || rep.Pending != 0 {
			t.Errorf("invariants after the test: %+v, %v", rep, err)
		}
		db.Close()
	})
	return svcs[0], svcs[1], db
}

// overtake makes the first commit of the update what by service s run, just before it
// commits, fn (which writes through the other service): the interleaving that a
// conditional commit must survive. The hook fires once.
func overtake(t *testing.T, s *Service, what string, fn func()) {
	var once sync.Once
	testHookCommit = func(by *Service, w string) {
		if by == s && w == what {
			once.Do(fn)
		}
	}
	t.Cleanup(func() { testHookCommit = nil })
}

// TestSharedStorePutOvertaken: service a reads the key's version, b replaces it
// meanwhile; a's commit conflicts, reads again and replaces b's version, whose blob is
// then collected (without the condition both would queue the first version's blob
// and b's would leak, which the cleanup's check reports).
func TestSharedStorePutOvertaken(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(string(kind), func(t *testing.T) {
			a, b, _ := newSharedServices(t, kind)
			alice := mustUser(t, a, "alice")
			mustBucket(t, a, alice, "shared", "")
			put(t, a, alice, "shared", "k", bytes.Repeat([]byte("0"), 100))
			overtake(t, a, "commit shared/k", func() { put(t, b, alice, "shared", "k", bytes.Repeat([]byte("b"), 100)) })
			before := a.conflicts.Load()
			put(t, a, alice, "shared", "k", bytes.Repeat([]byte("a"), 100))
			if a.conflicts.Load() == before {
				t.Fatal("a's commit did not conflict with b's")
			}
			for _, s := range []*Service{a, b} {
				if got := read(t, s, alice, "shared", "k"); !bytes.Equal(got, bytes.Repeat([]byte("a"), 100)) {
					t.Fatalf("read %q, want a's version", got)
				}
			}
		})
	}
}

// TestSharedStoreConcurrentPuts: PUTs of one key through two services at once: every
// PUT succeeds, exactly one version remains, both services read it, and the data of
// all the others is collected (the cleanup's check finds no leaked blob or chunk).
func TestSharedStoreConcurrentPuts(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(string(kind), func(t *testing.T) {
			a, b, db := newSharedServices(t, kind)
			alice := mustUser(t, a, "alice")
			mustBucket(t, a, alice, "shared", "")
			const n = 16
			versions := map[string]bool{}
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				s := []*Service{a, b}[i%2]
				data := bytes.Repeat([]byte{byte('A' + i)}, 40+i) // > 1 chunk: a blob when there is a store
				versions[string(data)] = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.PutObject(context.Background(), alice, "shared", "k", PutInput{Body: bytes.NewReader(data), Size: int64(len(data))})
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			got := read(t, a, alice, "shared", "k")
			if !versions[string(got)] || !bytes.Equal(read(t, b, alice, "shared", "k"), got) {
				t.Fatalf("the services read %q and %q", got, read(t, b, alice, "shared", "k"))
			}
			waitCollected(t, a)
			rep, err := Check(db, a.cfg.Blobs)
			want := CheckReport{Users: 1, Buckets: 1, Objects: 1, Blobs: 1} // the winner's data only
			if kind == noBlobs {
				want.Blobs, want.Chunks = 0, (len(got)+15)/16
			}
			if err != nil || rep != want {
				t.Fatalf("after the race: %+v, %v; want %+v", rep, err, want)
			}
		})
	}
}

// TestSharedStoreCreateBucketRace: two services create one bucket at once: one
// creation wins; the other answers as if it came second — BucketAlreadyExists for
// another user, created=false for the same owner — and both services then see the
// winner's record (the loser's cache does not keep a miss).
func TestSharedStoreCreateBucketRace(t *testing.T) {
	for _, c := range []struct {
		name     string
		sameUser bool
	}{{"other-user", false}, {"same-user", true}} {
		t.Run(c.name, func(t *testing.T) {
			a, b, _ := newSharedServices(t, noBlobs)
			alice, bob := mustUser(t, a, "alice"), mustUser(t, a, "bob")
			second := bob
			if c.sameUser {
				second = alice
			}
			if _, err := a.Bucket(context.Background(), "race"); !IsCode(err, NoSuchBucket) {
				t.Fatal(err) // a caches nothing for a missing bucket
			}
			overtake(t, a, "create bucket race", func() { mustBucket(t, b, second, "race", "") })
			acl, _ := CannedACL("", Owner{ID: alice.ID}, Owner{ID: alice.ID})
			created, err := a.CreateBucket(context.Background(), alice, "race", acl)
			switch {
			case c.sameUser && (err != nil || created):
				t.Fatalf("the owner's second creation: created=%v, %v; want false, nil", created, err)
			case !c.sameUser:
				wantCode(t, err, BucketAlreadyExists)
			}
			for _, s := range []*Service{a, b} {
				if bk, err := s.Bucket(context.Background(), "race"); err != nil || bk.Owner.ID != second.ID {
					t.Fatalf("bucket %+v, %v; want owned by the winner", bk, err)
				}
			}
		})
	}
	t.Run("many", func(t *testing.T) {
		a, b, _ := newSharedServices(t, noBlobs)
		var users []Requester
		for i := range 8 {
			users = append(users, mustUser(t, a, fmt.Sprintf("user%d", i)))
		}
		var wg sync.WaitGroup
		results := make(chan error, len(users))
		wins := make(chan bool, len(users))
		for i, u := range users {
			s := []*Service{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				acl, _ := CannedACL("", Owner{ID: u.ID}, Owner{ID: u.ID})
				created, err := s.CreateBucket(context.Background(), u, "contested", acl)
				results <- err
				wins <- created
			}()
		}
		wg.Wait()
		close(results)
		close(wins)
		won := 0
		for created := range wins {
			if created {
				won++
			}
		}
		for err := range results {
			if err != nil && !IsCode(err, BucketAlreadyExists) {
				t.Fatal(err)
			}
		}
		if won != 1 {
			t.Fatalf("%d creations won", won)
		}
	})
}

// newSharedUpload is newSharedServices with user alice's bucket "mpb" and an upload of
// its key "obj" in progress.
func newSharedUpload(t *testing.T, kind blobKind) (a, b *Service, alice Requester, u *Upload) {
	t.Helper()
	a, b, _ = newSharedServices(t, kind)
	alice = mustUser(t, a, "alice")
	mustBucket(t, a, alice, "mpb", "")
	u, err := a.CreateUpload(context.Background(), alice, "mpb", "obj", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, alice, u
}

// TestSharedStorePartsAndCompletion: a part committed through one service while the
// other completes the upload. If the part lands after the completion listed the parts,
// the completion conflicts (the part commit rewrote the upload record), lists again and
// queues the part it was not asked for; if the completion lands first, the part's
// commit finds no upload and its data is collected. Either way no part record or data
// is left behind (the cleanup's check).
func TestSharedStorePartsAndCompletion(t *testing.T) {
	ctx := context.Background()
	part := func(t *testing.T, s *Service, r Requester, id string, n int, fill byte) *PartInfo {
		t.Helper()
		data := bytes.Repeat([]byte{fill}, 24)
		p, err := s.PutPart(ctx, r, "mpb", "obj", id, n, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		return p
	}
	for _, kind := range blobKinds {
		t.Run(string(kind)+"/part-overtakes-completion", func(t *testing.T) {
			a, b, alice, u := newSharedUpload(t, kind)
			p1, p2 := part(t, a, alice, u.ID, 1, '1'), part(t, b, alice, u.ID, 2, '2')
			overtake(t, a, "complete mpb/obj", func() { part(t, b, alice, u.ID, 3, '3') })
			m, err := a.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, WriteConditions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, b, alice, "mpb", "obj"); m.Size != 48 || !bytes.Equal(got, append(bytes.Repeat([]byte("1"), 24), bytes.Repeat([]byte("2"), 24)...)) {
				t.Fatalf("completed object of %d bytes reads %q", m.Size, got)
			}
		})
		t.Run(string(kind)+"/completion-overtakes-part", func(t *testing.T) {
			a, b, alice, u := newSharedUpload(t, kind)
			p1 := part(t, a, alice, u.ID, 1, '1')
			overtake(t, a, "commit part", func() {
				if _, err := b.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, []CompletePart{{Number: 1, ETag: p1.ETag}}, WriteConditions{}); err != nil {
					t.Error(err)
				}
			})
			data := bytes.Repeat([]byte("x"), 24)
			_, err := a.PutPart(ctx, alice, "mpb", "obj", u.ID, 2, PutInput{Body: bytes.NewReader(data), Size: 24})
			wantCode(t, err, NoSuchUpload)
		})
		t.Run(string(kind)+"/concurrent-parts", func(t *testing.T) {
			a, b, alice, u := newSharedUpload(t, kind)
			const n = 8
			parts := make([]CompletePart, n)
			var wg sync.WaitGroup
			for i := range n {
				s := []*Service{a, b}[i%2]
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := part(t, s, alice, u.ID, i+1, byte('a'+i))
					parts[i] = CompletePart{Number: i + 1, ETag: p.ETag}
				}()
			}
			wg.Wait()
			if _, err := b.CompleteUpload(ctx, alice, "mpb", "obj", u.ID, parts, WriteConditions{}); err != nil {
				t.Fatal(err)
			}
			var want []byte
			for i := range n {
				want = append(want, bytes.Repeat([]byte{byte('a' + i)}, 24)...)
			}
			if got := read(t, a, alice, "mpb", "obj"); !bytes.Equal(got, want) {
				t.Fatalf("read %q", got)
			}
		})
	}
}

// TestSharedStoreDeleteBucketRace: a PUT through one service into a bucket that the
// other is deleting: the deletion marks the bucket first, so the PUT either lands
// before (and the deletion answers BucketNotEmpty) or fails with NoSuchBucket — never
// an object in a deleted bucket (the cleanup's check).
func TestSharedStoreDeleteBucketRace(t *testing.T) {
	ctx := context.Background()
	a, b, _ := newSharedServices(t, noBlobs)
	alice := mustUser(t, a, "alice")
	mustBucket(t, a, alice, "doomed", "")
	// b has read the bucket (cached) and is about to commit; a's deletion goes first.
	overtake(t, b, "commit doomed/k", func() {
		if err := a.DeleteBucket(ctx, alice, "doomed"); err != nil {
			t.Error(err)
		}
	})
	_, err := b.PutObject(ctx, alice, "doomed", "k", PutInput{Body: bytes.NewReader([]byte("x")), Size: 1})
	wantCode(t, err, NoSuchBucket)

	// Deleting a bucket that a PUT filled meanwhile answers BucketNotEmpty and takes
	// its mark back: PUTs go on.
	mustBucket(t, a, alice, "kept", "")
	overtake(t, a, "delete bucket kept", func() { put(t, b, alice, "kept", "k", []byte("x")) })
	wantCode(t, a.DeleteBucket(ctx, alice, "kept"), BucketNotEmpty)
	put(t, b, alice, "kept", "k2", []byte("y"))
	if bk, err := b.Bucket(ctx, "kept"); err != nil || !bk.Deleting.IsZero() {
		t.Fatalf("bucket %+v, %v: the mark stayed", bk, err)
	}
}

// TestSharedStoreCaches: a service's cached bucket and user records follow changes made
// through another service over the same store (the store's notifications drop them),
// so a revoked ACL, a policy or a disabled user takes effect everywhere at once.
func TestSharedStoreCaches(t *testing.T) {
	ctx := context.Background()
	a, b, _ := newSharedServices(t, noBlobs)
	alice, bob := mustUser(t, a, "alice"), mustUser(t, a, "bob")
	mustBucket(t, a, alice, "cached", "public-read")
	if err := b.HeadBucket(ctx, bob, "cached"); err != nil { // b caches the bucket
		t.Fatalf("bob lists the public-read bucket through b: %v", err)
	}
	if err := a.SetBucketACL(ctx, alice, "cached", ACLSpec{Canned: "private"}); err != nil {
		t.Fatal(err)
	}
	if err := b.HeadBucket(ctx, bob, "cached"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob lists through b after the bucket went private: %v", err)
	}
	if bk, err := b.Bucket(ctx, "cached"); err != nil || len(bk.ACL.Grants) != 1 {
		t.Fatalf("b's bucket record: %+v, %v", bk, err)
	}

	u, err := b.UserByID(ctx, bob.ID) // b caches bob
	if err != nil || !u.Enabled() {
		t.Fatalf("bob: %+v, %v", u, err)
	}
	disabled := StatusDisabled
	if _, err := a.UpdateUser(ctx, u.KeyID, UserUpdate{Status: &disabled}, true); err != nil {
		t.Fatal(err)
	}
	if u, err := b.UserByKey(ctx, u.KeyID); err != nil || u.Enabled() {
		t.Fatalf("b still sees bob enabled: %+v, %v", u, err)
	}
}

// TestBucketDeletingMark: a deletion's mark holds object commits back only while it is
// fresh: a PUT into a bucket marked a moment ago waits, then answers 503 (the deletion
// never finished), one into a bucket whose mark a crash left long ago goes through —
// nothing stored can keep a bucket unwritable.
func TestBucketDeletingMark(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		age  time.Duration
		want Code // "" for success
	}{
		{"fresh", 0, ServiceUnavailable},
		{"left by a crash", deletingTTL + time.Second, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, db := newTestService(t)
			alice := mustUser(t, s, "alice")
			mustBucket(t, s, alice, "marked", "")
			b, err := s.Bucket(ctx, "marked")
			if err != nil {
				t.Fatal(err)
			}
			m := *b
			m.Deleting = time.Now().Add(-c.age).UTC()
			v, _ := json.Marshal(&m)
			if err := db.Put(bucketKey("marked"), v, true); err != nil {
				t.Fatal(err)
			}
			_, err = s.PutObject(ctx, alice, "marked", "k", PutInput{Body: bytes.NewReader([]byte("x")), Size: 1})
			if c.want == "" && err != nil {
				t.Fatalf("PUT: %v", err)
			}
			if c.want != "" {
				wantCode(t, err, c.want)
			}
		})
	}
}
