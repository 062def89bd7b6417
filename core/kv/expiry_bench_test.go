package kv

import (
	"context"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// pausedClock is a clock that stands still at its base until started, then runs from
// there at the real clock's pace: the expiry benchmark preloads objects whose expiries
// are spread over the load that follows, however long the preload takes.
type pausedClock struct {
	base   time.Time
	offset atomic.Int64 // base − real time at start, in ns; 0 while stopped
	moving atomic.Bool
}

func (c *pausedClock) Now() time.Time {
	if !c.moving.Load() {
		return c.base
	}
	return time.Now().Add(time.Duration(c.offset.Load()))
}

func (c *pausedClock) start() {
	c.offset.Store(int64(time.Until(c.base)))
	c.moving.Store(true)
}

// benchEnvInt returns the integer environment variable name, or def.
func benchEnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkExpiryLoad is issue 19's TTL benchmark: it preloads CAIRN_TTL_OBJECTS
// objects (default 100,000) of 100 bytes with one index entry, then runs a read/write
// load (4 workers: GET 50% of a random preloaded key, PUT 50% of a random key of
// another set of as many, without TTL, dw=0) for
// CAIRN_TTL_SECONDS (default 10) while the background reaper runs. In "ttl" every
// preloaded object has a TTL spread evenly over the load's duration, so all of them
// expire during it; "none" is the same load without TTLs. It reports the load's rate
// (ops/s), and for "ttl" the rate objects expired at (expired/s: all of them over the
// load's first secs−1 seconds), the rate the reaper removed them at over the same
// window (reaped/s: what it reaped during the load), and the expired objects left
// unreaped when the load ends (backlog: 0 when reaping kept up) and after the reaper's
// next tick (backlog-after). Run it with -benchtime=1x; CAIRN_TTL_SECONDS must be ≥ 2.
//
// On a shared machine the rate of one run swings widely, so the two loads alternate,
// CAIRN_TTL_ROUNDS times (default 3), and the medians are reported, with their ratio
// (ttl/none, the target ≥ 0.8) and the worst round's reaper figures. Because
// the CPU the process gets also swings, each load's operations per CPU-second of the
// whole process (reaper, compactions and GC included) are measured too, and their
// ratio reported (ratio-cpu): what the load costs with expiry against without, however
// much CPU the machine gave each.
func BenchmarkExpiryLoad(b *testing.B) {
	n := benchEnvInt("CAIRN_TTL_OBJECTS", 100_000)
	secs := max(2, benchEnvInt("CAIRN_TTL_SECONDS", 10))
	rounds := benchEnvInt("CAIRN_TTL_ROUNDS", 3)
	for range b.N {
		var none, ttl, nonePerCPU, ttlPerCPU []float64
		var worst expiryLoadResult
		for range rounds {
			r := runExpiryLoad(b, n, secs, false)
			none, nonePerCPU = append(none, r.ops), append(nonePerCPU, r.opsPerCPU)
			r = runExpiryLoad(b, n, secs, true)
			ttl, ttlPerCPU = append(ttl, r.ops), append(ttlPerCPU, r.opsPerCPU)
			if r.backlog >= worst.backlog {
				worst = r
			}
		}
		b.StopTimer()
		b.ReportMetric(median(none), "ops/s-none")
		b.ReportMetric(median(ttl), "ops/s-ttl")
		b.ReportMetric(median(ttl)/median(none), "ratio")
		if m := median(nonePerCPU); m > 0 {
			b.ReportMetric(median(nonePerCPU), "ops/cpu-s-none")
			b.ReportMetric(median(ttlPerCPU), "ops/cpu-s-ttl")
			b.ReportMetric(median(ttlPerCPU)/m, "ratio-cpu")
		}
		b.ReportMetric(float64(n)/float64(secs-1), "expired/s")
		b.ReportMetric(worst.reaped/float64(secs-1), "reaped/s")
		b.ReportMetric(float64(worst.backlog), "backlog")
		b.ReportMetric(float64(worst.backlogAfter), "backlog-after")
	}
}

// median returns the median of vs (the upper one of an even count).
func median(vs []float64) float64 {
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// expiryLoadResult is what one load of BenchmarkExpiryLoad measured.
type expiryLoadResult struct {
	ops, reaped           float64 // load operations per second; objects reaped during it
	opsPerCPU             float64 // load operations per CPU-second of the process (0: not measured)
	backlog, backlogAfter int
}

// runExpiryLoad runs one load of BenchmarkExpiryLoad. Its goroutines (the store's and
// the reaper's included) carry the profiler label load=ttl or load=none, so that a CPU
// profile of the benchmark separates the two (go tool pprof -tagfocus load=ttl).
func runExpiryLoad(b *testing.B, n, secs int, withTTL bool) (res expiryLoadResult) {
	mode := "none"
	if withTTL {
		mode = "ttl"
	}
	pprof.Do(ctx, pprof.Labels("load", mode), func(context.Context) {
		res = expiryLoad(b, n, secs, withTTL)
	})
	return res
}

// expiryBench opens a store and a service on it with the clock now for the expiry
// benchmarks, and returns them with their put: an object of 100 bytes with one index
// entry (n_int i mod 100) under key in bucket "ttl", dw=0, with ttl (nil: none). closeAll
// closes both.
func expiryBench(b *testing.B, now func() time.Time) (s *Service, db *storage.DB, put func(key string, i int, ttl *int64), closeAll func()) {
	db, err := storage.Open(b.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	s, err = New(db, Config{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	put = func(key string, i int, ttl *int64) {
		req := &PutRequest{Type: core.DefaultType, Bucket: "ttl", Key: key,
			Value: core.Sibling{Value: value, ContentType: "application/octet-stream",
				Indexes: []core.IndexEntry{{Field: "n_int", Value: strconv.Itoa(i % 100)}}},
			Options: PutOptions{DW: core.Quorum{N: 0}, TTL: ttl}}
		if _, err := s.Put(ctx, req); err != nil {
			b.Error(err)
		}
	}
	return s, db, put, func() { s.Close(); db.Close() }
}

// expiryLoad is runExpiryLoad's body.
func expiryLoad(b *testing.B, n, secs int, withTTL bool) expiryLoadResult {
	clk := &pausedClock{base: time.Unix(1_800_000_000, 0)}
	s, _, put, closeAll := expiryBench(b, clk.Now)
	defer closeAll()
	workers := 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				var ttl *int64
				if withTTL { // expiries spread over the load: 1..secs-1 seconds after its start
					t := int64(1 + i*(secs-1)/n)
					ttl = &t
				}
				put("k"+strconv.Itoa(i), i, ttl)
			}
		})
	}
	wg.Wait()
	clk.start()
	start, cpu0 := time.Now(), processCPU()
	deadline := start.Add(time.Duration(secs) * time.Second)
	var ops atomic.Int64
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 19))
			for time.Now().Before(deadline) {
				i := r.IntN(n)
				if r.IntN(2) == 0 {
					_, err := s.Get(ctx, core.DefaultType, "ttl", "k"+strconv.Itoa(i), GetOptions{})
					if err != nil && !IsNotFound(err) {
						b.Error(err)
						return
					}
				} else {
					put("w"+strconv.Itoa(i), i, nil)
				}
				ops.Add(1)
			}
		})
	}
	wg.Wait()
	res := expiryLoadResult{ops: float64(ops.Load()) / time.Since(start).Seconds()}
	if cpu := (processCPU() - cpu0).Seconds(); cpu > 0 {
		res.opsPerCPU = float64(ops.Load()) / cpu
	}
	if !withTTL {
		return res
	}
	reaped, _ := s.ExpiredReaped()
	res.reaped = float64(reaped)
	backlog := func() int {
		it := s.db.Iterate(storage.Key(storage.TagExpiry), storage.PrefixEnd(storage.ExpiryPrefix(clk.Now().UnixNano())))
		defer it.Release()
		left := 0
		for it.Next() {
			left++
		}
		return left
	}
	res.backlog = backlog()
	time.Sleep(600 * time.Millisecond) // one reaper tick
	res.backlogAfter = backlog()
	return res
}

// BenchmarkReapExpired measures the reaper alone: it preloads CAIRN_REAP_OBJECTS
// objects (default 100,000; 100 bytes, one index entry, a TTL of one second), moves
// the clock past their expiry and waits until the background reaper has emptied the
// expiry index, with no other load. It reports the process's CPU time per object
// removed (cpu-µs/object: the reaper, compactions and GC) and the wall time per object
// (which includes up to one reaper tick, 0.5 s, before the first pass). The preload
// is compacted first, so that its compactions are not counted. Run it with
// -benchtime=1x.
func BenchmarkReapExpired(b *testing.B) {
	n := benchEnvInt("CAIRN_REAP_OBJECTS", 100_000)
	for range b.N {
		b.StopTimer()
		clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		s, db, put, closeAll := expiryBench(b, clk.Now)
		ttl := int64(1)
		for i := range n {
			put("k"+strconv.Itoa(i), i, &ttl)
		}
		if err := db.CompactRange(nil, nil); err != nil { // the preload's compactions are not the reaper's
			b.Fatal(err)
		}
		clk.Add(2 * time.Second)
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		for { // the background reaper removes them, as in service
			time.Sleep(10 * time.Millisecond)
			it := s.db.IteratePrefix(storage.Key(storage.TagExpiry))
			left := it.Next()
			it.Release()
			if !left {
				break
			}
		}
		cpu, wall := processCPU()-cpu0, time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/object")
		b.ReportMetric(float64(wall.Microseconds())/float64(n), "µs/object")
		closeAll()
	}
}
