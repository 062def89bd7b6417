package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/storage"
)

// TestAppliersSurviveNodeLoss: when one node of three goes away (with the
// consumers it hosted for the others' appliers, and the stream leaders it held),
// writes through the two survivors to every partition commit, applied locally,
// within a bound well below the publish timeout, and the survivors converge. Before
// the appliers replaced stalled consumers themselves, a survivor's applier could
// wait for the ordered consumer's own backoff (up to 10 s a step) or stay behind for
// good, and a commit through it waited for its local apply until it timed out.
func TestAppliersSurviveNodeLoss(t *testing.T) {
	const keys = 40
	// bound is the longest a commit may take: a stream leader election (a few
	// seconds) and an applier's recovery (stallAfter and a consumer start).
	const bound = 8 * time.Second
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	writeRange(t, c.Node(0).Store(), 0, keys, "a")
	waitConverged(t, c)

	c.Stop(2)
	survivors := []*cluster.Node{c.Node(0), c.Node(1)}
	var longest time.Duration
	for round := range 3 {
		for i := range keys {
			st := survivors[(i+round)%2].Store()
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			start := time.Now()
			err := storage.Put(ctx, st, objKey(i), []byte("b"+string(rune('0'+round))), false)
			cancel()
			if err != nil {
				t.Fatalf("round %d: write of key %d through a survivor: %v", round, i, err)
			}
			longest = max(longest, time.Since(start))
		}
	}
	t.Logf("longest commit after the loss of a node: %v", longest)
	waitNodesConverged(t, survivors)
	for _, n := range survivors {
		for i := range keys {
			if v, err := n.Store().Get(objKey(i)); err != nil || string(v) != "b2" {
				t.Fatalf("node %s key %d: %q, %v; want b2", n.Name(), i, v, err)
			}
		}
	}
}

// TestSyncRefusedWithoutMajority: a node whose server reaches no majority of the
// cluster refuses a read-your-writes Sync with ErrNoMajority (it could otherwise be
// answered by a deposed stream leader), while it serves Syncs with a majority.
func TestSyncRefusedWithoutMajority(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	writeRange(t, c.Node(0).Store(), 0, 4, "a")
	st := c.Node(0).Store().(*cluster.Store)
	ctx := context.Background()
	c.Stop(2)
	if err := st.Sync(ctx, objKey(0)); err != nil {
		t.Fatalf("sync with two of three servers: %v", err)
	}
	c.Stop(1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		err := st.Sync(sctx, objKey(0))
		cancel()
		if errors.Is(err, cluster.ErrNoMajority) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync with one of three servers: %v; want ErrNoMajority", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
