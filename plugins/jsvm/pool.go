package jsvm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"modernc.org/quickjs"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// maxFunctionsPerVM bounds the functions a VM keeps defined (anonymous sources and
// resolved names); past it the VM forgets them all and defines them again on demand.
const maxFunctionsPerVM = 256

// vm is one QuickJS VM with the built-ins, the source directory and the prelude
// loaded. It serves one call at a time.
type vm struct {
	r *Runtime
	q *quickjs.VM
	// dispatch is the prelude's entry point (see prelude.js); zero in a bare VM.
	dispatch    quickjs.Value
	hasDispatch bool
	// fns are the functions defined in this VM: by source hash or by name.
	fns map[fnKey]quickjs.Value
	// ctx is the engine's context (see poke); nil when it cannot be found.
	ctx unsafe.Pointer
}

// fnKey names a function defined in a VM.
type fnKey struct {
	name string
	hash [32]byte
}

// newBareVM starts a VM with the limits and ejsLog, and nothing evaluated.
func newBareVM(r *Runtime) (*vm, error) {
	q, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("jsvm: new VM: %w", err)
	}
	q.SetMemoryLimit(uintptr(r.cfg.MemoryLimit))
	q.SetMaxStackSize(uintptr(r.cfg.StackSlots))
	q.SetCanBlock(false)
	if err := q.RegisterHostFunc("ejsLog", r.logs.ejsLog); err != nil {
		q.Close()
		return nil, fmt.Errorf("jsvm: new VM: ejsLog: %w", err)
	}
	return &vm{r: r, q: q, fns: map[fnKey]quickjs.Value{}, ctx: jsContext(q)}, nil
}

// newVM starts a VM and evaluates the built-ins, the source directory, the seal and
// the prelude in it.
func (r *Runtime) newVM() (v *vm, err error) {
	v, err = newBareVM(r)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jsvm: new VM: engine panic: %v", p)
		}
		if err != nil {
			v.close()
			v = nil
		}
	}()
	v.setTimeout(r.cfg.InitTimeout)
	for _, s := range r.scripts {
		res, err := v.q.EvalBytecodeValue(s.bytecode)
		if err != nil {
			return nil, fmt.Errorf("jsvm: %s: %s", s.name, errText(err))
		}
		res.Free()
	}
	d, err := v.q.EvalBytecodeValue(r.prelude)
	if err != nil {
		return nil, fmt.Errorf("jsvm: prelude: %s", errText(err))
	}
	v.dispatch, v.hasDispatch = d, true
	r.st.created.Add(1)
	return v, nil
}

// close frees the VM's values and the VM.
func (v *vm) close() {
	defer func() { _ = recover() }() // an abandoned engine may panic on the way out
	for k, f := range v.fns {
		f.Free()
		delete(v.fns, k)
	}
	if v.hasDispatch {
		v.dispatch.Free()
		v.hasDispatch = false
	}
	v.q.Close()
}

// notFunctionError says that an anonymous source evaluates to something else than a
// function.
type notFunctionError struct{ what string }

func (e *notFunctionError) Error() string { return "the source " + e.what }

// remember keeps f as the function k, forgetting every function once there are too many.
func (v *vm) remember(k fnKey, f quickjs.Value) {
	if len(v.fns) >= maxFunctionsPerVM {
		for old, g := range v.fns {
			g.Free()
			delete(v.fns, old)
		}
	}
	v.fns[k] = f
}

// define returns the function c's bytecode evaluates to, evaluating it in this VM the
// first time. The value stays owned by the VM.
func (v *vm) define(c *compiled, timeout time.Duration) (quickjs.Value, error) {
	k := fnKey{hash: c.hash}
	if f, ok := v.fns[k]; ok {
		return f, nil
	}
	v.setTimeout(timeout)
	f, err := v.q.EvalBytecodeValue(c.bytecode)
	if err != nil {
		return quickjs.Value{}, err
	}
	res, err := v.dispatch.Call(quickjs.UndefinedValue, "isFunction", f)
	if err != nil {
		f.Free()
		return quickjs.Value{}, err
	}
	if res != true {
		var what string
		switch x, _ := f.Any(); x.(type) {
		case nil:
			what = "evaluates to null, not a function"
		case quickjs.Undefined:
			what = "evaluates to undefined, not a function"
		case string:
			what = "evaluates to a string, not a function"
		case bool:
			what = "evaluates to a boolean, not a function"
		case int, float64:
			what = "evaluates to a number, not a function"
		default:
			what = "evaluates to something else than a function"
		}
		f.Free()
		return quickjs.Value{}, &notFunctionError{what}
	}
	v.remember(k, f)
	return f, nil
}

// named returns the global function name, resolving it in this VM the first time.
func (v *vm) named(name string, timeout time.Duration) (quickjs.Value, error) {
	k := fnKey{name: name}
	if f, ok := v.fns[k]; ok {
		return f, nil
	}
	v.setTimeout(timeout)
	f, err := v.dispatch.CallValue(quickjs.UndefinedValue, "resolve", name)
	if err != nil {
		return quickjs.Value{}, err
	}
	if f.IsUndefined() {
		return quickjs.Value{}, fmt.Errorf("no JavaScript function %q in this VM", name)
	}
	ok, err := v.dispatch.Call(quickjs.UndefinedValue, "isFunction", f)
	if err != nil || ok != true {
		f.Free()
		if err == nil {
			err = fmt.Errorf("no JavaScript function %q in this VM", name)
		}
		return quickjs.Value{}, err
	}
	v.remember(k, f)
	return f, nil
}

// isNamedFunction reports whether name reaches a function from the global object.
func (v *vm) isNamedFunction(name string, timeout time.Duration) (bool, error) {
	v.setTimeout(timeout)
	res, err := v.dispatch.Call(quickjs.UndefinedValue, "has", name)
	if err != nil {
		return false, errors.New(errText(err))
	}
	return res == true, nil
}

// pool holds the VMs of one use (MapReduce or precommit hooks): at most size of them
// live, each serving one call at a time, and at most clients.Max() of them serving one
// client (core.ClientFrom of the call's context) at once.
type pool struct {
	r    *Runtime
	name string
	// tokens holds one element per live VM; a VM is started only after a send.
	tokens  chan struct{}
	idle    chan *vm
	clients *core.ClientLimiter // VMs in use per client

	mu     sync.Mutex     // guards busy and closed
	busy   map[*vm]string // the busy VMs, each with the client it serves
	closed bool
}

// newPool returns a pool of at most size VMs, of which one client may use perClient
// at once (0: half of them, at least 1).
func newPool(r *Runtime, name string, size, perClient int) *pool {
	if perClient <= 0 {
		perClient = max(1, size/2)
	}
	return &pool{r: r, name: name, tokens: make(chan struct{}, size), idle: make(chan *vm, size),
		clients: core.NewClientLimiter(perClient), busy: map[*vm]string{}}
}

// errPoolWait is the cause of a wait for a VM that lasted the pool's wait.
var errPoolWait = errors.New("jsvm: waited too long for a VM")

// acquire takes a VM for the client ctx names: once the client is within its share, an
// idle VM or a new one. It waits up to wait in all (and while ctx lasts). A client
// whose share stayed used up meanwhile gets an Unavailable error wrapping
// core.ErrClientBusy.
func (p *pool) acquire(ctx context.Context, wait time.Duration) (*vm, error) {
	if cap(p.tokens) == 0 {
		return nil, &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript,
			Err: fmt.Errorf("no JavaScript VMs are configured for %s", p.name)}
	}
	client := core.ClientFrom(ctx)
	wctx, cancel := context.WithTimeoutCause(ctx, wait, errPoolWait)
	defer cancel()
	if err := p.clients.Acquire(wctx, client); err != nil {
		if ctx.Err() != nil {
			return nil, p.waitEnded(ctx)
		}
		return nil, &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript,
			Err: fmt.Errorf("%w (%d of the %d JavaScript VMs for %s), and none came free within %v",
				core.ErrClientBusy, p.clients.Max(), cap(p.tokens), p.name, wait)}
	}
	v, err := p.acquireVM(ctx, wctx, wait)
	if err != nil {
		p.clients.Release(client)
		return nil, err
	}
	return p.take(v, client)
}

// acquireVM takes an idle VM or starts one, waiting while wctx (ctx and the pool's
// wait) lasts when all are busy.
func (p *pool) acquireVM(ctx, wctx context.Context, wait time.Duration) (*vm, error) {
	select {
	case v := <-p.idle:
		return v, nil
	default:
	}
	select {
	case v := <-p.idle:
		return v, nil
	case p.tokens <- struct{}{}:
		v, err := p.r.newVM()
		if err != nil {
			<-p.tokens
			return nil, &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript, Err: err}
		}
		return v, nil
	case <-wctx.Done():
		if ctx.Err() != nil {
			return nil, p.waitEnded(ctx)
		}
		return nil, &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript,
			Err: fmt.Errorf("no JavaScript VM for %s was free within %v (%d busy)", p.name, wait, cap(p.tokens))}
	}
}

// waitEnded is the error of a wait for a VM that the caller's context ended.
func (p *pool) waitEnded(ctx context.Context) error {
	return &hooks.CallError{Kind: hooks.TimedOut, Module: hooks.KindJavaScript,
		Err: fmt.Errorf("waiting for a JavaScript VM: %w", context.Cause(ctx))}
}

// take marks v busy serving client, unless the pool closed meanwhile.
func (p *pool) take(v *vm, client string) (*vm, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		v.close()
		<-p.tokens
		p.clients.Release(client)
		return nil, errClosed
	}
	p.busy[v] = client
	p.mu.Unlock()
	return v, nil
}

// release gives v back after a call; recycle closes it instead (after an out-of-memory
// error or an interrupt) and lets a fresh one start in its place. The VM counts in its
// client's share until it is back.
func (p *pool) release(v *vm, recycle bool) {
	p.mu.Lock()
	client := p.busy[v]
	delete(p.busy, v)
	if !recycle && !p.closed {
		p.idle <- v // never blocks: there are fewer live VMs than its capacity
		p.mu.Unlock()
		p.clients.Release(client)
		return
	}
	p.mu.Unlock()
	if recycle {
		p.r.st.recycled.Add(1)
		p.r.log.Debug("javascript VM closed after running out of memory or being stopped", "pool", p.name)
	}
	v.close()
	<-p.tokens
	p.clients.Release(client)
}

// guard runs fn, a call into v, and interrupts v from deadline on, or once ctx ends,
// every few milliseconds until fn returns (an interrupt requested just before a call
// into JavaScript starts is cleared when it starts). Each interrupt also pokes v, so
// that the engine checks for it at its next step rather than thousands of steps later.
// A single operation of the engine cannot be interrupted: the long ones are bounded by
// the memory cap and by guard.js.
func (p *pool) guard(ctx context.Context, v *vm, deadline time.Time, fn func()) {
	var mu sync.Mutex // guards running: v is poked only while fn runs
	running := true
	done := make(chan struct{})
	hammer := func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			mu.Lock()
			if running {
				v.q.Interrupt()
				v.poke()
			}
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}
	due := time.AfterFunc(time.Until(deadline), hammer)
	stop := func() bool { return false }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, hammer)
	}
	defer func() {
		mu.Lock()
		running = false
		mu.Unlock()
		close(done)
		due.Stop()
		stop()
	}()
	fn()
}

// size returns the number of live and idle VMs.
func (p *pool) size() (live, idle int64) {
	return int64(len(p.tokens)), int64(len(p.idle))
}

// close interrupts the calls in flight, closes the idle VMs and waits (while ctx
// lasts) for the busy ones to come back and be closed.
func (p *pool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	for v := range p.busy {
		v.q.Interrupt()
		v.poke() // safe: a busy VM is closed only after release takes it out of busy
	}
	p.mu.Unlock()
	for {
		select {
		case v := <-p.idle:
			v.close()
			<-p.tokens
			continue
		default:
		}
		if len(p.tokens) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// setTimeout sets the time limit of the VM's next call into JavaScript.
func (v *vm) setTimeout(d time.Duration) {
	_ = v.q.SetEvalTimeout(d) // it never fails
}
