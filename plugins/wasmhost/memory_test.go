package wasmhost

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/hooks"
)

// vmRSS returns the process's resident set now, in bytes.
func vmRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status on this system")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestDiscardedMemoryReturns: 40 instances in turn fill their 16 MiB of memory and
// trap; each is discarded, and its memory goes back to the system at once, without
// waiting for a garbage collection. (With the memory on the Go heap the process kept
// hundreds of MiB until the collector ran.)
func TestDiscardedMemoryReturns(t *testing.T) {
	h := newHost(t, Config{PoolSize: 1})
	load(t, h, "m", "touch")
	start, peak := vmRSS(t), int64(0)
	for i := range 40 {
		if _, _, err := h.Call(context.Background(), "m", "touch", hooks.PointMap, nil); callKind(err) != hooks.Crashed {
			t.Fatalf("touch %d: %v", i, err)
		}
		peak = max(peak, vmRSS(t))
	}
	t.Logf("RSS %d MiB at the start, at most %d MiB during 40 calls of 16 MiB each", start>>20, peak>>20)
	if grew := peak - start; grew > 48<<20 {
		t.Errorf("RSS grew by %d MiB over 40 discarded instances of 16 MiB", grew>>20)
	}
	if s := h.Stats().Modules[0]; s.Created < 40 {
		t.Errorf("%d instances created", s.Created)
	}
}

// TestLinearMemory grows both kinds of memory: contents survive growth, a mapped one
// never moves, nothing grows past the maximum, and a memory freed during a call is
// released when the call ends.
func TestLinearMemory(t *testing.T) {
	const max = 4 << 16
	for _, mapped := range []bool{true, false} {
		in := &instance{}
		m := &linearMemory{in: in, max: max}
		if mapped {
			if m.buf, m.mapped = mapMemory(max); !m.mapped {
				t.Log("no mapped memory on this platform")
				continue
			}
		} else {
			m.buf = make([]byte, 0, 1<<16)
		}
		b := m.Reallocate(1 << 16)
		if len(b) != 1<<16 {
			t.Fatalf("mapped %v: %d bytes", mapped, len(b))
		}
		b[100] = 7
		for _, size := range []uint64{2 << 16, 3 << 16, max} {
			nb := m.Reallocate(size)
			if uint64(len(nb)) != size || nb[100] != 7 || nb[len(nb)-1] != 0 {
				t.Fatalf("mapped %v: grown to %d: %d bytes, byte 100 = %d", mapped, size, len(nb), nb[100])
			}
			if mapped && &nb[0] != &b[0] {
				t.Errorf("a mapped memory moved")
			}
		}
		if m.Reallocate(max+1) != nil {
			t.Errorf("mapped %v: grew past the maximum", mapped)
		}
		in.running = true
		m.Free()
		if m.buf == nil || in.freeMem != m {
			t.Fatalf("mapped %v: freed while a call runs", mapped)
		}
		if in.end(); m.buf != nil || in.freeMem != nil {
			t.Errorf("mapped %v: not released when the call ended", mapped)
		}
	}
}
