// Package wasmhost runs Cairn extension modules compiled to WebAssembly (hook ABI v1,
// see sdk/abi and docs/abi.md) under wazero, and serves them to core/hooks as a
// Provider of kind "wasm".
//
// Modules are rewritten (package instrument: fuel metering and a call stack limit),
// then compiled once per SHA-256 (several names with the same bytes share one compiled
// module) and instantiated into a pool per module version: one instance serves one
// call at a time, at most Config.PoolSize instances live per version, and a call waits
// up to Config.PoolWait for one. Every call runs under its extension point's deadline
// and the memory cap; after a trap, a timeout or an ABI violation the instance is
// closed and replaced. Replacing or removing a module drains it: the old version takes
// no new calls, its calls in flight finish, then it is closed.
//
// Deadlines do not rely on wazero's context checks, which call into Go at every loop
// iteration and cost guests 3 to 10 times their speed. Before a call the host gives
// the instance fuel for its time budget (Config.FuelPerMillisecond), which the
// instrumented guest burns at function entries and loop headers: it traps when the
// fuel runs out, so every call ends even if nothing else stops it. A watchdog
// goroutine stops a call at its wall-clock deadline, when its caller's context ends,
// or when the host closes, by raising the fuel's floor (see watchdog.go). Guests enter
// Go once per slice of fuel (about 0.2 ms), so they never hold up garbage collection
// or the scheduler for longer. Linear memories are reserved at their maximum outside
// the Go heap and returned to the system when an instance closes (see memory.go).
//
// Instances that serve chash_keyfun calls are deterministic: both WASI clocks read zero
// and random_get fails, so a key's placement cannot depend on time or chance. Other
// instances see the real clocks and a cryptographic random source. No instance has
// files, environment variables or arguments; stdout and stderr go to the log.
package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
	"github.com/cairnkv/cairn/sdk/abi"
)

// Config configures a Host. The zero value is usable: every field has a default.
type Config struct {
	// CacheDir is the directory of the on-disk compilation cache; "" keeps compiled
	// code in memory only.
	CacheDir string
	// MemoryPages caps the memory of every instance, in 64 KiB pages (default
	// abi.DefaultMemoryPages, 16 MiB; at most 65536).
	MemoryPages uint32
	// PoolSize is the most instances of one module version alive at once (default
	// 2*GOMAXPROCS).
	PoolSize int
	// PoolWait is how long a call waits for a free instance before it fails with
	// hooks.Unavailable (default 1s).
	PoolWait time.Duration
	// Timeouts is the deadline of one call per extension point; missing points get the
	// abi.DefaultTimeout* values.
	Timeouts map[hooks.Point]time.Duration
	// InitTimeout bounds the creation of one instance, _initialize included (default 1s).
	InitTimeout time.Duration
	// RecycleAfter replaces an instance after that many calls; 0 never does.
	RecycleAfter int
	// StackBytes bounds the call stack of every call: modules are rewritten before
	// they are compiled (see package instrument) so that a guest traps once its frames
	// could take more than about that many bytes of host stack. 0 means
	// DefaultStackBytes, a negative value disables the limit (wazero's own ceiling of
	// about 50 MB then applies), and at most math.MaxInt32.
	StackBytes int
	// FuelPerMillisecond is the fuel a call gets per millisecond of its deadline (and
	// _initialize per millisecond of InitTimeout); 0 means DefaultFuelPerMillisecond.
	// A unit is about one simple instruction (see package instrument).
	FuelPerMillisecond int64
	// Dialect names the metadata prefix of the object JSON: "store" (default) or "riak".
	Dialect string
	// Logger receives the guests' log lines and stdout/stderr, with "module" and
	// "function" attributes, at most abi.MaxLogBytesPerCall bytes per call (default
	// slog.Default()).
	Logger *slog.Logger
}

// DefaultStackBytes is the default of Config.StackBytes: 4 MiB of estimated call stack.
const DefaultStackBytes = 4 << 20

// DefaultFuelPerMillisecond is the default of Config.FuelPerMillisecond, set above the
// fastest rate at which any code measured burns fuel under wazero's compiler on a
// 2-core Xeon (see instrument's cost.go: up to 8 million units per millisecond for a
// loop of a few additions, 6.2 for a loop of 100 i32.adds, about 5.5 for the Rust
// JSON-schema example), so that fuel never ends a call before its deadline. The
// watchdog ends calls at the deadline itself; fuel is what ends them if it cannot
// (a loop of i32.adds would run out at about 1.6 times its deadline, an empty loop at
// about 5 times).
const DefaultFuelPerMillisecond = 10_000_000

// Host runs WebAssembly extension modules. It is safe for concurrent use.
type Host struct {
	cfg    Config
	codec  hookjson.Codec
	rt     wazero.Runtime
	cache  wazero.CompilationCache
	logger *slog.Logger
	// hostFuncs are the signatures a module may import, by module and name.
	hostFuncs map[string]map[string]api.FunctionDefinition
	// bufs recycles the buffers inputs are encoded into (*[]byte).
	bufs sync.Pool

	// compMu guards compiled. It is held while compiling and while closing a compiled
	// module, so that identical bytes never have two live compiled modules (wazero#2336).
	compMu   sync.Mutex
	compiled map[string]*compiled

	// mu guards modules, stats, closed, versions, unfreed and allFreed.
	mu      sync.RWMutex
	modules map[string]*version
	stats   map[string]*moduleStats
	closed  bool
	// versions are the versions not yet released (installed or draining), whose
	// pools the watchdog sweeps.
	versions map[*version]struct{}
	// unfreed counts versions not yet released; allFreed is closed when Close waits and
	// unfreed reaches zero.
	unfreed  int
	allFreed chan struct{}

	// startMu guards starting: the instances running _initialize, which the
	// watchdog sweeps too.
	startMu  sync.Mutex
	starting map[*instance]struct{}
	wd       watchdog
}

var _ hooks.Provider = (*Host)(nil)
var _ hooks.Loader = (*Host)(nil)

// errClosed is the error of calls and loads after Close.
var errClosed = errors.New("wasmhost: host closed")

// New returns a Host with cfg's settings. Close releases it.
func New(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.MemoryPages == 0 {
		cfg.MemoryPages = abi.DefaultMemoryPages
	}
	if cfg.MemoryPages > 65536 {
		return nil, fmt.Errorf("wasmhost: memory cap of %d pages is over the 65536 of a 32-bit memory", cfg.MemoryPages)
	}
	if cfg.PoolSize < 0 || cfg.PoolWait < 0 || cfg.InitTimeout < 0 || cfg.RecycleAfter < 0 {
		return nil, errors.New("wasmhost: negative pool size, wait, init timeout or recycle count")
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.StackBytes == 0 {
		cfg.StackBytes = DefaultStackBytes
	}
	if cfg.StackBytes > math.MaxInt32 {
		return nil, fmt.Errorf("wasmhost: stack limit of %d bytes is over the %d a 32-bit counter allows", cfg.StackBytes, math.MaxInt32)
	}
	switch {
	case cfg.FuelPerMillisecond == 0:
		cfg.FuelPerMillisecond = DefaultFuelPerMillisecond
	case cfg.FuelPerMillisecond < 0:
		return nil, fmt.Errorf("wasmhost: negative fuel per millisecond %d", cfg.FuelPerMillisecond)
	}
	if cfg.PoolWait == 0 {
		cfg.PoolWait = time.Second
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = time.Second
	}
	timeouts := map[hooks.Point]time.Duration{
		hooks.PointPrecommit:  abi.DefaultTimeoutPrecommitMS * time.Millisecond,
		hooks.PointPostcommit: abi.DefaultTimeoutPostcommitMS * time.Millisecond,
		hooks.PointKeyFun:     abi.DefaultTimeoutKeyFunMS * time.Millisecond,
		hooks.PointLinkFun:    abi.DefaultTimeoutLinkFunMS * time.Millisecond,
		hooks.PointMap:        abi.DefaultTimeoutMapReduceMS * time.Millisecond,
		hooks.PointReduce:     abi.DefaultTimeoutMapReduceMS * time.Millisecond,
	}
	for p, d := range cfg.Timeouts {
		if _, ok := timeouts[p]; !ok || d <= 0 {
			return nil, fmt.Errorf("wasmhost: bad timeout %v for point %s", d, p)
		}
		timeouts[p] = d
	}
	cfg.Timeouts = timeouts
	codec, err := hookjson.NewCodec(cfg.Dialect)
	if err != nil {
		return nil, fmt.Errorf("wasmhost: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}

	cache, rt, err := newRuntime(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h := &Host{
		cfg: cfg, codec: codec, rt: rt, cache: cache, logger: logger,
		compiled: map[string]*compiled{},
		modules:  map[string]*version{},
		stats:    map[string]*moduleStats{},
		versions: map[*version]struct{}{},
		starting: map[*instance]struct{}{},
	}
	if err := h.instantiateHostModules(ctx); err != nil {
		_ = rt.Close(ctx)
		_ = cache.Close(ctx)
		return nil, err
	}
	h.startWatchdog()
	return h, nil
}

// maxFuel caps a budget: far from overflow, whatever a guest subtracts.
const maxFuel = math.MaxInt64 / 4

// fuelFor returns the fuel for a budget of d.
func (h *Host) fuelFor(d time.Duration) int64 {
	f := float64(d) / float64(time.Millisecond) * float64(h.cfg.FuelPerMillisecond)
	switch {
	case f >= maxFuel:
		return maxFuel
	case f < 1:
		return 0
	}
	return int64(f)
}

// runtimeMu serialises the creation of wazero runtimes and caches: wazero v1.12.0 caches
// its own version in an unsynchronised package variable the first time either is made,
// a data race when two hosts start at once.
var runtimeMu sync.Mutex

// newRuntime returns the compilation cache and the runtime of a host.
func newRuntime(ctx context.Context, cfg Config) (wazero.CompilationCache, wazero.Runtime, error) {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		var err error
		if cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir); err != nil {
			return nil, nil, fmt.Errorf("wasmhost: compilation cache %s: %w", cfg.CacheDir, err)
		}
	} else {
		cache = wazero.NewCompilationCache()
	}
	// No WithCloseOnContextDone: fuel and the watchdog end calls (see the package
	// documentation).
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithMemoryLimitPages(cfg.MemoryPages).
		WithCompilationCache(cache))
	return cache, rt, nil
}

// instantiateHostModules provides "wasi_snapshot_preview1" and "cairn" to the guests
// and records their signatures for the import checks.
func (h *Host) instantiateHostModules(ctx context.Context) error {
	wasi, err := instantiateWASI(ctx, h.rt)
	if err != nil {
		return err
	}
	i32 := api.ValueTypeI32
	cairn, err := h.rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostOutput), []api.ValueType{i32, i32}, nil).
		WithParameterNames("ptr", "len").Export(abi.ImportOutput).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").Export(abi.ImportLog).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("wasmhost: instantiate the %q host module: %w", abi.ImportModule, err)
	}
	h.hostFuncs = map[string]map[string]api.FunctionDefinition{
		abi.WASIModule:   wasi.ExportedFunctionDefinitions(),
		abi.ImportModule: cairn.ExportedFunctionDefinitions(),
	}
	return nil
}

// Kind returns hooks.KindWASM.
func (h *Host) Kind() string { return hooks.KindWASM }

// HasModule reports whether a module of that name is installed.
func (h *Host) HasModule(name string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.modules[name]
	return ok
}

// Modules describes the installed modules, sorted by name.
func (h *Host) Modules() []hooks.ModuleInfo {
	h.mu.RLock()
	out := make([]hooks.ModuleInfo, 0, len(h.modules))
	for name, v := range h.modules {
		out = append(out, v.comp.info(name))
	}
	h.mu.RUnlock()
	slices.SortFunc(out, func(a, b hooks.ModuleInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Timeout returns the deadline of one call at point p.
func (h *Host) Timeout(p hooks.Point) time.Duration { return h.cfg.Timeouts[p] }

// closeSweepLimit bounds how long Close keeps stopping calls that outlived its context.
const closeSweepLimit = 2 * time.Second

// Close stops taking calls, waits (until ctx is done) for the calls in flight, and
// releases every module, the runtime and the compilation cache. Calls still running
// when ctx is done are stopped: they fail as crashed.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	versions := slices.Collect(maps.Values(h.modules))
	clear(h.modules)
	if h.unfreed > 0 {
		h.allFreed = make(chan struct{})
	}
	wait := h.allFreed
	h.mu.Unlock()
	for _, v := range versions {
		v.retire()
	}
	var err error
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			err = fmt.Errorf("wasmhost: close: calls still running: %w", ctx.Err())
			h.wd.closing.Store(true)
			// A guest's slow path may overwrite one raise of its fuel floor (see
			// instance.watch), and the watchdog stops below: sweep until the stopped
			// calls have ended, for a bounded time.
			scratch := new([]*version)
			for until := time.Now().Add(closeSweepLimit); h.sweep(true, scratch) > 0 && time.Now().Before(until); {
				time.Sleep(time.Millisecond)
			}
		}
	}
	h.stopWatchdog()
	// Closing the runtime stops whatever still runs and frees all compiled code.
	if cerr := h.rt.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = fmt.Errorf("wasmhost: close runtime: %w", cerr)
	}
	if cerr := h.cache.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = fmt.Errorf("wasmhost: close compilation cache: %w", cerr)
	}
	return err
}

// versionFreed is called once per version when it is released.
func (h *Host) versionFreed(v *version) {
	h.mu.Lock()
	delete(h.versions, v)
	h.unfreed--
	if h.unfreed == 0 && h.allFreed != nil {
		close(h.allFreed)
		h.allFreed = nil
	}
	h.mu.Unlock()
}

// current returns the installed version of module name with a reference taken; the
// caller must call releaseRef.
func (h *Host) current(name string) (*version, error) {
	for {
		h.mu.RLock()
		v, closed := h.modules[name], h.closed
		h.mu.RUnlock()
		switch {
		case closed:
			return nil, errClosed
		case v == nil:
			return nil, fmt.Errorf("wasmhost: %w: %q", hooks.ErrNoModule, name)
		case v.acquire():
			return v, nil
		}
		// v was retired after the lookup: the map already holds its successor (or
		// nothing), so look again.
	}
}
