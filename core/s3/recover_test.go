package s3

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// ownedDB is a local store that says it is replicated (storage.Owner), as a cluster
// store does: the S3 service then shares its records of writes in progress with other
// nodes.
type ownedDB struct{ *storage.DB }

func (ownedDB) Owns([]byte) bool { return true }

// TestRecoverWritesInCluster: at a start in a cluster, only this node's records of
// writes in progress (and ones older than staleWriteAge) are taken for interrupted;
// another node's live write is left, so its data is not collected under it (the data
// of PUTs acknowledged after a node's restart was lost so).
func TestRecoverWritesInCluster(t *testing.T) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(ownedDB{db}, Config{Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	records := map[string]writeRecord{
		"mine":        {Bucket: "b", Key: "k1", Started: now, Node: "n1"},
		"theirs":      {Bucket: "b", Key: "k2", Started: now, Node: "n2"},
		"theirs-old":  {Bucket: "b", Key: "k3", Started: now.Add(-staleWriteAge - time.Minute), Node: "n2"},
		"unnamed-new": {Bucket: "b", Key: "k4", Started: now},
	}
	ctx := context.Background()
	id := func(name string) []byte { return []byte((name + "................")[:16]) }
	for name, rec := range records {
		v, _ := json.Marshal(rec)
		if err := db.Put(writingKey(id(name)), v, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put(writingKey(id("garbled")), []byte("{"), false); err != nil {
		t.Fatal(err)
	}
	n, err := s.recoverWrites()
	if err != nil || n != 2 {
		t.Fatalf("recovered %d, %v; want 2 (this node's and the stale one)", n, err)
	}
	for name, want := range map[string]bool{"mine": false, "theirs": true, "theirs-old": false, "unnamed-new": true, "garbled": true} {
		_, err := db.Get(writingKey(id(name)))
		if kept := !errors.Is(err, storage.ErrNotFound); kept != want {
			t.Errorf("%s: record kept %v, want %v (%v)", name, kept, want, err)
		}
	}
	// Leave no records behind for the invariant check of other tests' stores.
	b := new(storage.Batch)
	for _, name := range []string{"theirs", "unnamed-new", "garbled"} {
		b.Delete(writingKey(id(name)))
	}
	if err := db.Commit(ctx, b, false); err != nil {
		t.Fatal(err)
	}
}
