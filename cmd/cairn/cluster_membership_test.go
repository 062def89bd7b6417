package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClusterAddAndRetire follows docs/cluster.md's procedures on real processes: a
// fourth node joins a running 3-node cluster and serves every key; `cairn cluster
// retire` moves every stream replica off one of the first three, which is then
// stopped and forgotten (`cairn cluster forget`); the three that remain serve every
// key, read-your-writes, and take writes, and their replicas agree.
func TestClusterAddAndRetire(t *testing.T) {
	requireClusterProcesses(t)
	c := startCluster(t, 3)
	n1, n2 := c.nodes[0], c.nodes[1]
	const keys = 24
	put := func(nd *clusterNode, key, value string) {
		t.Helper()
		r := nd.do(t, http.MethodPut, "/buckets/members/keys/"+key+"?w=quorum", hdr{"Content-Type", "text/plain"}, value)
		if r.StatusCode/100 != 2 {
			t.Fatalf("PUT %s through %s: %s", key, nd.name, r)
		}
	}
	for i := range keys {
		put(n1, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
	}

	// Adding a node: start it with the others' routes; it applies every stream.
	n4 := c.addNode("n4")
	for i := range keys {
		if r := n4.get(t, fmt.Sprintf("/buckets/members/keys/k%d?r=1", i)); r.StatusCode != 200 || string(r.Body) != fmt.Sprintf("v%d", i) {
			t.Fatalf("k%d on the new node: %s", i, r)
		}
	}
	admin := func(nd *clusterNode, args ...string) (int, string, string) {
		return runCairn(t, serverOpts{args: append(append([]string{"cluster"}, args...), "--url", nd.kvURL, "--data-dir", nd.DataDir)})
	}
	// The meta group learns of the new server within moments.
	for deadline := time.Now().Add(20 * time.Second); ; {
		code, out, errOut := admin(n2, "members")
		if code == 0 && strings.Contains(out, `"n4"`) && strings.Contains(out, `"n1"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn cluster members: %d\n%s\n%s", code, out, errOut)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if code, _, errOut := admin(n2, "retire", "nobody"); code != 1 || !strings.Contains(errOut, "No such server") {
		t.Fatalf("retire an unknown server: %d %s", code, errOut)
	}

	// Retiring n1: its replicas move to the three others.
	start := time.Now()
	code, out, errOut := admin(n2, "retire", "n1", "--wait", "120")
	if code != 0 || !strings.Contains(out, `"done":true`) {
		t.Fatalf("cairn cluster retire n1: %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("retired n1 in %v", time.Since(start).Round(time.Millisecond))
	st, err := n2.status(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Streams {
		if slices.Contains(s.Peers, "n1") || s.Leader == "" {
			t.Fatalf("after the retirement stream %s has leader %q and peers %v", s.Name, s.Leader, s.Peers)
		}
	}
	if code, _, errOut := admin(n2, "forget", "n1"); code != 1 || !strings.Contains(errOut, "still running") {
		t.Fatalf("forget a running server: %d %s", code, errOut)
	}

	// Stopped, then forgotten. Its replica checks consistent offline.
	n1.Stop()
	c.nodes = c.nodes[1:]
	if code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", n1.DataDir}}); code != 0 ||
		!strings.Contains(out, "is a cluster node's replica") || !strings.Contains(out, "is consistent") {
		t.Fatalf("cairn check on the retired node's data directory: %d\n%s\n%s", code, out, errOut)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, errOut := admin(n2, "forget", "n1")
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn cluster forget n1 after it stopped: %d %s", code, errOut)
		}
		time.Sleep(500 * time.Millisecond) // the route to it closes a moment after it stops
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, out, _ := admin(n2, "members")
		if !strings.Contains(out, `"n1"`) && strings.Contains(out, `"n4"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("members after forgetting n1:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.waitAllCaughtUp(60 * time.Second)
	for i, nd := range c.nodes {
		put(nd, fmt.Sprintf("after%d", i), "after")
	}
	for _, nd := range c.nodes {
		for i := range keys {
			if r := nd.get(t, fmt.Sprintf("/buckets/members/keys/k%d?r=quorum", i)); r.StatusCode != 200 || string(r.Body) != fmt.Sprintf("v%d", i) {
				t.Fatalf("k%d on %s after the retirement: %s", i, nd.name, r)
			}
		}
		for i := range c.nodes {
			if r := nd.get(t, fmt.Sprintf("/buckets/members/keys/after%d?r=quorum", i)); r.StatusCode != 200 {
				t.Fatalf("after%d on %s: %s", i, nd.name, r)
			}
		}
	}
	c.waitAllCaughtUp(60 * time.Second)
	c.checkDigests(context.Background())
}
