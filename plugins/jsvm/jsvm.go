// Package jsvm runs JavaScript MapReduce functions and precommit hooks, as the reference
// system did with its JavaScript VMs, on modernc.org/quickjs (QuickJS transpiled to Go,
// no cgo). It serves core/hooks as a SourceProvider of kind "javascript":
//
//   - named functions ({"name": "Riak.mapValuesJson"} in a phase or in the precommit
//     list of bucket properties) are global functions: the built-ins Riak.* (also
//     reachable as Store.*, the interface's neutral name) and whatever the files of
//     Config.SourceDir define, loaded into every VM like the reference's js_source_dir;
//   - anonymous functions ({"source": "function(v, kd, arg) {...}"}) are compiled once
//     to bytecode, cached by the source's SHA-256, and defined once per VM.
//
// Map functions are called as f(value, keyData, arg) and must return an array; reduce
// functions as f(values, arg) and must return an array; precommit hooks as f(object)
// and return the object (possibly changed: it replaces the one written), "fail", or
// {"fail": reason} (the write is refused with the reason). The object is the reference's
// JavaScript object JSON (plugins/hookjson, in the configured dialect). Values cross as
// JSON text parsed and stringified inside the VM.
//
// Every VM is a sandbox: no files, network, timers, module loading or blocking waits; a
// hard memory limit per VM (Config.MemoryLimit), a time limit per call (Config.Timeout
// for map and reduce, Config.HookTimeout for precommit hooks, and the caller's context),
// and a call-depth limit (Config.StackSlots). VMs are pooled, one call per VM at a time:
// one pool serves MapReduce and another precommit hooks, so a MapReduce load never
// starves writes (the reference kept separate map, reduce and hook pools too). A VM that
// ran out of memory or was interrupted is closed and replaced. The engine looks for an
// interrupt only every few thousand steps and never inside one of its own operations:
// a call past its deadline is made to look at its next step (poke.go), and the array
// methods refuse the walks that would take hours (guard.js).
//
// JavaScript postcommit hooks are not supported: the reference accepted them in bucket
// properties and never ran them (it logged a warning); Cairn refuses them when the
// properties are set.
package jsvm

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/quickjs"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
)

// Defaults of Config.
const (
	DefaultMemoryLimit = 32 << 20
	DefaultTimeout     = 5 * time.Second
	DefaultHookTimeout = 100 * time.Millisecond
	DefaultStackSlots  = 2000
	DefaultPoolWait    = 2 * time.Second
	DefaultInitTimeout = time.Second
	DefaultCacheSize   = 1024
)

// Config configures a Runtime. The zero value is usable: every field has a default.
type Config struct {
	// SourceDir, if set, is a directory whose *.js files (in name order) every VM
	// evaluates at start, after the built-ins: the functions they define can be named
	// in phases and precommit lists. A file that does not compile or throws makes New
	// fail.
	SourceDir string
	// MemoryLimit caps the memory of each VM, in bytes (default 32 MiB, at least 1 MiB).
	MemoryLimit int64
	// Timeout bounds one map or reduce call (default 5s).
	Timeout time.Duration
	// HookTimeout bounds one precommit call (default 100ms).
	HookTimeout time.Duration
	// StackSlots bounds the depth of JavaScript calls (default 2000; the engine's unit
	// is about one JavaScript call frame; each costs about 3 KiB of goroutine stack).
	StackSlots int
	// PoolSize is the most VMs serving MapReduce at once (default 2*GOMAXPROCS).
	PoolSize int
	// HookPoolSize is the most VMs serving precommit hooks at once (default GOMAXPROCS,
	// at least 2).
	HookPoolSize int
	// PoolWait is how long a call waits for a free VM before it fails with
	// hooks.Unavailable (default 2s; the caller's context may end it sooner).
	PoolWait time.Duration
	// MaxVMsPerClient is the most VMs of each pool that serve one client
	// (core.ClientFrom of the call's context) at once (default: half of the pool, at
	// least 1). A call over its client's share waits, within PoolWait, for one of the
	// client's own calls to end, then fails with hooks.Unavailable wrapping
	// core.ErrClientBusy; the calls of other clients are not held up by it.
	MaxVMsPerClient int
	// InitTimeout bounds what the source directory's files run when a VM starts
	// (default 1s).
	InitTimeout time.Duration
	// CacheSize is the number of compiled anonymous sources kept (default 1024).
	CacheSize int
	// Dialect names the metadata prefix of the object JSON: "store" (default) or "riak".
	Dialect string
	// Logger receives ejsLog lines and VM events (default slog.Default()).
	Logger *slog.Logger
}

//go:embed builtins.js
var builtinsJS string

//go:embed prelude.js
var preludeJS string

//go:embed guard.js
var guardJS string

// sealJS runs after the source directory: the built-in namespace can no longer be
// changed or replaced by the code of one job and seen by the next.
const sealJS = `Object.freeze(Riak);
Object.defineProperty(globalThis, "Riak", {writable: false});
Object.defineProperty(globalThis, "Store", {writable: false});
Object.defineProperty(globalThis, "ejsLog", {writable: false, configurable: false});
`

// script is compiled code every VM evaluates when it starts.
type script struct {
	name     string
	bytecode []byte
}

// Runtime is the JavaScript runtime. It is safe for concurrent use.
type Runtime struct {
	cfg     Config
	codec   hookjson.Codec
	log     *slog.Logger
	scripts []script // guard, built-ins, source files, seal
	prelude []byte

	mapred, hook *pool

	// refMu guards ref, the VM that answers whether a name is a function. It runs no
	// client code, so every name resolves as in a freshly started VM.
	refMu sync.Mutex
	ref   *vm

	srcMu   sync.Mutex
	sources map[[32]byte]*compiled
	order   [][32]byte // insertion order of sources, for eviction

	logs logLimiter

	closed atomic.Bool
	st     counters
}

var (
	_ hooks.Provider       = (*Runtime)(nil)
	_ hooks.SourceProvider = (*Runtime)(nil)
)

// New starts a Runtime with cfg's settings: it compiles the built-ins and the source
// directory and checks them in a first VM. Close releases it.
func New(cfg Config) (*Runtime, error) {
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HookTimeout == 0 {
		cfg.HookTimeout = DefaultHookTimeout
	}
	if cfg.StackSlots == 0 {
		cfg.StackSlots = DefaultStackSlots
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.HookPoolSize == 0 {
		cfg.HookPoolSize = max(2, runtime.GOMAXPROCS(0))
	}
	if cfg.PoolWait == 0 {
		cfg.PoolWait = DefaultPoolWait
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = DefaultInitTimeout
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	switch {
	case cfg.MemoryLimit < 1<<20:
		return nil, fmt.Errorf("jsvm: memory limit %d is below 1 MiB", cfg.MemoryLimit)
	case cfg.Timeout < 0 || cfg.HookTimeout < 0 || cfg.PoolWait < 0 || cfg.InitTimeout < 0:
		return nil, errors.New("jsvm: negative timeout")
	case cfg.StackSlots < 100 || cfg.StackSlots > 20000:
		return nil, fmt.Errorf("jsvm: stack slots %d not between 100 and 20000", cfg.StackSlots)
	case cfg.PoolSize < 0 || cfg.HookPoolSize < 0 || cfg.CacheSize < 0 || cfg.MaxVMsPerClient < 0:
		return nil, errors.New("jsvm: negative pool, share or cache size")
	}
	codec, err := hookjson.NewCodec(cfg.Dialect)
	if err != nil {
		return nil, fmt.Errorf("jsvm: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Runtime{cfg: cfg, codec: codec, log: cfg.Logger, sources: map[[32]byte]*compiled{}}
	r.logs.log = cfg.Logger

	guard := strings.Replace(guardJS, "var limit = LIMIT;", "var limit = "+strconv.FormatInt(cfg.MemoryLimit/16, 10)+";", 1)
	sources := []struct{ name, code string }{{"guard.js", guard}, {"builtins.js", builtinsJS}}
	if cfg.SourceDir != "" {
		files, err := readSourceDir(cfg.SourceDir)
		if err != nil {
			return nil, err
		}
		sources = append(sources, files...)
	}
	sources = append(sources, struct{ name, code string }{"seal.js", sealJS})

	// The reference VM compiles everything (compiling runs no code), then starts like
	// every other VM, which checks that the source files run.
	comp, err := newBareVM(r)
	if err != nil {
		return nil, err
	}
	for _, s := range sources {
		bc, err := comp.q.Compile(s.code, 0)
		if err != nil {
			comp.close()
			return nil, fmt.Errorf("jsvm: %s: %s", s.name, errText(err))
		}
		r.scripts = append(r.scripts, script{s.name, bc})
	}
	if r.prelude, err = comp.q.Compile(preludeJS, 0); err != nil {
		comp.close()
		return nil, fmt.Errorf("jsvm: prelude: %s", errText(err))
	}
	comp.close()
	if r.ref, err = r.newVM(); err != nil {
		return nil, err
	}
	r.mapred = newPool(r, "MapReduce", cfg.PoolSize, cfg.MaxVMsPerClient)
	r.hook = newPool(r, "precommit hooks", cfg.HookPoolSize, cfg.MaxVMsPerClient)
	return r, nil
}

// readSourceDir returns the *.js files of dir in name order.
func readSourceDir(dir string) ([]struct{ name, code string }, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("jsvm: source dir: %w", err)
	}
	var files []struct{ name, code string }
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".js") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("jsvm: source dir: %w", err)
		}
		files = append(files, struct{ name, code string }{e.Name(), string(b)})
	}
	slices.SortFunc(files, func(a, b struct{ name, code string }) int { return strings.Compare(a.name, b.name) })
	return files, nil
}

// Kind implements hooks.Provider: "javascript".
func (r *Runtime) Kind() string { return hooks.KindJavaScript }

// HasModule implements hooks.Provider: JavaScript functions have no modules.
func (r *Runtime) HasModule(string) bool { return false }

// namePattern is what a named function looks like: dotted identifiers.
var namePattern = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)

// Lookup implements hooks.Provider: fun is the name of a global function (mod is
// empty), served as p's interface. Names are checked against a freshly started VM.
func (r *Runtime) Lookup(mod, fun string, p hooks.Point) (any, error) {
	if mod != "" {
		return nil, fmt.Errorf("jsvm: %w: JavaScript functions have no module (%q)", hooks.ErrNoModule, mod)
	}
	switch p {
	case hooks.PointMap, hooks.PointReduce, hooks.PointPrecommit:
	case hooks.PointPostcommit:
		return nil, fmt.Errorf("jsvm: %w: JavaScript postcommit hooks are not supported (%q)", hooks.ErrNoFunction, fun)
	default:
		return nil, fmt.Errorf("jsvm: %w: a JavaScript function cannot serve as %s (%q)", hooks.ErrNoFunction, p, fun)
	}
	if len(fun) > 256 || !namePattern.MatchString(fun) {
		return nil, fmt.Errorf("jsvm: %w: %q is not the name of a JavaScript function", hooks.ErrNoFunction, fun)
	}
	r.refMu.Lock()
	if r.ref == nil {
		r.refMu.Unlock()
		return nil, errClosed
	}
	ok, err := r.ref.isNamedFunction(fun, r.cfg.InitTimeout)
	r.refMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("jsvm: looking up %q: %w", fun, err)
	}
	if !ok {
		return nil, fmt.Errorf("jsvm: %w: %q", hooks.ErrNoFunction, fun)
	}
	return r.function(funcRef{name: fun}, p), nil
}

// compiled is an anonymous source compiled to bytecode (or the reason it is not a
// function).
type compiled struct {
	hash     [32]byte
	bytecode []byte
	err      error
}

// FromSource implements hooks.SourceProvider: source must be a function expression
// ("function(v, keyData, arg) {...}", a trailing semicolon allowed), for PointMap or
// PointReduce. It is compiled once per distinct source, in a MapReduce VM of the client
// ctx names and within ctx's deadline.
func (r *Runtime) FromSource(ctx context.Context, source string, p hooks.Point) (any, error) {
	if p != hooks.PointMap && p != hooks.PointReduce {
		return nil, fmt.Errorf("jsvm: %w: anonymous JavaScript serves map and reduce phases only, not %s", hooks.ErrNoFunction, p)
	}
	if r.closed.Load() {
		return nil, errClosed
	}
	c, err := r.compile(ctx, source)
	if err != nil {
		return nil, err
	}
	return r.function(funcRef{src: c}, p), nil
}

// compile returns source's compiled form from the cache, or compiles it and checks in
// a VM that it evaluates to a function (within the call time limit and ctx).
func (r *Runtime) compile(ctx context.Context, source string) (*compiled, error) {
	h := sha256.Sum256([]byte(source))
	r.srcMu.Lock()
	c := r.sources[h]
	r.srcMu.Unlock()
	if c != nil {
		r.st.cacheHits.Add(1)
		return c, c.err
	}
	r.st.cacheMisses.Add(1)
	v, err := r.mapred.acquire(ctx, r.cfg.PoolWait)
	if err != nil {
		return nil, err
	}
	limit := r.cfg.Timeout
	if d, ok := ctx.Deadline(); ok {
		limit = max(min(limit, time.Until(d)), time.Millisecond)
	}
	var recycle bool
	r.mapred.guard(ctx, v, time.Now().Add(limit), func() {
		c, recycle, err = r.compileIn(v, source, h, limit)
	})
	r.mapred.release(v, recycle)
	if err != nil {
		return nil, err
	}
	r.srcMu.Lock()
	if old := r.sources[h]; old != nil {
		c = old
	} else {
		if len(r.order) >= r.cfg.CacheSize && len(r.order) > 0 {
			delete(r.sources, r.order[0])
			r.order = r.order[1:]
		}
		r.sources[h] = c
		r.order = append(r.order, h)
	}
	r.srcMu.Unlock()
	return c, c.err
}

// compileIn compiles source in v and checks, within limit, that it evaluates to a
// function. A compiled with an error is the source's fault and may be cached; an error
// returned is not (the evaluation threw, or ran out of time or memory) and recycle says
// whether v must be replaced.
func (r *Runtime) compileIn(v *vm, source string, h [32]byte, limit time.Duration) (c *compiled, recycle bool, err error) {
	defer func() {
		if x := recover(); x != nil {
			c, recycle, err = nil, true, fmt.Errorf("jsvm: compiling the source: engine panic: %v", x)
		}
	}()
	c = &compiled{hash: h}
	c.bytecode, err = v.q.Compile(wrapSource(source), 0)
	var qe *quickjs.Error
	switch {
	case err != nil && (!errors.As(err, &qe) || qe.Name != "SyntaxError"):
		// Out of memory while compiling: not the source's fault alone.
		return nil, true, &sourceError{"compiling the JavaScript source: " + errText(err)}
	case err != nil:
		c.err = &sourceError{"the JavaScript source does not compile: " + errText(err)}
		return c, false, nil
	}
	start := time.Now()
	if _, err = v.define(c, limit); err != nil {
		var nf *notFunctionError
		if !errors.As(err, &nf) && !recycleAfter(err) && (time.Since(start) >= limit || emptyException(err)) {
			// Interrupted at its time limit, whatever the engine threw meanwhile: under
			// load an interrupted evaluation has surfaced as an exception with neither
			// name nor message, which JavaScript code rarely throws. The VM is replaced.
			return nil, true, &sourceError{fmt.Sprintf(
				"evaluating the JavaScript source: interrupted at the time limit of %v (or it threw an exception without a message)", limit)}
		}
		if !errors.As(err, &nf) {
			return nil, recycleAfter(err), &sourceError{"evaluating the JavaScript source: " + errText(err)}
		}
		c.err = &sourceError{"the JavaScript source " + nf.what}
	}
	return c, false, nil
}

// sourceError says why a client's source is not a function; it wraps
// hooks.ErrNoFunction and its text is for the client.
type sourceError struct{ msg string }

func (e *sourceError) Error() string { return e.msg }
func (e *sourceError) Unwrap() error { return hooks.ErrNoFunction }

// wrapSource makes a function expression into a script whose completion value is the
// function: "0," puts it in expression position (on the source's first line, so that
// error positions are the source's), the line break keeps a trailing comment from
// swallowing the end, and the final ";" ends an unterminated statement (a trailing ";"
// of the source is an empty statement, which keeps the value).
func wrapSource(source string) string {
	return "0," + source + "\n;"
}

// Close releases every VM. Calls in flight are interrupted; later calls fail.
func (r *Runtime) Close(ctx context.Context) error {
	if r.closed.Swap(true) {
		return nil
	}
	r.mapred.close(ctx)
	r.hook.close(ctx)
	r.refMu.Lock()
	r.ref.close()
	r.ref = nil
	r.refMu.Unlock()
	return nil
}

// errClosed is the error of calls after Close.
var errClosed = &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript,
	Err: errors.New("the JavaScript runtime is closed")}

// Stats are a Runtime's counters.
type Stats struct {
	// Calls counts calls by extension point name ("map", "reduce", "precommit").
	Calls map[string]int64
	// Failures counts failed calls by kind (hooks.CallErrorKind.String()).
	Failures map[string]int64
	// VMs is the number of VMs alive (both pools), Idle those waiting for a call.
	VMs, Idle int64
	// Created counts VMs started; Recycled those closed after running out of memory
	// or being interrupted.
	Created, Recycled int64
	// CacheHits and CacheMisses count lookups of compiled anonymous sources.
	CacheHits, CacheMisses int64
	// LogDropped counts ejsLog lines dropped by the rate limit.
	LogDropped int64
}

// Stats returns the runtime's counters.
func (r *Runtime) Stats() Stats {
	s := Stats{Calls: map[string]int64{}, Failures: map[string]int64{}}
	for p := range r.st.calls {
		if n := r.st.calls[p].Load(); n > 0 {
			s.Calls[hooks.Point(p).String()] = n
		}
	}
	for k := range r.st.failures {
		if n := r.st.failures[k].Load(); n > 0 {
			s.Failures[hooks.CallErrorKind(k).String()] = n
		}
	}
	for _, p := range []*pool{r.mapred, r.hook} {
		live, idle := p.size()
		s.VMs += live
		s.Idle += idle
	}
	s.Created = r.st.created.Load()
	s.Recycled = r.st.recycled.Load()
	s.CacheHits = r.st.cacheHits.Load()
	s.CacheMisses = r.st.cacheMisses.Load()
	s.LogDropped = r.logs.dropped.Load()
	return s
}

// counters are the runtime's statistics.
type counters struct {
	calls                  [int(hooks.PointReduce) + 1]atomic.Int64
	failures               [int(hooks.Unavailable) + 1]atomic.Int64
	created, recycled      atomic.Int64
	cacheHits, cacheMisses atomic.Int64
}
