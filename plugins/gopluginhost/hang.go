package gopluginhost

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"
)

// Hang detection. A process that stays alive but stops answering never exits, so the
// supervisor would never restart it: its calls would all time out. Each instance
// therefore counts the calls in a row that ran past their own point's deadline
// (timedOut) since one was last answered (answered). When the count reaches
// Config.HangAfter the process is declared hung and killed with SIGKILL; the
// supervisor sees it exit and restarts it as after a crash (backoff, circuit breaker).
//
// The count lives in the instance, so the process killed is always the one whose
// calls timed out, never a newer one started meanwhile; and it is killed through the
// os.Process that started it, which cannot signal another process that reused its pid
// once it has been waited for. On the hot path a call costs one atomic load
// (answered), or one atomic add when it timed out.

// pastOwnDeadline reports whether call, a context derived from the caller's parent,
// carries a deadline of the host's own (a point's, sooner than any of parent's) and
// that deadline has passed while parent has not ended. The clock decides, as in gRPC:
// a call can fail with codes.DeadlineExceeded before call's own timer has fired (the
// plugin's gRPC server closes the stream at the deadline it was sent), and call.Err()
// is context.Canceled once the caller of fail has released call.
func pastOwnDeadline(parent, call context.Context) bool {
	if parent.Err() != nil {
		return false
	}
	dl, ok := call.Deadline()
	if !ok {
		return false
	}
	if pdl, ok := parent.Deadline(); ok && !dl.Before(pdl) {
		return false // the caller's deadline, not the host's
	}
	return !time.Now().Before(dl)
}

// answered records that the process answered a call (a result, a rejection, or an
// error of its own): whatever timed out before, it is not hung. It writes only when
// there is a count to clear, so calls on many cores do not contend for the counter.
func (inst *instance) answered() {
	if inst.timeouts.Load() != 0 {
		inst.timeouts.Store(0)
	}
}

// timedOut records that a call ran past its own deadline d (not the caller's, and not
// because the caller gave up). The call that brings the run of timeouts to
// Config.HangAfter kills the process (once); a HangAfter below 1 turns this off.
func (inst *instance) timedOut(d time.Duration) {
	limit := int64(inst.p.h.cfg.HangAfter)
	if limit <= 0 {
		return
	}
	n := inst.timeouts.Add(1)
	if n < limit || inst.exited.Load() || !inst.hangClaim.CompareAndSwap(false, true) {
		return
	}
	inst.killHung(hangInfo{calls: n, deadline: d})
}

// hangInfo says why a process was killed as hung.
type hangInfo struct {
	calls    int64         // the calls in a row that timed out
	deadline time.Duration // the deadline of the last of them
}

// killHung kills the process as hung. The supervisor notices the exit (it is poked)
// and takes its crash path, where inst.hang names the cause.
func (inst *instance) killHung(hi hangInfo) {
	p := inst.p
	inst.hang.Store(&hi)
	if err := inst.proc.Kill(); err != nil {
		// The process is gone already (it died on its own, or the supervisor
		// released it): its exit is not a hang.
		inst.hang.Store(nil)
		if !errors.Is(err, os.ErrProcessDone) {
			p.logger.Error("plugin hung, and killing its process failed", slog.Int("pid", inst.pid),
				slog.Int64("calls", hi.calls), slog.Duration("deadline", hi.deadline), slog.String("error", err.Error()))
		}
		p.poke()
		return
	}
	p.stats.hangs.Add(1)
	p.logger.Error("plugin hung: calls in a row ran past their deadline with none answered; killed its process, which restarts as after a crash",
		slog.Int("pid", inst.pid), slog.Int64("calls", hi.calls), slog.Duration("deadline", hi.deadline))
	p.poke()
}
