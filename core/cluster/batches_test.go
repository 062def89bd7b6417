package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/storage"
)

// TestBatchPlacement: a batch whose replicated keys fall in two streams is refused
// whole; a batch mixing local keys (the reap queue, as kv's reaper commits) with one
// stream's keys writes both; local-only batches never leave the node.
func TestBatchPlacement(t *testing.T) {
	c := clustertest.Start(t, 1, clustertest.Options{Partitions: 8})
	st := c.Node(0).Store()
	ctx := context.Background()
	// Two object keys of different partitions.
	var a, b []byte
	for i := 0; b == nil; i++ {
		k := storage.KeyString(storage.TagObject, "t", "b", string(rune('a'+i)))
		switch {
		case a == nil:
			a = k
		case partitionOfKey(k) != partitionOfKey(a):
			b = k
		}
	}
	var batch storage.Batch
	batch.Put(a, []byte("1"))
	batch.Put(b, []byte("2"))
	if err := st.Commit(ctx, &batch, false); !errors.Is(err, cluster.ErrCrossStream) {
		t.Fatalf("two partitions: %v, want ErrCrossStream", err)
	}
	for _, k := range [][]byte{a, b} {
		if _, err := st.Get(k); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%q written by a refused batch: %v", k, err)
		}
	}
	batch.Reset()
	batch.Put(storage.KeyString(storage.TagS3, "x"), []byte("1"))
	batch.Put(a, []byte("1"))
	if err := st.Commit(ctx, &batch, false); !errors.Is(err, cluster.ErrCrossStream) {
		t.Fatalf("META and a partition: %v, want ErrCrossStream", err)
	}

	reap := storage.KeyString(storage.TagReap, "entry")
	batch.Reset()
	batch.Put(reap, nil)
	batch.Put(a, []byte("obj"))
	if err := st.Commit(ctx, &batch, false); err != nil {
		t.Fatal(err)
	}
	batch.Reset()
	batch.Delete(reap)
	batch.Require(a, storage.RevisionOf([]byte("obj")))
	batch.Delete(a)
	if err := st.Commit(ctx, &batch, false); err != nil {
		t.Fatal(err)
	}
	for _, k := range [][]byte{reap, a} {
		if _, err := st.Get(k); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%q: %v, want deleted", k, err)
		}
	}
	before := st.Stats()["cluster_commits_total"]
	if err := storage.Put(ctx, st, storage.KeyString(storage.TagMeta, "own"), []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if after := st.Stats()["cluster_commits_total"]; after != before {
		t.Fatalf("a local key was published (commits %v → %v)", before, after)
	}
}

// partitionOfKey is a key's partition among 8: FNV-1a, as the store places keys.
func partitionOfKey(k []byte) uint64 {
	var h uint64 = 14695981039346656037
	for _, c := range k {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h & 7
}
