package main

// The cluster phase: three `cairn serve` processes joined in one cluster on this
// machine (every write stored by three JetStream replicas and applied by three
// LevelDBs), against one standalone `cairn serve` process of the same binary, in the
// same run and with the same request bytes from the built-in generator:
//
//   - GET of --cluster-keys populated objects, the load spread evenly over the three
//     nodes (target: cluster >= 0.7 x standalone), and, for information, the same with
//     r=1 (each node's replica alone, no read-your-writes check);
//   - PUT of new objects with w=quorum (acknowledged once a quorum of the key's
//     replicas stored it), spread the same way (target: cluster >= 0.25 x standalone);
//   - conditional writes (read with r=quorum, write back with If-Match), by writers each
//     on a key of their own and then all on one key (through every node): the extra time
//     a successful write costs per conflict (412) it met, standalone and cluster.
//
// Its processes and data live in a temporary directory removed at the end.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
)

// cairnPackage is the package of the cairn binary (built when --cairn-bin is not given).
const cairnPackage = "github.com/cairnkv/cairn/cmd/cairn"

const (
	clusterBucket    = "bench-cluster"
	clusterNodes     = 3
	clusterReadyWait = 90 * time.Second
	// casWriters is the number of writers of the conditional-write measurement, casFor
	// how long each of its two loads runs.
	casWriters = 8
	casFor     = 3 * time.Second
)

// proc is a cairn serve process of the cluster phase.
type proc struct {
	name string
	addr string // key-value host:port
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
}

// startProc starts bin serve on dataDir with args, its output in logPath.
func startProc(bin, name, dataDir, logPath, addr string, args ...string) (*proc, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	argv := append([]string{"serve", "--data-dir", dataDir, "--kv-listen", addr, "--s3-listen=", "--log-level", "warn"}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, addr: addr, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process with SIGTERM (SIGKILL after 15 s) and closes its log.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// logTail is the end of the process's output, for error messages.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log.Name())
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// benchClusterStatus is GET /cluster's answer.
type benchClusterStatus cluster.Status

// caughtUp says whether every stream has a leader and is applied to its last sequence.
func (s benchClusterStatus) caughtUp() bool {
	for _, st := range s.Streams {
		if st.Leader == "" || st.Applied < st.LastSeq {
			return false
		}
	}
	return len(s.Streams) > 0
}

// waitReady polls p until it answers /ping and, in a cluster (cluster set), until its
// GET /cluster shows every stream led and applied, or the process exits, or timeout.
func waitReady(ctx context.Context, p *proc, cluster bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	path := "/ping"
	if cluster {
		path = "/cluster"
	}
	for {
		if ok := probe(ctx, client, "http://"+p.addr+path, cluster); ok {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited:\n%s", p.name, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v:\n%s", p.name, timeout, p.logTail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// probe GETs url: 200 is ready; with cluster the body must show the streams caught up.
func probe(ctx context.Context, client *http.Client, url string, cluster bool) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	r, err := client.Do(req)
	if err != nil {
		return false
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return false
	}
	if !cluster {
		return true
	}
	var st benchClusterStatus
	return json.NewDecoder(r.Body).Decode(&st) == nil && st.caughtUp()
}

// freeAddrs reserves n free loopback addresses (held together, then released).
func freeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// clusterSetup is the cluster phase's processes.
type clusterSetup struct {
	standalone *proc
	nodes      []*proc
}

func (c *clusterSetup) all() []*proc { return append([]*proc{c.standalone}, c.nodes...) }

func (c *clusterSetup) nodeAddrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// stop stops every process (none of a nil setup).
func (c *clusterSetup) stop() {
	if c == nil {
		return
	}
	var wg sync.WaitGroup
	for _, p := range c.all() {
		if p != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.stop()
			}()
		}
	}
	wg.Wait()
}

// cairnBinary is the binary the phase runs: --cairn-bin, or one built into dir.
func (b *bench) cairnBinary(dir string) (string, error) {
	if b.o.CairnBin != "" {
		return filepath.Abs(b.o.CairnBin)
	}
	bin := filepath.Join(dir, "cairn")
	b.logf("cluster: building cairn (go build %s)", cairnPackage)
	if msg, err := exec.Command("go", "build", "-o", bin, cairnPackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cairn (run inside the module, or give --cairn-bin): %w\n%s", err, msg)
	}
	return bin, nil
}

// startClusterSetup starts the standalone node and the three cluster nodes in dir and
// waits until all are ready. The addresses are picked free and released before the
// processes bind them, so another process may take one in between: a setup that
// failed on an address in use is started again, on new addresses and data
// directories, up to three times.
func (b *bench) startClusterSetup(ctx context.Context, bin, dir string) (*clusterSetup, error) {
	for try := 1; ; try++ {
		sub := filepath.Join(dir, "setup"+strconv.Itoa(try))
		c, err := b.startClusterSetupOnce(ctx, bin, sub)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
		b.logf("cluster: an address was taken before its process bound it; starting again (%v)", firstLine(err.Error()))
		c.stop()
	}
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// startClusterSetupOnce is one attempt of startClusterSetup.
func (b *bench) startClusterSetupOnce(ctx context.Context, bin, dir string) (*clusterSetup, error) {
	addrs, err := freeAddrs(1 + 2*clusterNodes)
	if err != nil {
		return nil, err
	}
	c := &clusterSetup{}
	c.standalone, err = startProc(bin, "standalone", filepath.Join(dir, "standalone"), filepath.Join(dir, "standalone.log"), addrs[0])
	if err != nil {
		return c, err
	}
	routes := addrs[1+clusterNodes:]
	for i := 0; i < clusterNodes; i++ {
		name := fmt.Sprintf("n%d", i+1)
		p, err := startProc(bin, name, filepath.Join(dir, name), filepath.Join(dir, name+".log"), addrs[1+i],
			"--cluster-name", "bench", "--node-name", name, "--cluster-listen", routes[i],
			"--cluster-peers", strings.Join(routes, ","), "--cluster-partitions", strconv.Itoa(b.o.ClusterPartitions))
		if err != nil {
			return c, err
		}
		c.nodes = append(c.nodes, p)
	}
	if err := waitReady(ctx, c.standalone, false, clusterReadyWait); err != nil {
		return c, err
	}
	for _, n := range c.nodes {
		if err := waitReady(ctx, n, true, clusterReadyWait); err != nil {
			return c, err
		}
	}
	return c, nil
}

// populateAt writes keys k00000000.. once each to addr with w=quorum.
func (b *bench) populateAt(ctx context.Context, addr string) error {
	w := workload{Method: http.MethodPut, Bucket: clusterBucket, KeyPrefix: "k", Keys: b.o.ClusterKeys, Sequential: true,
		DW: -1, Query: "w=quorum", Bodies: b.bodies}
	start := time.Now()
	st, err := runToEnd(ctx, Builtin{Addr: addr, Conns: b.o.Conns, Build: w.raw(addr), Total: int64(b.o.ClusterKeys), Seed: 1})
	if err != nil {
		return err
	}
	b.logf("cluster: populated %d keys at %s in %v, %d errors", st.Requests, addr, time.Since(start).Round(time.Millisecond), st.Errors)
	if st.Requests != int64(b.o.ClusterKeys) {
		return fmt.Errorf("populate %s: %d of %d PUTs failed", addr, int64(b.o.ClusterKeys)-st.Requests, b.o.ClusterKeys)
	}
	return nil
}

func (b *bench) phaseCluster(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "cairn-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := b.cairnBinary(dir)
	if err != nil {
		return err
	}
	c, err := b.startClusterSetup(ctx, bin, dir)
	defer c.stop()
	if err != nil {
		return err
	}
	b.logf("cluster: standalone at %s, nodes at %v", c.standalone.addr, c.nodeAddrs())
	if b.wrk != nil {
		b.notes = append(b.notes, "the cluster phase's load comes from the built-in generator (wrk sends to one address), on both sides")
	}
	if err := b.populateAt(ctx, c.standalone.addr); err != nil {
		return err
	}
	if err := b.populateAt(ctx, c.nodes[0].addr); err != nil {
		return err
	}
	for _, n := range c.nodes { // every node's replica holds the keys before the GETs
		if err := waitReady(ctx, n, true, clusterReadyWait); err != nil {
			return err
		}
	}
	one, all := []string{c.standalone.addr}, c.nodeAddrs()
	get := workload{Method: http.MethodGet, Bucket: clusterBucket, KeyPrefix: "k", Keys: b.o.ClusterKeys, DW: -1}
	sg, cg, err := b.measurePair(ctx,
		side{name: "get-standalone", server: "cairn", w: get, conns: b.o.Conns, addrs: one},
		side{name: "get-cluster3", server: "cluster", w: get, conns: b.o.Conns, addrs: all})
	if err != nil {
		return err
	}
	b.ratio("GET cluster/standalone", cg, sg, 0.7)
	// For understanding: reads served by each node's replica alone, without the
	// read-your-writes check the default r (quorum) asks for.
	get.Query = "r=1"
	cg1, err := b.measure(ctx, side{name: "get-r1-cluster3", server: "cluster", w: get, conns: b.o.Conns, addrs: all})
	if err != nil {
		return err
	}
	b.info("GET r=1 cluster/standalone", cg1, sg)
	put := workload{Method: http.MethodPut, Bucket: clusterBucket, KeyPrefix: "c", DW: -1, Query: "w=quorum", Bodies: b.bodies}
	sp, cp, err := b.measurePair(ctx,
		side{name: "put-wq-standalone", server: "cairn", w: put, conns: b.o.Conns, addrs: one},
		side{name: "put-wq-cluster3", server: "cluster", w: put, conns: b.o.Conns, addrs: all})
	if err != nil {
		return err
	}
	b.ratio("PUT w=quorum cluster/standalone", cp, sp, 0.25)
	for _, s := range []struct {
		name  string
		addrs []string
	}{{"standalone", one}, {"cluster3", all}} {
		if err := b.conditionalCost(ctx, s.name, s.addrs, casFor); err != nil {
			return err
		}
	}
	return nil
}

// casStats are the counts of one conditional-write load.
type casStats struct {
	ok, conflicts, errors int64
	seconds               float64
	hist                  histogram // per successful write: from its first read to its acknowledgement
}

// conditionalCost measures conditional writes on addrs: casWriters writers each on a
// key of its own (no conflict), then all on one key, and reports the extra time per
// conflict: (time per successful write contended - uncontended) / conflicts per
// successful write.
func (b *bench) conditionalCost(ctx context.Context, name string, addrs []string, d time.Duration) error {
	free, err := casLoad(ctx, addrs, d, func(w int) string { return name + "-free" + strconv.Itoa(w) })
	if err != nil {
		return err
	}
	hot, err := casLoad(ctx, addrs, d, func(int) string { return name + "-hot" })
	if err != nil {
		return err
	}
	for _, x := range []struct {
		tag string
		s   casStats
	}{{"own-keys", free}, {"one-key", hot}} {
		p := phaseResult{Name: "cas-" + x.tag + "-" + name, Server: name, Conns: casWriters, Requests: x.s.ok,
			Errors: x.s.errors, Seconds: x.s.seconds, RPS: float64(x.s.ok) / x.s.seconds,
			P50ms: ms(x.s.hist.quantile(0.5)), P99ms: ms(x.s.hist.quantile(0.99))}
		b.add(p)
	}
	if free.ok == 0 || hot.ok == 0 {
		b.notes = append(b.notes, fmt.Sprintf("%s: conditional writes: no successful write to compare (%d, %d)", name, free.ok, hot.ok))
		return nil
	}
	perFree := free.seconds * casWriters / float64(free.ok)
	perHot := hot.seconds * casWriters / float64(hot.ok)
	perOK := float64(hot.conflicts) / float64(hot.ok)
	note := fmt.Sprintf("%s: conditional write (r=quorum read + If-Match PUT) %s per success on own keys, %s on one key by %d writers "+
		"with %.2f conflicts (412) per success", name, fmtMS(perFree*1e3), fmtMS(perHot*1e3), casWriters, perOK)
	if perOK > 0 {
		note += fmt.Sprintf(": %s extra per conflict", fmtMS((perHot-perFree)/perOK*1e3))
	}
	b.notes = append(b.notes, note)
	b.logf("%s", note)
	return nil
}

// casLoad runs casWriters writers for d, writer w on key keyOf(w) through
// addrs[w % len(addrs)]: read with r=quorum, write the value back with If-Match (or
// If-None-Match: * when missing), again on a 412.
func casLoad(ctx context.Context, addrs []string, d time.Duration, keyOf func(int) string) (casStats, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: casWriters}, Timeout: 10 * time.Second}
	per := make([]casStats, casWriters)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < casWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := "http://" + addrs[w%len(addrs)] + "/buckets/" + clusterBucket + "/keys/" + keyOf(w)
			for ctx.Err() == nil {
				casOnce(ctx, client, base, &per[w])
			}
		}()
	}
	wg.Wait()
	var s casStats
	for _, p := range per {
		s.ok += p.ok
		s.conflicts += p.conflicts
		s.errors += p.errors
		s.hist.merge(&p.hist)
	}
	s.seconds = time.Since(start).Seconds()
	if s.ok == 0 && s.errors > 0 {
		return s, errors.New("conditional writes: every attempt failed")
	}
	return s, nil
}

// casOnce makes one write succeed (or the context end), counting conflicts.
func casOnce(ctx context.Context, client *http.Client, base string, s *casStats) {
	start := time.Now()
	for ctx.Err() == nil {
		etag, found, err := casRead(ctx, client, base)
		if err != nil {
			if ctx.Err() == nil { // not the end of the load
				s.errors++
			}
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"?w=quorum", bytes.NewReader([]byte(start.String())))
		if err != nil {
			s.errors++
			return
		}
		req.Header.Set("Content-Type", "text/plain")
		if found {
			req.Header.Set("If-Match", etag)
		} else {
			req.Header.Set("If-None-Match", "*")
		}
		r, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil { // not the end of the load
				s.errors++
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		switch {
		case r.StatusCode/100 == 2:
			s.ok++
			s.hist.record(uint64(time.Since(start)))
			return
		case r.StatusCode == http.StatusPreconditionFailed:
			s.conflicts++
		default:
			s.errors++
			return
		}
	}
}

// casRead reads the key's ETag with r=quorum.
func casRead(ctx context.Context, client *http.Client, base string) (etag string, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?r=quorum", nil)
	if err != nil {
		return "", false, err
	}
	r, err := client.Do(req)
	if err != nil {
		return "", false, err
	}
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	switch r.StatusCode {
	case http.StatusOK:
		return r.Header.Get("ETag"), true, nil
	case http.StatusNotFound:
		return "", false, nil
	}
	return "", false, fmt.Errorf("GET %s: %s", base, r.Status)
}
