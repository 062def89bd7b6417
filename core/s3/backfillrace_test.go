package s3

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// iterHook calls hook with the lower bound of every iterator made on Store.
type iterHook struct {
	storage.Store
	hook func(lo []byte)
}

func (h *iterHook) Iterate(lo, hi []byte) *storage.Iterator {
	it := h.Store.Iterate(lo, hi)
	if f := h.hook; f != nil {
		f(lo)
	}
	return it
}

// TestBackfillKeepsConcurrentChange: a legal hold set on a noncurrent version while a
// backfill chunk iterates survives the chunk (review: the chunk wrote back the
// iterator's copy of the record; its condition was on the record as read again, and the
// head, rewritten unchanged by the hold, did not conflict either).
func TestBackfillKeepsConcurrentChange(t *testing.T) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := &iterHook{Store: db}
	s, err := New(store, Config{ChunkSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer s.Close()
	ctx := context.Background()
	waitVersionsBackfill(t, db)
	alice := mustUser(t, s, "alice")
	acl, _ := CannedACL("", Owner{ID: alice.ID, DisplayName: alice.DisplayName}, Owner{ID: alice.ID})
	if _, err := s.CreateBucketWith(ctx, alice, "lkb", acl, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 3; i++ {
		m, err := s.PutObject(ctx, alice, "lkb", "k", PutInput{Body: strings.NewReader("data"), Size: 4})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.VersionID)
	}
	// A store written before the versions index: no noncurrent_since, no "lv".
	for _, id := range ids[:2] {
		slot, err := parseSlot(id)
		if err != nil {
			t.Fatal(err)
		}
		var m Manifest
		mustUnmarshal(t, mustGet(t, db, versionKey("lkb", "k", slot)), &m)
		m.NoncurrentSince = time.Time{}
		mustPut(t, db, versionKey("lkb", "k", slot), mustMarshal(t, &m))
	}
	if err := db.Delete(versionsIndexKey(), false); err != nil {
		t.Fatal(err)
	}
	prefix := keyVersionsPrefix("lkb", "k")
	fired := false
	store.hook = func(lo []byte) {
		if fired || !bytes.HasPrefix(lo, prefix) {
			return
		}
		fired = true
		if err := s.SetObjectLegalHold(ctx, alice, "lkb", "k", ids[0], true); err != nil {
			t.Error(err)
		}
		if on, err := s.ObjectLegalHold(ctx, alice, "lkb", "k", ids[0]); err != nil || !on {
			t.Errorf("hold not set: %v %v", on, err)
		}
	}
	if err := s.backfillVersionsIndex(ctx); err != nil {
		t.Fatal(err)
	}
	store.hook = nil
	if !fired {
		t.Fatal("hook never fired")
	}
	on, err := s.ObjectLegalHold(ctx, alice, "lkb", "k", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if !on {
		_, derr := s.DeleteObjectVersion(ctx, alice, "lkb", "k", ids[0])
		t.Fatalf("legal hold set during the backfill was lost; delete of the version now: %v", derr)
	}
}
