package hooks

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnkv/cairn/core"
)

// Provider kinds, also the prefixes that pin a module name to a runtime ("wasm:audit").
const (
	KindNative     = "native"
	KindWASM       = "wasm"
	KindPlugin     = "plugin"
	KindJavaScript = "javascript"
)

// Provider is a runtime that loads extension functions: the native built-ins, the
// WebAssembly host, the go-plugin host, the JavaScript engine.
type Provider interface {
	// Kind names the runtime (KindNative, KindWASM, KindPlugin or KindJavaScript).
	Kind() string
	// HasModule reports whether the runtime has a module of that name. The JavaScript
	// runtime has no modules: its functions are named by {"name": N} alone.
	HasModule(mod string) bool
	// Lookup returns fun of module mod as an implementation of p's interface (Precommit
	// for PointPrecommit, and so on). It returns an error wrapping ErrNoModule when the
	// runtime has no module mod, and one wrapping ErrNoFunction when the module has no
	// such function or cannot serve it at p. The returned implementation stays valid
	// while the module is replaced by a new version; after the module is removed its
	// calls fail with an error wrapping ErrNoModule.
	Lookup(mod, fun string, p Point) (any, error)
}

// Errors of resolution. Call errors are *CallError.
var (
	// ErrNoModule: no runtime has the module.
	ErrNoModule = errors.New("no such module")
	// ErrNoFunction: the module has no such function (or not for that extension point).
	ErrNoFunction = errors.New("no such function")
	// ErrNoJavaScript: the spec names a JavaScript function and no JavaScript runtime
	// is configured.
	ErrNoJavaScript = errors.New("JavaScript functions are not available on this server")
)

// CallErrorKind says how a call of an extension function failed.
type CallErrorKind int

// The kinds of call failure.
const (
	// Crashed: the function trapped, the process died, or it broke the ABI.
	Crashed CallErrorKind = iota
	// TimedOut: the function ran past its deadline.
	TimedOut
	// BadResult: the function returned a result that does not parse or is out of range.
	BadResult
	// Failed: the function reported an error of its own (ABI status 2).
	Failed
	// Unavailable: the runtime could not run the call (no instance free in time, module
	// being removed, plugin down).
	Unavailable
)

var kindNames = [...]string{"crashed", "timed out", "bad result", "failed", "unavailable"}

// String returns a short name of the kind.
func (k CallErrorKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "unknown"
	}
	return kindNames[k]
}

// CallError is the error of a failed call of an extension function.
type CallError struct {
	Kind     CallErrorKind
	Module   string
	Function string
	// Err is the underlying cause (a trap message, the guest's own message, ...).
	Err error
}

// Error implements error.
func (e *CallError) Error() string {
	return fmt.Sprintf("hook %s:%s %s: %v", e.Module, e.Function, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// Registry resolves hook specs from bucket properties to implementations. Providers
// are consulted in the order given to NewRegistry (native, then WASM, then plugins);
// a "kind:" prefix on the module name pins one. Resolutions are cached until
// Invalidate. A Registry is safe for concurrent use.
type Registry struct {
	providers []Provider

	mu    sync.RWMutex // guards cache
	cache map[cacheKey]cached
}

type cacheKey struct {
	mod, fun, name string
	p              Point
}

type cached struct {
	impl any
	err  error
}

// NewRegistry returns a registry over providers, in resolution order. Nil providers
// are skipped.
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{cache: map[cacheKey]cached{}}
	for _, p := range providers {
		if p != nil {
			r.providers = append(r.providers, p)
		}
	}
	return r
}

// Invalidate forgets every cached resolution; call it after modules change.
func (r *Registry) Invalidate() {
	r.mu.Lock()
	clear(r.cache)
	r.mu.Unlock()
}

// Owner returns the kind of the runtime that has module mod (after any prefix), or ""
// when none has. Names are unique across runtimes: registering a module whose name
// another runtime already has is refused.
func (r *Registry) Owner(mod string) string {
	kind, name := splitKind(mod)
	for _, p := range r.providers {
		if (kind == "" || p.Kind() == kind) && p.HasModule(name) {
			return p.Kind()
		}
	}
	return ""
}

// Resolve returns the implementation that spec names at point p. Errors wrap
// ErrNoModule, ErrNoFunction or ErrNoJavaScript and say which name was not found.
func (r *Registry) Resolve(spec core.HookSpec, p Point) (any, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoModule, spec.Mod)
	}
	k := cacheKey{spec.Mod, spec.Fun, spec.Name, p}
	r.mu.RLock()
	c, ok := r.cache[k]
	r.mu.RUnlock()
	if ok {
		return c.impl, c.err
	}
	impl, err := r.resolve(spec, p)
	r.mu.Lock()
	if len(r.cache) >= 10_000 {
		clear(r.cache)
	}
	r.cache[k] = cached{impl, err}
	r.mu.Unlock()
	return impl, err
}

func (r *Registry) resolve(spec core.HookSpec, p Point) (any, error) {
	if spec.Mod == "" {
		if spec.Name == "" {
			return nil, fmt.Errorf("%w: the hook names no module", ErrNoModule)
		}
		for _, pr := range r.providers {
			if pr.Kind() == KindJavaScript {
				return pr.Lookup("", spec.Name, p)
			}
		}
		return nil, ErrNoJavaScript
	}
	kind, name := splitKind(spec.Mod)
	for _, pr := range r.providers {
		if kind != "" && pr.Kind() != kind {
			continue
		}
		if !pr.HasModule(name) {
			continue
		}
		return pr.Lookup(name, spec.Fun, p)
	}
	return nil, fmt.Errorf("%w: %q", ErrNoModule, spec.Mod)
}

// Validate checks that spec resolves at p to an implementation of p's interface, for
// bucket-property updates: it returns a reason suitable for the client when it does not.
func (r *Registry) Validate(spec core.HookSpec, p Point) error {
	impl, err := r.Resolve(spec, p)
	if err != nil {
		return err
	}
	var ok bool
	switch p {
	case PointPrecommit:
		_, ok = impl.(Precommit)
	case PointPostcommit:
		_, ok = impl.(Postcommit)
	case PointKeyFun:
		_, ok = impl.(KeyFun)
	case PointLinkFun:
		_, ok = impl.(LinkFun)
	case PointMap:
		_, ok = impl.(Map)
	case PointReduce:
		_, ok = impl.(Reduce)
	}
	if !ok {
		return fmt.Errorf("%w: %s:%s cannot serve as %s", ErrNoFunction, spec.Mod, spec.Fun, p)
	}
	return nil
}

// Precommit resolves a precommit hook.
func (r *Registry) Precommit(spec core.HookSpec) (Precommit, error) {
	return as[Precommit](r, spec, PointPrecommit)
}

// Postcommit resolves a postcommit hook.
func (r *Registry) Postcommit(spec core.HookSpec) (Postcommit, error) {
	return as[Postcommit](r, spec, PointPostcommit)
}

// KeyFun resolves a chash_keyfun.
func (r *Registry) KeyFun(spec core.HookSpec) (KeyFun, error) {
	return as[KeyFun](r, spec, PointKeyFun)
}

// LinkFun resolves a linkfun.
func (r *Registry) LinkFun(spec core.HookSpec) (LinkFun, error) {
	return as[LinkFun](r, spec, PointLinkFun)
}

// Map resolves a map function.
func (r *Registry) Map(spec core.HookSpec) (Map, error) {
	return as[Map](r, spec, PointMap)
}

// Reduce resolves a reduce function.
func (r *Registry) Reduce(spec core.HookSpec) (Reduce, error) {
	return as[Reduce](r, spec, PointReduce)
}

func as[T any](r *Registry, spec core.HookSpec, p Point) (T, error) {
	var zero T
	impl, err := r.Resolve(spec, p)
	if err != nil {
		return zero, err
	}
	t, ok := impl.(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s:%s cannot serve as %s", ErrNoFunction, spec.Mod, spec.Fun, p)
	}
	return t, nil
}

// splitKind splits a pinned module name "wasm:audit" into its kind and name.
func splitKind(mod string) (kind, name string) {
	if i := strings.IndexByte(mod, ':'); i > 0 {
		switch k := mod[:i]; k {
		case KindNative, KindWASM, KindPlugin:
			return k, mod[i+1:]
		}
	}
	return "", mod
}

// Lister is a Provider that can list its module names (the process plugins, which are
// configured rather than registered).
type Lister interface {
	Names() []string
}

// Shadow is a module name of one runtime that resolves to another runtime's module,
// earlier in the resolution order, when it has no "kind:" prefix.
type Shadow struct {
	Name string
	// Kind is the runtime whose module is shadowed; By the runtime that wins.
	Kind, By string
}

// Shadowed returns the names of the runtimes that list their modules (Lister) which
// an earlier runtime also has: bare names reach the earlier one. Registering such a name
// is refused, but a module stored before a plugin of its name was configured, or a
// plugin named like a built-in module, shadows this way.
func (r *Registry) Shadowed() []Shadow {
	var out []Shadow
	for i, p := range r.providers {
		l, ok := p.(Lister)
		if !ok {
			continue
		}
		for _, name := range l.Names() {
			for _, q := range r.providers[:i] {
				if q.HasModule(name) {
					out = append(out, Shadow{Name: name, Kind: p.Kind(), By: q.Kind()})
					break
				}
			}
		}
	}
	return out
}
