package cluster_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/storage"
)

// TestRetireAndForget: in a 4-node cluster, retiring a server moves every stream
// replica it held to the others; it is refused for an unknown server, forgetting is
// refused while the server runs, and after it is stopped and forgotten the three
// that remain serve every key, take writes, and can retire no further server (the
// streams' 3 replicas need 3 servers).
func TestRetireAndForget(t *testing.T) {
	const keys = 24
	c := clustertest.Start(t, 4, clustertest.Options{Partitions: 4})
	writeRange(t, c.Node(0).Store(), 0, keys, "a")
	waitConverged(t, c)
	n0 := c.Node(0)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	if _, err := n0.Retire(ctx, "nope"); !errors.Is(err, cluster.ErrUnknownServer) {
		t.Fatalf("retire an unknown server: %v", err)
	}
	st, err := n0.Retire(ctx, "n4")
	if err != nil || !st.Done || len(st.Pending) != 0 || slices.Contains(st.Remaining, "n4") || len(st.Remaining) != 3 {
		t.Fatalf("retire n4: %+v, %v", st, err)
	}
	status, err := n0.Status(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status.Streams {
		if slices.Contains(s.Peers, "n4") {
			t.Fatalf("stream %s still has n4 among its peers %v after the retirement", s.Name, s.Peers)
		}
	}
	if err := n0.Forget(ctx, "n4"); !errors.Is(err, cluster.ErrMembershipConflict) {
		t.Fatalf("forget a running server: %v; want ErrMembershipConflict", err)
	}
	c.Stop(3)
	deadline := time.Now().Add(60 * time.Second)
	for {
		fctx, fcancel := context.WithTimeout(ctx, 15*time.Second)
		err := n0.Forget(fctx, "n4")
		fcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("forget n4 once stopped: %v", err)
		}
		time.Sleep(250 * time.Millisecond) // the route to it is closed a moment after it stops
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		ms, err := n0.Members()
		names := []string{}
		for _, m := range ms {
			names = append(names, m.Name)
		}
		if err == nil && len(ms) == 3 && !slices.Contains(names, "n4") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("members after forgetting n4: %v %v", names, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The three that remain: every key, and new writes through each.
	survivors := []*cluster.Node{c.Node(0), c.Node(1), c.Node(2)}
	for i, n := range survivors {
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		err := storage.Put(wctx, n.Store(), objKey(i), []byte("b"), false)
		wcancel()
		if err != nil {
			t.Fatalf("write through %s after the retirement: %v", n.Name(), err)
		}
	}
	waitNodesConverged(t, survivors)
	for _, n := range survivors {
		for i := range keys {
			want := "a" + strconv.Itoa(i)
			if i < len(survivors) {
				want = "b"
			}
			if v, err := n.Store().Get(objKey(i)); err != nil || string(v) != want {
				t.Fatalf("node %s key %d: %q, %v; want %s", n.Name(), i, v, err, want)
			}
		}
	}
	if _, err := n0.Retire(ctx, "n3"); !errors.Is(err, cluster.ErrMembershipConflict) {
		t.Fatalf("retire with 3 servers for 3 replicas: %v; want ErrMembershipConflict", err)
	}
}
