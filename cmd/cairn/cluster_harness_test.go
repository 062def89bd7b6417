package main

// Cluster harness: N `cairn serve` processes of the binary TestMain built, joined in one
// cluster over embedded NATS on loopback, each with its own data directory and fixed
// ports (so that a node restarted on its data directory comes back where the others and
// the test's clients expect it). A test can kill -9 a node, stop and continue it
// (SIGSTOP/SIGCONT), restart it, and wait until a node is healthy and caught up (GET
// /cluster: every stream applied up to its last sequence). When the test fails, every
// node's output, its earlier incarnations' included, is logged.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
)

// clusterPartitions is the partition count the cluster tests run with: few streams, so
// that three nodes on a shared machine start and elect leaders quickly.
const clusterPartitions = 8

// clusterStartTimeout bounds a node's start: it waits for JetStream's meta group, which
// needs a quorum of the nodes, and creates the streams.
const clusterStartTimeout = 90 * time.Second

// testCluster is a running cluster of child processes.
type testCluster struct {
	t     testing.TB
	name  string
	nodes []*clusterNode
}

// clusterNode is one node of a testCluster.
type clusterNode struct {
	*child
	name  string
	route string // host:port of its embedded NATS routes
	// kvURL and s3URL are fixed for the node's life: a restart listens on the same ports,
	// so load goroutines may hold them while the test restarts the node.
	kvURL, s3URL string
	// past is the output of the node's earlier incarnations (before restarts).
	past []string
}

// clusterSpec describes the nodes startCluster starts.
type clusterSpec struct {
	n int
	// args are extra flags for every node.
	args []string
	// host is the address every listener binds ("" = 127.0.0.1).
	host string
	// hosts, when set, is the address of each node (overrides host).
	hosts []string
	// routeHosts, when set, is the address of each node's routes listener (default: its
	// host).
	routeHosts []string
	// wrap, when set, returns a command prefix for node i (e.g. `ip netns exec ns`).
	wrap func(i int) []string
}

// startCluster starts a 3-node-style cluster of n processes with extra args for every
// node, and waits until every node serves and is caught up.
func startCluster(t testing.TB, n int, args ...string) *testCluster {
	t.Helper()
	return startClusterSpec(t, clusterSpec{n: n, args: args})
}

// startClusterSpec starts the nodes of spec at once (a node's start waits for
// JetStream's meta group, which needs a quorum of them) and waits until all are caught
// up.
func startClusterSpec(t testing.TB, spec clusterSpec) *testCluster {
	t.Helper()
	c := &testCluster{t: t, name: "e2e-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)}
	t.Cleanup(func() {
		if t.Failed() {
			c.logOutputs()
		}
	})
	hostOf := func(i int) string {
		switch {
		case spec.hosts != nil:
			return spec.hosts[i]
		case spec.host != "":
			return spec.host
		}
		return "127.0.0.1"
	}
	// The ports are picked free and released before the nodes bind them, so another
	// process may take one in between: a start that failed on an address in use is
	// made again on new ports, up to three times.
	for attempt := 1; ; attempt++ {
		err := c.startNodes(spec, hostOf)
		if err == nil {
			break
		}
		inUse := strings.Contains(err.Error(), "address already in use")
		for _, nd := range c.nodes {
			if nd.cmd == nil {
				continue // not started
			}
			inUse = inUse || strings.Contains(nd.output(), "address already in use")
			nd.end()
		}
		if !inUse || attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("cluster start, attempt %d: an address was taken before its node bound it; starting again on new ports", attempt)
		c.nodes = nil
	}
	t.Cleanup(func() { // before the nodes are stopped
		if t.Failed() {
			c.logStatuses()
		}
	})
	for _, nd := range c.nodes {
		c.waitCaughtUp(nd, 60*time.Second)
	}
	return c
}

// startNodes picks the ports of spec's nodes and starts them all at once (a node's
// start waits for JetStream's meta group, which needs a quorum of them).
func (c *testCluster) startNodes(spec clusterSpec, hostOf func(int) string) error {
	t := c.t
	ports := freePorts(t, 3*spec.n)
	routes := make([]string, spec.n)
	for i := range routes {
		h := hostOf(i)
		if spec.routeHosts != nil {
			h = spec.routeHosts[i]
		}
		routes[i] = net.JoinHostPort(h, strconv.Itoa(ports[3*i]))
	}
	for i := 0; i < spec.n; i++ {
		h := hostOf(i)
		var wrap []string
		if spec.wrap != nil {
			wrap = spec.wrap(i)
		}
		c.nodes = append(c.nodes, c.newNode(fmt.Sprintf("n%d", i+1), h, routes[i], ports[3*i+1], ports[3*i+2], routes, spec.args, wrap))
	}
	errs := make([]error, spec.n)
	var wg sync.WaitGroup
	for i, nd := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nd.start()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("starting cluster node %s: %w", c.nodes[i].name, err)
		}
	}
	return nil
}

// newNode returns (not started) the node name of c on host, with its routes on route
// and the given peers.
func (c *testCluster) newNode(name, host, route string, kvPort, s3Port int, peers, args, wrap []string) *clusterNode {
	kv := net.JoinHostPort(host, strconv.Itoa(kvPort))
	s3 := net.JoinHostPort(host, strconv.Itoa(s3Port))
	dir := privateTempDir(c.t)
	argv := append([]string{"serve", "--data-dir", dir, "--kv-listen", kv, "--s3-listen", s3,
		"--cluster-name", c.name, "--node-name", name, "--cluster-listen", route,
		"--cluster-peers", strings.Join(peers, ","),
		"--cluster-partitions", strconv.Itoa(clusterPartitions)}, args...)
	o := serverOpts{raw: true, process: true, dataDir: dir, args: argv, startTimeout: clusterStartTimeout, wrap: wrap}
	return &clusterNode{
		child: &child{t: c.t, opts: o, DataDir: dir},
		name:  name, route: route, kvURL: "http://" + kv, s3URL: "http://" + s3,
	}
}

// addNode starts one more node (on loopback), its peers the routes of c's nodes and
// its own, and waits until it is caught up.
func (c *testCluster) addNode(name string, args ...string) *clusterNode {
	c.t.Helper()
	ports := freePorts(c.t, 3)
	route := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	peers := []string{route}
	for _, nd := range c.nodes {
		peers = append(peers, nd.route)
	}
	nd := c.newNode(name, "127.0.0.1", route, ports[1], ports[2], peers, args, nil)
	if err := nd.start(); err != nil {
		c.t.Fatalf("starting cluster node %s: %v", name, err)
	}
	c.nodes = append(c.nodes, nd)
	c.waitCaughtUp(nd, 60*time.Second)
	return nd
}

// freePorts reserves n distinct free loopback ports (all held open together, then
// released for the nodes to bind).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("reserving a port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// logOutputs logs the tail of every node's output, earlier incarnations included.
func (c *testCluster) logOutputs() {
	for _, nd := range c.nodes {
		var b strings.Builder
		for i, p := range nd.past {
			fmt.Fprintf(&b, "=== incarnation %d\n%s", i+1, tail(p, 16<<10))
		}
		if nd.stdout != nil {
			fmt.Fprintf(&b, "=== current\n%s", tail(nd.output(), 32<<10))
		}
		c.t.Logf("node %s (%s):\n%s", nd.name, nd.kvURL, b.String())
	}
}

// logStatuses logs each node's GET /cluster as it answers now (a stalled stream shows
// as lag or as no leader), for a failing test.
func (c *testCluster) logStatuses() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, nd := range c.nodes {
		st, err := nd.status(ctx, false)
		if err != nil {
			c.t.Logf("node %s: %v", nd.name, err)
			continue
		}
		var b strings.Builder
		for _, s := range st.Streams {
			fmt.Fprintf(&b, "  %s: leader %q, last %d, applied %d %s\n", s.Name, s.Leader, s.LastSeq, s.Applied, s.Error)
		}
		c.t.Logf("node %s sees servers %+v and streams:\n%s", nd.name, st.Servers, b.String())
	}
}

// Kill ends the node with SIGKILL and waits for it to exit.
func (nd *clusterNode) Kill() {
	nd.t.Helper()
	nd.child.Kill()
}

// Pause stops the node with SIGSTOP (it keeps its sockets, answers nothing).
func (nd *clusterNode) Pause() {
	nd.t.Helper()
	if err := nd.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		nd.t.Fatalf("SIGSTOP %s: %v", nd.name, err)
	}
}

// Resume continues a node stopped by Pause.
func (nd *clusterNode) Resume() {
	nd.t.Helper()
	if err := nd.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		nd.t.Fatalf("SIGCONT %s: %v", nd.name, err)
	}
}

// Restart starts the node again on its data directory and ports, keeping the output
// of the incarnation that ended.
func (nd *clusterNode) Restart() {
	nd.t.Helper()
	nd.past = append(nd.past, nd.output())
	nd.child.Restart()
}

// ---------------------------------------------------------------------------------------
// GET /cluster

// clusterStatus is the JSON of GET /cluster.
type clusterStatus cluster.Status

// statusClient is the client of the harness's status and probe requests: short
// timeouts, as a stopped node never answers.
var statusClient = &http.Client{
	Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8},
	Timeout:   3 * time.Second,
}

// status reads GET /cluster (with the replicas' digests when digest is set).
func (nd *clusterNode) status(ctx context.Context, digest bool) (clusterStatus, error) {
	var st clusterStatus
	u := nd.kvURL + "/cluster"
	if digest {
		u += "?digest=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return st, err
	}
	r, err := statusClient.Do(req)
	if err != nil {
		return st, fmt.Errorf("GET /cluster on %s: %w", nd.name, err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /cluster on %s: status %d", nd.name, r.StatusCode)
	}
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /cluster on %s: %w", nd.name, err)
	}
	return st, nil
}

// caughtUp says whether st shows every server up and every stream applied up to its
// last sequence, and if not, why.
func (st clusterStatus) caughtUp(servers int) (bool, string) {
	up := 0
	for _, s := range st.Servers {
		if s.Up {
			up++
		}
	}
	if up < servers {
		return false, fmt.Sprintf("%d of %d servers up: %+v", up, servers, st.Servers)
	}
	if len(st.Streams) == 0 {
		return false, "no streams"
	}
	for _, s := range st.Streams {
		if s.Leader == "" {
			return false, fmt.Sprintf("stream %s has no leader", s.Name)
		}
		if s.Applied < s.LastSeq {
			return false, fmt.Sprintf("stream %s applied %d of %d", s.Name, s.Applied, s.LastSeq)
		}
	}
	return true, ""
}

// waitCaughtUp waits until nd answers GET /cluster with every node of c up and every
// stream applied to its last sequence.
func (c *testCluster) waitCaughtUp(nd *clusterNode, timeout time.Duration) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	why := ""
	for {
		st, err := nd.status(ctx, false)
		if err == nil {
			var ok bool
			if ok, why = st.caughtUp(len(c.nodes)); ok {
				return
			}
		} else {
			why = err.Error()
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("node %s not caught up after %v: %s", nd.name, timeout, why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitAllCaughtUp waits for every node.
func (c *testCluster) waitAllCaughtUp(timeout time.Duration) {
	c.t.Helper()
	for _, nd := range c.nodes {
		c.waitCaughtUp(nd, timeout)
	}
}

// checkDigests requires every stream's digest to be the same on every node (the
// nodes caught up and no write under way).
func (c *testCluster) checkDigests(ctx context.Context) {
	c.t.Helper()
	digests := map[string]map[string]string{} // stream → node → digest
	for _, nd := range c.nodes {
		st, err := nd.status(ctx, true)
		if err != nil {
			c.t.Fatalf("digests: %v", err)
		}
		for _, s := range st.Streams {
			if s.Digest == "" {
				c.t.Errorf("node %s: no digest for stream %s", nd.name, s.Name)
			}
			if digests[s.Name] == nil {
				digests[s.Name] = map[string]string{}
			}
			digests[s.Name][nd.name] = s.Digest
		}
	}
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		byNode := digests[name]
		if len(byNode) != len(c.nodes) {
			c.t.Errorf("stream %s reported by %d of %d nodes: %v", name, len(byNode), len(c.nodes), byNode)
			continue
		}
		first := byNode[c.nodes[0].name]
		for n, d := range byNode {
			if d != first {
				c.t.Errorf("stream %s: digests differ: %v (node %s)", name, byNode, n)
				break
			}
		}
	}
	c.t.Logf("digests equal on %d nodes for %d streams", len(c.nodes), len(names))
}

// setProps sets bucket properties through the first node and waits until every node
// has them (properties replicate through the cluster's metadata stream).
func (c *testCluster) setProps(bucket, propsJSON, want string) {
	c.t.Helper()
	c.nodes[0].setProps(c.t, bucket, propsJSON)
	for _, nd := range c.nodes {
		waitFor(c.t, 20*time.Second, "props of "+bucket+" on "+nd.name, func() bool {
			r, err := nd.tryGet(c.t, "/buckets/"+bucket+"/props")
			return err == nil && r.StatusCode == http.StatusOK && strings.Contains(string(r.Body), want)
		})
	}
}

// nodeOutputs is every node's output so far, for failure messages.
func (c *testCluster) nodeOutputs() string {
	var b strings.Builder
	for _, nd := range c.nodes {
		fmt.Fprintf(&b, "=== %s\n%s", nd.name, tail(nd.output(), 8<<10))
	}
	return b.String()
}

// requireClusterProcesses skips cluster tests where processes cannot run (-short).
func requireClusterProcesses(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster tests start several processes; skipped with -short")
	}
	if os.Getenv("CAIRN_SKIP_CLUSTER") == "1" {
		t.Skip("CAIRN_SKIP_CLUSTER=1")
	}
}
