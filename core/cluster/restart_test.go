package cluster_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/storage"
)

// objKey is an object key of bucket b.
func objKey(i int) []byte {
	return storage.KeyString(storage.TagObject, "default", "b", "k"+strconv.Itoa(i))
}

// writeRange puts value under objKey(lo..hi-1) through st, one batch each.
func writeRange(t *testing.T, st storage.Store, lo, hi int, value string) {
	t.Helper()
	for i := lo; i < hi; i++ {
		if err := storage.Put(context.Background(), st, objKey(i), []byte(value+strconv.Itoa(i)), false); err != nil {
			t.Fatal(err)
		}
	}
}

// waitConverged waits until every node of c applied every stream and the nodes'
// digests agree, and returns the digests of node 0.
func waitConverged(t *testing.T, c *clustertest.Cluster) map[string]string {
	t.Helper()
	var nodes []*cluster.Node
	for i := range c.Len() {
		nodes = append(nodes, c.Node(i))
	}
	return waitNodesConverged(t, nodes)
}

// waitNodesConverged waits until every node of nodes applied every stream and their
// digests agree, and returns the digests of the first.
func waitNodesConverged(t *testing.T, nodes []*cluster.Node) map[string]string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var first map[string]string
		same, why := true, ""
		for _, n := range nodes {
			st, err := n.Status(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			d := map[string]string{}
			for _, s := range st.Streams {
				if s.Lag > 0 || s.Error != "" {
					same, why = false, "node "+st.Node+" stream "+s.Name+" lag "+strconv.FormatUint(s.Lag, 10)+" "+s.Error
				}
				d[s.Name] = s.Digest
			}
			if first == nil {
				first = d
			} else if !equalMaps(first, d) {
				same, why = false, "digests differ"
			}
		}
		if same {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes did not converge: %s", why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// wantValues checks objKey(lo..hi-1) hold value+i on st.
func wantValues(t *testing.T, st storage.Store, lo, hi int, value string) {
	t.Helper()
	for i := lo; i < hi; i++ {
		v, err := st.Get(objKey(i))
		if err != nil || string(v) != value+strconv.Itoa(i) {
			t.Fatalf("key %d: %q, %v; want %q", i, v, err, value+strconv.Itoa(i))
		}
	}
}

// TestRestartCatchesUp: a node stopped while the others write resumes, after a
// restart, from the sequences it persisted and catches up (deletes too); a node whose
// data directory is lost rebuilds its replica from the streams. The replicas'
// digests agree afterwards.
func TestRestartCatchesUp(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	writeRange(t, c.Node(0).Store(), 0, 40, "a")
	waitConverged(t, c)

	c.Stop(2)
	writeRange(t, c.Node(1).Store(), 20, 60, "b")
	for i := 0; i < 10; i++ {
		if err := storage.Delete(context.Background(), c.Node(0).Store(), objKey(i), false); err != nil {
			t.Fatal(err)
		}
	}
	before := c.Node(0).Store().(*cluster.Store).Stats()["cluster_records_applied_total"]
	n := c.Restart(2)
	waitConverged(t, c)
	wantValues(t, n.Store(), 10, 20, "a")
	wantValues(t, n.Store(), 20, 60, "b")
	if _, err := n.Store().Get(objKey(0)); err == nil {
		t.Fatal("a key deleted while the node was down is still there")
	}
	// Resumed, not replayed: the restarted node applied only what it missed (50
	// records and the streams' few others), not all 90.
	if got := n.Store().(*cluster.Store).Stats()["cluster_records_applied_total"].(uint64); got > 55 {
		t.Fatalf("the restarted node applied %d records (before: %v); it should resume after its persisted sequences", got, before)
	}

	c.Stop(2)
	if err := os.RemoveAll(c.Dir(2)); err != nil {
		t.Fatal(err)
	}
	n = c.Restart(2)
	waitConverged(t, c)
	wantValues(t, n.Store(), 10, 20, "a")
	wantValues(t, n.Store(), 20, 60, "b")
}
