package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock for driving windows in tests.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestBucketMath(t *testing.T) {
	prev := -1
	check := func(v int64) {
		t.Helper()
		i := bucketOf(v)
		if i < prev {
			t.Fatalf("bucketOf(%d) = %d, below bucket %d of a smaller value", v, i, prev)
		}
		prev = i
		lo, w := bucketRange(i)
		if v < lo || v >= lo+w {
			t.Fatalf("bucketOf(%d) = %d with range [%d,%d)", v, i, lo, lo+w)
		}
		if rep := bucketValue(i); math.Abs(float64(rep-v)) > RelativeError*float64(v) {
			t.Fatalf("value %d reported as %d: error above %.4f", v, rep, RelativeError)
		}
	}
	for v := int64(0); v < 100000; v++ {
		check(v)
	}
	for v := int64(100000); v < 1<<maxExp; v = v*17/16 + 1 {
		check(v)
	}
	check(1<<maxExp - 1)
	if got := bucketOf(1 << maxExp); got != numBuckets-1 {
		t.Fatalf("bucketOf(2^%d) = %d, want the last bucket %d", maxExp, got, numBuckets-1)
	}
	if got := bucketOf(math.MaxInt64); got != numBuckets-1 {
		t.Fatalf("bucketOf(MaxInt64) = %d", got)
	}
	if got := bucketOf(-5); got != 0 {
		t.Fatalf("bucketOf(-5) = %d", got)
	}
	// 1 µs .. 1 h must be inside the exact range.
	if bucketOf(int64(time.Hour/time.Microsecond)) == numBuckets-1 {
		t.Fatal("one hour in µs falls in the overflow bucket")
	}
}

// nearestRank returns the exact nearest-rank q-quantile of sorted.
func nearestRank(sorted []int64, q float64) int64 {
	r := int(math.Ceil(q * float64(len(sorted))))
	if r < 1 {
		r = 1
	}
	return sorted[r-1]
}

func TestWindowPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int, f func(i int) int64) []int64 {
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = f(i)
		}
		return vs
	}
	tests := []struct {
		name string
		vals []int64
	}{
		{"single", []int64{1234}},
		{"zero", []int64{0, 0, 0}},
		{"small exact", gen(100, func(i int) int64 { return int64(i % 8) })},
		{"constant", gen(1000, func(int) int64 { return 777 })},
		{"uniform 1..1000", gen(1000, func(i int) int64 { return int64(i + 1) })},
		{"uniform random µs", gen(5000, func(int) int64 { return rng.Int64N(1_000_000) })},
		{"log-normal latency", gen(20000, func(int) int64 {
			return int64(math.Exp(rng.NormFloat64()*1.5 + 7))
		})},
		{"long tail", gen(1000, func(i int) int64 {
			if i%100 == 0 {
				return 3_600_000_000 // one hour in µs
			}
			return 500 + int64(i)
		})},
		{"two values", []int64{10, 1_000_000}},
		{"negative as zero", []int64{-3, 5, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			w := NewWindow(clk.Now)
			var sum int64
			exact := make([]int64, len(tt.vals))
			for i, v := range tt.vals {
				w.Observe(v)
				exact[i] = max(v, 0)
				sum += exact[i]
			}
			slices.Sort(exact)
			s := w.Snapshot()
			if s.Count != int64(len(exact)) || s.Sum != sum {
				t.Fatalf("count, sum = %d, %d; want %d, %d", s.Count, s.Sum, len(exact), sum)
			}
			if want := float64(sum) / float64(len(exact)); math.Abs(s.Mean-want) > 1e-9*want {
				t.Errorf("mean = %v, want %v", s.Mean, want)
			}
			if want := exact[len(exact)-1]; s.Max != want {
				t.Errorf("max = %d, want %d", s.Max, want)
			}
			for _, p := range []struct {
				name string
				q    float64
				got  int64
			}{{"median", .5, s.Median}, {"p95", .95, s.P95}, {"p99", .99, s.P99}} {
				want := nearestRank(exact, p.q)
				if math.Abs(float64(p.got-want)) > RelativeError*float64(want) {
					t.Errorf("%s = %d, want %d within %.2f%%", p.name, p.got, want, 100*RelativeError)
				}
			}
		})
	}
}

func TestWindowEmpty(t *testing.T) {
	var w Window
	if s := w.Snapshot(); s != (Summary{}) {
		t.Fatalf("empty snapshot = %+v", s)
	}
}

func TestWindowRotation(t *testing.T) {
	clk := newFakeClock()
	w := NewWindow(clk.Now)
	w.Observe(100) // second 0
	clk.Advance(30 * time.Second)
	w.Observe(200) // second 30
	w.Observe(300)

	steps := []struct {
		advance   time.Duration
		wantCount int64
		wantMax   int64
	}{
		{0, 3, 300},
		{29 * time.Second, 3, 300}, // second 59: all still inside
		{time.Second, 2, 300},      // second 60: the sample of second 0 expired
		{29 * time.Second, 2, 300}, // second 89
		{time.Second, 0, 0},        // second 90: everything expired
		{10 * time.Minute, 0, 0},   // long idle
		{-10 * time.Minute, 0, 0},  // clock stepped back: old slots stay expired
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		s := w.Snapshot()
		if s.Count != st.wantCount || s.Max != st.wantMax {
			t.Fatalf("step %d: count %d max %d, want %d %d", i, s.Count, s.Max, st.wantCount, st.wantMax)
		}
	}

	// A slot reused 60 s later starts from zero.
	clk2 := newFakeClock()
	w2 := NewWindow(clk2.Now)
	for range 5 {
		w2.Observe(1000)
	}
	clk2.Advance(60 * time.Second)
	w2.Observe(7)
	if s := w2.Snapshot(); s.Count != 1 || s.Max != 7 || s.Sum != 7 {
		t.Fatalf("reused slot: %+v", s)
	}

	// A sample older than the second a slot holds is dropped, not mixed in.
	clk2.Advance(-60 * time.Second)
	w2.Observe(5)
	clk2.Advance(60 * time.Second)
	if s := w2.Snapshot(); s.Count != 1 {
		t.Fatalf("stale sample counted: %+v", s)
	}
}

func TestWindowSlidingSum(t *testing.T) {
	clk := newFakeClock()
	w := NewWindow(clk.Now)
	// One sample per second for three minutes: the window always holds the last 60.
	for i := range 180 {
		w.Observe(int64(i))
		s := w.Snapshot()
		want := int64(min(i+1, WindowSeconds))
		if s.Count != want || s.Max != int64(i) {
			t.Fatalf("second %d: count %d max %d, want %d %d", i, s.Count, s.Max, want, i)
		}
		clk.Advance(time.Second)
	}
}

func TestWindowHammer(t *testing.T) {
	const goroutines, perG = 32, 2000
	clk := newFakeClock()
	w := NewWindow(clk.Now)
	var wg sync.WaitGroup
	var want atomic.Int64
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				v := int64(g*perG + i)
				w.Observe(v)
				want.Add(v)
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if s := w.Snapshot(); s.Count > goroutines*perG {
					t.Errorf("snapshot count %d above the samples taken", s.Count)
					return
				}
			}
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	s := w.Snapshot()
	if s.Count != goroutines*perG || s.Sum != want.Load() || s.Max != goroutines*perG-1 {
		t.Fatalf("after hammer: %+v, want count %d sum %d", s, goroutines*perG, want.Load())
	}
}

// TestWindowHammerRotating runs observers, readers and a ticking clock together; it is
// for the race detector and checks only invariants that hold under concurrency.
func TestWindowHammerRotating(t *testing.T) {
	clk := newFakeClock()
	w := NewWindow(clk.Now)
	c := NewCounter(clk.Now)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				w.Observe(i % 5000)
				c.Inc()
			}
		})
	}
	wg.Go(func() {
		for range 500 {
			clk.Advance(250 * time.Millisecond)
			s := w.Snapshot()
			if s.Count > 0 && (s.Median > s.P95 || s.P95 > s.P99 || s.P99 > s.Max) {
				t.Errorf("percentiles out of order: %+v", s)
			}
			if c.LastMinute() > c.Total() {
				t.Errorf("last minute %d above total %d", c.LastMinute(), c.Total())
			}
		}
		close(stop)
	})
	wg.Wait()
}

func TestCounter(t *testing.T) {
	clk := newFakeClock()
	c := NewCounter(clk.Now)
	c.Inc()
	c.Add(4)
	clk.Advance(59 * time.Second)
	c.Inc()
	if c.Total() != 6 || c.LastMinute() != 6 {
		t.Fatalf("total %d last minute %d, want 6 6", c.Total(), c.LastMinute())
	}
	clk.Advance(time.Second)
	if c.Total() != 6 || c.LastMinute() != 1 {
		t.Fatalf("after 60 s: total %d last minute %d, want 6 1", c.Total(), c.LastMinute())
	}
	clk.Advance(time.Hour)
	if c.Total() != 6 || c.LastMinute() != 0 {
		t.Fatalf("after an hour: total %d last minute %d, want 6 0", c.Total(), c.LastMinute())
	}
	var zero Counter // real clock
	zero.Inc()
	if zero.LastMinute() != 1 || zero.Total() != 1 {
		t.Fatalf("zero Counter: %d %d", zero.LastMinute(), zero.Total())
	}
}

func TestRealClock(t *testing.T) {
	check := func() {
		t.Helper()
		got := clock{}.sec()
		now := time.Now()
		// The coarse clock may lag by the timer's latency, never more.
		if got > now.Unix() || got < now.Add(-250*time.Millisecond).Unix() {
			t.Fatalf("clock second %d at %v", got, now)
		}
	}
	for range 8 {
		check()
		time.Sleep(300 * time.Millisecond)
	}
	// After an idle second the timer stops; the next read restarts it.
	time.Sleep(2600 * time.Millisecond)
	if coarse.cur.Load() != 0 {
		t.Error("coarse clock still running after idling")
	}
	check()
	if coarse.cur.Load() == 0 {
		t.Error("coarse clock not restarted")
	}
}

func TestObserveAllocs(t *testing.T) {
	var w Window
	var c Counter
	if n := testing.AllocsPerRun(1000, func() { w.Observe(12345); c.Inc() }); n != 0 {
		t.Fatalf("Observe+Inc allocate %v times", n)
	}
}

func BenchmarkWindowObserve(b *testing.B) {
	var w Window
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.Observe(int64(i & 0xffff))
	}
}

func BenchmarkWindowObserveParallel(b *testing.B) {
	var w Window
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for i := int64(0); pb.Next(); i++ {
			w.Observe(i & 0xffff)
		}
	})
}

func BenchmarkCounterInc(b *testing.B) {
	var c Counter
	b.ReportAllocs()
	for b.Loop() {
		c.Inc()
	}
}

func BenchmarkWindowSnapshot(b *testing.B) {
	var w Window
	for i := range 100000 {
		w.Observe(int64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Snapshot()
	}
}
