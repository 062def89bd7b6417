package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// The query phase: listing and secondary-index queries over a large bucket.
//
//   - keys=stream and keys=true over every key of the bucket, with the server's peak RSS
//     above its idle RSS (target: under 64 MiB for keys=stream over 1 M keys);
//   - 2i range queries on an _int index in 1000-result pages (max_results=1000) over
//     HTTP, against a raw LevelDB iterator reading the same postings in this process
//     (target: the HTTP rate at least a third of the raw one);
//   - 2i exact queries on a _bin term that matches 1000 keys, likewise.

// queryBucket holds the query phase's objects.
const queryBucket = "bench_query"

// queryTermKeys is how many objects share one g_bin term (an exact query's page).
const queryTermKeys = 1000

// rssLimitMiB is the keys=stream target.
const rssLimitMiB = 64

// limitResult is a figure with an upper bound.
type limitResult struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Max   float64 `json:"max"`
	Pass  bool    `json:"pass"`
}

func (b *bench) limit(name string, v float64, unit string, maxV float64) {
	b.limits = append(b.limits, limitResult{Name: name, Value: v, Unit: unit, Max: maxV, Pass: v <= maxV})
}

// queryKey is the i-th object's key; its n_int term is i and its g_bin term groups
// queryTermKeys consecutive objects.
func queryKey(i int) string { return fmt.Sprintf("k%08d", i) }
func queryGroup(i int) string {
	return fmt.Sprintf("g%06d", i/queryTermKeys)
}

// populateQuery writes the query bucket in this process through the KV service (the
// whole write path: clocks, index postings, one batch per object), from one writer per
// CPU.
func (b *bench) populateQuery(ctx context.Context) error {
	n := b.o.QueryKeys
	start := time.Now()
	err := b.putInProcess(ctx, n, func(i int) *kv.PutRequest {
		return &kv.PutRequest{Type: core.DefaultType, Bucket: queryBucket, Key: queryKey(i),
			Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain", Indexes: []core.IndexEntry{
				{Field: "n_int", Value: strconv.Itoa(i)}, {Field: "g_bin", Value: queryGroup(i)}}}}
	})
	if err != nil {
		return fmt.Errorf("populate %s: %w", queryBucket, err)
	}
	el := time.Since(start)
	b.logf("populated %s with %d objects, %d index entries, in %v (%.0f PUT/s in process)", queryBucket, n, 2*n,
		el.Round(time.Millisecond), float64(n)/el.Seconds())
	return nil
}

// putInProcess writes the objects req(0) to req(n-1) through the KV service in this
// process (the whole write path: clocks, index postings, one batch per object), from
// one writer per CPU. It returns the first error.
func (b *bench) putInProcess(ctx context.Context, n int, req func(i int) *kv.PutRequest) error {
	svc := b.srv.KV()
	return parallelDo(ctx, runtime.GOMAXPROCS(0), n, func(i int) error {
		_, err := svc.Put(ctx, req(i))
		return err
	})
}

// parallelDo runs fn(0) to fn(n-1) from workers goroutines and returns the first
// error (or ctx's); the workers stop at the first error or when ctx is done.
func parallelDo(ctx context.Context, workers, n int, fn func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil || failed.Load() {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(true)
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// rssKiB reads this process's resident set size.
func rssKiB() (int64, error) { return procStatusKiB("VmRSS:") }

// procStatusKiB reads the field (with its colon) of /proc/self/status, in KiB.
func procStatusKiB(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux 4.0 and later).
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS samples the RSS every 5 ms until stop is called, which returns the peak.
func peakRSS() (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := rssKiB(); err == nil && v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// countingReader reads a response body, counting bytes.
func drain(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// phaseQuery runs the query phase.
func (b *bench) phaseQuery(ctx context.Context) error {
	if err := b.populateQuery(ctx); err != nil {
		return err
	}
	if err := b.settle(ctx); err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	base := "http://" + b.cairnAddr + "/buckets/" + queryBucket

	for _, mode := range []string{"stream", "true"} {
		runtime.GC()
		debug.FreeOSMemory()
		idle, err := rssKiB()
		if err != nil {
			b.notes = append(b.notes, "listing RSS not measured: "+err.Error())
		}
		stop := peakRSS()
		start := time.Now()
		resp, err := client.Get(base + "/keys?keys=" + mode)
		if err != nil {
			stop()
			return err
		}
		n, err := drain(resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		peak := stop()
		if err != nil {
			return fmt.Errorf("keys=%s: %w", mode, err)
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("keys=%s: status %d", mode, resp.StatusCode)
		}
		growth := float64(peak-idle) / 1024
		keysPerSec := float64(b.o.QueryKeys) / el.Seconds()
		b.logf("keys=%-6s %d keys (%d bytes) in %v = %.0f keys/s; RSS idle %d MiB, peak %d MiB (+%.1f MiB)",
			mode, b.o.QueryKeys, n, el.Round(time.Millisecond), keysPerSec, idle/1024, peak/1024, growth)
		b.phases = append(b.phases, phaseResult{Name: "keys=" + mode, Server: "cairn", Conns: 1, Requests: 1, RPS: keysPerSec})
		if idle > 0 {
			name := fmt.Sprintf("RSS above idle, keys=%s of %d keys", mode, b.o.QueryKeys)
			if mode == "stream" {
				b.limit(name, growth, "MiB", rssLimitMiB)
			} else {
				b.notes = append(b.notes, fmt.Sprintf("%s: +%.1f MiB (no target; the body is produced twice to learn its length)", name, growth))
			}
		}
	}

	groups := max(1, b.o.QueryKeys/queryTermKeys)
	rangeHTTP, rangeHTTPPages, err := b.timedHTTP(ctx, "query-range", client, func(rng *rand.Rand) string {
		lo := rng.IntN(max(1, b.o.QueryKeys-queryTermKeys))
		return fmt.Sprintf("%s/index/n_int/%d/%d?max_results=%d", base, lo, b.o.QueryKeys, queryTermKeys)
	})
	if err != nil {
		return fmt.Errorf("range query: %w", err)
	}
	rangeRaw, rangeRawPages, err := b.timedRaw(ctx, func(rng *rand.Rand) ([]byte, []byte) {
		lo := rng.IntN(max(1, b.o.QueryKeys-queryTermKeys))
		t, _ := index.EncodeTerm("n_int", strconv.Itoa(lo))
		from := storage.AppendComponent(index.FieldPrefix(core.DefaultType, queryBucket, "n_int"), t)
		return from, storage.PrefixEnd(index.FieldPrefix(core.DefaultType, queryBucket, "n_int"))
	})
	if err != nil {
		return err
	}
	exactHTTP, exactHTTPPages, err := b.timedHTTP(ctx, "query-exact", client, func(rng *rand.Rand) string {
		return fmt.Sprintf("%s/index/g_bin/%s", base, queryGroup(rng.IntN(groups)*queryTermKeys))
	})
	if err != nil {
		return fmt.Errorf("exact query: %w", err)
	}
	exactRaw, exactRawPages, err := b.timedRaw(ctx, func(rng *rand.Rand) ([]byte, []byte) {
		p := storage.AppendComponent(index.FieldPrefix(core.DefaultType, queryBucket, "g_bin"), []byte(queryGroup(rng.IntN(groups)*queryTermKeys)))
		return p, storage.PrefixEnd(p)
	})
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name                string
		http, raw           float64
		httpPages, rawPages int
		target              bool
		describe            string
	}{
		{"2i range", rangeHTTP, rangeRaw, rangeHTTPPages, rangeRawPages, true, "n_int range, max_results=1000"},
		{"2i exact", exactHTTP, exactRaw, exactHTTPPages, exactRawPages, false, "g_bin term of 1000 keys"},
	} {
		// Requests counts pages; RPS counts results (index entries) per second.
		h := phaseResult{Name: p.name + " http", Server: "cairn", Conns: 1, Requests: int64(p.httpPages), RPS: p.http}
		r := phaseResult{Name: p.name + " raw", Server: "leveldb", Conns: 1, Requests: int64(p.rawPages), RPS: p.raw}
		b.phases = append(b.phases, h, r)
		b.logf("%s (%s): %.0f results/s over HTTP, %.0f entries/s from a raw iterator", p.name, p.describe, p.http, p.raw)
		if p.target {
			b.ratio(p.name+" http/raw (results per second, 1000-result pages)", h, r, 1.0/3)
		} else {
			b.info(p.name+" http/raw (results per second)", h, r)
		}
	}
	return nil
}

// timedHTTP sends the queries url makes, one at a time, for the phase duration after a
// warm-up, and returns results per second (a page's results are counted as the page
// size: the pages are full by construction).
func (b *bench) timedHTTP(ctx context.Context, name string, client *http.Client, url func(*rand.Rand) string) (rate float64, pages int, err error) {
	rng := rand.New(rand.NewPCG(7, 7))
	run := func(d time.Duration) (int, error) {
		deadline := time.Now().Add(d)
		pages := 0
		for time.Now().Before(deadline) {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			resp, err := client.Get(url(rng))
			if err != nil {
				return 0, err
			}
			_, err = drain(resp.Body)
			resp.Body.Close()
			if err != nil {
				return 0, err
			}
			if resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("status %d", resp.StatusCode)
			}
			pages++
		}
		return pages, nil
	}
	if _, err := run(b.o.Warmup); err != nil {
		return 0, 0, err
	}
	stopProfile := b.profile(name)
	start := time.Now()
	pages, err = run(b.o.Duration)
	stopProfile()
	if err != nil {
		return 0, 0, err
	}
	return float64(pages*queryTermKeys) / time.Since(start).Seconds(), pages, nil
}

// timedRaw reads queryTermKeys postings from the [lo, hi) ranges bounds makes, on one
// snapshot, for the phase duration after a warm-up, and returns entries per second.
func (b *bench) timedRaw(ctx context.Context, bounds func(*rand.Rand) ([]byte, []byte)) (rate float64, pages int, err error) {
	view, err := b.srv.KV().View(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer view.Close()
	snap := view.Snapshot()
	rng := rand.New(rand.NewPCG(7, 7))
	var sink int
	run := func(d time.Duration) (int, error) {
		deadline := time.Now().Add(d)
		entries := 0
		pages = 0
		for time.Now().Before(deadline) {
			pages++
			lo, hi := bounds(rng)
			it := snap.Iterate(lo, hi)
			n := 0
			for n < queryTermKeys && it.Next() {
				sink += len(it.Key())
				n++
			}
			err := it.Err()
			it.Release()
			if err != nil {
				return 0, err
			}
			entries += n
		}
		return entries, nil
	}
	if _, err := run(b.o.Warmup); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	entries, err := run(b.o.Duration)
	if err != nil {
		return 0, 0, err
	}
	_ = sink
	return float64(entries) / time.Since(start).Seconds(), pages, nil
}
