package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/wasmhost/instrument"
	"github.com/cairnkv/cairn/sdk/abi"
)

// stateKey is the context key of the *callState of the call in progress.
type stateKey struct{}

// callState is what the host functions of one call share with the host. It belongs to
// an instance and is reset for every call; only the goroutine running the call uses it.
type callState struct {
	logger   *slog.Logger
	module   string
	function string

	output    []byte
	tooBig    int   // length of an output over abi.MaxOutputBytes; 0 when none
	violation error // an ABI violation detected by a host function

	logLeft    int // bytes the call may still log
	logDropped int // bytes dropped over the cap
}

// reset prepares the state for a new call.
func (s *callState) reset(logger *slog.Logger) {
	s.logger = logger
	s.output = s.output[:0]
	s.tooBig = 0
	s.violation = nil
	s.logLeft = abi.MaxLogBytesPerCall
	s.logDropped = 0
}

// finish accounts for what the call dropped from the log.
func (s *callState) finish(ctx context.Context, st *moduleStats) {
	if s.logDropped > 0 {
		st.logDropped.Add(int64(s.logDropped))
		s.logger.LogAttrs(ctx, slog.LevelWarn, "guest log capped",
			slog.String("module", s.module), slog.String("function", s.function),
			slog.Int("dropped_bytes", s.logDropped), slog.Int("cap_bytes", abi.MaxLogBytesPerCall))
		s.logDropped = 0
	}
}

// log writes one guest line within the call's budget.
func (s *callState) log(ctx context.Context, level slog.Level, msg []byte, attrs ...slog.Attr) {
	msg = bytes.TrimRight(msg, "\r\n")
	if len(msg) > s.logLeft {
		s.logDropped += len(msg) - s.logLeft
		msg = msg[:s.logLeft]
	}
	if len(msg) == 0 {
		return
	}
	s.logLeft -= len(msg)
	attrs = append(attrs, slog.String("module", s.module), slog.String("function", s.function))
	s.logger.LogAttrs(ctx, level, string(msg), attrs...)
}

// abiViolation is the panic value of a host function that detects an ABI violation;
// wazero turns the panic into a trap of the guest.
type abiViolation struct{ error }

// hostOutput is "cairn"."output"(ptr, len): it copies the call's result.
func hostOutput(ctx context.Context, mod api.Module, stack []uint64) {
	s, _ := ctx.Value(stateKey{}).(*callState)
	if s == nil {
		return // called from _initialize: there is no call to answer
	}
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if n > abi.MaxOutputBytes {
		s.tooBig = int(n)
		s.output = s.output[:0]
		return
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		s.violation = fmt.Errorf("%s.%s(%#x, %d) reads outside memory", abi.ImportModule, abi.ImportOutput, ptr, n)
		panic(abiViolation{s.violation})
	}
	s.tooBig = 0
	s.output = append(s.output[:0], b...)
}

// hostLog is "cairn"."log"(level, ptr, len): one log line, within the call's budget.
func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	s, _ := ctx.Value(stateKey{}).(*callState)
	if s == nil {
		return
	}
	level, ptr, n := int32(stack[0]), uint32(stack[1]), uint32(stack[2])
	if s.logLeft <= 0 {
		s.logDropped += int(n)
		return
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		s.violation = fmt.Errorf("%s.%s(%d, %#x, %d) reads outside memory", abi.ImportModule, abi.ImportLog, level, ptr, n)
		panic(abiViolation{s.violation})
	}
	level = max(abi.LogDebug, min(abi.LogError, level))
	s.log(ctx, slog.Level(level*4), b)
}

// guestStream is an instance's stdout or stderr: each write is logged as a line within
// the budget of the call in progress.
type guestStream struct {
	st     *callState
	level  slog.Level
	stream string
}

// Write implements io.Writer.
func (w *guestStream) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		w.st.log(context.Background(), w.level, line, slog.String("stream", w.stream))
	}
	return len(p), nil
}

// firstLine returns the first line of err's message (wazero adds a stack trace).
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// ctxError is the CallError of a call whose caller gave up.
func ctxError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &hooks.CallError{Kind: hooks.TimedOut, Err: err}
	}
	return &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("the call was canceled: %w", err)}
}

// run makes one call on in: cairn_alloc, copy the input, call fun. It returns the
// status, or a *hooks.CallError (without module and function), and whether the
// instance must be discarded.
//
// The call's budget is point p's timeout, or less if ctx ends sooner: the instance
// gets fuel for it, and the watchdog stops the call at the deadline, or when ctx ends.
func (h *Host) run(ctx context.Context, in *instance, p hooks.Point, fun string, input []byte) (abi.Status, bool, error) {
	if len(input) > math.MaxInt32 {
		return 0, false, &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("an input of %d bytes is too large", len(input))}
	}
	if err := ctx.Err(); err != nil {
		return 0, false, ctxError(err)
	}
	budget := h.cfg.Timeouts[p]
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < budget {
			budget = left
		}
	}
	if budget <= 0 {
		return 0, false, ctxError(context.DeadlineExceeded)
	}
	s := &in.state
	s.reset(h.logger)
	s.function = fun
	c := context.WithValue(ctx, stateKey{}, s)
	defer s.finish(c, in.stats)

	in.begin(ctx, h.fuelFor(budget), time.Now().Add(budget), &h.wd.closing)
	fail := func(err error) (abi.Status, bool, error) {
		stopped := in.end()
		var exit *sys.ExitError
		switch {
		case s.violation != nil:
			return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("ABI violation: %w", s.violation)}
		case errors.Is(stopped, errDeadline):
			return 0, true, &hooks.CallError{Kind: hooks.TimedOut, Err: fmt.Errorf("no result within %s: %w", budget, context.DeadlineExceeded)}
		case errors.Is(stopped, errHostClosing):
			return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: errHostClosing}
		case stopped != nil:
			return 0, true, ctxError(stopped)
		case in.guard != nil && uint32(in.guard.Get()) == instrument.Exceeded:
			return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf(
				"stack overflow: over the limit of %d bytes of call stack", h.cfg.StackBytes)}
		case int64(in.fuel.Get()) < 0:
			return 0, true, &hooks.CallError{Kind: hooks.TimedOut, Err: fmt.Errorf(
				"no result within %s (it ran out of its time budget): %w", budget, context.DeadlineExceeded)}
		case errors.As(err, &exit):
			return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("the module exited with code %d", exit.ExitCode())}
		}
		h.logger.LogAttrs(ctx, slog.LevelDebug, "guest trapped", slog.String("module", s.module),
			slog.String("function", fun), slog.String("trap", err.Error()))
		return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: errors.New(firstLine(err))}
	}

	in.stack[0] = uint64(len(input))
	if err := in.alloc.CallWithStack(c, in.stack[:1]); err != nil {
		return fail(err)
	}
	ptr := uint32(in.stack[0])
	if !in.mem.Write(ptr, input) {
		_ = in.end() // the call fails as an ABI violation whatever stopped it
		return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf(
			"ABI violation: %s(%d) returned %#x, and the input does not fit in memory there", abi.ExportAlloc, len(input), ptr)}
	}
	in.stack[0], in.stack[1] = uint64(ptr), uint64(len(input))
	if err := in.function(fun).CallWithStack(c, in.stack[:2]); err != nil {
		return fail(err)
	}
	// The call is over: a watchdog that stopped it too late to matter still leaves
	// the floor raised, so the instance goes.
	stopped := in.end()
	status := abi.Status(int32(uint32(in.stack[0])))
	in.calls++
	discard := stopped != nil || (h.cfg.RecycleAfter > 0 && in.calls >= h.cfg.RecycleAfter)
	switch {
	case s.tooBig > 0:
		return 0, true, &hooks.CallError{Kind: hooks.BadResult, Err: fmt.Errorf(
			"an output of %d bytes is over the limit of %d", s.tooBig, abi.MaxOutputBytes)}
	case status != abi.StatusOK && status != abi.StatusReject && status != abi.StatusError:
		return 0, true, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("ABI violation: unknown status %d", status)}
	case status == abi.StatusError && in.mem.Size() >= in.memLimit():
		// A guest that fails at its memory cap has probably run out: start afresh.
		discard = true
	}
	return status, discard, nil
}

// memLimit is the most memory the instance may have, in bytes.
func (in *instance) memLimit() uint32 {
	b := uint64(in.memPages) * 65536
	if b > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(b)
}

// invoke calls fun of module name at point p with input. handle interprets a status
// of 0, 1 or 2 and the output (valid only during handle); it returns nil or a
// *hooks.CallError. invoke fills in the module and function of call errors and counts
// the call.
func (h *Host) invoke(ctx context.Context, name, fun string, p hooks.Point, input []byte, handle func(abi.Status, []byte) error) error {
	v, err := h.current(name)
	if err != nil {
		return &hooks.CallError{Kind: hooks.Unavailable, Module: name, Function: fun, Err: err}
	}
	defer v.releaseRef()
	err = v.call(ctx, p, fun, input, handle)
	var ce *hooks.CallError
	if errors.As(err, &ce) {
		ce.Module, ce.Function = name, fun
	}
	return err
}

// call runs one call on an instance of v.
func (v *version) call(ctx context.Context, p hooks.Point, fun string, input []byte, handle func(abi.Status, []byte) error) error {
	if _, ok := v.h.cfg.Timeouts[p]; !ok {
		return &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("unknown extension point %d", p)}
	}
	if !v.comp.functions[fun] {
		return &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("%w: the module exports no entry point %q", hooks.ErrNoFunction, fun)}
	}
	v.stats.calls.Add(1)
	in, err := v.pool.get(ctx, p == hooks.PointKeyFun)
	if err != nil {
		v.stats.failed(err)
		return err
	}
	v.h.wake()
	status, discard, err := v.h.run(ctx, in, p, fun, input)
	if err == nil {
		err = handle(status, in.state.output)
		if ce := (*hooks.CallError)(nil); errors.As(err, &ce) && ce.Kind == hooks.BadResult {
			discard = true // the ABI discards an instance whose output does not parse
		}
		if err == nil && (status == abi.StatusError || (status == abi.StatusReject && p != hooks.PointPrecommit)) {
			v.stats.failures[hooks.Failed].Add(1) // handed back raw by Call
		}
	}
	if cap(in.state.output) > 1<<20 {
		in.state.output = nil // do not keep a large buffer alive in an idle instance
	}
	v.pool.put(in, discard)
	v.stats.failed(err)
	return err
}

// getBuf returns an input buffer from the host's pool.
func (h *Host) getBuf() *[]byte {
	if b, ok := h.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

// putBuf recycles an input buffer unless it grew large.
func (h *Host) putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		*b = (*b)[:0]
		h.bufs.Put(b)
	}
}

// Call calls fun of module mod at point p with input and returns the status the
// function returned (0, 1 or 2) with its output (a copy), without interpreting them: a
// status of 2 (or 1 outside precommit) is not an error here, though it is counted as a
// failure. The error is a *hooks.CallError for everything else: no such module or
// function, no instance free, a trap, a timeout, an ABI violation, an output too large.
func (h *Host) Call(ctx context.Context, mod, fun string, p hooks.Point, input []byte) (abi.Status, []byte, error) {
	var status abi.Status
	var out []byte
	err := h.invoke(ctx, mod, fun, p, input, func(st abi.Status, b []byte) error {
		status, out = st, bytes.Clone(b)
		if out == nil {
			out = []byte{}
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return status, out, nil
}
