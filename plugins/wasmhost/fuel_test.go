package wasmhost

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// TestGuestsDoNotStallTheProcess saturates every CPU with guests that loop forever.
// Go can neither preempt a goroutine in guest code nor stop the world for a garbage
// collection until it returns to Go; the instrumented guest enters Go once per fuel
// slice, so collections still pause briefly, and the watchdog still gets a CPU and
// stops every call at its deadline. (Without the slices a pause lasted as long as the
// calls, here 500 ms, and the calls ran until their fuel ran out.)
func TestGuestsDoNotStallTheProcess(t *testing.T) {
	const timeout = 500 * time.Millisecond
	guests := 2 * runtime.GOMAXPROCS(0)
	h := newHost(t, Config{PoolSize: guests, PoolWait: time.Minute, Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: timeout}})
	load(t, h, "fx", "hooks")
	var wg sync.WaitGroup
	took := make([]time.Duration, guests)
	errs := make([]error, guests)
	for i := range guests {
		wg.Go(func() {
			start := time.Now()
			_, _, errs[i] = h.Call(context.Background(), "fx", "loop", hooks.PointMap, nil)
			took[i] = time.Since(start)
		})
	}
	time.Sleep(20 * time.Millisecond)
	var before debug.GCStats
	debug.ReadGCStats(&before)
	for range 10 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	var after debug.GCStats
	after.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&after)
	wg.Wait()
	if n := after.NumGC - before.NumGC; n < 10 {
		t.Fatalf("%d collections, want 10", n)
	}
	// Pause holds the most recent pauses, newest first.
	worst := time.Duration(0)
	for _, p := range after.Pause[:min(len(after.Pause), int(after.NumGC-before.NumGC))] {
		worst = max(worst, p)
	}
	t.Logf("%d guests on %d CPUs: worst GC pause %v; calls took %v", guests, runtime.GOMAXPROCS(0), worst, took)
	if worst > 50*time.Millisecond {
		t.Errorf("a GC pause of %v while guests ran", worst)
	}
	// The bound is loose because a -race run of every package shares these CPUs;
	// a watchdog starved by the guests misses it by far more (the calls run until
	// their fuel is gone).
	for i, err := range errs {
		if callKind(err) != hooks.TimedOut || took[i] < timeout || took[i] > 2*timeout {
			t.Errorf("call %d: %v after %v, want a timeout at about %v", i, err, took[i], timeout)
		}
	}
}

// TestFuelRefilledPerCall: each call gets its budget afresh. hooks.spin burns about
// 220,000 units of fuel; with 300 units per millisecond of a 1 s deadline it uses 73%
// of its budget, every time; with 200 it runs out.
func TestFuelRefilledPerCall(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		perMS int64
		ok    bool
	}{{300, true}, {200, false}} {
		h := newHost(t, Config{FuelPerMillisecond: tc.perMS, Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: time.Second}})
		load(t, h, "fx", "hooks")
		for i := range 20 {
			st, out, err := h.Call(ctx, "fx", "spin", hooks.PointMap, nil)
			switch {
			case tc.ok && (err != nil || st != 0 || string(out) != "v1"):
				t.Fatalf("%d units/ms, call %d: %d %q %v", tc.perMS, i, st, out, err)
			case !tc.ok && (callKind(err) != hooks.TimedOut || !strings.Contains(err.Error(), "no result within 1s (it ran out of its time budget)")):
				t.Fatalf("%d units/ms, call %d: %v, want it out of fuel", tc.perMS, i, err)
			}
		}
		if s := h.Stats().Modules[0]; tc.ok && s.Created != 1 {
			t.Errorf("%d instances for calls that all succeeded", s.Created)
		}
	}
}

// TestBudgetFollowsTheCaller: a caller's deadline shorter than the point's timeout is
// the call's budget; a context already ended fails the call before it starts, without
// discarding the instance.
func TestBudgetFollowsTheCaller(t *testing.T) {
	h := newHost(t, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: time.Minute}})
	load(t, h, "fx", "hooks")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := h.Call(ctx, "fx", "loop", hooks.PointMap, nil)
	if took := time.Since(start); callKind(err) != hooks.TimedOut || took > time.Second {
		t.Errorf("loop under a 60ms context: %v after %v", err, took)
	}
	ended, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, _, err := h.Call(ended, "fx", "accept", hooks.PointMap, nil); callKind(err) != hooks.Unavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	expired, cancel3 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel3()
	if _, _, err := h.Call(expired, "fx", "accept", hooks.PointMap, nil); callKind(err) != hooks.TimedOut {
		t.Errorf("expired context: %v", err)
	}
	if s := h.Stats().Modules[0]; s.Created != 2 {
		t.Errorf("%d instances created, want 2 (the loop's was discarded, not the others')", s.Created)
	}
}

// TestInitTimeout: an _initialize that never returns is stopped at Config.InitTimeout,
// and the module refused.
func TestInitTimeout(t *testing.T) {
	h := newHost(t, Config{InitTimeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := h.Load(context.Background(), "spin", fixture(t, "initspin"))
	var inv *hooks.InvalidModuleError
	if !errors.As(err, &inv) || !strings.Contains(inv.Reason, "creating an instance took longer than 50ms") {
		t.Errorf("Load: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Load took %v", took)
	}
}

// TestStackOverflowMessage: the stack limit's trap is reported as a stack overflow.
func TestStackOverflowMessage(t *testing.T) {
	h := newHost(t, Config{})
	if _, err := h.Load(context.Background(), "evil", maliciousWASM(t)); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Call(context.Background(), "evil", "deep", hooks.PointPrecommit, []byte(`{}`))
	if callKind(err) != hooks.Crashed || !strings.Contains(err.Error(), "stack overflow: over the limit of 4194304 bytes of call stack") {
		t.Errorf("deep: %v", err)
	}
}
