package gopluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/cairnkv/cairn/core/hooks"
)

// mapStream is a hooks.MapStream over K gRPC Map streams of one plugin process
// (Config.MapStreams). Input i goes to stream i mod K, and since each stream answers
// its inputs in order, reading the streams round robin gives the outputs in input
// order: no goroutine, no reordering buffer. A stream is opened by its first input,
// which alone carries the function name and the phase's argument.
//
// Inputs and outputs are encoded and parsed by hand (see wire.go).
//
// Each stream has a window of Config.MapWindow tokens: Send takes one before it sends
// (it blocks while the stream has that many inputs unanswered) and Recv gives one back
// when it reads the answer, so memory stays bounded whatever the plugin's speed. Recv
// waits at most the map timeout for each answer; past it the stream ends as timed
// out (the plugin is stuck or far too slow).
type mapStream struct {
	f    fn
	inst *instance
	// parent is the context the stream runs under; caller is the caller's own, which
	// is parent except for hooks.Map, whose parent adds the map deadline.
	parent  context.Context
	caller  context.Context
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	subs    []subStream
	// unary is set for the stream of one hooks.Map call.
	unary bool

	// sendMu guards sent and sendClosed, and serialises the send side of the gRPC
	// streams (SendMsg and CloseSend must not run concurrently).
	sendMu     sync.Mutex
	sent       int
	sendClosed bool
	// sendDone is closed by CloseSend, after the last input's token was taken.
	sendDone chan struct{}

	// recvd and resp are only used by Recv, which runs on one goroutine at a time.
	recvd int
	resp  wireMsg
	// timer ends the stream when an answer takes longer than timeout.
	timer    *time.Timer
	timedOut atomic.Bool

	// errMu guards err, the error that ended the stream (io.EOF after the last
	// output); Send and Recv return it from then on.
	errMu  sync.Mutex
	err    error
	closed atomic.Bool
}

// subStream is one gRPC Map stream.
type subStream struct {
	// s is set by the input that opens the stream, before it takes its token: Recv
	// reads it after taking the token back.
	s      grpc.ClientStream
	tokens chan struct{}
}

// open opens a map stream of k gRPC streams on the plugin's current process.
func (f mapFn) open(ctx context.Context, k int) (*mapStream, error) {
	inst, err := f.instance()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		f.p.stats.calls.Add(1)
		return nil, f.finish(ctxError(err))
	}
	cfg := &f.p.h.cfg
	ms := &mapStream{
		f: f.fn, inst: inst, parent: ctx, caller: ctx, timeout: cfg.Timeouts[hooks.PointMap],
		subs: make([]subStream, max(k, 1)), sendDone: make(chan struct{}),
	}
	ms.ctx, ms.cancel = context.WithCancel(ctx)
	for i := range ms.subs {
		ms.subs[i].tokens = make(chan struct{}, cfg.MapWindow)
	}
	ms.timer = time.AfterFunc(time.Hour, func() {
		ms.timedOut.Store(true)
		ms.cancel()
	})
	ms.timer.Stop()
	return ms, nil
}

// loadErr returns the error that ended the stream, or nil.
func (ms *mapStream) loadErr() error {
	ms.errMu.Lock()
	defer ms.errMu.Unlock()
	return ms.err
}

// end records err as the error that ended the stream unless one already did, and
// returns the one recorded. A *hooks.CallError recorded here is counted, and so is,
// for hang detection, a timeout on the stream's own deadline (the input whose answer
// did not come); the plugin's own error proves that the process answers. On a stream
// of OpenMapStream, an error that ends the stream is never of kind hooks.Failed, which
// would tell the caller to go on: a plugin whose Map returns an error, instead of
// answering it in ValuesResponse.error, has crashed the stream.
func (ms *mapStream) end(err error) error {
	var ce *hooks.CallError
	isCall := errors.As(err, &ce)
	answered := isCall && ce.Kind == hooks.Failed
	if answered && !ms.unary {
		ce.Kind = hooks.Crashed
	}
	ms.errMu.Lock()
	first := ms.err == nil
	if first {
		ms.err = err
	}
	err = ms.err
	ms.errMu.Unlock()
	if first {
		if isCall {
			switch {
			case answered:
				ms.inst.answered()
			case ce.Kind == hooks.TimedOut && ms.ownDeadline():
				ms.inst.timedOut(ms.timeout)
			}
			_ = ms.f.finish(ce)
		}
		ms.cancel()
	}
	return err
}

// ownDeadline reports whether the stream ran past its own deadline: the wait for an
// answer outlasted the map timeout, or, for hooks.Map, the call's map deadline passed;
// not the caller's deadline, nor a caller that gave up.
func (ms *mapStream) ownDeadline() bool {
	return (ms.timedOut.Load() && ms.caller.Err() == nil) || pastOwnDeadline(ms.caller, ms.parent)
}

// classify turns the error of a gRPC stream operation into the stream's error.
func (ms *mapStream) classify(err error) error {
	switch {
	case ms.closed.Load():
		return ErrStreamClosed
	case ms.timedOut.Load():
		return &hooks.CallError{Kind: hooks.TimedOut, Err: errors.New("no output for an input within " + ms.timeout.String() + ": " + context.DeadlineExceeded.Error())}
	}
	return ms.f.p.callError(ms.parent, hooks.PointMap, err)
}

// Send implements hooks.MapStream.
func (ms *mapStream) Send(in hooks.MapInput) error {
	if err := ms.loadErr(); err != nil {
		return err
	}
	ms.sendMu.Lock()
	defer ms.sendMu.Unlock()
	if ms.sendClosed {
		return errors.New("gopluginhost: map stream: Send after CloseSend")
	}
	sub := &ms.subs[ms.sent%len(ms.subs)]
	first := sub.s == nil
	if first {
		s, err := openWireMap(ms)
		if err != nil {
			return ms.end(ms.classify(err))
		}
		sub.s = s
	}
	select {
	case sub.tokens <- struct{}{}:
	case <-ms.ctx.Done():
		return ms.end(ms.classify(ms.ctx.Err()))
	}
	var req wireMsg
	if first {
		req.b = encodeMapRequest(ms.f.fun, in.Arg, &in)
	} else {
		req.b = encodeMapRequest("", nil, &in)
	}
	ms.sent++
	ms.f.p.stats.calls.Add(1)
	if err := sub.s.SendMsg(&req); err != nil {
		if errors.Is(err, io.EOF) {
			// The stream ended; Recv reads why, unless it is known already.
			if err := ms.loadErr(); err != nil {
				return err
			}
			return &hooks.CallError{Kind: hooks.Crashed, Module: ms.f.p.name, Function: ms.f.fun,
				Err: errors.New("the plugin ended the map stream")}
		}
		return ms.end(ms.classify(err))
	}
	return nil
}

// CloseSend implements hooks.MapStream.
func (ms *mapStream) CloseSend() error {
	ms.sendMu.Lock()
	defer ms.sendMu.Unlock()
	if ms.sendClosed {
		return nil
	}
	ms.sendClosed = true
	close(ms.sendDone)
	for i := range ms.subs {
		if s := ms.subs[i].s; s != nil {
			if err := s.CloseSend(); err != nil {
				return ms.end(ms.classify(err))
			}
		}
	}
	return nil
}

// Recv implements hooks.MapStream.
func (ms *mapStream) Recv() ([]json.RawMessage, error) {
	if err := ms.loadErr(); err != nil {
		return nil, err
	}
	sub := &ms.subs[ms.recvd%len(ms.subs)]
	select {
	case <-sub.tokens:
	default:
		select {
		case <-sub.tokens:
		case <-ms.sendDone:
			select {
			case <-sub.tokens:
			default:
				// Every input sent has been answered.
				return nil, ms.end(io.EOF)
			}
		case <-ms.ctx.Done():
			return nil, ms.end(ms.classify(ms.ctx.Err()))
		}
	}
	ms.timer.Reset(ms.timeout)
	err := sub.s.RecvMsg(&ms.resp)
	ms.timer.Stop()
	if err == nil || errors.Is(err, io.EOF) {
		// An answer to the input, or the plugin's end of the stream: it answers.
		ms.inst.answered()
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ms.end(&hooks.CallError{Kind: hooks.Crashed,
				Err: errors.New("the plugin ended the map stream with inputs unanswered")})
		}
		return nil, ms.end(ms.classify(err))
	}
	ms.recvd++
	vals, e, err := parseValues(ms.resp.b)
	ms.resp.b = nil
	switch {
	case err != nil:
		return nil, ms.end(badResult("%w", err))
	case e != "":
		return nil, ms.f.finish(&hooks.CallError{Kind: hooks.Failed, Err: errors.New(message(e))})
	}
	return vals, nil
}

// Close implements hooks.MapStream: it cancels the gRPC streams, which ends them on
// both sides.
func (ms *mapStream) Close() {
	if ms.closed.Swap(true) {
		return
	}
	_ = ms.end(ErrStreamClosed) // cancels the gRPC streams, unless an earlier end did
	ms.timer.Stop()
}

var _ hooks.MapStream = (*mapStream)(nil)
