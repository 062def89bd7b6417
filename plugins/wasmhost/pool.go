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

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/abi"
)

// instance is one instantiated module. It serves one call at a time; its fields are
// used only by the goroutine that holds it.
type instance struct {
	mod   api.Module
	mem   api.Memory
	alloc api.Function
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

// newInstance creates an instance of c (running _initialize under Config.InitTimeout).
// A failure is an *hooks.InvalidModuleError, since the module's own start-up failed.
func (h *Host) newInstance(ctx context.Context, c *compiled, st *moduleStats, name string, det bool) (*instance, error) {
	in := &instance{funcs: map[string]api.Function{}, det: det, stats: st, memPages: c.memMax}
	in.state.module = name
	in.state.function = abi.ExportInitialize
	in.state.reset(h.logger)
	cfg := wazero.NewModuleConfig().WithName("").
		WithStdout(&guestStream{st: &in.state, level: slog.LevelInfo, stream: "stdout"}).
		WithStderr(&guestStream{st: &in.state, level: slog.LevelWarn, stream: "stderr"})
	if c.hasInit {
		cfg = cfg.WithStartFunctions(abi.ExportInitialize)
	} else {
		cfg = cfg.WithStartFunctions()
	}
	if det {
		cfg = cfg.WithWalltime(zeroWalltime, 1).WithNanotime(zeroNanotime, 1).WithRandSource(noRandom{})
	} else {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	}
	ictx, cancel := context.WithTimeout(ctx, h.cfg.InitTimeout)
	defer cancel()
	mod, err := h.rt.InstantiateModule(context.WithValue(ictx, stateKey{}, &in.state), c.cm, cfg)
	in.state.finish(ictx, st)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wasmhost: instantiate: %w", ctx.Err())
		}
		if ictx.Err() != nil {
			return nil, invalid("creating an instance took longer than %s", h.cfg.InitTimeout)
		}
		return nil, invalid("it cannot be instantiated: %s", firstLine(err))
	}
	in.mod = mod
	in.mem = mod.Memory()
	in.alloc = mod.ExportedFunction(abi.ExportAlloc)
	return in, nil
}

// pool holds the instances of one module version: at most size alive, of both
// flavours together.
type pool struct {
	v    *version
	size int
	wait time.Duration
	// sem holds one token per instance in use; its capacity is size.
	sem chan struct{}

	// mu guards idle, live and closed.
	mu     sync.Mutex
	idle   [2][]*instance // by flavour: 0 normal, 1 deterministic
	live   int            // idle and in use
	closed bool
}

func newPool(v *version, size int, wait time.Duration) *pool {
	return &pool{v: v, size: size, wait: wait, sem: make(chan struct{}, size)}
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
	return in, nil
}

// put returns an instance taken by get; a discarded one is closed.
func (p *pool) put(in *instance, discard bool) {
	p.mu.Lock()
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
