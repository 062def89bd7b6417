package gopluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/abi"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// fn names one function of one plugin.
type fn struct {
	p   *plugin
	fun string
	// pbFun is fun as a protobuf string field may carry it (valid UTF-8).
	pbFun string
}

// instance returns the process to call, or the error of a plugin that is not up
// (counted, with the call).
func (f fn) instance() (*instance, error) {
	inst := f.p.cur.Load()
	if inst != nil && !inst.exited.Load() {
		return inst, nil
	}
	if inst != nil {
		f.p.poke()
	}
	f.p.stats.calls.Add(1)
	return nil, f.finish(f.p.unavailable())
}

// unavailable is the error of a call to a plugin that is not up.
func (p *plugin) unavailable() *hooks.CallError {
	if p.h.stopping() {
		return &hooks.CallError{Kind: hooks.Unavailable, Err: ErrClosed}
	}
	p.mu.Lock()
	state, last, until := p.state, p.lastErr, p.openUntil
	p.mu.Unlock()
	if state == StateUp {
		state = StateDown // its process just exited; the supervisor has not noticed yet
	}
	msg := fmt.Sprintf("plugin %s is %s", p.name, state)
	if state == StateOpen {
		msg += fmt.Sprintf(" (circuit breaker open after repeated failures; next start at %s)", until.Format(time.RFC3339))
	}
	if last != "" {
		msg += "; last error: " + last
	}
	return &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("%s", msg)}
}

// finish fills in the module and function of ce and counts it.
func (f fn) finish(ce *hooks.CallError) error {
	ce.Module, ce.Function = f.p.name, f.fun
	f.p.stats.failed(ce.Kind)
	return ce
}

// fail turns the error of a gRPC call to inst at point pt into a counted
// *hooks.CallError. parent is the caller's context, call the call's (with the point's
// deadline unless the caller's is sooner): an error that comes back after the point's
// deadline passed is a timeout, whatever the plugin made of it, and counts toward
// hang detection; the plugin's own error proves that the process answers.
func (f fn) fail(inst *instance, parent, call context.Context, pt hooks.Point, err error) error {
	if pastOwnDeadline(parent, call) {
		d := f.p.h.cfg.Timeouts[pt]
		inst.timedOut(d)
		return f.finish(&hooks.CallError{Kind: hooks.TimedOut, Err: fmt.Errorf("no result within %s: %w", d, context.DeadlineExceeded)})
	}
	ce := f.p.callError(parent, pt, err)
	if ce.Kind == hooks.Failed {
		inst.answered()
	}
	return f.finish(ce)
}

func noop() {}

// call makes one unary call of f at point pt: rpc (a method of hookspb.HooksClient)
// with req, on the plugin's current process, under the point's deadline. It counts the
// call, turns an error into a counted *hooks.CallError (see fail) and tells hang
// detection that the process answered.
func call[Req, Resp any](ctx context.Context, f fn, pt hooks.Point,
	rpc func(hookspb.HooksClient, context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	var zero Resp
	inst, err := f.instance()
	if err != nil {
		return zero, err
	}
	f.p.stats.calls.Add(1)
	cctx, cancel := f.p.h.callCtx(ctx, pt)
	resp, err := rpc(inst.rpc, cctx, req)
	cancel()
	if err != nil {
		return zero, f.fail(inst, ctx, cctx, pt, err)
	}
	inst.answered()
	return resp, nil
}

// callCtx applies point p's deadline to ctx unless ctx ends sooner.
func (h *Host) callCtx(ctx context.Context, p hooks.Point) (context.Context, context.CancelFunc) {
	d := h.cfg.Timeouts[p]
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, noop
	}
	return context.WithTimeout(ctx, d)
}

type precommitFn struct{ fn }

// Precommit implements hooks.Precommit. A rejection without a reason gets "rejected
// by PLUGIN:FUN"; an answer of accept=false counts as such a rejection (a precommit
// fails closed). A replacement is ignored for a delete.
func (f precommitFn) Precommit(ctx context.Context, op hooks.Op, obj *core.Object) (hooks.Verdict, error) {
	resp, err := call(ctx, f.fn, hooks.PointPrecommit, hookspb.HooksClient.Precommit,
		&hookspb.HookRequest{Fun: f.pbFun, Op: pbOp(op), Object: toPBObject(obj)})
	if err != nil {
		return hooks.Verdict{}, err
	}
	switch r := resp.GetResult().(type) {
	case *hookspb.PrecommitResponse_Reject:
		return f.reject(r.Reject), nil
	case *hookspb.PrecommitResponse_Accept:
		if !r.Accept {
			return f.reject(""), nil
		}
	case *hookspb.PrecommitResponse_Replace:
		if op == hooks.OpDelete {
			return hooks.Verdict{}, nil
		}
		rep, err := replacement(obj, r.Replace)
		if err != nil {
			return hooks.Verdict{}, f.finish(badResult("the replacement object: %w", err))
		}
		return hooks.Verdict{Replace: rep}, nil
	}
	return hooks.Verdict{}, nil
}

func (f precommitFn) reject(reason string) hooks.Verdict {
	reason = message(reason)
	if reason == "" {
		reason = fmt.Sprintf("rejected by %s:%s", f.p.name, f.fun)
	}
	return hooks.Verdict{Reject: true, Reason: reason}
}

type postcommitFn struct{ fn }

// Postcommit implements hooks.Postcommit.
func (f postcommitFn) Postcommit(ctx context.Context, op hooks.Op, obj *core.Object) error {
	_, err := call(ctx, f.fn, hooks.PointPostcommit, hookspb.HooksClient.Postcommit,
		&hookspb.HookRequest{Fun: f.pbFun, Op: pbOp(op), Object: toPBObject(obj)})
	return err
}

type keyFn struct{ fn }

// KeyHash implements hooks.KeyFun: the plugin must answer 1 to 20 bytes.
func (f keyFn) KeyHash(ctx context.Context, typ, bucket, key string) ([]byte, error) {
	resp, err := call(ctx, f.fn, hooks.PointKeyFun, hookspb.HooksClient.KeyHash,
		&hookspb.KeyHashRequest{Fun: f.pbFun, BucketType: bytesOf(typ), Bucket: bytesOf(bucket), Key: bytesOf(key)})
	if err != nil {
		return nil, err
	}
	if n := len(resp.GetHash()); n < 1 || n > abi.KeyHashMaxBytes {
		return nil, f.finish(badResult("a chash_keyfun returns 1 to %d bytes, not %d", abi.KeyHashMaxBytes, n))
	}
	return resp.GetHash(), nil
}

type linkFn struct{ fn }

// Links implements hooks.LinkFun. The result is never nil.
func (f linkFn) Links(ctx context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
	resp, err := call(ctx, f.fn, hooks.PointLinkFun, hookspb.HooksClient.Links,
		&hookspb.LinkRequest{Fun: f.pbFun, Object: toPBObject(obj), Bucket: bytesOf(bucket), Tag: bytesOf(tag)})
	if err != nil {
		return nil, err
	}
	links := fromPBLinks(resp.GetLinks())
	if links == nil {
		links = []core.Link{}
	}
	return links, nil
}

type mapFn struct{ fn }

// Map implements hooks.Map: one input over a stream of its own.
func (f mapFn) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	caller := ctx
	ctx, cancel := f.p.h.callCtx(ctx, hooks.PointMap)
	defer cancel()
	ms, err := f.open(ctx, 1)
	if err != nil {
		return nil, err
	}
	ms.unary, ms.caller = true, caller
	defer ms.Close()
	if err := ms.Send(in); err != nil {
		return nil, err
	}
	if err := ms.CloseSend(); err != nil {
		return nil, err
	}
	return ms.Recv()
}

// OpenMapStream implements hooks.MapStreamer. The stream runs on the plugin's current
// process (a plugin that is not up fails at once with hooks.Unavailable) over
// Config.MapStreams gRPC Map streams: inputs go to them round robin and outputs come
// back in input order. Each gRPC stream holds at most Config.MapWindow inputs
// unanswered (Send blocks beyond), and each answer must come within the map timeout,
// or the stream ends as hooks.TimedOut. An input the plugin fails
// (ValuesResponse.error) gives a hooks.Failed error for that input alone; the death of
// the process ends the stream as hooks.Crashed, and so does a plugin whose Map returns
// an error. Close cancels the gRPC streams; the stream starts no goroutine of its own.
func (f mapFn) OpenMapStream(ctx context.Context) (hooks.MapStream, error) {
	return f.open(ctx, f.p.h.cfg.MapStreams)
}

type reduceFn struct{ fn }

// Reduce implements hooks.Reduce.
func (f reduceFn) Reduce(ctx context.Context, vals []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	in := make([][]byte, len(vals))
	for i, v := range vals {
		in[i] = v
	}
	resp, err := call(ctx, f.fn, hooks.PointReduce, hookspb.HooksClient.Reduce,
		&hookspb.ReduceRequest{Fun: f.pbFun, ValuesJson: in, ArgJson: arg})
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(resp.GetValuesJson()))
	for i, v := range resp.GetValuesJson() {
		out[i] = v // the message's own bytes, which nothing else holds
	}
	return out, nil
}

var (
	_ hooks.Precommit   = precommitFn{}
	_ hooks.Postcommit  = postcommitFn{}
	_ hooks.KeyFun      = keyFn{}
	_ hooks.LinkFun     = linkFn{}
	_ hooks.MapStreamer = mapFn{}
	_ hooks.Reduce      = reduceFn{}
)
