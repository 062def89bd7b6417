package security

import (
	"context"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// TestSharedStoreGrants: two grant Stores over one storage.Store, as two nodes would
// share a replicated one. Concurrent grants of different permissions on one scope
// through both all survive (each change reads with a revision and commits
// conditionally: no lost update), and a change through one Store is seen at once by
// the other's cached check (its cache follows the store's notifications).
func TestSharedStoreGrants(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a, b := NewStore(db), NewStore(db)
	t.Cleanup(func() { a.Close(); b.Close() })
	sc := BucketScope("default", "shared")

	perms := Permissions()
	for round := range 20 {
		var wg sync.WaitGroup
		for i, p := range perms {
			s := []*Store{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Grant(ctx, "u", sc, p); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for _, s := range []*Store{a, b} {
			gs, err := s.Grants(ctx, "u")
			if err != nil || len(gs) != 1 || gs[0].Permissions != AllPermissions {
				t.Fatalf("round %d: grants %s, %v; want every permission", round, grantsString(gs), err)
			}
		}
		if _, err := a.Revoke(ctx, "u", sc, AllPermissions); err != nil {
			t.Fatal(err)
		}
	}

	// b caches u's grants; a grant and a revoke through a show in b's checks at once.
	if ok, err := b.Allowed(ctx, "u", Get, sc); err != nil || ok {
		t.Fatalf("before: Allowed = %v, %v", ok, err)
	}
	if _, err := a.Grant(ctx, "u", sc, Get); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Allowed(ctx, "u", Get, sc); err != nil || !ok {
		t.Fatalf("after a's grant, b: Allowed = %v, %v", ok, err)
	}
	if _, err := a.Revoke(ctx, "u", sc, Get); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Allowed(ctx, "u", Get, sc); err != nil || ok {
		t.Fatalf("after a's revoke, b: Allowed = %v, %v", ok, err)
	}
}
