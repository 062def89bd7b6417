package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/wasmhost/instrument"
	"github.com/cairnkv/cairn/sdk/abi"
)

// compiled is one compiled module, shared by every name installed with the same bytes.
type compiled struct {
	sha  string
	size int
	cm   wazero.CompiledModule
	// refs counts the versions (and inspections) using cm; guarded by Host.compMu.
	refs int

	functions map[string]bool // entry points
	names     []string        // entry points, sorted
	imports   []string        // "module.name", sorted
	wasi      bool
	hasInit   bool
	memMax    uint32 // the memory's effective maximum in pages (declared max or the cap)
}

// info describes c installed under name.
func (c *compiled) info(name string) hooks.ModuleInfo {
	return hooks.ModuleInfo{
		Name: name, Kind: hooks.KindWASM, SHA256: c.sha, Size: c.size,
		Functions: slices.Clone(c.names), WASI: c.wasi, Imports: slices.Clone(c.imports),
	}
}

// version is one installed version of a module name.
type version struct {
	h     *Host
	name  string
	comp  *compiled
	stats *moduleStats
	pool  *pool

	// mu guards refs, retired and freed.
	mu      sync.Mutex
	refs    int  // calls in flight
	retired bool // replaced or removed: takes no new calls
	freed   bool // pool closed and compiled module released
}

// acquire takes a reference for one call; it fails once v is retired.
func (v *version) acquire() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.retired {
		return false
	}
	v.refs++
	return true
}

// releaseRef drops a call's reference and frees v if it was the last of a retired v.
func (v *version) releaseRef() {
	v.mu.Lock()
	v.refs--
	free := v.retired && v.refs == 0 && !v.freed
	v.freed = v.freed || free
	v.mu.Unlock()
	if free {
		v.free()
	}
}

// retire stops new calls; v is freed when its calls in flight finish.
func (v *version) retire() {
	v.mu.Lock()
	if v.retired {
		v.mu.Unlock()
		return
	}
	v.retired = true
	free := v.refs == 0
	v.freed = free
	v.mu.Unlock()
	if free {
		v.free()
	}
}

func (v *version) free() {
	v.pool.closeAll()
	v.h.releaseCompiled(v.comp)
	v.h.versionFreed(v)
}

// invalid returns an *hooks.InvalidModuleError.
func invalid(format string, args ...any) error {
	return &hooks.InvalidModuleError{Reason: fmt.Sprintf(format, args...)}
}

// acquireCompiled returns the compiled module of wasm with a reference taken,
// compiling and validating it if no installed module has the same bytes.
func (h *Host) acquireCompiled(ctx context.Context, wasm []byte) (*compiled, error) {
	if len(wasm) > abi.MaxModuleBytes {
		return nil, invalid("the module is %d bytes; the limit is %d", len(wasm), abi.MaxModuleBytes)
	}
	switch {
	case len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")):
		return nil, invalid("not a WebAssembly module (it does not start with \\0asm)")
	case !bytes.Equal(wasm[4:8], []byte{1, 0, 0, 0}):
		return nil, invalid("not a core WebAssembly module of version 1 (components are not supported)")
	}
	sum := sha256.Sum256(wasm)
	sha := hex.EncodeToString(sum[:])
	h.compMu.Lock()
	defer h.compMu.Unlock()
	if c, ok := h.compiled[sha]; ok {
		c.refs++
		return c, nil
	}
	// The compiled code is that of the instrumented module (fuel, and the stack limit
	// of Config.StackBytes); the module keeps the identity (sha, size) of the bytes it
	// was given.
	o := instrument.Options{Fuel: true, InitialFuel: h.fuelFor(h.cfg.InitTimeout)}
	if h.cfg.StackBytes > 0 {
		o.MaxBytes, o.ExportName = h.cfg.StackBytes, instrument.DefaultExportName
	}
	code, err := instrument.Rewrite(wasm, o)
	var reserved *instrument.ReservedNameError
	switch {
	case errors.As(err, &reserved):
		return nil, invalid("it exports %q, a name the host reserves for %s", reserved.Name, reserved.Use)
	case err != nil:
		return nil, invalid("it does not compile: %v", err)
	}
	cm, err := h.rt.CompileModule(ctx, code)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wasmhost: compile: %w", err)
		}
		return nil, invalid("it does not compile: %v", err)
	}
	c := &compiled{sha: sha, size: len(wasm), cm: cm, refs: 1}
	if err := h.validate(c); err != nil {
		_ = cm.Close(ctx)
		return nil, err
	}
	h.compiled[sha] = c
	return c, nil
}

// releaseCompiled drops a reference and closes the compiled module with the last one.
func (h *Host) releaseCompiled(c *compiled) {
	h.compMu.Lock()
	defer h.compMu.Unlock()
	if c.refs--; c.refs == 0 {
		delete(h.compiled, c.sha)
		_ = c.cm.Close(context.Background())
	}
}

// sig formats a signature like "(i32, i32) -> i32".
func sig(d api.FunctionDefinition) string {
	f := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	res := f(d.ResultTypes())
	switch len(d.ResultTypes()) {
	case 0:
		res = "()"
	case 1:
	default:
		res = "(" + res + ")"
	}
	return "(" + f(d.ParamTypes()) + ") -> " + res
}

// validate checks c's exports and imports against ABI v1 and fills in its description.
func (h *Host) validate(c *compiled) error {
	cm := c.cm
	if len(cm.ImportedMemories()) > 0 {
		return invalid("it imports a memory; a module must define and export its own %q", abi.ExportMemory)
	}
	mem, ok := cm.ExportedMemories()[abi.ExportMemory]
	if !ok {
		return invalid("it exports no memory named %q", abi.ExportMemory)
	}
	c.memMax = h.cfg.MemoryPages
	if m, ok := mem.Max(); ok && m < c.memMax {
		c.memMax = m
	}
	const (
		unit  = "() -> ()"
		alloc = "(i32) -> i32"
		entry = "(i32, i32) -> i32"
	)
	exports := cm.ExportedFunctions()
	for _, want := range []struct {
		name, sig string
		required  bool
	}{
		{abi.ExportMarker, unit, true},
		{abi.ExportAlloc, alloc, true},
		{abi.ExportInitialize, unit, false},
	} {
		d, ok := exports[want.name]
		switch {
		case !ok && want.required:
			return invalid("it does not export %q %s (is it built for Cairn hook ABI v%d?)", want.name, want.sig, abi.Version)
		case ok && sig(d) != want.sig:
			return invalid("it exports %q as %s; ABI v%d wants %s", want.name, sig(d), abi.Version, want.sig)
		}
	}
	if _, ok := exports["_start"]; ok {
		return invalid("it exports _start, so it is a command; build a reactor instead (clang -mexec-model=reactor, go build -buildmode=c-shared, a Rust cdylib)")
	}
	_, c.hasInit = exports[abi.ExportInitialize]
	c.functions = map[string]bool{}
	for name, d := range exports {
		switch name {
		case abi.ExportMarker, abi.ExportAlloc, abi.ExportInitialize:
			continue
		}
		if sig(d) == entry {
			c.functions[name] = true
			c.names = append(c.names, name)
		}
	}
	if len(c.names) == 0 {
		return invalid("it exports no entry point (a function %s)", entry)
	}
	slices.Sort(c.names)
	for _, d := range cm.ImportedFunctions() {
		mod, name, _ := d.Import()
		funcs, known := h.hostFuncs[mod]
		if !known {
			return invalid("it imports %s.%s; only %q (%s, %s) and %q may be imported",
				mod, name, abi.ImportModule, abi.ImportOutput, abi.ImportLog, abi.WASIModule)
		}
		want, ok := funcs[name]
		switch {
		case !ok:
			return invalid("it imports %s.%s, which %q does not provide", mod, name, mod)
		case sig(want) != sig(d):
			return invalid("it imports %s.%s as %s; the host provides %s", mod, name, sig(d), sig(want))
		}
		c.wasi = c.wasi || mod == abi.WASIModule
		c.imports = append(c.imports, mod+"."+name)
	}
	slices.Sort(c.imports)
	c.imports = slices.Compact(c.imports)
	return nil
}

// Inspect validates wasm as Load would, without installing it: the size cap, that it
// compiles, its exports (memory, the ABI marker, cairn_alloc, at least one entry point
// (i32, i32) -> i32), its imports (only cairn.output, cairn.log and
// wasi_snapshot_preview1 functions, with the right signatures) and that an instance can
// be created (which runs _initialize). Refused bytes give an *hooks.InvalidModuleError.
// The returned info has no Name.
func (h *Host) Inspect(ctx context.Context, wasm []byte) (hooks.ModuleInfo, error) {
	c, err := h.acquireCompiled(ctx, wasm)
	if err != nil {
		return hooks.ModuleInfo{}, err
	}
	defer h.releaseCompiled(c)
	st := &moduleStats{}
	inst, err := h.newInstance(ctx, c, st, "", false)
	if err != nil {
		return hooks.ModuleInfo{}, err
	}
	inst.close()
	return c.info(""), nil
}

// Load installs wasm as module name, replacing any module of that name. The replaced
// version takes no new calls; its calls in flight finish, then it is closed. Load
// validates the module as Inspect does and creates its first instance.
func (h *Host) Load(ctx context.Context, name string, wasm []byte) (hooks.ModuleInfo, error) {
	if name == "" {
		return hooks.ModuleInfo{}, invalid("the module has no name")
	}
	// The stats of a name outlive its versions (a replacement keeps counting), so take
	// or create them first.
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return hooks.ModuleInfo{}, errClosed
	}
	st := h.stats[name]
	if st == nil {
		st = &moduleStats{}
		h.stats[name] = st
	}
	h.mu.Unlock()
	c, err := h.acquireCompiled(ctx, wasm)
	if err != nil {
		return hooks.ModuleInfo{}, err
	}
	inst, err := h.newInstance(ctx, c, st, name, false)
	if err != nil {
		h.releaseCompiled(c)
		return hooks.ModuleInfo{}, err
	}
	v := &version{h: h, name: name, comp: c, stats: st}
	v.pool = newPool(v, h.cfg.PoolSize, h.cfg.PoolWait)
	v.pool.adopt(inst)

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		v.pool.closeAll()
		h.releaseCompiled(c)
		return hooks.ModuleInfo{}, errClosed
	}
	old := h.modules[name]
	h.stats[name] = st // Remove may have dropped it meanwhile
	h.modules[name] = v
	h.versions[v] = struct{}{}
	h.unfreed++
	h.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return c.info(name), nil
}

// Remove uninstalls module name. Its calls in flight finish, then it is closed; later
// calls fail with an error wrapping hooks.ErrNoModule.
func (h *Host) Remove(ctx context.Context, name string) error {
	h.mu.Lock()
	v := h.modules[name]
	delete(h.modules, name)
	delete(h.stats, name)
	h.mu.Unlock()
	if v == nil {
		return fmt.Errorf("wasmhost: remove: %w: %q", hooks.ErrNoModule, name)
	}
	v.retire()
	return nil
}
