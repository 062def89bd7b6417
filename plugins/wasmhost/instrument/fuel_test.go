package instrument

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// lots is fuel no test call uses up.
const lots = int64(1) << 40

// meter is Rewrite with fuel and the default stack limit, the counter exported as
// testExport.
func meter(t testing.TB, wasm []byte, initial int64) []byte {
	t.Helper()
	out, err := Rewrite(wasm, Options{MaxBytes: DefaultStackBytesForTests, ExportName: testExport, Fuel: true, InitialFuel: initial})
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	return out
}

// fuelGlobals returns the fuel and the floor of mod.
func fuelGlobals(t testing.TB, mod api.Module) (fuel, floor api.MutableGlobal) {
	t.Helper()
	f, ok1 := mod.ExportedGlobal(FuelExport).(api.MutableGlobal)
	l, ok2 := mod.ExportedGlobal(FloorExport).(api.MutableGlobal)
	if !ok1 || !ok2 {
		t.Fatalf("the rewritten module does not export %q and %q as mutable globals", FuelExport, FloorExport)
	}
	return f, l
}

// burn calls fn with fuel set to budget (and the floor to match) and returns its
// results, the fuel it used and its error.
func burn(t testing.TB, mod api.Module, budget int64, fn string, args ...uint64) ([]uint64, int64, error) {
	t.Helper()
	fuel, floor := fuelGlobals(t, mod)
	fuel.Set(uint64(budget))
	floor.Set(uint64(InitialFloor(budget)))
	res, err := mod.ExportedFunction(fn).Call(context.Background(), args...)
	return res, budget - int64(fuel.Get()), err
}

// TestFuelKeepsResults runs the fixture's functions metered and not: the results are
// the same, every call burns fuel, and the stack counter is back at zero.
func TestFuelKeepsResults(t *testing.T) {
	wasm := fixture(t, "fuel")
	e := newEnv(t, false)
	orig := e.instantiate(t, wasm)
	mod := e.instantiate(t, meter(t, wasm, 0))
	for _, tc := range []struct {
		fn   string
		args []uint64
	}{
		{"adds", []uint64{0}}, {"adds", []uint64{1000}},
		{"count", []uint64{1}}, {"count", []uint64{100}},
		{"outer", []uint64{10, 20}}, {"outer", []uint64{0, 5}},
		{"tsum", []uint64{100_000, 0}}, {"tsum_indirect", []uint64{100_000, 0}},
		{"arms", []uint64{0}}, {"arms", []uint64{1}},
		{"dispatch", []uint64{0}}, {"dispatch", []uint64{1}}, {"dispatch", []uint64{2}}, {"dispatch", []uint64{99}},
		{"early", []uint64{0}}, {"early", []uint64{5}},
		{"loop_params", []uint64{10}},
		{"grow", []uint64{3}},
		{"noop", nil},
	} {
		want, err := orig.ExportedFunction(tc.fn).Call(context.Background(), tc.args...)
		if err != nil {
			t.Fatalf("%s%v original: %v", tc.fn, tc.args, err)
		}
		got, used, err := burn(t, mod, lots, tc.fn, tc.args...)
		if err != nil {
			t.Errorf("%s%v: %v", tc.fn, tc.args, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s%v = %v, want %v", tc.fn, tc.args, got, want)
		}
		if used <= 0 {
			t.Errorf("%s%v used %d fuel", tc.fn, tc.args, used)
		}
		if c := counter(t, mod); c != 0 {
			t.Errorf("%s%v: stack counter %d after the call", tc.fn, tc.args, c)
		}
	}
}

// TestFuelCosts pins the cost model on small functions: count(n) charges its entry
// (local.get after the loop) once and its loop header (8 instructions) per iteration.
func TestFuelCosts(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	for _, tc := range []struct {
		fn   string
		args []uint64
		want int64
	}{
		{"noop", nil, fuelCheck},
		{"count", []uint64{1}, 1 + fuelCheck + 1*(8+fuelCheck)},
		{"count", []uint64{10}, 1 + fuelCheck + 10*(8+fuelCheck)},
		// outer(0, m): the entry (the join after $done, one local.get, folded into
		// it) and one pass of the header, which charges the whole body (15 units, a
		// call counting fuelCall): leaving by the br_if overcharges the last pass.
		{"outer", []uint64{0, 7}, 1 + fuelCheck + 12 + fuelCall + fuelCheck},
	} {
		if _, used, err := burn(t, mod, lots, tc.fn, tc.args...); err != nil || used != tc.want {
			t.Errorf("%s%v used %d fuel (%v), want %d", tc.fn, tc.args, used, err, tc.want)
		}
	}
}

// TestFuelLinear: a loop burns the same fuel per iteration, in the function or in a
// callee called from a loop.
func TestFuelLinear(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	for _, tc := range []struct {
		fn   string
		args func(i uint64) []uint64
	}{
		{"adds", func(i uint64) []uint64 { return []uint64{i} }},
		{"count", func(i uint64) []uint64 { return []uint64{i + 1} }},
		{"outer", func(i uint64) []uint64 { return []uint64{i, 10} }},
		{"outer", func(i uint64) []uint64 { return []uint64{3, i} }},
		{"tsum", func(i uint64) []uint64 { return []uint64{i, 0} }},
	} {
		var used [3]int64
		for i := range used {
			var err error
			if _, used[i], err = burn(t, mod, lots, tc.fn, tc.args(uint64(10*(i+1)))...); err != nil {
				t.Fatal(err)
			}
		}
		if d1, d2 := used[1]-used[0], used[2]-used[1]; d1 != d2 || d1 <= 0 {
			t.Errorf("%s: fuel %v for 10, 20, 30 iterations: not linear", tc.fn, used)
		}
	}
	// The inner loop's iterations are charged: outer(1, 1000) burns far more than
	// outer(1, 1).
	_, small, _ := burn(t, mod, lots, "outer", 1, 1)
	_, big, _ := burn(t, mod, lots, "outer", 1, 1000)
	if big < small+1000*5 {
		t.Errorf("outer(1, 1) used %d and outer(1, 1000) %d: the callee's loop is not charged", small, big)
	}
}

// TestFuelFollowsPaths: the fuel of a branch is charged only when it runs, so costly
// paths burn more than cheap ones; an early return still pays for the code after it
// (it is charged at the entry), which only overcharges.
func TestFuelFollowsPaths(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	use := func(fn string, x uint64) int64 {
		_, used, err := burn(t, mod, lots, fn, x)
		if err != nil {
			t.Fatal(err)
		}
		return used
	}
	if cheap, costly := use("arms", 1), use("arms", 0); cheap >= costly {
		t.Errorf("arms: the cheap arm used %d fuel, the costly one %d", cheap, costly)
	}
	c0, c1, c2, def := use("dispatch", 0), use("dispatch", 1), use("dispatch", 2), use("dispatch", 7)
	if c0 >= c2 || c2 >= c1 || def != c2 {
		t.Errorf("dispatch: cases used %d (small), %d (large), %d (medium), %d (default)", c0, c1, c2, def)
	}
	if ret, tail := use("early", 0), use("early", 1); ret != tail {
		t.Errorf("early: the early return used %d fuel, the long path %d; both pay the entry's charge", ret, tail)
	}
}

// TestFuelBoundary: a call that needs exactly its fuel succeeds with none left; one
// unit less and it traps at its last check, with the fuel negative.
func TestFuelBoundary(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	_, need, err := burn(t, mod, lots, "adds", 50)
	if err != nil {
		t.Fatal(err)
	}
	fuel, _ := fuelGlobals(t, mod)
	if _, used, err := burn(t, mod, need, "adds", 50); err != nil || used != need || fuel.Get() != 0 {
		t.Fatalf("with exactly %d fuel: used %d, %v, %d left", need, used, err, int64(fuel.Get()))
	}
	if _, _, err := burn(t, mod, need-1, "adds", 50); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("with %d fuel (one short): %v, want the unreachable trap", need-1, err)
	}
	if f := int64(fuel.Get()); f >= 0 {
		t.Errorf("fuel %d after running out, want below zero", f)
	}
}

// TestFuelStopsEveryLoop runs loops that never end, of every shape, with a little
// fuel: each traps with the fuel below zero, the floor untouched.
func TestFuelStopsEveryLoop(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	_, floor := fuelGlobals(t, mod)
	for _, tc := range []struct {
		fn   string
		args []uint64
	}{
		{"spin", nil},
		{"fill_forever", nil},
		{"spin_br_table", []uint64{0}}, {"spin_br_table", []uint64{5}},
		{"spin_probe", nil},
		{"outer_forever", []uint64{100}},
		{"tforever", []uint64{1, 2}},
		{"ping", []uint64{0}},
	} {
		budget := int64(10_000_000)
		if tc.fn == "fill_forever" {
			budget = 10_000 // a memory.fill of 64 KiB costs 7 units and takes over a microsecond
		}
		_, used, err := burn(t, mod, budget, tc.fn, tc.args...)
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s%v: %v, want the unreachable trap", tc.fn, tc.args, err)
			continue
		}
		if used <= budget || floor.Get() != 0 {
			t.Errorf("%s%v: used %d of %d fuel, floor %d: the trap is not the fuel's", tc.fn, tc.args, used, budget, floor.Get())
		}
	}
	e.takeProbes()
}

// TestFloorStopsACall raises the floor from a host function while the guest loops
// with plenty of fuel: it traps at its next check, the fuel still positive.
func TestFloorStopsACall(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	fuel, floor := fuelGlobals(t, mod)
	probes := 0
	e.mu.Lock()
	e.onProbe = func(m api.Module) {
		if probes++; probes == 1000 {
			m.ExportedGlobal(FloorExport).(api.MutableGlobal).Set(math.MaxInt64)
		}
	}
	e.mu.Unlock()
	_, _, err := burn(t, mod, lots, "spin_probe")
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("%v, want the unreachable trap", err)
	}
	if n := len(e.takeProbes()); n != 1000 {
		t.Errorf("%d probes, want the loop to stop right after the 1000th", n)
	}
	if f := int64(fuel.Get()); f <= 0 || floor.Get() != math.MaxInt64 {
		t.Errorf("fuel %d, floor %d after the stop", f, floor.Get())
	}
}

// TestFuelSlices: a long call visits the slow path once per FuelSlice, which moves the
// floor down with the fuel; a call shorter than a slice never does.
func TestFuelSlices(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	fuel, floor := fuelGlobals(t, mod)
	if _, used, err := burn(t, mod, 100*FuelSlice, "adds", 50_000); err != nil || used < 5*FuelSlice {
		t.Fatalf("adds: %d fuel, %v", used, err)
	}
	if f, l := int64(fuel.Get()), int64(floor.Get()); f-l > FuelSlice || l >= 99*FuelSlice {
		t.Errorf("fuel %d, floor %d after several slices: want the floor moved down with the fuel, less than a slice below it", f, l)
	}
	if _, _, err := burn(t, mod, 100*FuelSlice, "count", 10); err != nil || int64(floor.Get()) != 99*FuelSlice {
		t.Errorf("count(10): floor %d, %v; want it untouched at %d", floor.Get(), err, 99*FuelSlice)
	}
}

// TestBulkCharges: a memory.fill burns fuel by its size, so a loop of big fills runs
// out after about budget / (size / 2^fuelBulkByteShift) of them.
func TestBulkCharges(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	const budget = 1 << 20
	const perFill = 65536 >> fuelBulkByteShift
	_, used, err := burn(t, mod, budget, "fill_forever")
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("fill_forever: %v, want the unreachable trap", err)
	}
	if over := used - budget; over <= 0 || over > perFill+16 {
		t.Errorf("fill_forever used %d of %d fuel: want it stopped within one fill (%d units) of the budget", used, budget, perFill)
	}
}

// TestInitialFuel: the fuel starts at Options.InitialFuel, which bounds a start
// function that never returns.
func TestInitialFuel(t *testing.T) {
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 12345))
	if fuel, floor := fuelGlobals(t, mod); fuel.Get() != 12345 || floor.Get() != 0 {
		t.Errorf("fuel %d, floor %d at instantiation, want 12345 and 0", fuel.Get(), floor.Get())
	}
	// A module whose start function spins: (func $s (loop (br 0))) (start $s).
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, secType, []byte{1, 0x60, 0, 0})
	m = appendSection(m, secFunction, []byte{1, 0})
	m = appendSection(m, secStart, []byte{0})
	body := []byte{0, opLoop, blockEmpty, opBr, 0, opEnd, opEnd}
	m = appendSection(m, secCode, append(appendU32([]byte{1}, uint32(len(body))), body...))
	ctx := context.Background()
	cm, err := e.rt.CompileModule(ctx, meter(t, m, 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close(ctx)
	if mod, err := e.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("")); err == nil || !strings.Contains(err.Error(), "unreachable") {
		if mod != nil {
			_ = mod.Close(ctx)
		}
		t.Fatalf("instantiating a spinning start function: %v, want the unreachable trap", err)
	}
}

// TestFuelOnly: fuel without a stack limit adds no stack counter.
func TestFuelOnly(t *testing.T) {
	wasm := fixture(t, "fuel")
	out, err := Rewrite(wasm, Options{Fuel: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := mustParse(t, wasm), mustParse(t, out)
	if b.globals != a.globals+2 || !b.exports[FuelExport] || !b.exports[FloorExport] {
		t.Errorf("%d globals (want %d), exports %v", b.globals, a.globals+2, b.exports)
	}
	e := newEnv(t, false)
	mod := e.instantiate(t, out)
	if _, used, err := burn(t, mod, lots, "count", 10); err != nil || used != 1+fuelCheck+10*(8+fuelCheck) {
		t.Errorf("count(10): %d fuel, %v", used, err)
	}
	if _, _, err := burn(t, mod, 1000, "spin"); err == nil {
		t.Error("spin did not stop")
	}
}

func mustParse(t testing.TB, wasm []byte) *module {
	t.Helper()
	m, err := parse(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFuelRate measures how fast loops of several shapes burn fuel under wazero's
// compiler, in units per microsecond: the basis of wasmhost's FuelPerMillisecond. Run
// with CAIRN_FUEL_CALIBRATE=1.
func TestFuelRate(t *testing.T) {
	if os.Getenv("CAIRN_FUEL_CALIBRATE") != "1" {
		t.Skip("set CAIRN_FUEL_CALIBRATE=1 to measure the fuel rate of loop shapes")
	}
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, fixture(t, "fuel"), 0))
	for _, tc := range []struct {
		fn   string
		args []uint64
	}{
		{"adds", []uint64{1 << 30}}, {"count", []uint64{1 << 30}}, {"spin", nil},
		{"outer_forever", []uint64{1}}, {"outer_forever", []uint64{1000}},
		{"tforever", []uint64{1, 2}}, {"ping", []uint64{0}}, {"fill_forever", nil},
	} {
		const budget = 2_000_000_000
		for range 3 {
			start := time.Now()
			_, used, _ := burn(t, mod, budget, tc.fn, tc.args...)
			d := time.Since(start)
			t.Logf("%-14s %v: %d units in %v: %.0f units/µs", tc.fn, tc.args, used, d.Round(time.Millisecond), float64(used)/float64(d.Microseconds()))
		}
	}
}

// BenchmarkFuel measures what metering costs guest code: loops of several shapes,
// original and rewritten (fuel and the stack limit).
func BenchmarkFuel(b *testing.B) {
	wasm := fixture(b, "fuel")
	for _, tc := range []struct {
		fn   string
		args []uint64
	}{
		{"adds", []uint64{1000}},
		{"count", []uint64{10000}},
		{"outer", []uint64{100, 100}},
		{"tsum", []uint64{10000, 0}},
		{"dispatch", []uint64{1}},
	} {
		for _, v := range []struct {
			name string
			wasm []byte
		}{{"original", wasm}, {"metered", meter(b, wasm, math.MaxInt64/4)}} {
			b.Run(tc.fn+"/"+v.name, func(b *testing.B) {
				e := newEnv(b, false)
				f := e.instantiate(b, v.wasm).ExportedFunction(tc.fn)
				stack := make([]uint64, 2)
				for b.Loop() {
					copy(stack, tc.args)
					if err := f.CallWithStack(context.Background(), stack); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestLeaves: a leaf (see plan) is left alone. Its caller pays its fuel, exactly what
// the same code costs instrumented, less the check at its entry; its frame is not
// counted, the caller's check reserves room for it; and the rewritten module holds no
// instrumentation in it.
func TestLeaves(t *testing.T) {
	wasm := fixture(t, "fuel")
	e := newEnv(t, false)
	mod := e.instantiate(t, meter(t, wasm, 0))
	perIteration := func(fn string) int64 {
		_, a, err1 := burn(t, mod, lots, fn, 10)
		_, b, err2 := burn(t, mod, lots, fn, 20)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		return (b - a) / 10
	}
	if leaf, exported := perIteration("calls_leaf"), perIteration("calls_leaf_exported"); leaf+fuelCheck != exported {
		t.Errorf("a call of the leaf costs %d per iteration, of the same code exported %d: want %d apart", leaf, exported, fuelCheck)
	}

	// The leaf's frame is not in the counter when it probes; leafy's is. The big leaf
	// has the largest frame of the fixture.
	costs := frameCostsWith(t, wasm, true)
	leafyIdx, leafIdx := funcIndex(t, mod, "leafy"), uint32(0)
	for f, c := range costs {
		if f != leafyIdx && c > costs[leafIdx] {
			leafIdx = f
		}
	}
	if _, err := mod.ExportedFunction("leafy").Call(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if p := e.takeProbes(); len(p) != 1 || int64(p[0]) != costs[leafyIdx] {
		t.Errorf("the probe in the leaf read %v, want leafy's frame alone (%d)", p, costs[leafyIdx])
	}

	// leafy(n) takes n+1 frames and one leaf above them: with a limit of exactly
	// that it works, with one byte less it traps.
	for _, tc := range []struct {
		slack int64
		ok    bool
	}{{0, true}, {-1, false}} {
		const n = 20
		limit := (n+1)*costs[leafyIdx] + costs[leafIdx] + tc.slack
		out, err := Rewrite(wasm, Options{MaxBytes: int(limit), ExportName: testExport, Fuel: true, InitialFuel: lots})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.instantiate(t, out).ExportedFunction("leafy").Call(context.Background(), n)
		if (err == nil) != tc.ok {
			t.Errorf("limit %d (slack %d): %v", limit, tc.slack, err)
		}
	}
	e.takeProbes()
}

// BenchmarkRustGuest measures what the rewrite costs real code: the Rust JSON-schema
// example validating a 1 KiB document, under plain wazero (WASI, no-op cairn imports),
// original and rewritten with the stack limit, fuel, or both.
func BenchmarkRustGuest(b *testing.B) {
	wasm := readFile(b, filepath.Join("..", "..", "..", "wasm-examples", "rust", "json-schema-precommit", "json-schema-precommit.wasm"))
	var doc strings.Builder
	doc.WriteString(`{\"name\":\"user-000001\",\"email\":\"user1@example.com\",\"age\":21,\"role\":\"member\",\"tags\":[`)
	for i := range 80 {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `\"tag-1-%d\"`, i)
	}
	doc.WriteString(`]}`)
	input := []byte(`{"op":"put","object":{"bucket_type":"default","bucket":"users","key":"u1","vclock":"",` +
		`"values":[{"metadata":{"content-type":"application/json","X-Store-Meta":{}},"data":"` + doc.String() + `"}]}}`)
	for _, v := range []struct {
		name string
		o    *Options
	}{
		{"original", nil},
		{"stack", &Options{MaxBytes: DefaultStackBytesForTests}},
		{"fuel", &Options{Fuel: true, InitialFuel: lots}},
		{"both", &Options{MaxBytes: DefaultStackBytesForTests, Fuel: true, InitialFuel: lots}},
	} {
		b.Run(v.name, func(b *testing.B) {
			code := wasm
			if v.o != nil {
				var err error
				if code, err = Rewrite(wasm, *v.o); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			e := newEnv(b, false)
			e.hostCairn(b, true)
			cm, err := e.rt.CompileModule(ctx, code)
			if err != nil {
				b.Fatal(err)
			}
			mod, err := e.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
			if err != nil {
				b.Fatal(err)
			}
			alloc, validate := mod.ExportedFunction("cairn_alloc"), mod.ExportedFunction("validate")
			for b.Loop() {
				p, err := alloc.Call(ctx, uint64(len(input)))
				if err != nil || !mod.Memory().Write(uint32(p[0]), input) {
					b.Fatal(err)
				}
				if st, err := validate.Call(ctx, p[0], uint64(len(input))); err != nil || st[0] != 0 {
					b.Fatalf("validate: %v %v", st, err)
				}
			}
		})
	}
}
