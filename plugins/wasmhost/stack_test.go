package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/wasmhost/instrument"
)

// maliciousWASM returns wasm-examples/c/malicious/malicious.wasm, whose "deep" recurses
// without end.
func maliciousWASM(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm-examples", "c", "malicious", "malicious.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recursionWASM returns the instrument package's hook fixture whose "recurse" goes 16
// frames deep per input byte.
func recursionWASM(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("instrument", "testdata", "hostrecursion.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeepRecursionContained runs the malicious module's unbounded recursion 8 times at
// once under the default stack limit: every call crashes, and the host allocates a few
// MiB for them all. Without the limit each call allocates about 160 MB of stack (wazero
// doubles it up to its 50 MB ceiling).
func TestDeepRecursionContained(t *testing.T) {
	h := newHost(t, Config{PoolWait: time.Minute,
		Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute}})
	if _, err := h.Load(context.Background(), "evil", maliciousWASM(t)); err != nil {
		t.Fatal(err)
	}
	const calls = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// peak samples the heap while the calls run.
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, calls)
	for i := range calls {
		wg.Go(func() {
			_, _, errs[i] = h.Call(context.Background(), "evil", "deep", hooks.PointPrecommit, []byte(`{}`))
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	runtime.ReadMemStats(&after)
	for i, err := range errs {
		if callKind(err) != hooks.Crashed {
			t.Errorf("call %d: %v, want a crash", i, err)
		}
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d concurrent deep calls: %.1f MiB allocated, heap peak %.1f MiB above the start",
		calls, float64(alloc)/(1<<20), float64(int64(peak)-int64(before.HeapAlloc))/(1<<20))
	if alloc > 64<<20 {
		t.Errorf("%d deep calls allocated %d bytes, want under 64 MiB", calls, alloc)
	}
	// The module still serves well-behaved calls.
	if st, _, err := h.Call(context.Background(), "evil", "ok", hooks.PointPrecommit, []byte(`{}`)); err != nil || st != 0 {
		t.Errorf("ok after the attack: %d, %v", st, err)
	}
}

// TestStackLimitSentinel checks what a host can tell after a trap: the stack counter
// the rewrite exports reads instrument.Exceeded after the stack limit, not after other
// traps, and zero after a normal call.
func TestStackLimitSentinel(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Config{})
	for _, tc := range []struct {
		name, fun string
		wasm      []byte
		trap      bool
		want      string // "exceeded", "zero" or "live" (the trapping frame's cost)
	}{
		{"limit", "deep", maliciousWASM(t), true, "exceeded"},
		{"normal call", "ok", maliciousWASM(t), false, "zero"},
		{"other trap", "trap", fixture(t, "hooks"), true, "live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := h.acquireCompiled(ctx, tc.wasm)
			if err != nil {
				t.Fatal(err)
			}
			defer h.releaseCompiled(c)
			in, err := h.newInstance(ctx, c, &moduleStats{}, "m", false)
			if err != nil {
				t.Fatal(err)
			}
			defer in.close()
			_, _, err = h.run(ctx, in, hooks.PointPrecommit, tc.fun, []byte(`{}`))
			if (err != nil) != tc.trap {
				t.Fatalf("run: %v, want a trap: %v", err, tc.trap)
			}
			g := in.mod.ExportedGlobal(instrument.DefaultExportName)
			if g == nil {
				t.Fatalf("the instance does not export %q", instrument.DefaultExportName)
			}
			got := uint32(g.Get())
			if ok := map[string]bool{
				"exceeded": got == instrument.Exceeded,
				"zero":     got == 0,
				"live":     got != 0 && got != instrument.Exceeded,
			}[tc.want]; !ok {
				t.Errorf("counter %#x, want %s", got, tc.want)
			}
		})
	}
}

// TestStackBytes checks Config.StackBytes: the default, a small limit, and none.
func TestStackBytes(t *testing.T) {
	ctx := context.Background()
	wasm := recursionWASM(t)
	for _, tc := range []struct {
		name       string
		stackBytes int
		inputLen   int // 16 frames per byte
		crash      bool
	}{
		{"default, 1600 frames", 0, 100, false},
		{"default, 64000 frames", 0, 4000, true},
		{"64 KiB, 160 frames", 64 << 10, 10, false},
		{"64 KiB, 1600 frames", 64 << 10, 100, true},
		{"disabled, 64000 frames", -1, 4000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, Config{StackBytes: tc.stackBytes})
			if _, err := h.Load(ctx, "r", wasm); err != nil {
				t.Fatal(err)
			}
			st, _, err := h.Call(ctx, "r", "recurse", hooks.PointMap, bytes.Repeat([]byte{'x'}, tc.inputLen))
			switch {
			case tc.crash && callKind(err) != hooks.Crashed:
				t.Errorf("got %d, %v; want a crash", st, err)
			case !tc.crash && (err != nil || st != 0):
				t.Errorf("got %d, %v; want status 0", st, err)
			}
		})
	}
	if _, err := New(ctx, Config{StackBytes: math.MaxInt32 + 1}); err == nil {
		t.Error("New accepted a stack limit over MaxInt32")
	}
}

// TestStackRewriteKeepsIdentity: a module is known by the bytes it was given, not by
// the rewritten ones, and identical bytes are still compiled once.
func TestStackRewriteKeepsIdentity(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Config{})
	wasm := recursionWASM(t)
	sum := sha256.Sum256(wasm)
	for _, name := range []string{"a", "b"} {
		info, err := h.Load(ctx, name, wasm)
		if err != nil {
			t.Fatal(err)
		}
		if info.SHA256 != hex.EncodeToString(sum[:]) || info.Size != len(wasm) {
			t.Errorf("%s: sha256 %s size %d, want those of the given bytes", name, info.SHA256, info.Size)
		}
	}
	h.compMu.Lock()
	n := len(h.compiled)
	h.compMu.Unlock()
	if n != 1 {
		t.Errorf("%d compiled modules for one set of bytes", n)
	}
}

// TestStackRewriteRefusals: a module that exports a name the rewrite adds (the stack
// counter, the fuel, the floor), for example one rewritten already, is invalid.
func TestStackRewriteRefusals(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Config{})
	for _, tc := range []struct {
		o    instrument.Options
		name string
	}{
		{instrument.Options{MaxBytes: 1 << 20, ExportName: instrument.DefaultExportName}, instrument.DefaultExportName},
		{instrument.Options{Fuel: true}, instrument.FuelExport},
	} {
		twice, err := instrument.Rewrite(recursionWASM(t), tc.o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Load(ctx, "m", twice)
		var inv *hooks.InvalidModuleError
		if !errors.As(err, &inv) || !strings.Contains(inv.Reason, `it exports "`+tc.name+`", a name the host reserves for `) {
			t.Errorf("loading a module that already exports %s: %v", tc.name, err)
		}
	}
}

// BenchmarkPrecommitNoopUnlimitedStack is BenchmarkPrecommitNoop without the stack
// rewrite, to show its cost per call.
func BenchmarkPrecommitNoopUnlimitedStack(b *testing.B) {
	pc, obj := benchPrecommit(b, Config{StackBytes: -1, Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute}})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil || v.Reject || v.Replace != nil {
			b.Fatal(v, err)
		}
	}
}
