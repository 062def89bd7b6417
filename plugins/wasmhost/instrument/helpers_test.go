package instrument

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// testExport is the name the tests export the stack counter under.
const testExport = "stack"

// features are the WebAssembly features of the tests' runtimes: wazero's defaults plus
// the tail calls and threads the rewrite also handles.
const features = api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall | experimental.CoreFeaturesThreads

// fixture returns the bytes of testdata/name.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// env is a wazero runtime with an "env" host module whose probe function records the
// caller's stack counter and runs onProbe.
type env struct {
	rt wazero.Runtime
	// mu guards probes and onProbe.
	mu      sync.Mutex
	probes  []uint64
	onProbe func(api.Module)
}

// newEnv returns an env closed at the end of the test. The interpreter validates as
// the compiler does and compiles faster; the tests that measure the stack use the
// compiler.
func newEnv(t testing.TB, interpreter bool) *env {
	t.Helper()
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfigCompiler()
	if interpreter {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	e := &env{rt: wazero.NewRuntimeWithConfig(ctx, cfg.WithCoreFeatures(features))}
	t.Cleanup(func() { _ = e.rt.Close(ctx) })
	probe := func(_ context.Context, mod api.Module, _ []uint64) {
		v := uint64(1 << 63) // no counter exported
		if g := mod.ExportedGlobal(testExport); g != nil {
			v = g.Get()
		}
		e.mu.Lock()
		e.probes = append(e.probes, v)
		hook := e.onProbe
		e.mu.Unlock()
		if hook != nil {
			hook(mod)
		}
	}
	if _, err := e.rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(probe), nil, nil).Export("probe").
		Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

// takeProbes returns and forgets the recorded probes.
func (e *env) takeProbes() []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.probes
	e.probes = nil
	return p
}

// instantiate compiles and instantiates wasm under an anonymous name.
func (e *env) instantiate(t testing.TB, wasm []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	cm, err := e.rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	t.Cleanup(func() { _ = cm.Close(ctx) })
	mod, err := e.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	t.Cleanup(func() { _ = mod.Close(ctx) })
	return mod
}

// rewrite is Rewrite with the counter exported as testExport.
func rewrite(t testing.TB, wasm []byte, maxBytes int) []byte {
	t.Helper()
	out, err := Rewrite(wasm, Options{MaxBytes: maxBytes, ExportName: testExport})
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	return out
}

// counter reads the stack counter of mod.
func counter(t testing.TB, mod api.Module) uint32 {
	t.Helper()
	g := mod.ExportedGlobal(testExport)
	if g == nil {
		t.Fatalf("the rewritten module does not export %q", testExport)
	}
	return uint32(g.Get())
}

// frameCosts returns the frame cost the rewrite charges for each function, by function
// index (imported functions have none), without fuel metering.
func frameCosts(t testing.TB, wasm []byte) map[uint32]int64 {
	return frameCostsWith(t, wasm, false)
}

// frameCostsWith is frameCosts, with fuel metering (which adds a local) or without.
func frameCostsWith(t testing.TB, wasm []byte, fuel bool) map[uint32]int64 {
	t.Helper()
	m, err := parse(wasm)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.additions(Options{MaxBytes: 1, Fuel: fuel})
	costs := map[uint32]int64{}
	for _, s := range m.sections {
		if s.id != secCode {
			continue
		}
		bodies, err := m.scanCode(s, a)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range bodies {
			fidx := uint32(m.importedFuncs + i)
			ft, _ := m.funcType(fidx)
			costs[fidx] = b.cost(ft)
		}
	}
	return costs
}

// funcIndex returns the index of mod's exported function name.
func funcIndex(t testing.TB, mod api.Module, name string) uint32 {
	t.Helper()
	f := mod.ExportedFunction(name)
	if f == nil {
		t.Fatalf("no export %q", name)
	}
	return f.Definition().Index()
}

// readFile returns the bytes of a file.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// calibrate reports whether the expensive calibration against wazero runs.
func calibrate() bool { return os.Getenv("CAIRN_STACK_CALIBRATE") == "1" }
