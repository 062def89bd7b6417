package jsvm

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/quickjs"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
)

// funcRef is the function a call runs: a global name, or a compiled anonymous source.
type funcRef struct {
	name string
	src  *compiled
}

// label names the function in errors: its name, or "anonymous:" and the start of the
// source's hash.
func (f funcRef) label() string {
	if f.src == nil {
		return f.name
	}
	return "anonymous:" + hex.EncodeToString(f.src.hash[:6])
}

// function returns ref as the implementation of p's interface.
func (r *Runtime) function(ref funcRef, p hooks.Point) any {
	switch p {
	case hooks.PointMap:
		return mapFn{r, ref}
	case hooks.PointReduce:
		return reduceFn{r, ref}
	default:
		return precommitFn{r, ref}
	}
}

// Absent key data and arguments reach functions as the reference's atoms would: the
// strings "undefined" and "none".
const (
	absentKeyData = `"undefined"`
	absentArg     = `"none"`
)

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

type mapFn struct {
	r   *Runtime
	ref funcRef
}

// Map implements hooks.Map: f(value, keyData, arg) must return an array. A missing
// input (the MapReduce engine does not call JavaScript for those, but a caller may)
// is the value {"not_found": {"bucket": B, "key": K, "keydata": KD}}.
func (f mapFn) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	b := bufs.Get().(*[]byte)
	if in.Object != nil {
		*b = f.r.codec.AppendObject((*b)[:0], in.Object)
	} else {
		*b = appendNotFound((*b)[:0], in)
	}
	value := string(*b)
	bufs.Put(b)
	kd, arg := absentKeyData, absentArg
	if len(in.KeyData) > 0 {
		kd = string(in.KeyData)
	}
	if len(in.Arg) > 0 {
		arg = string(in.Arg)
	}
	out, err := f.r.call(ctx, hooks.PointMap, f.ref, "map", value, kd, arg)
	if err != nil {
		return nil, err
	}
	return f.r.values(f.ref, out)
}

// appendNotFound appends the value a map function sees for a missing input.
func appendNotFound(dst []byte, in hooks.MapInput) []byte {
	var p hooks.Place
	if in.NotFound != nil {
		p = *in.NotFound
	}
	str := func(s string) []byte { b, _ := json.Marshal(s); return b }
	dst = append(dst, `{"not_found":{"bucket":`...)
	dst = append(dst, str(p.Bucket)...)
	dst = append(dst, `,"key":`...)
	dst = append(dst, str(p.Key)...)
	dst = append(dst, `,"keydata":`...)
	if len(in.KeyData) > 0 {
		dst = append(dst, in.KeyData...)
	} else {
		dst = append(dst, absentKeyData...)
	}
	if p.Type != "" && p.Type != core.DefaultType {
		dst = append(dst, `,"bucket_type":`...)
		dst = append(dst, str(p.Type)...)
	}
	return append(dst, "}}"...)
}

type reduceFn struct {
	r   *Runtime
	ref funcRef
}

// Reduce implements hooks.Reduce: f(values, arg) must return an array.
func (f reduceFn) Reduce(ctx context.Context, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	b := bufs.Get().(*[]byte)
	buf := append((*b)[:0], '[')
	for i, v := range values {
		if i > 0 {
			buf = append(buf, ',')
		}
		if len(v) == 0 {
			buf = append(buf, "null"...)
		} else {
			buf = append(buf, v...)
		}
	}
	buf = append(buf, ']')
	vals := string(buf)
	*b = buf
	bufs.Put(b)
	a := absentArg
	if len(arg) > 0 {
		a = string(arg)
	}
	out, err := f.r.call(ctx, hooks.PointReduce, f.ref, "reduce", vals, a, nil)
	if err != nil {
		return nil, err
	}
	return f.r.values(f.ref, out)
}

// values turns a map or reduce result into its elements.
func (r *Runtime) values(ref funcRef, out string) ([]json.RawMessage, error) {
	switch {
	case strings.HasPrefix(out, "A"):
		vals, err := hookjson.DecodeValues([]byte(out[1:]))
		if err != nil {
			return nil, r.failure(ref, hooks.BadResult, err)
		}
		return vals, nil
	case strings.HasPrefix(out, "B"):
		return nil, r.failure(ref, hooks.BadResult, errors.New("returned "+out[1:]))
	}
	return nil, r.failure(ref, hooks.Crashed, fmt.Errorf("unexpected answer %.40q from the VM", out))
}

type precommitFn struct {
	r   *Runtime
	ref funcRef
}

// Precommit implements hooks.Precommit: f(object) returns the object (a changed one
// replaces the object written; on a delete it is ignored), "fail" (the write is
// refused with the default reason) or {"fail": reason}.
func (f precommitFn) Precommit(ctx context.Context, op hooks.Op, obj *core.Object) (hooks.Verdict, error) {
	b := bufs.Get().(*[]byte)
	*b = f.r.codec.AppendObject((*b)[:0], obj)
	in := string(*b)
	bufs.Put(b)
	out, err := f.r.call(ctx, hooks.PointPrecommit, f.ref, "precommit", in, nil, nil)
	if err != nil {
		return hooks.Verdict{}, err
	}
	switch {
	case out == "F":
		return hooks.Verdict{Reject: true}, nil
	case strings.HasPrefix(out, "R"):
		reason := out[1:]
		if reason == "" {
			reason = fmt.Sprintf("rejected by %s", f.ref.label())
		}
		return hooks.Verdict{Reject: true, Reason: clip(reason)}, nil
	case strings.HasPrefix(out, "O"):
		if op == hooks.OpDelete || out[1:] == in {
			return hooks.Verdict{}, nil
		}
		rep, err := f.r.codec.DecodeObject([]byte(out[1:]))
		if err != nil {
			return hooks.Verdict{}, f.r.failure(f.ref, hooks.BadResult, fmt.Errorf("the returned object: %w", err))
		}
		if len(rep.Siblings) == 0 {
			return hooks.Verdict{}, f.r.failure(f.ref, hooks.BadResult, errors.New(`the returned object has no "values"`))
		}
		return hooks.Verdict{Replace: rep}, nil
	case strings.HasPrefix(out, "B"):
		return hooks.Verdict{}, f.r.failure(f.ref, hooks.BadResult, errors.New("returned "+out[1:]))
	}
	return hooks.Verdict{}, f.r.failure(f.ref, hooks.Crashed, fmt.Errorf("unexpected answer %.40q from the VM", out))
}

// failure counts and returns a call error.
func (r *Runtime) failure(ref funcRef, kind hooks.CallErrorKind, err error) *hooks.CallError {
	r.st.failures[kind].Add(1)
	return &hooks.CallError{Kind: kind, Module: hooks.KindJavaScript, Function: ref.label(), Err: err}
}

// call runs dispatch(op, f, a, b, c) in a VM of the pool for point p, within the
// point's time limit and ctx, and returns the dispatcher's answer.
func (r *Runtime) call(ctx context.Context, p hooks.Point, ref funcRef, op string, a, b, c any) (string, error) {
	r.st.calls[p].Add(1)
	if r.closed.Load() {
		return "", r.failure(ref, hooks.Unavailable, errClosed.Err)
	}
	pl, limit := r.mapred, r.cfg.Timeout
	if p == hooks.PointPrecommit {
		pl, limit = r.hook, r.cfg.HookTimeout
	}
	if err := ctx.Err(); err != nil {
		return "", r.failure(ref, hooks.TimedOut, context.Cause(ctx))
	}
	wait := r.cfg.PoolWait
	v, err := pl.acquire(ctx, wait)
	if err != nil {
		var ce *hooks.CallError
		if errors.As(err, &ce) {
			return "", r.failure(ref, ce.Kind, ce.Err)
		}
		return "", r.failure(ref, hooks.Unavailable, err)
	}
	deadline := time.Now().Add(limit)
	ctxDeadline := false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, ctxDeadline = d, true
	}

	var res any
	var panicked any
	pl.guard(ctx, v, deadline, func() {
		defer func() { panicked = recover() }()
		remaining := func() time.Duration { return max(time.Until(deadline), time.Millisecond) }
		var fn quickjs.Value
		if ref.src != nil {
			fn, err = v.define(ref.src, remaining())
		} else {
			fn, err = v.named(ref.name, remaining())
		}
		if err == nil {
			v.setTimeout(remaining())
			res, err = v.dispatch.Call(quickjs.UndefinedValue, op, fn, a, b, c)
		}
	})
	switch {
	case panicked != nil:
		pl.release(v, true)
		return "", r.failure(ref, hooks.Crashed, fmt.Errorf("engine panic: %v", panicked))
	case err != nil:
		kind, cause, recycle := r.classify(ctx, err, limit, p, ctxDeadline)
		if kind == hooks.Failed && !time.Now().Before(deadline) {
			// An exception the engine raised while being interrupted need not be its
			// "interrupted" error (seen under load): past the deadline it is a timeout.
			kind, cause, recycle = hooks.TimedOut, fmt.Errorf("ran past its time limit of %v for %s calls (%w)", limit, p, cause), true
		}
		pl.release(v, recycle)
		return "", r.failure(ref, kind, cause)
	}
	s, ok := res.(string)
	if !ok {
		pl.release(v, true)
		return "", r.failure(ref, hooks.Crashed, fmt.Errorf("unexpected %T from the VM", res))
	}
	pl.release(v, false)
	return s, nil
}

// classify turns the error of a call into its kind and cause, and says whether the VM
// must be replaced.
// ctxDeadline says that the call's deadline was ctx's, which the VM may reach a little
// before ctx itself ends.
func (r *Runtime) classify(ctx context.Context, err error, limit time.Duration, p hooks.Point, ctxDeadline bool) (hooks.CallErrorKind, error, bool) {
	var nf *notFunctionError
	if errors.As(err, &nf) {
		return hooks.BadResult, nf, false
	}
	var qe *quickjs.Error
	if !errors.As(err, &qe) {
		return hooks.Crashed, err, true
	}
	switch {
	case qe.Name == "InternalError" && qe.Message == "interrupted":
		switch {
		case r.closed.Load():
			return hooks.Unavailable, errClosed.Err, true
		case ctx.Err() != nil:
			return hooks.TimedOut, fmt.Errorf("stopped: %w", context.Cause(ctx)), true
		case ctxDeadline:
			return hooks.TimedOut, fmt.Errorf("stopped: %w", context.DeadlineExceeded), true
		}
		return hooks.TimedOut, fmt.Errorf("ran past its time limit of %v for %s calls", limit, p), true
	case qe.Name == "InternalError" && qe.Message == "out of memory",
		qe.Name == "" && qe.Error() == "null":
		// With no memory left for an error object the engine throws null.
		return hooks.Crashed, fmt.Errorf("out of memory: the VM's limit is %d MiB (or the function threw null)",
			r.cfg.MemoryLimit>>20), true
	case qe.Name == "InternalError" && qe.Message == "stack overflow":
		return hooks.Crashed, fmt.Errorf("stack overflow: calls nested deeper than the limit of %d", r.cfg.StackSlots), false
	}
	return hooks.Failed, errors.New(errText(qe)), false
}

// recycleAfter reports whether a VM must be replaced after err.
func recycleAfter(err error) bool {
	var qe *quickjs.Error
	if !errors.As(err, &qe) {
		var nf *notFunctionError
		return !errors.As(err, &nf)
	}
	return qe.Name == "InternalError" && (qe.Message == "interrupted" || qe.Message == "out of memory") ||
		qe.Name == "" && qe.Error() == "null"
}

// emptyException reports whether err is a JavaScript exception with neither a name
// nor a message (not the null an out-of-memory throws).
func emptyException(err error) bool {
	var qe *quickjs.Error
	// Only the text matters: an interrupted evaluation under load has surfaced with an
	// empty text and message whatever its name field held.
	return errors.As(err, &qe) && qe.Message == "" && strings.TrimSpace(qe.Error()) == ""
}

// maxMessage bounds the text of an error or a reason taken from JavaScript.
const maxMessage = 4096

// errText is the text of a JavaScript exception: its message and where it was
// thrown (the innermost frame of its stack).
func errText(err error) string {
	var qe *quickjs.Error
	if !errors.As(err, &qe) {
		return clip(err.Error())
	}
	msg := qe.Error()
	if strings.TrimSpace(msg) == "" {
		// The engine's text of an exception is sometimes empty (seen for an interrupted
		// evaluation: name InternalError, message "interrupted", empty text).
		msg = strings.TrimPrefix(qe.Name+": "+qe.Message, ": ")
	}
	if frame, _, _ := strings.Cut(strings.TrimLeft(qe.Stack, " \n"), "\n"); frame != "" {
		msg += " (" + strings.TrimSpace(frame) + ")"
	}
	return clip(msg)
}

// clip cuts s to maxMessage bytes, on a character boundary.
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	s = s[:maxMessage]
	for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) > 0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}

var (
	_ hooks.Map       = mapFn{}
	_ hooks.Reduce    = reduceFn{}
	_ hooks.Precommit = precommitFn{}
)
