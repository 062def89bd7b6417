package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/plugins/gopluginhost"
)

// The plugin phase: process plugins (hashicorp/go-plugin over gRPC) beside the same
// work in WebAssembly.
//
//   - the cost of one precommit call, called directly through each runtime in this
//     process (no HTTP): an accepting plugin precommit (benchplugin's "accept") and the
//     C example's accepting WebAssembly precommit, sequentially and from
//     4 × GOMAXPROCS goroutines;
//   - PUT with the quota example plugin as precommit / without, over HTTP (no target);
//   - MapReduce over --mr-objects objects, in inputs per second: a map that does no
//     work, benchplugin's "values" (streamed) against the same in WebAssembly
//     ("values" of plugins/wasmhost/testdata/hooks.wasm), so the runtimes' costs are
//     compared (target: the plugin at least 25 % of the WebAssembly rate); then the
//     word count, map and reduce, of the wordcount example plugin against its
//     WebAssembly twin wasm-examples/go/wordcount-map, on the first 10 000 objects (no
//     target).

// mrBucket holds the MapReduce objects of the plugin phase.
const mrBucket = "bench_mr"

// benchPlugins are the plugins the plugin phase runs, by name (packages of this module,
// so they build from any directory in it).
var benchPlugins = map[string]string{
	"bench":     "github.com/cairnkv/cairn/cmd/cairn-bench/benchplugin",
	"quota":     "github.com/cairnkv/cairn/plugins/examples/quota",
	"wordcount": "github.com/cairnkv/cairn/plugins/examples/wordcount",
}

// buildPlugins builds the plugin phase's plugins into dir and returns their
// configurations.
func buildPlugins(dir string) ([]gopluginhost.PluginConfig, error) {
	var out []gopluginhost.PluginConfig
	for name, pkg := range benchPlugins {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build plugin %s: %w\n%s", name, err, msg)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		out = append(out, gopluginhost.PluginConfig{
			Name: name, Command: []string{bin}, SHA256: hex.EncodeToString(sum[:]),
			Env: map[string]string{"QUOTA_FILE": filepath.Join(dir, "no-quota.json")},
		})
	}
	return out, nil
}

func (b *bench) phasePlugin(ctx context.Context) error {
	if b.plugins == nil {
		return fmt.Errorf("no plugin host (the plugin phase's plugins were not built)")
	}
	if err := b.pluginPrecommitCost(ctx); err != nil {
		return err
	}
	if err := b.pluginPut(ctx); err != nil {
		return err
	}
	return b.pluginMapReduce(ctx)
}

// pluginPrecommitCost calls the WebAssembly and the plugin precommit directly and
// reports the time per call.
func (b *bench) pluginPrecommitCost(ctx context.Context) error {
	code, err := os.ReadFile(b.o.HookModule)
	if err != nil {
		return fmt.Errorf("hook module: %w", err)
	}
	if _, err := b.host.Load(ctx, "bench_percall", code); err != nil {
		return err
	}
	wimpl, err := b.host.Lookup("bench_percall", b.o.HookFunction, hooks.PointPrecommit)
	if err != nil {
		return err
	}
	pimpl, err := b.plugins.Lookup("bench", "accept", hooks.PointPrecommit)
	if err != nil {
		return err
	}
	obj := &core.Object{Type: core.DefaultType, Bucket: "bench_percall", Key: "k", Siblings: []core.Sibling{{
		Value: userValues(1, b.o.ValueSize)[0], ContentType: "application/json", LastModified: time.Now(),
	}}}
	type rt struct {
		name string
		pc   hooks.Precommit
	}
	runtimes := []rt{{"wasm", wimpl.(hooks.Precommit)}, {"plugin", pimpl.(hooks.Precommit)}}
	calls := 20000
	if b.o.Quick {
		calls = 2000
	}
	per := map[string][2]time.Duration{}
	for _, r := range runtimes {
		var timeouts atomic.Int64
		call := func() error {
			v, err := r.pc.Precommit(ctx, hooks.OpPut, obj)
			var ce *hooks.CallError
			if errors.As(err, &ce) && ce.Kind == hooks.TimedOut {
				// A call that missed its deadline on a loaded machine is counted, not fatal.
				timeouts.Add(1)
				return nil
			}
			if err == nil && v.Reject {
				err = fmt.Errorf("the %s precommit rejected the benchmark's object: %s", r.name, v.Reason)
			}
			return err
		}
		for range calls / 10 { // warm up
			if err := call(); err != nil {
				return err
			}
		}
		start := time.Now()
		for range calls {
			if err := call(); err != nil {
				return err
			}
		}
		seq := time.Since(start) / time.Duration(calls)
		workers := 4 * runtime.GOMAXPROCS(0)
		var next atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		start = time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(calls) {
					if err := call(); err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			return err
		}
		par := time.Since(start) / time.Duration(calls)
		per[r.name] = [2]time.Duration{seq, par}
		if n := timeouts.Load(); n > 0 {
			b.notes = append(b.notes, fmt.Sprintf("%d of the %s precommit calls timed out (the machine was busy)", n, r.name))
		}
		b.logf("precommit per call, %s: %v sequential, %v amortized over %d callers", r.name, seq, par, workers)
	}
	w, p := per["wasm"], per["plugin"]
	b.notes = append(b.notes, fmt.Sprintf(
		"precommit per call (in process, %d calls, a %d-byte JSON object): WebAssembly (C accept) %.1f µs sequential, %.1f µs amortized over %d callers; "+
			"process plugin (accept, gRPC) %.1f µs sequential, %.1f µs amortized (%.1f× and %.1f× the WebAssembly cost)",
		calls, b.o.ValueSize, us(w[0]), us(w[1]), 4*runtime.GOMAXPROCS(0), us(p[0]), us(p[1]),
		float64(p[0])/float64(w[0]), float64(p[1])/float64(w[1])))
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// pluginPut measures PUTs into a bucket whose precommit is the quota plugin against
// PUTs without hooks.
func (b *bench) pluginPut(ctx context.Context) error {
	bucket := "bench_plugin_put"
	props := `{"props":{"precommit":[{"mod":"plugin:quota","fun":"check"}]}}`
	if err := b.adminRequest(http.MethodPut, "/buckets/"+bucket+"/props", []byte(props)); err != nil {
		return err
	}
	plain := workload{Method: http.MethodPut, Bucket: benchBucket, KeyPrefix: "pp", DW: 0, Bodies: userValues(putBodies, b.o.ValueSize)}
	hooked := plain
	hooked.Bucket = bucket
	without, with, err := b.measurePair(ctx,
		side{name: "put-nohook", server: "cairn", addr: b.cairnAddr, w: plain, conns: b.o.Conns},
		side{name: "put-precommit-plugin", server: "cairn", addr: b.cairnAddr, w: hooked, conns: b.o.Conns})
	if err != nil {
		return err
	}
	b.info("PUT with process-plugin precommit (quota example) / without", with, without)
	if with.Errors > 0 {
		return fmt.Errorf("the plugin precommit failed %d of the benchmark's PUTs", with.Errors)
	}
	return nil
}

// mrWords is the vocabulary of the MapReduce objects.
var mrWords = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu the quick brown fox
jumps over lazy dog river stone cairn ledger bucket object sibling vector clock index link walk reduce`)

// populateMR writes the MapReduce objects: short texts of 25 words.
func (b *bench) populateMR(ctx context.Context) error {
	n := b.o.MRObjects
	start := time.Now()
	err := b.putInProcess(ctx, n, func(i int) *kv.PutRequest {
		var text bytes.Buffer
		for w := range 25 {
			if w > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(mrWords[(i*7+w*13+w*w)%len(mrWords)])
		}
		return &kv.PutRequest{Type: core.DefaultType, Bucket: mrBucket, Key: queryKey(i),
			Value: core.Sibling{Value: text.Bytes(), ContentType: "text/plain"}}
	})
	if err != nil {
		return fmt.Errorf("populate %s: %w", mrBucket, err)
	}
	b.logf("populated %s with %d objects in %v", mrBucket, n, time.Since(start).Round(time.Millisecond))
	return nil
}

// wordcountSubset is the key filter of the word-count comparison: the first 10 000
// objects (keys k00000000 to k00009999).
const wordcountSubset = `[["starts_with","k0000"]]`

// pluginMapReduce runs MapReduce jobs with the plugins and with WebAssembly modules,
// alternating, and keeps each one's best run.
func (b *bench) pluginMapReduce(ctx context.Context) error {
	wc, err := os.ReadFile(b.o.MRModule)
	if err != nil {
		return fmt.Errorf("mapreduce module: %w", err)
	}
	if err := b.adminRequest(http.MethodPut, "/admin/modules/bench_wc", wc); err != nil {
		return err
	}
	fixture, err := os.ReadFile(b.o.MRFixture)
	if err != nil {
		return fmt.Errorf("mapreduce fixture module: %w", err)
	}
	if err := b.adminRequest(http.MethodPut, "/admin/modules/bench_values", fixture); err != nil {
		return err
	}
	if err := b.populateMR(ctx); err != nil {
		return err
	}
	phase := func(kind, lang, mod, fun string) string {
		return `{"` + kind + `":{"language":"` + lang + `","module":"` + mod + `","function":"` + fun + `"}}`
	}
	all := `"inputs":"` + mrBucket + `"`
	subset := `"inputs":{"bucket":"` + mrBucket + `","key_filters":` + wordcountSubset + `}`
	type job struct {
		name, body string
		inputs     int
	}
	small := min(10000, b.o.MRObjects)
	jobs := []job{
		{"mapred-values-wasm", `{` + all + `,"timeout":600000,"query":[` + phase("map", "wasm", "bench_values", "values") + `]}`, b.o.MRObjects},
		{"mapred-values-plugin", `{` + all + `,"timeout":600000,"query":[` + phase("map", "erlang", "plugin:bench", "values") + `]}`, b.o.MRObjects},
		{"mapred-wordcount-wasm", `{` + subset + `,"timeout":600000,"query":[` + phase("map", "wasm", "bench_wc", "wordcount") + `,` +
			phase("reduce", "wasm", "bench_wc", "sum_counts") + `]}`, small},
		{"mapred-wordcount-plugin", `{` + subset + `,"timeout":600000,"query":[` + phase("map", "erlang", "plugin:wordcount", "wordcount") + `,` +
			phase("reduce", "erlang", "plugin:wordcount", "sum_counts") + `]}`, small},
	}
	rounds := 2
	if b.o.Quick {
		rounds = 1
	}
	best := map[string]phaseResult{}
	for range rounds {
		for _, j := range jobs {
			r, err := b.runMapred(ctx, j.name, j.body, j.inputs)
			if err != nil {
				return err
			}
			if r.RPS > best[j.name].RPS {
				best[j.name] = r
			}
		}
	}
	for _, j := range jobs {
		b.phases = append(b.phases, best[j.name])
	}
	// The two word counts must agree, or their rates compare different work.
	var counts [2]map[string]int64
	for i, j := range jobs[2:] {
		if err := b.mapredJSON(ctx, j.body, &counts[i]); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	if !maps.Equal(counts[0], counts[1]) || len(counts[0]) == 0 {
		return fmt.Errorf("the plugin's and the WebAssembly module's word counts differ: %v vs %v", counts[1], counts[0])
	}
	b.ratio(fmt.Sprintf("MapReduce map over %d objects, process plugin (streamed) / WebAssembly (a map doing no work)", b.o.MRObjects),
		best["mapred-values-plugin"], best["mapred-values-wasm"], 0.25)
	b.info(fmt.Sprintf("MapReduce word count (map + reduce) over %d objects, process plugin / WebAssembly (Go guest)", small),
		best["mapred-wordcount-plugin"], best["mapred-wordcount-wasm"])
	return nil
}

// mapredJSON runs a job whose result is one value and decodes that value into v.
func (b *bench) mapredJSON(ctx context.Context, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+b.cairnAddr+"/mapred", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var out []json.RawMessage
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil || len(out) != 1 {
		return fmt.Errorf("%s: %.300s", resp.Status, data)
	}
	return json.Unmarshal(out[0], v)
}

// runMapred runs one job with chunked results (read and counted, not kept) and
// returns its rate in inputs per second.
func (b *bench) runMapred(ctx context.Context, name, body string, inputs int) (phaseResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+b.cairnAddr+"/mapred?chunked=true", strings.NewReader(body))
	if err != nil {
		return phaseResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return phaseResult{}, err
	}
	defer resp.Body.Close()
	var parts int
	var tail []byte
	rd := bufio.NewReaderSize(resp.Body, 1<<16)
	buf := make([]byte, 1<<16)
	for {
		n, err := rd.Read(buf)
		parts += bytes.Count(buf[:n], []byte(`"phase"`))
		if n > 0 {
			tail = append(tail[:0], buf[max(0, n-512):n]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return phaseResult{}, err
		}
	}
	el := time.Since(start)
	if resp.StatusCode != http.StatusOK || bytes.Contains(tail, []byte(`"error"`)) {
		return phaseResult{}, fmt.Errorf("%s: %s: %s", name, resp.Status, tail)
	}
	r := phaseResult{Name: name, Server: "cairn", Conns: 1, Requests: int64(inputs), Seconds: el.Seconds(),
		RPS: float64(inputs) / el.Seconds()}
	b.logf("%s: %d inputs in %v (%.0f inputs/s, %d result parts)", name, inputs, el.Round(time.Millisecond), r.RPS, parts)
	return r, nil
}
