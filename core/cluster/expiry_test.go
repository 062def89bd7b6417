package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// testClock is a clock the test moves, shared by the services of every node.
type testClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestCrossNodeExpiry: an object's expiry is decided from its record, so every node
// agrees on it; each expired object is reaped once, by the node owning it (the leader
// of its stream: a reaper commits the objects of several partitions one by one where
// the store refuses a batch across streams), and every replica sees them gone.
func TestCrossNodeExpiry(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	clk := &testClock{t: time.Unix(1_800_000_000, 0)}
	var svcs []*kv.Service
	for i := range c.Len() {
		svc, err := kv.New(c.Node(i).Store(), kv.Config{NodeName: fmt.Sprintf("n%d", i+1), Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svcs = append(svcs, svc)
	}
	ctx := context.Background()
	if err := svcs[0].SetProps(ctx, core.DefaultType, "e", map[string]json.RawMessage{"ttl": json.RawMessage("60")}); err != nil {
		t.Fatal(err)
	}
	for i := range svcs {
		if err := c.Node(i).Store().(*cluster.Store).Sync(ctx, storage.KeyString(storage.TagProps, core.DefaultType, "e")); err != nil {
			t.Fatal(err)
		}
	}
	const n = 16 // spread over the 4 partitions
	for i := range n {
		if _, err := svcs[i%3].Put(ctx, &kv.PutRequest{Bucket: "e", Key: fmt.Sprintf("k%d", i), Type: core.DefaultType,
			Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(node, i int) error {
		_, err := svcs[node].Get(ctx, core.DefaultType, "e", fmt.Sprintf("k%d", i), kv.GetOptions{R: core.QuorumAll})
		return err
	}
	for node := range svcs {
		for i := range n {
			if err := read(node, i); err != nil {
				t.Fatalf("node %d, k%d before expiry: %v", node+1, i, err)
			}
		}
	}
	clk.Add(61 * time.Second)
	for node := range svcs {
		if err := read(node, 0); !kv.IsNotFound(err) {
			t.Fatalf("node %d reads an expired object: %v", node+1, err)
		}
	}
	// Each object is reaped by its owner (the leader of its stream) alone, whichever
	// reaper pass (a node's background one or these) gets to it first.
	total := func() int64 {
		var sum int64
		for _, svc := range svcs {
			n, _ := svc.ExpiredReaped()
			sum += n
		}
		return sum
	}
	deadline := time.Now().Add(20 * time.Second)
	for total() < n {
		for _, svc := range svcs {
			if _, err := svc.ReapExpired(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("reaped %d of %d expired objects after 20 s", total(), n)
		}
	}
	if got := total(); got != n {
		t.Fatalf("reaped %d expired objects, want %d (each once)", got, n)
	}
	for node := range svcs {
		st := c.Node(node).Store().(*cluster.Store)
		for i := range n {
			k := storage.KeyString(storage.TagObject, core.DefaultType, "e", fmt.Sprintf("k%d", i))
			if err := st.Sync(ctx, k); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Get(k); err == nil {
				t.Fatalf("node %d still holds reaped k%d", node+1, i)
			}
		}
	}
}
