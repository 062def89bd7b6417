// Package clustertest starts in-process Cairn clusters for tests: n cluster nodes,
// each with its own embedded NATS server on a loopback port and its own local
// storage.DB, in one test process.
//
//	nodes := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
//	st := nodes[0].Store()
//
// The nodes are closed when the test ends. Restart closes one node and opens it again
// on its data directory and port.
package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/storage"
)

// Options configure a test cluster.
type Options struct {
	// Partitions is the partition count (default 4).
	Partitions int
	// Log receives the nodes' logs (default: their warnings are kept, the last 64 KiB,
	// and shown when the cluster does not start).
	Log *slog.Logger
}

// Cluster is a running test cluster.
type Cluster struct {
	t     testing.TB
	opts  Options
	dirs  []string
	addrs []string
	mu    sync.Mutex // guards nodes
	nodes []*cluster.Node
}

// Start starts an n-node cluster in fresh temporary directories.
func Start(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	dir := t.TempDir()
	c := StartIn(t, dir, n, opts)
	t.Cleanup(c.Close)
	return c
}

// StartIn starts (or restarts) an n-node cluster whose nodes live in dir/n1, dir/n2,
// ...; their route ports are kept in dir/ports so that a restart on dir finds them.
// The caller closes it.
//
// The route ports of a new cluster are picked free and released before the nodes bind
// them, so another process may take one in between: a new cluster that does not form
// is started again on new ports (up to three times), its logs shown for the attempts
// that failed. A restart on dir keeps its ports.
func StartIn(t testing.TB, dir string, n int, opts Options) *Cluster {
	t.Helper()
	if opts.Partitions == 0 {
		opts.Partitions = 4
	}
	logs := opts.Log == nil
	for attempt := 1; ; attempt++ {
		fresh := !exists(filepath.Join(dir, "ports"))
		var buf syncBuffer
		if logs {
			opts.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		c, err := start(t, dir, n, opts)
		if err == nil {
			return c
		}
		if !fresh || attempt == 3 {
			t.Fatalf("clustertest: %v\n%s", err, buf.tail(8<<10))
		}
		t.Logf("clustertest: attempt %d: %v; starting again on new ports\n%s", attempt, err, buf.tail(4<<10))
		for i := range n {
			_ = os.RemoveAll(filepath.Join(dir, fmt.Sprintf("n%d", i+1)))
		}
		_ = os.Remove(filepath.Join(dir, "ports"))
	}
}

// start starts the n nodes of a cluster in dir, or closes those it started and
// returns the first error.
func start(t testing.TB, dir string, n int, opts Options) (*Cluster, error) {
	c := &Cluster{t: t, opts: opts, addrs: ports(t, dir, n)}
	for i := range n {
		c.dirs = append(c.dirs, filepath.Join(dir, fmt.Sprintf("n%d", i+1)))
	}
	c.nodes = make([]*cluster.Node, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.nodes[i], errs[i] = c.open(i)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
	}
	return c, nil
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// syncBuffer is a bytes.Buffer safe for the nodes' concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

// Write keeps p, and at most the last maxKept bytes written.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len()+len(p) > 2*maxKept {
		keep := bytes.Clone(s.b.Bytes()[max(0, s.b.Len()-maxKept):])
		s.b.Reset()
		s.b.Write(keep)
	}
	return s.b.Write(p)
}

// maxKept bounds the log a syncBuffer keeps.
const maxKept = 64 << 10

// tail returns the last n bytes written.
func (s *syncBuffer) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	return string(b[max(0, len(b)-n):])
}

// ports returns the route addresses of the n nodes kept in dir/ports, or picks free
// loopback ports and keeps them there.
func ports(t testing.TB, dir string, n int) []string {
	t.Helper()
	file := filepath.Join(dir, "ports")
	if b, err := os.ReadFile(file); err == nil {
		if addrs := strings.Fields(string(b)); len(addrs) == n {
			return addrs
		}
	}
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close()
	}
	if err := os.WriteFile(file, []byte(strings.Join(addrs, " ")), 0o600); err != nil {
		t.Fatal(err)
	}
	return addrs
}

// open opens node i.
func (c *Cluster) open(i int) (*cluster.Node, error) {
	local, err := storage.Open(filepath.Join(c.dirs[i], storage.StoreDir), storage.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node, err := cluster.Open(ctx, c.Config(i), local, c.opts.Log.With("test-node", i+1))
	if err != nil {
		local.Close()
		return nil, err
	}
	return node, nil
}

// Config returns the cluster configuration of node i.
func (c *Cluster) Config(i int) cluster.Config {
	var peers []string
	if len(c.addrs) > 1 {
		peers = c.addrs
	}
	return cluster.Config{Name: "test", NodeName: fmt.Sprintf("n%d", i+1), DataDir: c.dirs[i],
		Listen: c.addrs[i], Peers: peers, Partitions: c.opts.Partitions}
}

// Node returns node i (nil while it is stopped).
func (c *Cluster) Node(i int) *cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i]
}

// Len returns the number of nodes.
func (c *Cluster) Len() int { return len(c.dirs) }

// Dir returns node i's data directory.
func (c *Cluster) Dir(i int) string { return c.dirs[i] }

// Stop closes node i.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	n := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if n != nil {
		if err := n.Close(); err != nil {
			c.t.Errorf("clustertest: close node %d: %v", i+1, err)
		}
	}
}

// Restart opens node i again (after Stop) on its data directory.
func (c *Cluster) Restart(i int) *cluster.Node {
	c.t.Helper()
	n, err := c.open(i)
	if err != nil {
		c.t.Fatalf("clustertest: restart node %d: %v", i+1, err)
	}
	c.mu.Lock()
	c.nodes[i] = n
	c.mu.Unlock()
	return n
}

// Close closes every running node.
func (c *Cluster) Close() {
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.Stop(i) }()
	}
	wg.Wait()
}
