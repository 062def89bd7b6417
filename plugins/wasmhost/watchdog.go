package wasmhost

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/plugins/wasmhost/instrument"
)

// watchTick is how often the watchdog looks at the calls in progress while there are
// any: a call that burns fuel slower than it burns time (host calls, bulk memory
// operations, a busy machine) is stopped at most about that long after its deadline.
const watchTick = 2 * time.Millisecond

// Why the watchdog stopped a call.
var (
	errDeadline    = errors.New("wasmhost: the call's deadline passed")
	errHostClosing = errors.New("wasmhost: the host closed while the call ran")
)

// watchdog is the goroutine that stops calls at their wall-clock deadline, when their
// caller gives up, or when the host closes. Guests run without wazero's context
// checks; fuel bounds them, and the watchdog makes the deadline exact: it raises the
// floor of the instance's fuel (see package instrument), and the guest traps at its
// next loop header or function entry. It ticks only while instances are in use, and
// parks otherwise. The Host owns it: New starts it, Close stops it.
type watchdog struct {
	// closing is set by Close before it stops the calls still running.
	closing atomic.Bool
	kick    chan struct{} // wakes it when parked (capacity 1)
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the goroutine ends
	parked  atomic.Bool
}

// startWatchdog starts the host's watchdog goroutine.
func (h *Host) startWatchdog() {
	h.wd = watchdog{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go h.watchLoop()
}

// stopWatchdog stops the watchdog goroutine and waits for it to end.
func (h *Host) stopWatchdog() {
	close(h.wd.stop)
	<-h.wd.done
}

func (h *Host) watchLoop() {
	defer close(h.wd.done)
	t := time.NewTimer(watchTick)
	defer t.Stop()
	var scratch []*version
	for {
		if h.sweep(false, &scratch) == 0 {
			// Park. A call registers its instance before it reads parked, and the
			// second sweep runs after parked is set: either the sweep sees the call,
			// or the call sees parked and kicks.
			h.wd.parked.Store(true)
			if h.sweep(false, &scratch) == 0 {
				select {
				case <-h.wd.kick:
				case <-h.wd.stop:
					return
				}
			}
			h.wd.parked.Store(false)
		}
		t.Reset(watchTick)
		select {
		case <-t.C:
		case <-h.wd.stop:
			return
		}
	}
}

// wake unparks the watchdog after an instance was taken for a call.
func (h *Host) wake() {
	if h.wd.parked.Load() {
		select {
		case h.wd.kick <- struct{}{}:
		default:
		}
	}
}

// sweep stops the calls in progress that must stop (every one when closing) and
// returns the number of instances in use or starting. scratch is the caller's buffer.
func (h *Host) sweep(closing bool, scratch *[]*version) int {
	now := time.Now()
	h.mu.RLock()
	vs := (*scratch)[:0]
	for v := range h.versions {
		vs = append(vs, v)
	}
	h.mu.RUnlock()
	n := 0
	for _, v := range vs {
		n += v.pool.sweep(now, closing)
	}
	clear(vs) // do not keep freed versions alive
	*scratch = vs[:0]
	h.startMu.Lock()
	for in := range h.starting {
		in.watch(now, closing)
		n++
	}
	h.startMu.Unlock()
	return n
}

// begin gives in fuel and marks it as running a call (or _initialize) that must end
// by deadline, for the caller ctx. If the host is closing, the call is stopped at once:
// Close sets closing before it sweeps, so a call that begins after the sweep sees it.
func (in *instance) begin(ctx context.Context, fuel int64, deadline time.Time, closing *atomic.Bool) {
	in.fuel.Set(uint64(fuel))
	in.mu.Lock()
	in.floor.Set(uint64(instrument.InitialFloor(fuel)))
	in.running, in.ctx, in.deadline, in.stopped = true, ctx, deadline, nil
	if closing.Load() {
		in.stopped = errHostClosing
		in.floor.Set(math.MaxInt64)
	}
	in.mu.Unlock()
}

// end marks the call over and returns why the watchdog stopped it (nil if it did not).
// A memory freed while the call ran is released now.
func (in *instance) end() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.running, in.ctx = false, nil
	if in.freeMem != nil {
		in.freeMem.release()
		in.freeMem = nil
	}
	return in.stopped
}

// watch stops in's call if its deadline passed, its caller gave up, or the host
// closes: it raises the floor, and the guest traps at its next check. The guest's slow
// path writes the floor too (the next slice), and may overwrite the raise if they
// cross: so the floor of a stopped call is raised again at every sweep until the call
// ends.
func (in *instance) watch(now time.Time, closing bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case !in.running:
		return
	case in.stopped != nil:
	case closing:
		in.stopped = errHostClosing
	case !now.Before(in.deadline):
		in.stopped = errDeadline
	case in.ctx.Err() != nil:
		in.stopped = in.ctx.Err()
	default:
		return
	}
	in.floor.Set(math.MaxInt64)
}
