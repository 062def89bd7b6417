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
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/server"
)

const benchBucket = "bench"

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
	value       []byte
	started     time.Time

	phases []phaseResult
	ratios []ratioResult
	burst  *burstResult
	notes  []string
}

// phaseResult is one measured phase.
type phaseResult struct {
	Name     string  `json:"name"`
	Server   string  `json:"server"` // cairn or bare
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
}

// burstResult describes the PUT burst itself.
type burstResult struct {
	Writers  int     `json:"writers"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
}

func newBench(o options, out, log io.Writer) (*bench, error) {
	b := &bench{o: o, out: out, log: log, value: makeValue(o.ValueSize), started: time.Now()}
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
	cfg.LogLevel = "error"
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelError}))
	srv, err := server.New(cfg, "bench", logger)
	if err != nil {
		b.close()
		return nil, err
	}
	b.srv = srv
	if err := srv.Start(); err != nil {
		b.close()
		return nil, err
	}
	b.cairnAddr = srv.KVAddr().String()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.close()
		return nil, err
	}
	b.bareLn = ln
	b.bareAddr = ln.Addr().String()
	// The same server settings as Cairn's KV listener, without Cairn's handler.
	b.bare = &http.Server{Handler: bareHandler(b.value), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
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
	return workload{Method: http.MethodPut, Bucket: benchBucket, KeyPrefix: prefix, DW: dw, Body: b.value}
}

func (b *bench) run(ctx context.Context) error {
	b.printHeader()
	if err := b.setBucket(); err != nil {
		return err
	}
	if err := b.populate(ctx); err != nil {
		return err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"get", b.phaseGet}, {"put", b.phasePut}, {"sync", b.phaseSync}, {"burst", b.phaseBurst},
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

func (b *bench) printHeader() {
	fmt.Fprintf(b.out, "cairn-bench %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(b.out, "%s %s/%s  GOMAXPROCS=%d  nproc=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(b.out, "loadgen: %s\n", b.loadgenDesc)
	fmt.Fprintf(b.out, "phases: %v measured after %v warm-up; %d connections; %d-byte values; %d keys populated; burst %d PUTs from %d writers\n",
		b.o.Duration, b.o.Warmup, b.o.Conns, b.o.ValueSize, b.o.Keys, b.o.Burst, b.o.BurstWriters)
	if b.wrk != nil {
		fmt.Fprintf(b.out, "        (wrk runs whole seconds: %ds phases, %ds warm-ups)\n", ceilSeconds(b.o.Duration), ceilSeconds(b.o.Warmup))
	}
	fmt.Fprintf(b.out, "bare baseline: net/http on loopback; GET answers 200 with a %d-byte body (Content-Type, Content-Length), PUT reads the body and answers 204\n", b.o.ValueSize)
	fmt.Fprintf(b.out, "NOTE: the load generator, Cairn and the bare server share this machine's %d CPUs; a generator that needs more CPU per request\n"+
		"      leaves less to the server, which compresses ratios between a fast and a slow server (and CPU-bound phases are noisy).\n",
		runtime.NumCPU())
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
	r := Builtin{Addr: b.cairnAddr, Conns: b.o.Conns, Build: w.raw(b.cairnAddr), Total: int64(b.o.Keys), Seed: 1}.Start()
	select {
	case <-r.Done():
	case <-ctx.Done():
		r.Stop()
		return ctx.Err()
	}
	st := r.Stats(0)
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
	IOWrite     float64   `json:"io_write_bytes"`
	Level0      float64   `json:"level0_tables"`
	LevelTables []float64 `json:"level_tables"`
	WritePaused bool      `json:"write_paused"`
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

// measure runs workload w against addr with conns connections: a warm-up, then the
// measured duration.
func (b *bench) measure(ctx context.Context, name, srvName, addr string, w workload, conns int) (phaseResult, error) {
	res := phaseResult{Name: name, Server: srvName, Conns: conns}
	if b.wrk != nil {
		run := WrkRun{URL: "http://" + addr, Conns: conns, Script: wrkScript(w)}
		if b.o.Warmup > 0 {
			run.Duration = b.o.Warmup
			if _, err := b.wrk.Run(ctx, run); err != nil {
				return res, err
			}
		}
		run.Duration = b.o.Duration
		stop := b.profile(name)
		wr, err := b.wrk.Run(ctx, run)
		stop()
		if err != nil {
			return res, err
		}
		res.fromWrk(wr)
	} else {
		r := Builtin{Addr: addr, Conns: conns, Build: w.raw(addr), Seed: uint64(time.Now().UnixNano())}.Start()
		err := sleep(ctx, b.o.Warmup)
		stop := func() {}
		var t1, t2 time.Time
		if err == nil {
			stop = b.profile(name)
			t1 = r.SetEpoch(1)
			err = sleep(ctx, b.o.Duration)
			t2 = r.SetEpoch(2)
		}
		stop()
		r.Stop()
		if err != nil {
			return res, err
		}
		st := r.Stats(1)
		res.fromBuiltin(st, t2.Sub(t1))
	}
	b.add(res)
	return res, nil
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

// phaseGet: GET of existing objects, Cairn vs the bare handler.
func (b *bench) phaseGet(ctx context.Context) error {
	w := b.getExisting()
	bare, err := b.measure(ctx, "get-bare", "bare", b.bareAddr, w, b.o.Conns)
	if err != nil {
		return err
	}
	cairn, err := b.measure(ctx, "get-cairn", "cairn", b.cairnAddr, w, b.o.Conns)
	if err != nil {
		return err
	}
	b.ratio("GET cairn/bare", cairn, bare, 0.7)
	return nil
}

// phasePut: PUT of new objects with dw=0, Cairn vs the bare handler.
func (b *bench) phasePut(ctx context.Context) error {
	w := b.putNew("p", 0)
	bare, err := b.measure(ctx, "put-dw0-bare", "bare", b.bareAddr, w, b.o.Conns)
	if err != nil {
		return err
	}
	cairn, err := b.measure(ctx, "put-dw0-cairn", "cairn", b.cairnAddr, w, b.o.Conns)
	if err != nil {
		return err
	}
	b.ratio("PUT dw=0 cairn/bare", cairn, bare, 0.3)
	return nil
}

// phaseSync: PUT with dw=1 (fsync before the answer), many writers vs one.
func (b *bench) phaseSync(ctx context.Context) error {
	w := b.putNew("s", 1)
	one, err := b.measure(ctx, "put-dw1-c1", "cairn", b.cairnAddr, w, 1)
	if err != nil {
		return err
	}
	many, err := b.measure(ctx, fmt.Sprintf("put-dw1-c%d", b.o.Conns), "cairn", b.cairnAddr, w, b.o.Conns)
	if err != nil {
		return err
	}
	b.ratio(fmt.Sprintf("PUT dw=1 c%d/c1", b.o.Conns), many, one, 10)
	return nil
}

// phaseBurst: the settled GET rate, then GETs during a burst of PUTs of new random
// keys (dw=0, from separate writer connections), then GETs right after it.
func (b *bench) phaseBurst(ctx context.Context) error {
	w := b.getExisting()
	settled, err := b.measure(ctx, "get-settled", "cairn", b.cairnAddr, w, b.o.Conns)
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
		b.logf("after the burst window: LevelDB tables per level %v", st.LevelTables)
	}
	return nil
}
