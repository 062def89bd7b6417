package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/server"
	"github.com/cairnkv/cairn/plugins/gopluginhost"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

const benchBucket = "bench"

// putBodies is the number of different PUT bodies.
const putBodies = 64

// bench holds the servers under test and the results so far.
type bench struct {
	o           options
	out, log    io.Writer
	wrk         *Wrk // nil with the built-in generator
	loadgen     string
	loadgenDesc string
	tmpDir      string // removed by close unless --keep-data
	srv         *server.Server
	bare        *http.Server
	bareLn      net.Listener
	cairnAddr   string
	bareAddr    string
	value       []byte   // the bare server's GET body
	bodies      [][]byte // PUT bodies
	started     time.Time

	phases []phaseResult
	// limits are figures with an upper bound (the query phase's RSS).
	limits []limitResult
	ratios []ratioResult
	burst  *burstResult
	notes  []string
	putDW0 *phaseResult
	// host is the server's WebAssembly host (for the hook phase's pool figures).
	host *wasmhost.Host
	// plugins is the server's process-plugin host (the plugin phase's plugins; nil when
	// that phase does not run).
	plugins *gopluginhost.Host
	// s3 is the s3 phase's section of the report.
	s3 *s3Result
}

// phaseResult is one measured phase.
type phaseResult struct {
	Name     string  `json:"name"`
	Server   string  `json:"server"` // cairn, bare or store (the put phase's store reference)
	Conns    int     `json:"conns"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms,omitempty"`
	P99ms    float64 `json:"p99_ms,omitempty"`
}

// ratioResult is one target: Num's rate over Den's.
type ratioResult struct {
	Name   string  `json:"name"`
	Num    string  `json:"num"`
	Den    string  `json:"den"`
	Value  float64 `json:"value"`
	Target float64 `json:"target"`
	Pass   bool    `json:"pass"`
	Info   bool    `json:"info,omitempty"` // no target: shown for understanding
}

// burstResult describes the PUT burst itself.
type burstResult struct {
	Writers  int     `json:"writers"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	LevelDB  string  `json:"leveldb,omitempty"` // compactions and write delays during the burst and the after window
}

func newBench(o options, out, log io.Writer) (*bench, error) {
	b := &bench{o: o, out: out, log: log, started: time.Now()}
	b.bodies = makeValues(putBodies, o.ValueSize)
	b.value = b.bodies[0]
	switch o.Loadgen {
	case "wrk", "auto":
		if p := findWrk(); p != "" {
			b.wrk = &Wrk{Path: p, Threads: o.WrkThreads}
			b.loadgen = "wrk"
			v := wrkVersion(p)
			if v == "" {
				v = "wrk"
			}
			b.loadgenDesc = fmt.Sprintf("%s (-t%d, Lua script for keys and bodies)", v, o.WrkThreads)
		} else if o.Loadgen == "wrk" {
			return nil, errors.New("--loadgen wrk: wrk is not installed (apt-get install -y wrk)")
		}
	}
	if b.wrk == nil {
		b.loadgen = "builtin"
		b.loadgenDesc = "builtin (raw HTTP/1.1 on persistent connections, in this process)"
	}

	dir := o.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "cairn-bench-")
		if err != nil {
			return nil, err
		}
		b.tmpDir, dir = d, d
	}
	if b.wrk != nil {
		b.wrk.Dir = dir
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	cfg.KVListen = "127.0.0.1:0"
	cfg.S3Listen = "" // the s3 phase runs a Cairn of its own
	cfg.LogLevel = "error"
	cfg.CacheSize = b.o.CacheSize
	cfg.ObjectCacheSize = b.o.ObjectCacheSize
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelError}))
	var pcs []gopluginhost.PluginConfig
	if o.Phases["plugin"] {
		pdir := filepath.Join(dir, "plugins")
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			_ = b.close()
			return nil, err
		}
		var err error
		if pcs, err = buildPlugins(pdir); err != nil {
			_ = b.close()
			return nil, err
		}
	}
	ext, host, plugins, err := benchExtensions(context.Background(), dir, pcs, logger)
	if err != nil {
		_ = b.close()
		return nil, err
	}
	cfg.Extensions, b.host, b.plugins = ext, host, plugins
	srv, err := server.New(cfg, "bench", logger)
	if err != nil {
		_ = b.close()
		return nil, err
	}
	b.srv = srv
	if err := srv.Start(); err != nil {
		_ = b.close()
		return nil, err
	}
	b.cairnAddr = srv.KVAddr().String()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = b.close()
		return nil, err
	}
	b.bareLn = ln
	b.bareAddr = ln.Addr().String()
	// The same server settings as Cairn's KV listener, without Cairn's handler.
	b.bare = newHTTPServer(bareHandler(b.value))
	go func() { _ = b.bare.Serve(ln) }()
	return b, nil
}

func (b *bench) close() error {
	var errs []error
	if b.bare != nil {
		errs = append(errs, b.bare.Close())
	}
	if b.srv != nil {
		errs = append(errs, b.srv.Close())
	}
	if b.tmpDir != "" {
		if b.o.KeepData {
			fmt.Fprintf(b.log, "data kept in %s\n", b.tmpDir)
		} else {
			errs = append(errs, os.RemoveAll(b.tmpDir))
		}
	}
	return errors.Join(errs...)
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s  "+format+"\n", append([]any{time.Since(b.started).Round(100 * time.Millisecond)}, args...)...)
}

// workloads of the phases.
func (b *bench) getExisting() workload {
	return workload{Method: http.MethodGet, Bucket: benchBucket, KeyPrefix: "k", Keys: b.o.Keys, DW: -1}
}

func (b *bench) putNew(prefix string, dw int) workload {
	return workload{Method: http.MethodPut, Bucket: benchBucket, KeyPrefix: prefix, DW: dw, Bodies: b.bodies}
}

func (b *bench) run(ctx context.Context) error {
	b.printHeader()
	if err := b.setBucket(); err != nil {
		return err
	}
	if b.needsKeys() {
		if err := b.populate(ctx); err != nil {
			return err
		}
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"get", b.phaseGet}, {"put", b.phasePut}, {"sync", b.phaseSync}, {"burst", b.phaseBurst}, {"hook", b.phaseHook}, {"query", b.phaseQuery}, {"plugin", b.phasePlugin}, {"s3", b.phaseS3}, {"cluster", b.phaseCluster},
	}
	for _, s := range steps {
		if !b.o.Phases[s.name] {
			continue
		}
		if err := b.settle(ctx); err != nil {
			return err
		}
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("phase %s: %w", s.name, err)
		}
	}
	return b.report()
}

// needsKeys says whether a phase to run reads the in-process server's populated keys
// (the s3 and cluster phases run servers of their own).
func (b *bench) needsKeys() bool {
	for p := range b.o.Phases {
		if p != "s3" && p != "cluster" {
			return true
		}
	}
	return false
}

func (b *bench) printHeader() {
	fmt.Fprintf(b.out, "cairn-bench %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(b.out, "%s %s/%s  GOMAXPROCS=%d  nproc=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(b.out, "loadgen: %s\n", b.loadgenDesc)
	fmt.Fprintf(b.out, "phases: %v measured after %v warm-up; %d connections; %d-byte values; %d keys populated; burst %d PUTs from %d writers\n",
		b.o.Duration, b.o.Warmup, b.o.Conns, b.o.ValueSize, b.o.Keys, b.o.Burst, b.o.BurstWriters)
	if n := b.slices(); n > 1 {
		fmt.Fprintf(b.out, "        compared pairs alternate in %d slices each (A B B A ...)\n", n)
	}
	if b.wrk != nil {
		fmt.Fprintf(b.out, "        (wrk runs whole seconds: phases and slices are rounded up)\n")
	}
	fmt.Fprintf(b.out, "bare baseline: net/http on loopback; GET answers 200 with a %d-byte body (Content-Type, Content-Length), PUT reads the body and answers 204\n", b.o.ValueSize)
	if b.o.Phases["put"] && b.o.PutRefs {
		fmt.Fprintf(b.out, "store reference (put phase): the same net/http server over its own core/storage DB (Cairn's default options); PUT writes\n"+
			"      the body under the URL path, a one-record batch without sync, and answers 204 (put-dw0-store-rw: Read of the key first)\n")
	}
	fmt.Fprintf(b.out, "NOTE: the load generator, Cairn and the bare server share this machine's %d CPUs (with anything else running):\n"+
		"      the generator's CPU per request pulls CPU-bound ratios towards 1 (Cairn/bare looks better than with the\n"+
		"      generator on another machine) and lowers CPU-bound over latency-bound ones (dw=1 c%d/c1); all phases are noisy.\n",
		runtime.NumCPU(), b.o.Conns)
}

func ceilSeconds(d time.Duration) int64 { return max(1, int64((d+time.Second-1)/time.Second)) }

// setBucket makes the benchmark bucket's settings explicit (they are the defaults).
func (b *bench) setBucket() error {
	body := `{"props":{"allow_mult":false,"last_write_wins":false}}`
	req, err := http.NewRequest(http.MethodPut, "http://"+b.cairnAddr+"/buckets/"+benchBucket+"/props", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("set bucket props: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// populate writes keys k00000000.. once each, with dw=0.
func (b *bench) populate(ctx context.Context) error {
	w := b.putNew("k", 0)
	w.Keys, w.Sequential = b.o.Keys, true
	start := time.Now()
	st, err := runToEnd(ctx, Builtin{Addr: b.cairnAddr, Conns: b.o.Conns, Build: w.raw(b.cairnAddr), Total: int64(b.o.Keys), Seed: 1})
	if err != nil {
		return err
	}
	el := time.Since(start)
	b.logf("populated %d keys in %v (%.0f PUT/s, builtin generator), %d errors", st.Requests, el.Round(time.Millisecond),
		float64(st.Requests)/el.Seconds(), st.Errors)
	if st.Errors > 0 || st.Requests != int64(b.o.Keys) {
		return fmt.Errorf("populate: %d of %d PUTs failed", int64(b.o.Keys)-st.Requests, b.o.Keys)
	}
	return nil
}

// storageStats reads the LevelDB counters from Cairn's /stats.
type storageStats struct {
	IOWrite     float64            `json:"io_write_bytes"`
	Level0      float64            `json:"level0_tables"`
	LevelTables []float64          `json:"level_tables"`
	WritePaused bool               `json:"write_paused"`
	DelayCount  float64            `json:"write_delay_count"`
	DelayMS     float64            `json:"write_delay_ms"`
	Compactions map[string]float64 `json:"compactions"`
}

// compactionsSince describes the LevelDB work between two snapshots.
func compactionsSince(before, after storageStats) string {
	d := func(k string) float64 { return after.Compactions[k] - before.Compactions[k] }
	return fmt.Sprintf("%.0f memtable flushes, %.0f level-0 and %.0f deeper compactions, %.0f writes delayed by back-pressure (%.0f ms in all)",
		d("memtable"), d("level0"), d("nonlevel0"), after.DelayCount-before.DelayCount, after.DelayMS-before.DelayMS)
}

func (b *bench) storageStats() (storageStats, error) {
	var s storageStats
	resp, err := http.Get("http://" + b.cairnAddr + "/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("/stats: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// settle waits until LevelDB has stopped writing tables (no table bytes written for one
// second), so that a phase does not pay for the compactions of the one before.
func (b *bench) settle(ctx context.Context) error {
	start := time.Now()
	prev, err := b.storageStats()
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	quiet := 0
	for time.Since(start) < b.o.SettleMax {
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
		cur, err := b.storageStats()
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		if cur.IOWrite == prev.IOWrite && !cur.WritePaused {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
		if quiet >= 2 {
			b.logf("settled after %v: LevelDB tables per level %v", time.Since(start).Round(100*time.Millisecond), prev.LevelTables)
			return nil
		}
	}
	b.logf("compactions still running after %v; going on", b.o.SettleMax)
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// profile starts a CPU profile of the named phase when --cpuprofile is set and returns
// the function that stops it.
func (b *bench) profile(phase string) func() {
	if b.o.CPUProfile == "" {
		return func() {}
	}
	name := b.o.CPUProfile + "." + phase + ".pprof"
	f, err := os.Create(name)
	if err != nil {
		b.logf("cpuprofile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.logf("cpuprofile: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		b.logf("cpu profile of %s in %s", phase, name)
	}
}

// side is one half of a compared pair: a workload against one server.
type side struct {
	name, server, addr string
	w                  workload
	conns              int
	// build, if set, makes the requests (with the built-in generator, even when wrk is
	// the load generator: it signs S3 requests, which wrk's script cannot); otherwise
	// the workload w does.
	build RequestFunc
	// addrs, when set, spreads the load over these servers (a cluster's nodes) instead
	// of addr: conns split evenly among them, always with the built-in generator.
	addrs []string
}

// sample is one measured stretch of a side.
type sample struct {
	requests, errors int64
	seconds          float64
	hist             *histogram // built-in generator
	p50, p99         time.Duration
	wrk              bool // p50 and p99 come from wrk
}

// measureOnce runs s for warmup (unmeasured), then d (measured), profiling the
// measured part under the phase's name when prof is set.
func (b *bench) measureOnce(ctx context.Context, s side, warmup, d time.Duration, prof bool) (sample, error) {
	stop := func() {}
	if b.wrk != nil && s.build == nil && s.addrs == nil {
		run := WrkRun{URL: "http://" + s.addr, Conns: s.conns, Script: wrkScript(s.w)}
		if warmup > 0 {
			run.Duration = warmup
			if _, err := b.wrk.Run(ctx, run); err != nil {
				return sample{}, err
			}
		}
		run.Duration = d
		if prof {
			stop = b.profile(s.name)
		}
		wr, err := b.wrk.Run(ctx, run)
		stop()
		if err != nil {
			return sample{}, err
		}
		okReqs := wr.Requests - min(wr.Requests, wr.Non2xx) // wrk counts failed requests too
		return sample{requests: okReqs, errors: wr.Non2xx + wr.SocketErrors, seconds: wr.Elapsed.Seconds(),
			p50: wr.P50, p99: wr.P99, wrk: true}, nil
	}
	r := s.start()
	err := sleep(ctx, warmup)
	var t1, t2 time.Time
	if err == nil {
		if prof {
			stop = b.profile(s.name)
		}
		t1 = r.setEpoch(1)
		err = sleep(ctx, d)
		t2 = r.setEpoch(2)
	}
	stop()
	r.stop()
	if err != nil {
		return sample{}, err
	}
	st := r.stats(1)
	return sample{requests: st.Requests, errors: st.Errors, seconds: t2.Sub(t1).Seconds(), hist: &st.Hist}, nil
}

// runs are the built-in generator's runs of one side, one per server.
type runs []*Run

// start starts the built-in generator on s: one run on addr, or one per address of
// addrs with the connections split among them.
func (s side) start() runs {
	addrs := s.addrs
	if addrs == nil {
		addrs = []string{s.addr}
	}
	seed := uint64(time.Now().UnixNano())
	rs := make(runs, len(addrs))
	for i, a := range addrs {
		build := s.build
		if build == nil {
			build = s.w.raw(a)
		}
		conns := s.conns / len(addrs)
		if i < s.conns%len(addrs) {
			conns++
		}
		rs[i] = Builtin{Addr: a, Conns: max(1, conns), Build: build, Seed: seed + uint64(i)<<32}.Start()
	}
	return rs
}

// setEpoch switches every run to epoch e and returns the time of the first switch.
func (rs runs) setEpoch(e int) time.Time {
	t := rs[0].SetEpoch(e)
	for _, r := range rs[1:] {
		r.SetEpoch(e)
	}
	return t
}

// stop stops every run.
func (rs runs) stop() {
	for _, r := range rs {
		r.Stop()
	}
}

// stats merges the runs' statistics of epoch e.
func (rs runs) stats(e int) EpochStats {
	var s EpochStats
	for _, r := range rs {
		st := r.Stats(e)
		s.Requests += st.Requests
		s.Errors += st.Errors
		s.Hist.merge(&st.Hist)
	}
	return s
}

// result combines the samples of one side into its phase result. Built-in samples
// merge their histograms; wrk's percentiles are averaged, weighted by requests.
func combine(s side, samples []sample) phaseResult {
	p := phaseResult{Name: s.name, Server: s.server, Conns: s.conns}
	var h histogram
	var p50, p99 float64
	for _, x := range samples {
		p.Requests += x.requests
		p.Errors += x.errors
		p.Seconds += x.seconds
		if x.hist != nil {
			h.merge(x.hist)
		}
		p50 += float64(x.p50) * float64(x.requests)
		p99 += float64(x.p99) * float64(x.requests)
	}
	if p.Seconds > 0 {
		p.RPS = float64(p.Requests) / p.Seconds
	}
	switch {
	case h.n > 0:
		p.P50ms, p.P99ms = ms(h.quantile(0.50)), ms(h.quantile(0.99))
	case p.Requests > 0:
		p.P50ms, p.P99ms = ms(time.Duration(p50/float64(p.Requests))), ms(time.Duration(p99/float64(p.Requests)))
	}
	return p
}

// measure runs one side alone: a warm-up, then the measured duration.
func (b *bench) measure(ctx context.Context, s side) (phaseResult, error) {
	x, err := b.measureOnce(ctx, s, b.o.Warmup, b.o.Duration, true)
	if err != nil {
		return phaseResult{}, err
	}
	p := combine(s, []sample{x})
	b.add(p)
	return p, nil
}

// measurePair measures two sides under the same machine conditions (measureSides).
func (b *bench) measurePair(ctx context.Context, x, y side) (phaseResult, phaseResult, error) {
	ps, err := b.measureSides(ctx, x, y)
	if err != nil {
		return phaseResult{}, phaseResult{}, err
	}
	return ps[0], ps[1], nil
}

// measureSides measures sides under the same machine conditions: each is warmed up,
// then the measured time of each is cut into --slices slices run in turn, the order
// reversing every slice (A B B A A B ..., or A B C D D C B A ... for more sides), so
// that a change in the machine's background load affects all alike. With one slice
// (or --cpuprofile) they run one after the other. The results are in the order of sides.
func (b *bench) measureSides(ctx context.Context, sides ...side) ([]phaseResult, error) {
	n := b.slices()
	if n <= 1 {
		ps := make([]phaseResult, 0, len(sides))
		for _, s := range sides {
			p, err := b.measure(ctx, s)
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
		}
		return ps, nil
	}
	d := b.o.Duration / time.Duration(n)
	ramp := min(b.o.Warmup, 100*time.Millisecond) // the built-in generator's reconnection at each slice
	if b.wrk != nil {
		d, ramp = time.Duration(ceilSeconds(d))*time.Second, 0
	}
	if err := b.warmUp(ctx, sides...); err != nil {
		return nil, err
	}
	return b.slicedSides(ctx, sides, n, ramp, d, false)
}

// warmUp runs each side for --warmup, unmeasured.
func (b *bench) warmUp(ctx context.Context, sides ...side) error {
	for _, s := range sides {
		if b.o.Warmup <= 0 {
			break
		}
		if _, err := b.measureOnce(ctx, s, 0, b.o.Warmup, false); err != nil {
			return err
		}
	}
	return nil
}

// slicedPair measures x and y in n alternating slices (slicedSides).
func (b *bench) slicedPair(ctx context.Context, x, y side, n int, ramp, d time.Duration, prof bool) (phaseResult, phaseResult, error) {
	ps, err := b.slicedSides(ctx, []side{x, y}, n, ramp, d, prof)
	if err != nil {
		return phaseResult{}, phaseResult{}, err
	}
	return ps[0], ps[1], nil
}

// slicedSides measures sides in n slices of d each (after ramp unmeasured), the order
// reversing every slice, and adds the results in the order of sides.
func (b *bench) slicedSides(ctx context.Context, sides []side, n int, ramp, d time.Duration, prof bool) ([]phaseResult, error) {
	smps := make([][]sample, len(sides))
	for i := 0; i < n; i++ {
		for j := range sides {
			k := j
			if i%2 == 1 {
				k = len(sides) - 1 - j
			}
			smp, err := b.measureOnce(ctx, sides[k], ramp, d, prof)
			if err != nil {
				return nil, err
			}
			smps[k] = append(smps[k], smp)
		}
	}
	ps := make([]phaseResult, len(sides))
	for k, s := range sides {
		ps[k] = combine(s, smps[k])
		b.add(ps[k])
	}
	return ps, nil
}

// slices is the number of alternating slices of a pair's measurement.
func (b *bench) slices() int {
	if b.o.CPUProfile != "" {
		return 1
	}
	return b.o.Slices
}

func (p *phaseResult) fromWrk(r WrkResult) {
	p.Requests = r.Requests
	p.Errors = r.Non2xx + r.SocketErrors
	p.Seconds = r.Elapsed.Seconds()
	p.RPS = r.RPS
	if p.Errors > 0 && p.Requests > 0 { // wrk's rate counts failed requests too
		p.RPS = r.RPS * float64(p.Requests-min(p.Requests, r.Non2xx)) / float64(p.Requests)
	}
	if r.HasLatency {
		p.P50ms = ms(r.P50)
		p.P99ms = ms(r.P99)
	}
}

func (p *phaseResult) fromBuiltin(st EpochStats, d time.Duration) {
	p.Requests = st.Requests
	p.Errors = st.Errors
	p.Seconds = d.Seconds()
	if d > 0 {
		p.RPS = float64(st.Requests) / d.Seconds()
	}
	if st.Hist.n > 0 {
		p.P50ms = ms(st.Hist.quantile(0.50))
		p.P99ms = ms(st.Hist.quantile(0.99))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func (b *bench) add(p phaseResult) {
	b.phases = append(b.phases, p)
	lat := ""
	if p.P50ms > 0 {
		lat = fmt.Sprintf(", p50 %s, p99 %s", fmtMS(p.P50ms), fmtMS(p.P99ms))
	}
	b.logf("%-17s %-5s c=%-3d %9.0f req/s%s, %d errors", p.Name, p.Server, p.Conns, p.RPS, lat, p.Errors)
	if p.Errors > 0 {
		b.notes = append(b.notes, fmt.Sprintf("%s had %d failed requests (not counted in req/s)", p.Name, p.Errors))
	}
}

func (b *bench) ratio(name string, num, den phaseResult, target float64) {
	r := ratioResult{Name: name, Num: num.Name, Den: den.Name, Target: target}
	if den.RPS > 0 {
		r.Value = num.RPS / den.RPS
	}
	r.Pass = r.Value >= target
	b.ratios = append(b.ratios, r)
}

// info records a ratio that has no target.
func (b *bench) info(name string, num, den phaseResult) {
	r := ratioResult{Name: name, Num: num.Name, Den: den.Name, Info: true}
	if den.RPS > 0 {
		r.Value = num.RPS / den.RPS
	}
	b.ratios = append(b.ratios, r)
}

// phaseGet: GET of existing objects, Cairn vs the bare handler.
func (b *bench) phaseGet(ctx context.Context) error {
	w := b.getExisting()
	bare, cairn, err := b.measurePair(ctx,
		side{name: "get-bare", server: "bare", addr: b.bareAddr, w: w, conns: b.o.Conns},
		side{name: "get-cairn", server: "cairn", addr: b.cairnAddr, w: w, conns: b.o.Conns})
	if err != nil {
		return err
	}
	b.ratio("GET cairn/bare", cairn, bare, 0.7)
	return nil
}

// phasePut: PUT of new objects with dw=0, Cairn vs the bare handler; with --put-refs
// also the store reference (storeHandler), blind and reading first, which tell what
// the storage engine itself allows behind the same HTTP server.
func (b *bench) phasePut(ctx context.Context) (err error) {
	w := b.putNew("p", 0)
	sides := []side{{name: "put-dw0-bare", server: "bare", addr: b.bareAddr, w: w, conns: b.o.Conns}}
	if b.o.PutRefs {
		ref, rerr := startStoreRef()
		if rerr != nil {
			return fmt.Errorf("store reference: %w", rerr)
		}
		defer func() { err = errors.Join(err, ref.close()) }() // the named result
		sides = append(sides,
			side{name: "put-dw0-store", server: "store", addr: ref.blind, w: w, conns: b.o.Conns},
			side{name: "put-dw0-store-rw", server: "store", addr: ref.readPlus, w: w, conns: b.o.Conns})
	}
	sides = append(sides, side{name: "put-dw0-cairn", server: "cairn", addr: b.cairnAddr, w: w, conns: b.o.Conns})
	ps, err := b.measureSides(ctx, sides...)
	if err != nil {
		return err
	}
	bare, cairn := ps[0], ps[len(ps)-1]
	b.ratio("PUT dw=0 cairn/bare", cairn, bare, 0.5)
	if b.o.PutRefs {
		store, storeRW := ps[1], ps[2]
		b.info("PUT dw=0 store/bare", store, bare)
		b.info("PUT dw=0 store-rw/bare", storeRW, bare)
		b.info("PUT dw=0 cairn/store", cairn, store)
	}
	b.putDW0 = &cairn
	return nil
}

// phaseSync: PUT with dw=1 (fsync before the answer), many writers vs one.
func (b *bench) phaseSync(ctx context.Context) error {
	w := b.putNew("s", 1)
	one, many, err := b.measurePair(ctx,
		side{name: "put-dw1-c1", server: "cairn", addr: b.cairnAddr, w: w, conns: 1},
		side{name: fmt.Sprintf("put-dw1-c%d", b.o.Conns), server: "cairn", addr: b.cairnAddr, w: w, conns: b.o.Conns})
	if err != nil {
		return err
	}
	b.ratio(fmt.Sprintf("PUT dw=1 c%d/c1", b.o.Conns), many, one, 10)
	if b.o.SimFsync > 0 {
		if err := b.phaseSyncSlowDisk(ctx); err != nil {
			return err
		}
	}
	if b.putDW0 != nil {
		// Not a target: how close synced writes come to unsynced ones (1 = fsync is free).
		b.info("PUT dw=1/dw=0 at the same concurrency", many, *b.putDW0)
		// One writer's rate is set by the fsync latency; many writers' rate cannot exceed
		// the unsynced rate. When a fast disk makes 10x the one-writer rate larger than
		// that, the target is out of reach whatever the group commit does.
		if need := 10 * one.RPS; need > b.putDW0.RPS {
			b.notes = append(b.notes, fmt.Sprintf("the dw=1 target needs %.0f req/s (10 x one writer, whose p50 %s is mostly fsync), "+
				"more than unsynced PUTs reached (%.0f req/s in %s): on this disk it is bounded by CPU, not by group commit",
				need, fmtMS(one.P50ms), b.putDW0.RPS, b.putDW0.Name))
		}
	}
	return nil
}

// phaseSyncSlowDisk repeats the dw=1 comparison on a second Cairn whose storage waits
// --sim-fsync before every sync, as a disk with that fsync latency would: one writer is
// then bound by the fsync, and the ratio shows what group commit gives.
func (b *bench) phaseSyncSlowDisk(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "cairn-bench-slowdisk-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.KVListen, cfg.S3Listen, cfg.LogLevel = dir, "127.0.0.1:0", "", "error"
	cfg.SyncLatency = b.o.SimFsync
	srv, err := server.New(cfg, "bench", slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.Start(); err != nil {
		return err
	}
	if b.wrk != nil {
		defer func(d string) { b.wrk.Dir = d }(b.wrk.Dir)
		b.wrk.Dir = dir
	}
	addr := srv.KVAddr().String()
	w := b.putNew("s", 1)
	tag := "sim" + b.o.SimFsync.String()
	one, many, err := b.measurePair(ctx,
		side{name: "put-dw1-c1-" + tag, server: "cairn", addr: addr, w: w, conns: 1},
		side{name: fmt.Sprintf("put-dw1-c%d-%s", b.o.Conns, tag), server: "cairn", addr: addr, w: w, conns: b.o.Conns})
	if err != nil {
		return err
	}
	b.ratio(fmt.Sprintf("PUT dw=1 c%d/c1, fsync %v (simulated)", b.o.Conns, b.o.SimFsync), many, one, 10)
	return nil
}

// phaseBurst: the settled GET rate, then GETs during a burst of PUTs of new random
// keys (dw=0, from separate writer connections), then GETs right after it.
func (b *bench) phaseBurst(ctx context.Context) error {
	w := b.getExisting()
	settled, err := b.measure(ctx, side{name: "get-settled", server: "cairn", addr: b.cairnAddr, w: w, conns: b.o.Conns})
	if err != nil {
		return err
	}
	before, err := b.storageStats()
	if err != nil {
		return err
	}
	pw := b.putNew("b", 0)
	writers := Builtin{Addr: b.cairnAddr, Conns: b.o.BurstWriters, Build: pw.raw(b.cairnAddr),
		Total: int64(b.o.Burst), Seed: uint64(time.Now().UnixNano())}
	during := phaseResult{Name: "get-during-burst", Server: "cairn", Conns: b.o.Conns}
	after := phaseResult{Name: "get-after-burst", Server: "cairn", Conns: b.o.Conns}
	var wr *Run
	var burstTime time.Duration
	if b.wrk != nil {
		script := wrkScript(w)
		url := "http://" + b.cairnAddr
		done := make(chan struct{})
		stop := b.profile(during.Name)
		start := time.Now()
		wr = writers.Start()
		go func() {
			<-wr.Done()
			burstTime = time.Since(start)
			close(done)
		}()
		res, err := b.wrk.Run(ctx, WrkRun{URL: url, Conns: b.o.Conns, Script: script, Duration: time.Hour, Stop: done})
		stop()
		if err != nil {
			wr.Stop()
			return err
		}
		<-done
		during.fromWrk(res)
		stop = b.profile(after.Name)
		res, err = b.wrk.Run(ctx, WrkRun{URL: url, Conns: b.o.Conns, Script: script, Duration: b.o.After})
		stop()
		if err != nil {
			return err
		}
		after.fromWrk(res)
	} else {
		readers := Builtin{Addr: b.cairnAddr, Conns: b.o.Conns, Build: w.raw(b.cairnAddr), Seed: uint64(time.Now().UnixNano())}.Start()
		err := sleep(ctx, min(b.o.Warmup, 500*time.Millisecond)) // connect and reach steady state
		if err != nil {
			readers.Stop()
			return err
		}
		stop := b.profile(during.Name)
		t1 := readers.SetEpoch(1)
		wr = writers.Start()
		select {
		case <-wr.Done():
		case <-ctx.Done():
			wr.Stop()
			readers.Stop()
			return ctx.Err()
		}
		t2 := readers.SetEpoch(2)
		burstTime = t2.Sub(t1)
		stop()
		stop = b.profile(after.Name)
		err = sleep(ctx, b.o.After)
		t3 := readers.SetEpoch(3)
		stop()
		readers.Stop()
		if err != nil {
			return err
		}
		during.fromBuiltin(readers.Stats(1), t2.Sub(t1))
		after.fromBuiltin(readers.Stats(2), t3.Sub(t2))
	}
	ws := wr.Stats(0)
	b.burst = &burstResult{Writers: b.o.BurstWriters, Requests: ws.Requests, Errors: ws.Errors,
		Seconds: burstTime.Seconds(), RPS: float64(ws.Requests) / burstTime.Seconds()}
	b.logf("burst: %d PUTs (dw=0, new random keys) from %d writers in %v = %.0f PUT/s, %d errors",
		ws.Requests, b.o.BurstWriters, burstTime.Round(time.Millisecond), b.burst.RPS, ws.Errors)
	if ws.Errors > 0 {
		b.notes = append(b.notes, fmt.Sprintf("the burst had %d failed PUTs", ws.Errors))
	}
	b.add(during)
	b.add(after)
	b.ratio("GET during burst/settled", during, settled, 0.3)
	b.ratio("GET after burst/settled", after, settled, 0.3)
	if st, err := b.storageStats(); err == nil {
		b.burst.LevelDB = compactionsSince(before, st)
		b.logf("burst and after-window: %s; tables per level now %v", b.burst.LevelDB, st.LevelTables)
	}
	return nil
}
