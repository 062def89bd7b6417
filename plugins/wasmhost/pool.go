package wasmhost

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/wasmhost/instrument"
	"github.com/cairnkv/cairn/sdk/abi"
)

// instance is one instantiated module. It serves one call at a time; its fields are
// used only by the goroutine that holds it, except those under mu.
type instance struct {
	mod   api.Module
	mem   api.Memory
	alloc api.Function
	// fuel and floor are the instance's fuel metering globals, guard its stack
	// counter (nil without a stack limit); see package instrument.
	fuel, floor api.MutableGlobal
	guard       api.Global
	// funcs caches the entry points looked up so far.
	funcs map[string]api.Function
	// det marks the deterministic flavour, which serves chash_keyfun calls.
	det bool
	// memPages is the most memory the instance may have, in pages.
	memPages uint32
	// stack holds CallWithStack's parameters and results.
	stack [2]uint64
	calls int
	stats *moduleStats
	// state is the state of the call in progress; the host functions and the
	// stdout/stderr writers reach it through the call's context or this pointer.
	state callState

	// mu guards running, ctx, deadline, stopped and freeMem, which the watchdog
	// reads from its goroutine (and the floor, which it raises under mu), and the
	// linear memory's release (see linearMemory.Free).
	mu       sync.Mutex
	running  bool            // a call or _initialize is in progress
	ctx      context.Context // its caller's context
	deadline time.Time       // when it must end
	stopped  error           // why the watchdog stopped it; nil if it did not
	freeMem  *linearMemory   // freed while running: to release when the call ends
}

// function returns the entry point fun.
func (in *instance) function(fun string) api.Function {
	f, ok := in.funcs[fun]
	if !ok {
		f = in.mod.ExportedFunction(fun)
		in.funcs[fun] = f
	}
	return f
}

func (in *instance) close() {
	_ = in.mod.Close(context.Background())
}

// zeroWalltime and zeroNanotime are the clocks of deterministic instances.
func zeroWalltime() (int64, int32) { return 0, 0 }
func zeroNanotime() int64          { return 0 }

// errNoRandom is what random_get reads in deterministic instances.
var errNoRandom = errors.New("wasmhost: no random source for chash_keyfun")

type noRandom struct{}

func (noRandom) Read([]byte) (int, error) { return 0, errNoRandom }

// newInstance creates an instance of c, then runs its _initialize with a time budget
// of Config.InitTimeout (a start function runs within instrument's initial fuel, the
// same budget). A failure is an *hooks.InvalidModuleError, since the module's own
// start-up failed, unless ctx ended.
func (h *Host) newInstance(ctx context.Context, c *compiled, st *moduleStats, name string, det bool) (*instance, error) {
	in := &instance{funcs: map[string]api.Function{}, det: det, stats: st, memPages: c.memMax}
	in.state.module = name
	in.state.function = abi.ExportInitialize
	in.state.reset(h.logger)
	defer in.state.finish(ctx, st)
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithStdout(&guestStream{st: &in.state, level: slog.LevelInfo, stream: "stdout"}).
		WithStderr(&guestStream{st: &in.state, level: slog.LevelWarn, stream: "stderr"})
	if det {
		cfg = cfg.WithWalltime(zeroWalltime, 1).WithNanotime(zeroNanotime, 1).WithRandSource(noRandom{})
	} else {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	}
	ictx := experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, &in.state), in.allocator())
	mod, err := h.rt.InstantiateModule(ictx, c.cm, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wasmhost: instantiate: %w", ctx.Err())
		}
		return nil, invalid("it cannot be instantiated: %s", firstLine(err))
	}
	in.mod = mod
	in.mem = mod.Memory()
	in.alloc = mod.ExportedFunction(abi.ExportAlloc)
	in.fuel, _ = mod.ExportedGlobal(instrument.FuelExport).(api.MutableGlobal)
	in.floor, _ = mod.ExportedGlobal(instrument.FloorExport).(api.MutableGlobal)
	if h.cfg.StackBytes > 0 {
		in.guard = mod.ExportedGlobal(instrument.DefaultExportName)
	}
	if in.fuel == nil || in.floor == nil || (h.cfg.StackBytes > 0 && in.guard == nil) {
		in.close()
		return nil, fmt.Errorf("wasmhost: the instrumented module does not export its fuel and stack globals")
	}
	if c.hasInit {
		if err := h.initialize(ctx, in); err != nil {
			in.close()
			return nil, err
		}
	}
	return in, nil
}

// initialize runs in's _initialize within Config.InitTimeout, watched like a call.
func (h *Host) initialize(ctx context.Context, in *instance) error {
	h.startMu.Lock()
	h.starting[in] = struct{}{}
	h.startMu.Unlock()
	in.begin(ctx, h.fuelFor(h.cfg.InitTimeout), time.Now().Add(h.cfg.InitTimeout), &h.wd.closing)
	h.wake()
	_, err := in.mod.ExportedFunction(abi.ExportInitialize).Call(context.WithValue(ctx, stateKey{}, &in.state))
	stopped := in.end()
	h.startMu.Lock()
	delete(h.starting, in)
	h.startMu.Unlock()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("wasmhost: instantiate: %w", ctx.Err())
	case errors.Is(stopped, errHostClosing):
		return fmt.Errorf("wasmhost: instantiate: %w", errClosed)
	case errors.Is(stopped, errDeadline) || int64(in.fuel.Get()) < 0:
		return invalid("creating an instance took longer than %s", h.cfg.InitTimeout)
	case in.guard != nil && uint32(in.guard.Get()) == instrument.Exceeded:
		return invalid("it cannot be instantiated: %s ran into the call stack limit of %d bytes", abi.ExportInitialize, h.cfg.StackBytes)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return invalid("it cannot be instantiated: %s exited with code %d", abi.ExportInitialize, exit.ExitCode())
	}
	return invalid("it cannot be instantiated: %s", firstLine(err))
}

// pool holds the instances of one module version: at most size alive, of both
// flavours together.
type pool struct {
	v    *version
	size int
	wait time.Duration
	// sem holds one token per instance in use; its capacity is size.
	sem chan struct{}

	// mu guards idle, busy, live and closed.
	mu     sync.Mutex
	idle   [2][]*instance // by flavour: 0 normal, 1 deterministic
	busy   map[*instance]struct{}
	live   int // idle and in use
	closed bool
}

func newPool(v *version, size int, wait time.Duration) *pool {
	return &pool{v: v, size: size, wait: wait, sem: make(chan struct{}, size), busy: map[*instance]struct{}{}}
}

func flavour(det bool) int {
	if det {
		return 1
	}
	return 0
}

// adopt adds a new idle instance (the one Load created).
func (p *pool) adopt(in *instance) {
	p.mu.Lock()
	p.idle[flavour(in.det)] = append(p.idle[flavour(in.det)], in)
	p.live++
	p.mu.Unlock()
	p.v.stats.instanceCreated(p.live)
	p.v.stats.idle.Add(1)
}

// get takes an idle instance of the flavour, or creates one. When size instances are
// in use it waits up to the pool's wait (or until ctx is done).
func (p *pool) get(ctx context.Context, det bool) (*instance, error) {
	select {
	case p.sem <- struct{}{}:
	default:
		t := time.NewTimer(p.wait)
		select {
		case p.sem <- struct{}{}:
			t.Stop()
		case <-t.C:
			return nil, &hooks.CallError{Kind: hooks.Unavailable,
				Err: fmt.Errorf("all %d instances stayed busy for %s", p.size, p.wait)}
		case <-ctx.Done():
			t.Stop()
			return nil, ctxError(ctx.Err())
		}
	}
	f := flavour(det)
	p.mu.Lock()
	if n := len(p.idle[f]); n > 0 {
		in := p.idle[f][n-1]
		p.idle[f] = p.idle[f][:n-1]
		p.busy[in] = struct{}{}
		p.mu.Unlock()
		p.v.stats.idle.Add(-1)
		return in, nil
	}
	// Make room: every token but ours may be in use, so when the pool is full an idle
	// instance of the other flavour exists.
	var evict *instance
	if p.live >= p.size {
		if n := len(p.idle[1-f]); n > 0 {
			evict = p.idle[1-f][n-1]
			p.idle[1-f] = p.idle[1-f][:n-1]
			p.live--
		}
	}
	p.live++
	live := p.live
	p.mu.Unlock()
	if evict != nil {
		evict.close()
		p.v.stats.idle.Add(-1)
		p.v.stats.live.Add(-1)
	}
	p.v.stats.instanceCreated(live)
	in, err := p.v.h.newInstance(ctx, p.v.comp, p.v.stats, p.v.name, det)
	if err != nil {
		p.mu.Lock()
		p.live--
		p.mu.Unlock()
		p.v.stats.live.Add(-1)
		<-p.sem
		var inv *hooks.InvalidModuleError
		if errors.As(err, &inv) {
			return nil, &hooks.CallError{Kind: hooks.Crashed, Err: errors.New(inv.Reason)}
		}
		return nil, &hooks.CallError{Kind: hooks.Unavailable, Err: err}
	}
	p.mu.Lock()
	p.busy[in] = struct{}{}
	p.mu.Unlock()
	return in, nil
}

// put returns an instance taken by get; a discarded one is closed.
func (p *pool) put(in *instance, discard bool) {
	p.mu.Lock()
	delete(p.busy, in)
	if discard || p.closed {
		p.live--
		p.mu.Unlock()
		in.close()
		p.v.stats.live.Add(-1)
	} else {
		p.idle[flavour(in.det)] = append(p.idle[flavour(in.det)], in)
		p.mu.Unlock()
		p.v.stats.idle.Add(1)
	}
	<-p.sem
}

// closeAll closes the idle instances; instances still in use are closed by put.
func (p *pool) closeAll() {
	p.mu.Lock()
	p.closed = true
	var all []*instance
	for f := range p.idle {
		all = append(all, p.idle[f]...)
		p.idle[f] = nil
	}
	p.live -= len(all)
	p.mu.Unlock()
	for _, in := range all {
		in.close()
	}
	p.v.stats.idle.Add(-int64(len(all)))
	p.v.stats.live.Add(-int64(len(all)))
}

// sweep lets the watchdog look at the instances in use (see Host.sweep) and returns
// how many there are.
func (p *pool) sweep(now time.Time, closing bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for in := range p.busy {
		in.watch(now, closing)
	}
	return len(p.busy)
}
