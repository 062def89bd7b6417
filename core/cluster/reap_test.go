package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// TestReapOnOwner: every replicated key has exactly one owner among the nodes (the
// leader of its stream), and tombstones deleted through any node are reaped by their
// owners alone: every node's replica ends without the tombstones and their reap
// entries, with no reap commit refused as a conflict (before, every node raced to
// reap every tombstone).
func TestReapOnOwner(t *testing.T) {
	const keys = 30
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	var svcs []*kv.Service
	for i := range c.Len() {
		svc, err := kv.New(c.Node(i).Store(), kv.Config{NodeName: fmt.Sprintf("n%d", i+1), ReapDelay: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svcs = append(svcs, svc)
	}
	ctx := context.Background()
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range keys {
		if _, err := svcs[i%3].Put(ctx, &kv.PutRequest{Type: core.DefaultType, Bucket: "r", Key: key(i),
			Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}}); err != nil {
			t.Fatal(err)
		}
	}
	waitConverged(t, c)
	for i := range keys {
		k := storage.KeyString(storage.TagObject, core.DefaultType, "r", key(i))
		owners := 0
		for n := range c.Len() {
			if c.Node(n).Store().(*cluster.Store).Owns(k) {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("key %d has %d owners, want 1", i, owners)
		}
	}
	conflictsBefore := conflicts(c)
	for i := range keys {
		if _, err := svcs[(i+1)%3].Delete(ctx, core.DefaultType, "r", key(i), kv.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := 0
		for n := range c.Len() {
			st := c.Node(n).Store()
			for i := range keys {
				if _, err := st.Get(storage.KeyString(storage.TagObject, core.DefaultType, "r", key(i))); err == nil {
					left++
				}
			}
			it := st.IteratePrefix(storage.Key(storage.TagReap))
			for it.Next() {
				left++
			}
			it.Release()
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tombstones and reap entries left on the nodes after 30 s", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := conflicts(c) - conflictsBefore; n != 0 {
		t.Errorf("%d commits refused as conflicts while the owners reaped, want 0", n)
	}
}

// conflicts sums the nodes' refused commits.
func conflicts(c *clustertest.Cluster) uint64 {
	var n uint64
	for i := range c.Len() {
		n += c.Node(i).Store().(*cluster.Store).Metrics().Conflicts
	}
	return n
}
