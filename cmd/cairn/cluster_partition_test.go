package main

// A network partition of one node of three. The third node runs in a network namespace
// of its own, joined to the test's namespace by two veth pairs: one carries the cluster's
// routes (the other nodes listen on its host-side address), the other the test's
// requests to that node. Taking the routes link down isolates the node from the
// cluster while the test still talks to it. Then the majority keeps taking writes, the
// minority node refuses or times out writes (it cannot reach a quorum) while still
// answering r=1 reads from its replica, and after the link comes back it catches up
// and every replica's digest matches.
//
// It needs root and `ip netns` (iproute2); without them it skips and says why.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// netnsLink is a veth pair with one end in a namespace: host and ns are the interface
// names, hostIP and nsIP their addresses (a /24).
type netnsLink struct {
	host, ns, hostIP, nsIP string
}

// netns is a network namespace the test made, with its links.
type netns struct {
	t     *testing.T
	name  string
	links []netnsLink
}

// ipCmd runs `ip args...`, returning its combined output on failure.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newNetns makes a namespace with one veth link per subnet (10.N.X.0/24, host side .1,
// namespace side .2), or skips the test saying why it cannot.
func newNetns(t *testing.T, subnets ...string) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network partition test skipped: needs root to make network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network partition test skipped: no `ip` (iproute2) on PATH")
	}
	id := os.Getpid() % 10000
	ns := &netns{t: t, name: fmt.Sprintf("cairn-e2e-%d", id)}
	if err := ipCmd("netns", "add", ns.name); err != nil {
		t.Skipf("network partition test skipped: cannot make a network namespace: %v", err)
	}
	t.Cleanup(ns.remove)
	if err := ipCmd("netns", "exec", ns.name, "ip", "link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	for i, sub := range subnets {
		l := netnsLink{
			host: fmt.Sprintf("ce%d%dh", id, i), ns: fmt.Sprintf("ce%d%dn", id, i),
			hostIP: sub + ".1", nsIP: sub + ".2",
		}
		ns.links = append(ns.links, l)
		for _, args := range [][]string{
			{"link", "add", l.host, "type", "veth", "peer", "name", l.ns},
			{"link", "set", l.ns, "netns", ns.name},
			{"addr", "add", l.hostIP + "/24", "dev", l.host},
			{"link", "set", l.host, "up"},
			{"netns", "exec", ns.name, "ip", "addr", "add", l.nsIP + "/24", "dev", l.ns},
			{"netns", "exec", ns.name, "ip", "link", "set", l.ns, "up"},
		} {
			if err := ipCmd(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ns
}

// remove deletes the namespace (and with it the veth pairs).
func (ns *netns) remove() {
	if err := ipCmd("netns", "del", ns.name); err != nil {
		ns.t.Logf("removing the namespace: %v", err)
	}
	for _, l := range ns.links {
		_ = ipCmd("link", "del", l.host) // gone with the namespace, normally
	}
}

// setLink takes link i down or up at its namespace end. The host end stays up, so its
// route to the namespace's subnet stays too (marked linkdown): packets to the node are
// dropped, never routed elsewhere by the default route.
func (ns *netns) setLink(i int, up bool) {
	ns.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if err := ipCmd("netns", "exec", ns.name, "ip", "link", "set", ns.links[i].ns, state); err != nil {
		ns.t.Fatal(err)
	}
}

func TestClusterPartition(t *testing.T) {
	requireClusterProcesses(t)
	sub := 10 + os.Getpid()%200
	routes, clients := fmt.Sprintf("10.231.%d", sub), fmt.Sprintf("10.232.%d", sub)
	ns := newNetns(t, routes, clients)
	routesLink, clientLink := ns.links[0], ns.links[1]
	c := startClusterSpec(t, clusterSpec{
		n:          3,
		hosts:      []string{routesLink.hostIP, routesLink.hostIP, clientLink.nsIP},
		routeHosts: []string{routesLink.hostIP, routesLink.hostIP, routesLink.nsIP},
		wrap: func(i int) []string {
			if i == 2 {
				return []string{"ip", "netns", "exec", ns.name}
			}
			return nil
		},
	})
	l := &clusterLoad{t: t, c: c, client: &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 15 * time.Second}}
	major, minor := c.nodes[:2], c.nodes[2]
	put := func(nd *clusterNode, key, value string) (*resp, error) {
		return l.request(nd, http.MethodPut, "/buckets/part/keys/"+key+"?w=quorum", hdr{"Content-Type", "text/plain"}, value)
	}
	// Keys in every partition (many more keys than partitions), written before.
	const keys = 4 * clusterPartitions
	for i := 0; i < keys; i++ {
		if r, err := put(major[i%2], fmt.Sprintf("before%d", i), "before"); err != nil || r.StatusCode/100 != 2 {
			t.Fatalf("write before the partition: %v %v", err, r)
		}
	}
	c.waitCaughtUp(minor, 30*time.Second)

	ns.setLink(0, false)
	cut := time.Now()
	t.Logf("%s cut off from the cluster", minor.name)

	// The majority: every key's write succeeds (after new stream leaders are elected
	// where the minority node led).
	var firstAll time.Duration
	for i := 0; i < keys; i++ {
		key := fmt.Sprintf("during%d", i)
		ok := false
		for end := time.Now().Add(45 * time.Second); !ok && time.Now().Before(end); {
			r, err := put(major[i%2], key, "during")
			if ok = err == nil && r.StatusCode/100 == 2; !ok {
				time.Sleep(200 * time.Millisecond)
			}
		}
		if !ok {
			t.Fatalf("the majority could not write %s within 45s of the partition", key)
		}
	}
	firstAll = time.Since(cut)
	// A key the minority node holds, changed on the majority side.
	if r, err := put(major[0], "before0", "changed"); err != nil || r.StatusCode/100 != 2 {
		t.Fatalf("the majority could not overwrite before0: %v %v", err, r)
	}
	t.Logf("the majority wrote a key of every partition %v after the cut", firstAll.Round(time.Millisecond))

	// The minority: a quorum write is not acknowledged: within its timeout it answers
	// 503, as Riak does when it cannot reach the replicas it needs.
	start := time.Now()
	r, err := l.request(minor, http.MethodPut, "/buckets/part/keys/minority?w=quorum&timeout=3000", hdr{"Content-Type", "text/plain"}, "minority")
	t.Logf("minority write: %s after %v", statusOrErr(r, err), time.Since(start).Round(time.Millisecond))
	if err != nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("minority write with timeout=3000: %v %v; want 503 within the client's 15s", err, r)
	}
	// Its own replica still answers r=1 reads (with what it has: eventually consistent).
	if r, err := l.request(minor, http.MethodGet, "/buckets/part/keys/before1?r=1", nil, ""); err != nil || r.StatusCode != http.StatusOK || string(r.Body) != "before" {
		t.Errorf("minority r=1 read of a key written before the partition: %v %v", err, r)
	}
	// A read-your-writes read of a key changed on the majority side cannot be confirmed
	// without the stream's leader: 503, never the value the acknowledged write replaced.
	start = time.Now()
	r, err = l.request(minor, http.MethodGet, "/buckets/part/keys/before0?r=quorum&timeout=3000", nil, "")
	t.Logf("minority r=quorum read: %s after %v", statusOrErr(r, err), time.Since(start).Round(time.Millisecond))
	if err != nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("minority r=quorum read with timeout=3000 of a key the majority changed: %v %v; want 503", err, r)
	}

	ns.setLink(0, true)
	t.Logf("%s reconnected", minor.name)
	c.waitAllCaughtUp(60 * time.Second)
	for i := 0; i < keys; i++ {
		for _, k := range []string{"before", "during"} {
			key, want := fmt.Sprintf("%s%d", k, i), k
			if key == "before0" {
				want = "changed"
			}
			r, err := l.request(minor, http.MethodGet, "/buckets/part/keys/"+key+"?r=1", nil, "")
			if err != nil || r.StatusCode != http.StatusOK || string(r.Body) != want {
				t.Errorf("%s after healing: %s: %v %v", minor.name, key, err, r)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.checkDigests(ctx)
}
