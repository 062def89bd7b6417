package instrument

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// TestCalls runs functions of the fixtures rewritten, and, unless they must trap, the
// originals too: the results must be the same, and the stack counter back at zero.
func TestCalls(t *testing.T) {
	const big = DefaultStackBytesForTests
	for _, tc := range []struct {
		fixture, fn string
		args        []uint64
		maxBytes    int
		want        []uint64 // nil: whatever the original returns
		trap        bool     // the stack limit must stop it
	}{
		{"control", "leaf", nil, big, []uint64{1}, false},
		{"control", "nested", nil, big, []uint64{2}, false},
		{"control", "br_outer", []uint64{1}, big, []uint64{42}, false},
		{"control", "br_outer", []uint64{0}, big, []uint64{7}, false},
		{"control", "br_if_outer", []uint64{1}, big, []uint64{10}, false},
		{"control", "br_if_outer", []uint64{0}, big, []uint64{20}, false},
		{"control", "br_if_nested", []uint64{1}, big, []uint64{11}, false},
		{"control", "br_if_nested", []uint64{0}, big, []uint64{21}, false},
		{"control", "br_if_nested", []uint64{math.MaxUint32}, big, []uint64{21}, false},
		{"control", "br_table_mixed", []uint64{0}, big, []uint64{102}, false},
		{"control", "br_table_mixed", []uint64{1}, big, []uint64{103}, false},
		{"control", "br_table_mixed", []uint64{2}, big, []uint64{100}, false},
		{"control", "br_table_mixed", []uint64{3}, big, []uint64{103}, false},
		{"control", "br_table_mixed", []uint64{1000}, big, []uint64{103}, false},
		{"control", "br_table_outer", []uint64{0}, big, []uint64{5}, false},
		{"control", "br_table_outer", []uint64{7}, big, []uint64{5}, false},
		{"control", "br_table_inner", []uint64{0}, big, []uint64{2}, false},
		{"control", "br_table_inner", []uint64{1}, big, []uint64{1}, false},
		{"control", "br_table_inner", []uint64{9}, big, []uint64{1}, false},
		{"control", "return_loop", []uint64{0}, big, []uint64{0}, false},
		{"control", "return_loop", []uint64{21}, big, []uint64{42}, false},
		{"control", "if_else", []uint64{1}, big, []uint64{1}, false},
		{"control", "if_else", []uint64{0}, big, []uint64{2}, false},
		{"control", "multi", []uint64{3}, big, []uint64{3, 9}, false},
		{"control", "multi", []uint64{0}, big, []uint64{0, 0}, false},
		{"control", "multi_call", []uint64{3}, big, []uint64{12}, false},
		{"control", "many_locals", []uint64{1000}, big, []uint64{500500}, false},
		{"control", "many_locals", []uint64{1000}, 64 << 10, nil, true},
		{"control", "probe_depth", []uint64{1000}, big, []uint64{}, false},
		{"recursion", "bounded", []uint64{1000}, big, []uint64{1000}, false},
		{"recursion", "bounded", []uint64{0}, 1 << 10, []uint64{0}, false},
		{"recursion", "bounded", []uint64{100_000}, big, nil, true},
		{"recursion", "ping", []uint64{1000}, big, []uint64{1000}, false},
		{"recursion", "ping", []uint64{100_000}, big, nil, true},
		{"recursion", "deep", []uint64{0}, big, nil, true},
		{"recursion", "deep", []uint64{0}, 1, nil, true},
		{"tailcall", "sum", []uint64{1_000_000, 0}, 4 << 10, []uint64{500000500000}, false},
		{"tailcall", "sum_indirect", []uint64{1_000_000, 0}, 4 << 10, []uint64{500000500000}, false},
		{"tailcall", "sum_plain", []uint64{1000, 0}, big, []uint64{500500}, false},
		{"tailcall", "sum_plain", []uint64{1_000_000, 0}, 4 << 10, nil, true},
		{"features", "simd", []uint64{3}, big, nil, false},
		{"features", "refs", []uint64{3}, big, nil, false},
		{"features", "refs", []uint64{0}, big, nil, false},
		{"features", "bulk", []uint64{7}, big, nil, false},
		{"features", "numeric", []uint64{0xff80}, big, nil, false},
		{"threads", "atomics", []uint64{9}, big, nil, false},
	} {
		name := tc.fixture + "/" + tc.fn
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, false)
			wasm := fixture(t, tc.fixture)
			mod := e.instantiate(t, rewrite(t, wasm, tc.maxBytes))
			got, err := mod.ExportedFunction(tc.fn).Call(ctx, tc.args...)
			if tc.trap {
				if err == nil || !strings.Contains(err.Error(), "unreachable") {
					t.Fatalf("got %v, %v; want the unreachable trap of the stack limit", got, err)
				}
				if c := counter(t, mod); c != Exceeded {
					t.Errorf("counter %#x after the trap, want Exceeded", c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := counter(t, mod); c != 0 {
				t.Errorf("counter %d after the call, want 0", c)
			}
			want := tc.want
			if want == nil {
				orig := e.instantiate(t, wasm)
				if want, err = orig.ExportedFunction(tc.fn).Call(ctx, tc.args...); err != nil {
					t.Fatalf("original: %v", err)
				}
			}
			if len(got)+len(want) > 0 && !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// DefaultStackBytesForTests is the host's default limit (wasmhost.DefaultStackBytes,
// which this package cannot import).
const DefaultStackBytesForTests = 4 << 20

// TestProbeSeesFrameCosts reads the counter from a host function while frames are
// live: it holds exactly the costs of the frames on the stack.
func TestProbeSeesFrameCosts(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, false)
	wasm := fixture(t, "control")
	mod := e.instantiate(t, rewrite(t, wasm, DefaultStackBytesForTests))
	costs := frameCosts(t, wasm)
	leaf, nested, deep := costs[funcIndex(t, mod, "leaf")], costs[funcIndex(t, mod, "nested")], costs[funcIndex(t, mod, "probe_depth")]
	for _, tc := range []struct {
		fn   string
		args []uint64
		want int64
	}{
		{"leaf", nil, leaf},
		{"nested", nil, nested + leaf},
		{"probe_depth", []uint64{0}, deep},
		{"probe_depth", []uint64{99}, 100 * deep},
	} {
		if _, err := mod.ExportedFunction(tc.fn).Call(ctx, tc.args...); err != nil {
			t.Fatal(err)
		}
		if p := e.takeProbes(); len(p) != 1 || int64(p[0]) != tc.want {
			t.Errorf("%s%v: probe read %v, want [%d]", tc.fn, tc.args, p, tc.want)
		}
	}
	if leaf < frameOverhead || deep < frameOverhead {
		t.Errorf("costs %d, %d below the fixed overhead", leaf, deep)
	}
}

// TestLimitIsExact checks the entry test at its boundary: bounded(n) takes n+1 frames
// of the same cost, so it works while they fit and traps one frame later.
func TestLimitIsExact(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, false)
	wasm := fixture(t, "recursion")
	const maxBytes = 100_000
	mod := e.instantiate(t, rewrite(t, wasm, maxBytes))
	cost := frameCosts(t, wasm)[funcIndex(t, mod, "bounded")]
	frames := uint64(maxBytes / cost)
	if _, err := mod.ExportedFunction("bounded").Call(ctx, frames-1); err != nil {
		t.Fatalf("%d frames of %d bytes within %d: %v", frames, cost, maxBytes, err)
	}
	if counter(t, mod) != 0 {
		t.Fatal("counter not back at zero")
	}
	if _, err := mod.ExportedFunction("bounded").Call(ctx, frames); err == nil {
		t.Fatalf("%d frames of %d bytes over %d did not trap", frames+1, cost, maxBytes)
	}
}

// TestDeepRecursionStaysSmall is the reason for the package: recursion without end
// traps at the limit, long before wazero's 50 MB ceiling, and allocates accordingly.
// Unrewritten, each of these calls allocates about 160 MB.
func TestDeepRecursionStaysSmall(t *testing.T) {
	ctx := context.Background()
	malicious := filepath.Join("..", "..", "..", "wasm-examples", "c", "malicious", "malicious.wasm")
	for _, tc := range []struct {
		name, file, fn string
		args           []uint64
	}{
		{"wat", filepath.Join("testdata", "recursion.wasm"), "deep", []uint64{0}},
		{"c", malicious, "deep", []uint64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := readFile(t, tc.file)
			e := newEnv(t, false)
			e.hostCairn(t, false)
			mod := e.instantiate(t, rewrite(t, wasm, 1<<20))
			f := mod.ExportedFunction(tc.fn)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := f.Call(ctx, tc.args...)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("err %v, want the unreachable trap", err)
			}
			if c := counter(t, mod); c != Exceeded {
				t.Errorf("counter %#x, want Exceeded", c)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("1 MiB limit: the trapping call allocated %.1f MiB", float64(alloc)/(1<<20))
			if alloc > 4<<20 {
				t.Errorf("the trapping call allocated %d bytes; with a 1 MiB limit the stack should stay below 4 MiB", alloc)
			}
		})
	}
}

// TestFrameShapesStaySmall recurses without end through frames of many shapes (many
// locals, parameters on the stack, values live across calls, v128, many results) under
// a 1 MiB limit: for each, the real stack at the trap must stay near the limit, which
// it cannot if the model underestimates a shape badly.
func TestFrameShapesStaySmall(t *testing.T) {
	ctx := context.Background()
	wasm := fixture(t, "frames")
	for _, fn := range []string{"a", "b", "c", "d", "e", "f", "g", "hh", "i", "j"} {
		t.Run(fn, func(t *testing.T) {
			e := newEnv(t, false)
			mod := e.instantiate(t, rewrite(t, wasm, 1<<20))
			f := mod.ExportedFunction(fn)
			args := make([]uint64, paramSlots(f.Definition()))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := f.Call(ctx, args...)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("err %v, want the unreachable trap", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("the trapping call allocated %d bytes; with a 1 MiB limit the stack should stay below 4 MiB", alloc)
			}
		})
	}
}

// paramSlots is the number of uint64 a call of d takes (two per v128).
func paramSlots(d api.FunctionDefinition) int {
	n := 0
	for _, p := range d.ParamTypes() {
		n++
		if p == 0x7b { // v128, which package api does not name

			n++
		}
	}
	return n
}

// hostCairn provides the "cairn" imports of the example modules, doing nothing, and
// WASI: wazero's when fullWASI is set, else only proc_exit.
func (e *env) hostCairn(t testing.TB, fullWASI bool) {
	t.Helper()
	ctx := context.Background()
	nop := api.GoModuleFunc(func(context.Context, api.Module, []uint64) {})
	i32 := api.ValueTypeI32
	if _, err := e.rt.NewHostModuleBuilder("cairn").
		NewFunctionBuilder().WithGoModuleFunction(nop, []api.ValueType{i32, i32}, nil).Export("output").
		NewFunctionBuilder().WithGoModuleFunction(nop, []api.ValueType{i32, i32, i32}, nil).Export("log").
		Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if fullWASI {
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := e.rt.NewHostModuleBuilder("wasi_snapshot_preview1").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) {
		panic(sys.NewExitError(uint32(s[0])))
	}), []api.ValueType{i32}, nil).Export("proc_exit").
		Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRealStackWithinEstimate is the calibration behind the frame model: each shape of
// frames.wasm recurses until wazero's own ceiling (the rewritten module with no
// effective limit), and the counter then holds the estimated bytes of all frames. The
// real stack at that point is wazero's last stack size, 10240 bytes doubled 13 times.
// It allocates about 170 MB per shape, so it runs only with CAIRN_STACK_CALIBRATE=1.
func TestRealStackWithinEstimate(t *testing.T) {
	if !calibrate() {
		t.Skip("set CAIRN_STACK_CALIBRATE=1 to measure the frame model against wazero (about 2 GB of allocation)")
	}
	ctx := context.Background()
	const realStack = 10240 << 13
	for _, tc := range []struct {
		file, fn string
		fuel     bool
	}{
		{"frames", "a", false}, {"frames", "b", false}, {"frames", "c", false}, {"frames", "d", false},
		{"frames", "e", false}, {"frames", "f", false}, {"frames", "g", false}, {"frames", "hh", false},
		{"frames", "i", false}, {"frames", "j", false}, {"recursion", "deep", false}, {"recursion", "ping", false},
		// The fuel code adds values the model does not count (they live for a few
		// instructions and are never spilled across a call) and a local it does.
		{"frames", "a", true}, {"frames", "b", true}, {"frames", "c", true}, {"frames", "d", true},
		{"frames", "e", true}, {"frames", "f", true}, {"frames", "g", true}, {"frames", "hh", true},
		{"frames", "i", true}, {"frames", "j", true}, {"recursion", "deep", true}, {"recursion", "ping", true},
	} {
		e := newEnv(t, false)
		out, err := Rewrite(fixture(t, tc.file), Options{MaxBytes: math.MaxInt32, ExportName: testExport, Fuel: tc.fuel, InitialFuel: math.MaxInt64 / 4})
		if err != nil {
			t.Fatal(err)
		}
		mod := e.instantiate(t, out)
		f := mod.ExportedFunction(tc.fn)
		args := make([]uint64, paramSlots(f.Definition()))
		if tc.fn == "ping" {
			args[0] = math.MaxInt32
		}
		_, err = f.Call(ctx, args...)
		if err == nil || !strings.Contains(err.Error(), "stack overflow") {
			t.Fatalf("%s/%s: %v, want wazero's stack overflow", tc.file, tc.fn, err)
		}
		ratio := float64(counter(t, mod)) / realStack
		t.Logf("%s/%s (fuel %v): estimate / real stack = %.2f", tc.file, tc.fn, tc.fuel, ratio)
		if ratio < 1 {
			t.Errorf("%s/%s (fuel %v): the model underestimates the stack (ratio %.2f)", tc.file, tc.fn, tc.fuel, ratio)
		}
	}
}

// TestRewriteKeepsTheRest checks the shape of the output: the sections that need no
// change are byte for byte the same and in the same order, custom sections included;
// the added globals are the last globals (and, with fuel, the slow path the last type
// and function); the sections are created where the binary format wants them when the
// input has none.
func TestRewriteKeepsTheRest(t *testing.T) {
	for _, name := range []string{"control", "recursion", "tailcall", "features", "threads", "frames", "fuel"} {
		for _, fuel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fuel=%v", name, fuel), func(t *testing.T) {
				in := withCustom(fixture(t, name))
				out, err := Rewrite(in, Options{MaxBytes: DefaultStackBytesForTests, ExportName: testExport, Fuel: fuel})
				if err != nil {
					t.Fatal(err)
				}
				a, b := mustParse(t, in), mustParse(t, out)
				changed := map[byte]bool{secGlobal: true, secExport: true, secCode: true}
				added := 1
				if fuel {
					changed[secType], changed[secFunction] = true, true
					added = 3
					if len(b.types) != len(a.types)+1 || len(b.funcs) != len(a.funcs)+1 ||
						!b.exports[FuelExport] || !b.exports[FloorExport] {
						t.Errorf("types %d -> %d, functions %d -> %d, exports %v", len(a.types), len(b.types), len(a.funcs), len(b.funcs), b.exports)
					}
				}
				if b.globals != a.globals+added {
					t.Errorf("%d globals, want %d", b.globals, a.globals+added)
				}
				if !b.exports[testExport] {
					t.Errorf("the counter is not exported")
				}
				var ids []byte
				j := 0
				for _, s := range b.sections {
					ids = append(ids, s.id)
					if changed[s.id] {
						if j < len(a.sections) && a.sections[j].id == s.id {
							j++
						}
						continue
					}
					if j >= len(a.sections) || a.sections[j].id != s.id || string(a.sections[j].content) != string(s.content) {
						t.Fatalf("section %d (id %d) is not the input's section %d", len(ids)-1, s.id, j)
					}
					j++
				}
				if j != len(a.sections) {
					t.Errorf("%d of %d input sections found in the output", j, len(a.sections))
				}
				if ids[len(ids)-1] != secCustom {
					t.Errorf("the trailing custom section moved: ids %v", ids)
				}
			})
		}
	}
}

// TestRewriteCreatesSections meters modules that lack the sections the rewrite adds
// to: the output has them in order, and compiles.
func TestRewriteCreatesSections(t *testing.T) {
	header := []byte("\x00asm\x01\x00\x00\x00")
	e := newEnv(t, true)
	for _, tc := range []struct {
		name string
		wasm []byte
	}{
		{"empty", slices.Clone(header)},
		{"memory only", appendSection(slices.Clone(header), secMemory, []byte{1, 0, 1})},
		{"custom only", withCustom(slices.Clone(header))},
		{"data count", appendSection(appendSection(slices.Clone(header), secMemory, []byte{1, 0, 1}), secDataCount, []byte{0})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := meter(t, tc.wasm, 100)
			m := mustParse(t, out)
			if len(m.types) != 1 || len(m.funcs) != 1 || m.globals != 3 {
				t.Errorf("%d types, %d functions, %d globals", len(m.types), len(m.funcs), m.globals)
			}
			cm, err := e.rt.CompileModule(context.Background(), out)
			if err != nil {
				t.Fatalf("the output does not compile: %v", err)
			}
			_ = cm.Close(context.Background())
		})
	}
}

// withCustom appends a custom section to wasm.
func withCustom(wasm []byte) []byte {
	content := appendName(nil, "cairn.test")
	content = append(content, "payload"...)
	return appendSection(slices.Clone(wasm), secCustom, content)
}

// TestExistingModulesStillCompile rewrites every committed module of the repository
// (the wasmhost fixtures and the examples, Go and Rust included) and validates the
// result with wazero's interpreter, which validates as the compiler does, faster.
// (The wasm-examples tests run the rewritten examples through the host.)
func TestExistingModulesStillCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("validates the Go examples (seconds each)")
	}
	var files []string
	for _, g := range []string{"../testdata/*.wasm", "../../../wasm-examples/*/*/*.wasm"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d modules found", len(files))
	}
	e := newEnv(t, true)
	for _, f := range files {
		wasm := readFile(t, f)
		for _, o := range []Options{{MaxBytes: DefaultStackBytesForTests}, {MaxBytes: DefaultStackBytesForTests, Fuel: true}} {
			out, err := Rewrite(wasm, o)
			if err != nil {
				t.Errorf("%s (%+v): %v", f, o, err)
				continue
			}
			cm, err := e.rt.CompileModule(context.Background(), out)
			if err != nil {
				t.Errorf("%s (%+v): the rewritten module does not compile: %v", f, o, err)
				continue
			}
			_ = cm.Close(context.Background())
		}
	}
}

// TestFixturesUpToDate rebuilds every WAT fixture with wat2wasm, with the flags its
// "Build:" line names, and compares the result with the committed .wasm.
func TestFixturesUpToDate(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm (wabt) is not installed; the committed .wasm fixtures are used as they are")
	}
	wats, _ := filepath.Glob(filepath.Join("testdata", "*.wat"))
	if len(wats) == 0 {
		t.Fatal("no fixtures")
	}
	dir := t.TempDir()
	for _, wat := range wats {
		src := string(readFile(t, wat))
		_, build, ok := strings.Cut(src, ";; Build: ")
		if !ok {
			t.Errorf("%s has no \";; Build:\" line", wat)
			continue
		}
		build, _, _ = strings.Cut(build, "\n")
		args := strings.Fields(build)
		base := strings.TrimSuffix(filepath.Base(wat), ".wat")
		if len(args) < 4 || args[0] != "wat2wasm" || args[len(args)-1] != base+".wasm" {
			t.Errorf("%s: unexpected build line %q", wat, build)
			continue
		}
		out := filepath.Join(dir, base+".wasm")
		args = append(args[1:len(args)-1], out)
		cmd := exec.Command("wat2wasm", args...)
		cmd.Dir = "testdata"
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("wat2wasm %v: %v\n%s", args, err, msg)
			continue
		}
		if got, want := readFile(t, out), fixture(t, base); string(got) != string(want) {
			t.Errorf("%s.wasm is not the build of %s: run (cd plugins/wasmhost/instrument/testdata && %s)", base, filepath.Base(wat), build)
		}
	}
}

// TestErrors feeds malformed or unsupported modules and bad options.
func TestErrors(t *testing.T) {
	// A valid base: type 0 = () -> (), function 0 of type 0 with body b.
	mod := func(body ...byte) []byte {
		m := []byte("\x00asm\x01\x00\x00\x00")
		m = appendSection(m, secType, []byte{1, 0x60, 0, 0})
		m = appendSection(m, secFunction, []byte{1, 0})
		code := appendU32([]byte{1}, uint32(len(body)))
		return appendSection(m, secCode, append(code, body...))
	}
	header := []byte("\x00asm\x01\x00\x00\x00")
	withExport := func(kind byte, idx uint32) []byte {
		m := []byte("\x00asm\x01\x00\x00\x00")
		m = appendSection(m, secType, []byte{1, 0x60, 0, 0})
		m = appendSection(m, secFunction, []byte{1, 0})
		m = appendSection(m, secExport, appendU32(append(appendName([]byte{1}, "x"), kind), idx))
		return appendSection(m, secCode, []byte{1, 2, 0, opEnd})
	}
	for _, tc := range []struct {
		name     string
		wasm     []byte
		maxBytes int
		export   string
		want     string
	}{
		{"ok", mod(0, opEnd), 1024, "", ""},
		{"empty", nil, 1024, "", "no \\0asm header"},
		{"not wasm", []byte("#!/bin/sh\n"), 1024, "", "no \\0asm header"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), 1024, "", "version 1"},
		{"limit zero", mod(0, opEnd), 0, "", "not within 1.."},
		{"limit too big", mod(0, opEnd), math.MaxInt32 + 1, "", "not within 1.."},
		{"truncated section", append(slices.Clone(header), secType, 9, 1), 1024, "", "unexpected end"},
		{"unknown section", appendSection(slices.Clone(header), 14, nil), 1024, "", "unknown section id 14"},
		{"out of order", appendSection(appendSection(slices.Clone(header), secFunction, []byte{0}), secType, []byte{0}), 1024, "", "out of order"},
		{"repeated", appendSection(appendSection(slices.Clone(header), secType, []byte{0}), secType, []byte{0}), 1024, "", "out of order or repeated"},
		{"long LEB", append(slices.Clone(header), secType, 0x80, 0x80, 0x80, 0x80, 0x80, 0), 1024, "", "longer than 5 bytes"},
		{"LEB overflow", append(slices.Clone(header), secType, 0xff, 0xff, 0xff, 0xff, 0x7f), 1024, "", "over 32 bits"},
		{"huge count", appendSection(slices.Clone(header), secType, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}), 1024, "", "cannot fit"},
		{"GC type", appendSection(slices.Clone(header), secType, []byte{1, 0x5f, 0, 0}), 1024, "", "GC types are not supported"},
		{"typed ref", appendSection(slices.Clone(header), secType, []byte{1, 0x60, 1, 0x63, 0x70, 0}), 1024, "", "typed function references"},
		{"no code", appendSection(appendSection(slices.Clone(header), secType, []byte{1, 0x60, 0, 0}), secFunction, []byte{1, 0}), 1024, "", "no code section"},
		{"no end", mod(0, 0x01), 1024, "", "without its final end"},
		{"after end", mod(0, opEnd, 0x01), 1024, "", "after the function's final end"},
		{"deep br", mod(0, opBr, 1, opEnd), 1024, "", "branch to label 1"},
		{"unknown opcode", mod(0, 0xc5, opEnd), 1024, "", "unknown opcode 0xc5"},
		{"try_table", mod(0, 0x1f, 0x40, 0, opEnd, opEnd), 1024, "", "exception handling"},
		{"call_ref", mod(0, 0x14, 0, opEnd), 1024, "", "typed function references"},
		{"bad block type", mod(0, opBlock, 0x55, opEnd, opEnd), 1024, "", "invalid block type"},
		{"block type out of range", mod(0, opBlock, 5, opEnd, opEnd), 1024, "", "block type 5 is out of range"},
		{"call out of range", mod(0, opCall, 3, opEnd), 1024, "", "call of function 3"},
		{"too many locals", mod(2, 0xff, 0xff, 0x01, 0x7f, 0xff, 0xff, 0x01, 0x7f, opEnd), 1024, "", "more than 50000 locals"},
		{"unknown 0xfc", mod(0, 0xfc, 30, opEnd), 1024, "", "unknown opcode 0xfc 30"},
		{"memory64", appendSection(slices.Clone(header), secMemory, []byte{1, 0x04, 1}), 1024, "", "memory64"},
		{"tag section", appendSection(slices.Clone(header), secTag, []byte{0}), 1024, "", "exception handling"},
		{"export collision", fixture(t, "control"), 1024, "memory", `already exports "memory"`},
		// The rewrite adds a global and a local: naming them must stay invalid.
		{"global.get of the counter", mod(0, opGlobalGet, 0, 0x1a, opEnd), 1024, "", "global 0 out of range (0 globals)"},
		{"global.set of the counter", mod(0, opI32Const, 0, opGlobalSet, 0, opEnd), 1024, "", "global 0 out of range"},
		{"local past the last", mod(1, 1, 0x7f, opLocalGet, 1, 0x1a, opEnd), 1024, "", "local 1 out of range (1 locals)"},
		{"export of the counter", appendSection(appendSection(slices.Clone(header), secExport, append(appendName([]byte{1}, "g"), 3, 0)), secCode, []byte{0}),
			1024, "", "export of global 0, out of range"},
		{"global init naming the counter", appendSection(slices.Clone(header), secGlobal, []byte{1, 0x7f, 0, opGlobalGet, 1, opEnd}),
			1024, "", "global 1 out of range (1 globals)"},
		// With fuel the rewrite adds a type and a function: naming them must stay invalid.
		{"import of the slow path's type", appendSection(appendSection(slices.Clone(header), secType, []byte{1, 0x60, 0, 0}),
			secImport, append(append(appendName(appendName([]byte{1}, "m"), "f"), 0), 1)), 1024, "", "import 0: type 1 out of range (1 types)"},
		{"function of the slow path's type", appendSection(appendSection(slices.Clone(header), secType, []byte{1, 0x60, 0, 0}),
			secFunction, []byte{1, 1}), 1024, "", "function 0: type 1 out of range (1 types)"},
		{"call of the slow path", mod(0, opCall, 1, opEnd), 1024, "", "call of function 1, out of range"},
		{"ref.func of the slow path", mod(0, 0xd2, 1, 0x1a, opEnd), 1024, "", "ref.func of function 1, out of range"},
		{"export of the slow path", withExport(0, 1), 1024, "", "export of function 1, out of range"},
		{"start of the slow path", appendSection(appendSection(appendSection(slices.Clone(header), secType, []byte{1, 0x60, 0, 0}),
			secFunction, []byte{1, 0}), secStart, []byte{1}), 1024, "", "start function 1, out of range"},
		{"element naming the slow path", appendSection(appendSection(appendSection(appendSection(slices.Clone(header), secType, []byte{1, 0x60, 0, 0}),
			secFunction, []byte{1, 0}), secTable, []byte{1, 0x70, 0, 1}), secElement, []byte{1, 0, opI32Const, 0, opEnd, 1, 1}),
			1024, "", "element segment 0: function 1, out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rewrite(tc.wasm, Options{MaxBytes: tc.maxBytes, ExportName: tc.export})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("no error, want one containing %q", tc.want)
			case !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "instrument: "):
				t.Errorf("error %q, want one starting with \"instrument: \" containing %q", err, tc.want)
			}
		})
	}
}

// TestOptionErrors checks the options Rewrite refuses, and the names fuel reserves.
func TestOptionErrors(t *testing.T) {
	wasm := fixture(t, "fuel")
	for _, tc := range []struct {
		name string
		wasm []byte
		o    Options
		want string
	}{
		{"nothing to do", wasm, Options{}, "not within 1.."},
		{"negative limit", wasm, Options{MaxBytes: -1, Fuel: true}, "not within 1.."},
		{"export without limit", wasm, Options{ExportName: "s", Fuel: true}, "no stack limit"},
		{"negative fuel", wasm, Options{Fuel: true, InitialFuel: -1}, "negative initial fuel"},
		{"fuel name taken", withExportName(t, wasm, FuelExport), Options{Fuel: true}, `already exports "cairn_fuel", a name reserved for fuel metering`},
		{"floor name taken", withExportName(t, wasm, FloorExport), Options{Fuel: true}, `already exports "cairn_fuel_floor", a name reserved for fuel metering`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rewrite(tc.wasm, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "instrument: ") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// The stack limit alone does not reserve the fuel names.
	if _, err := Rewrite(withExportName(t, wasm, FuelExport), Options{MaxBytes: 1 << 20}); err != nil {
		t.Errorf("stack limit only: %v", err)
	}
	var rn *ReservedNameError
	if _, err := Rewrite(withExportName(t, wasm, FuelExport), Options{Fuel: true}); !errors.As(err, &rn) || rn.Name != FuelExport {
		t.Errorf("error %v, want a *ReservedNameError for %q", err, FuelExport)
	}
}

// withExportName returns wasm with its memory also exported as name.
func withExportName(t *testing.T, wasm []byte, name string) []byte {
	t.Helper()
	m := mustParse(t, wasm)
	var out []byte
	out = append(out, wasm[:8]...)
	for _, s := range m.sections {
		if s.id == secExport {
			item := append(appendName(nil, name), 0x02, 0) // memory 0
			out = appendSection(out, s.id, appendVecItems(s.content, [][]byte{item}))
			continue
		}
		out = appendSection(out, s.id, s.content)
	}
	return out
}

// TestLEB128 checks the decoder against the encoder, and the edge encodings.
func TestLEB128(t *testing.T) {
	for _, v := range []uint32{0, 1, 63, 64, 127, 128, 16383, 16384, 1 << 28, math.MaxUint32} {
		r := &reader{b: appendU32(nil, v)}
		if got := r.u32(); got != v || r.end() != nil {
			t.Errorf("u32 %d: got %d, %v", v, got, r.err)
		}
	}
	for _, v := range []int32{0, 1, -1, 63, 64, -64, -65, 8191, -8192, math.MaxInt32, math.MinInt32} {
		r := &reader{b: appendS32(nil, v)}
		if got := r.sleb(32); got != int64(v) || r.end() != nil {
			t.Errorf("s32 %d: got %d, %v", v, got, r.err)
		}
	}
	for _, tc := range []struct {
		b    []byte
		bits uint
		want int64
		ok   bool
	}{
		{[]byte{0x40}, 33, -64, true},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x0f}, 33, 0xf << 28, true},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x10}, 33, 0, false}, // bit 33 set, not a sign copy
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x77}, 32, 0, false}, // unused bits differ from the sign
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 32, -1, true}, // padded -1
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, 64, math.MinInt64, true},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 64, 0, false},
	} {
		r := &reader{b: tc.b}
		got := r.sleb(tc.bits)
		if ok := r.err == nil; ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("s%d % x: got %d, %v; want %d, ok %v", tc.bits, tc.b, got, r.err, tc.want, tc.ok)
		}
	}
}

// TestRewriteIsDeterministic: the host's compilation cache keys on the rewritten
// bytes, so the same input must give the same output.
func TestRewriteIsDeterministic(t *testing.T) {
	wasm := fixture(t, "control")
	a, b := rewrite(t, wasm, 12345), rewrite(t, wasm, 12345)
	if string(a) != string(b) {
		t.Fatal("two rewrites of the same bytes differ")
	}
	if c := rewrite(t, wasm, 12346); string(c) == string(a) {
		t.Fatal("the limit does not show in the output")
	}
}

// TestUnknownTrapLeavesCounter: a trap that is not the stack limit's does not set the
// counter to Exceeded, so a host can tell them apart.
func TestUnknownTrapLeavesCounter(t *testing.T) {
	e := newEnv(t, false)
	wasm := withTrap(t)
	mod := e.instantiate(t, rewrite(t, wasm, DefaultStackBytesForTests))
	_, err := mod.ExportedFunction("trap").Call(context.Background())
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want a trap", err)
	}
	if c := counter(t, mod); c == Exceeded || c == 0 {
		t.Errorf("counter %#x after an ordinary trap, want the live frame's cost", c)
	}
}

// withTrap returns a module exporting "trap", which divides by zero.
func withTrap(t testing.TB) []byte {
	t.Helper()
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, secType, []byte{1, 0x60, 0, 0})
	m = appendSection(m, secFunction, []byte{1, 0})
	m = appendSection(m, secExport, append(appendName([]byte{1}, "trap"), 0, 0))
	body := []byte{0, opI32Const, 1, opI32Const, 0, 0x6d /* i32.div_s */, 0x1a /* drop */, opEnd}
	return appendSection(m, secCode, append(appendU32([]byte{1}, uint32(len(body))), body...))
}

// BenchmarkCalls measures the rewrite's cost per wasm call: bounded(100) makes 101
// calls, original and rewritten.
func BenchmarkCalls(b *testing.B) {
	wasm := fixture(b, "recursion")
	for _, tc := range []struct {
		name string
		wasm []byte
	}{{"original", wasm}, {"rewritten", rewrite(b, wasm, DefaultStackBytesForTests)}} {
		b.Run(tc.name, func(b *testing.B) {
			e := newEnv(b, false)
			f := e.instantiate(b, tc.wasm).ExportedFunction("bounded")
			stack := []uint64{100}
			for b.Loop() {
				stack[0] = 100
				if err := f.CallWithStack(context.Background(), stack); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLimitStack measures the rewrite of a Go module (3.4 MB), done once per
// module at load.
func BenchmarkLimitStack(b *testing.B) {
	wasm := readFile(b, filepath.Join("..", "..", "..", "wasm-examples", "go", "email-precommit", "email-precommit.wasm"))
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := LimitStack(wasm, DefaultStackBytesForTests); err != nil {
			b.Fatal(err)
		}
	}
}
