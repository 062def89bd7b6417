package instrument

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// seeds are the fixtures and the small example modules.
func seeds(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/*.wasm", "../testdata/*.wasm", "../../../wasm-examples/wat/*/*.wasm",
		"../../../wasm-examples/c/*/*.wasm", "../../../wasm-examples/assemblyscript/*/*.wasm"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	out := [][]byte{withTrap(t)}
	for _, f := range files {
		out = append(out, readFile(t, f))
	}
	return out
}

// fuzzOptions are the rewrites the fuzz property checks: the stack limit, fuel, both.
var fuzzOptions = []Options{
	{MaxBytes: 1 << 20},
	{Fuel: true, InitialFuel: 1 << 30},
	{MaxBytes: 1 << 20, ExportName: "stack", Fuel: true, InitialFuel: 12345},
}

// checkRewrite is the fuzz property, for each of fuzzOptions: Rewrite never panics;
// it accepts a module with one set of options if and only if with every other (it
// decodes the same things); what it accepts it rewrites into something it can parse
// again; and a module that wazero accepts is still accepted rewritten, one it refuses
// still refused. wazero only sees inputs the rewriter accepted, whose vector counts are
// therefore plausible (wazero v1.12.0 allocates what a count says before reading the
// vector).
func checkRewrite(t *testing.T, e *env, wasm []byte) {
	var accepted []bool
	for _, o := range fuzzOptions {
		accepted = append(accepted, checkRewriteWith(t, e, wasm, o))
	}
	for i := range accepted {
		if accepted[i] != accepted[0] && !reservesExport(wasm, fuzzOptions[i]) && !reservesExport(wasm, fuzzOptions[0]) {
			t.Fatalf("accepted %v with the options %+v", accepted, fuzzOptions)
		}
	}
}

// reservesExport reports whether wasm exports a name that o reserves (or has several
// memories, which only fuel refuses), so that o alone refuses it.
func reservesExport(wasm []byte, o Options) bool {
	m, err := parse(wasm)
	if err != nil {
		return false
	}
	return (o.ExportName != "" && m.exports[o.ExportName]) || (o.Fuel && (m.exports[FuelExport] || m.exports[FloorExport] || m.memories > 1))
}

// checkRewriteWith checks the property for one set of options and reports whether
// Rewrite accepted the module.
func checkRewriteWith(t *testing.T, e *env, wasm []byte, o Options) bool {
	out, err := Rewrite(wasm, o)
	if err != nil {
		return false
	}
	if _, err := parse(out); err != nil {
		t.Fatalf("the output does not parse: %v", err)
	}
	ctx := context.Background()
	cm, origErr := e.rt.CompileModule(ctx, wasm)
	if origErr == nil {
		_ = cm.Close(ctx)
	}
	cm, outErr := e.rt.CompileModule(ctx, out)
	if outErr == nil {
		_ = cm.Close(ctx)
	}
	switch {
	case origErr == nil && outErr != nil:
		t.Fatalf("the module compiles, but not rewritten: %v", outErr)
	case origErr != nil && outErr == nil:
		t.Fatalf("the module does not compile (%v), but it does rewritten", origErr)
	}
	return true
}

// FuzzRewrite checks checkRewrite on any input.
func FuzzRewrite(f *testing.F) {
	for _, s := range seeds(f) {
		if len(s) <= 16<<10 { // the fuzzer minimizes big inputs slowly
			f.Add(s)
		}
	}
	e := newEnv(f, true)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		checkRewrite(t, e, wasm)
	})
}

// TestMutatedModules applies the fuzz property to a fixed set of random mutations of
// the seeds, so that plain test runs exercise it too.
func TestMutatedModules(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := newEnv(t, true)
	all := seeds(t)
	runs := 5000
	if testing.Short() {
		runs = 500
	}
	accepted := 0
	for i := 0; i < runs; i++ {
		wasm := append([]byte(nil), all[rng.IntN(len(all))]...)
		for n := 1 + rng.IntN(3); n > 0; n-- {
			p := 8 + rng.IntN(len(wasm)-8)
			switch rng.IntN(4) {
			case 0: // flip a bit
				wasm[p] ^= 1 << rng.IntN(8)
			case 1: // set a random byte
				wasm[p] = byte(rng.IntN(256))
			case 2: // drop a byte
				wasm = append(wasm[:p], wasm[p+1:]...)
			case 3: // duplicate a byte
				wasm = append(wasm[:p+1], wasm[p:]...)
			}
		}
		if _, err := Rewrite(wasm, fuzzOptions[2]); err == nil {
			accepted++
		}
		checkRewrite(t, e, wasm)
	}
	t.Logf("%d of %d mutants accepted by the rewriter", accepted, runs)
}
