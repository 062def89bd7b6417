package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
	"github.com/cairnkv/cairn/sdk/abi"
)

// Lookup returns function fun of module mod as the implementation of point p's
// interface (hooks.Precommit for hooks.PointPrecommit, and so on). The implementation
// calls whatever version of mod is installed at the time of each call.
func (h *Host) Lookup(mod, fun string, p hooks.Point) (any, error) {
	h.mu.RLock()
	v := h.modules[mod]
	h.mu.RUnlock()
	if v == nil {
		return nil, fmt.Errorf("wasmhost: %w: %q", hooks.ErrNoModule, mod)
	}
	if !v.comp.functions[fun] {
		return nil, fmt.Errorf("wasmhost: %w: module %q exports no entry point %q", hooks.ErrNoFunction, mod, fun)
	}
	f := fn{h: h, mod: mod, fun: fun}
	switch p {
	case hooks.PointPrecommit:
		return precommitFn{f}, nil
	case hooks.PointPostcommit:
		return postcommitFn{f}, nil
	case hooks.PointKeyFun:
		return keyFn{f}, nil
	case hooks.PointLinkFun:
		return linkFn{f}, nil
	case hooks.PointMap:
		return mapFn{f}, nil
	case hooks.PointReduce:
		return reduceFn{f}, nil
	}
	return nil, fmt.Errorf("wasmhost: %w: unknown extension point %d", hooks.ErrNoFunction, p)
}

// fn names one function of one module.
type fn struct {
	h        *Host
	mod, fun string
}

// call encodes the input with enc into a pooled buffer and invokes the function.
func (f fn) call(ctx context.Context, p hooks.Point, enc func([]byte) []byte, handle func(abi.Status, []byte) error) error {
	buf := f.h.getBuf()
	*buf = enc((*buf)[:0])
	err := f.h.invoke(ctx, f.mod, f.fun, p, *buf, handle)
	f.h.putBuf(buf)
	return err
}

// maxMessage bounds a guest's reason or error message kept in a verdict or an error.
const maxMessage = 4096

// message turns guest output into a printable message of at most maxMessage bytes
// (plus a marker when cut); invalid UTF-8 becomes U+FFFD.
func message(b []byte) string {
	cut := ""
	if len(b) > maxMessage {
		b = b[:maxMessage]
		for len(b) > 0 && !utf8.RuneStart(b[len(b)-1]) {
			b = b[:len(b)-1] // do not split a character
		}
		if len(b) > 0 {
			b = b[:len(b)-1]
		}
		cut = "…"
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") + cut
}

// failed is the error of a status 2 (or 1 where rejecting means nothing).
func failed(status abi.Status, out []byte) error {
	msg := message(out)
	switch {
	case status == abi.StatusReject:
		msg = "returned status 1 (reject), which only a precommit may: " + msg
	case msg == "":
		msg = "returned status 2 without a message"
	}
	return &hooks.CallError{Kind: hooks.Failed, Err: errors.New(msg)}
}

func badResult(format string, args ...any) error {
	return &hooks.CallError{Kind: hooks.BadResult, Err: fmt.Errorf(format, args...)}
}

type precommitFn struct{ fn }

// Precommit implements hooks.Precommit.
func (f precommitFn) Precommit(ctx context.Context, op hooks.Op, obj *core.Object) (hooks.Verdict, error) {
	var v hooks.Verdict
	err := f.call(ctx, hooks.PointPrecommit, func(b []byte) []byte { return f.h.codec.AppendCommitInput(b, op, obj) },
		func(status abi.Status, out []byte) error {
			switch status {
			case abi.StatusReject:
				v = hooks.Verdict{Reject: true, Reason: message(out)}
				if v.Reason == "" {
					v.Reason = fmt.Sprintf("rejected by %s:%s", f.mod, f.fun)
				}
			case abi.StatusError:
				return failed(status, out)
			default:
				if len(out) == 0 || op == hooks.OpDelete {
					return nil
				}
				rep, err := f.h.replacement(obj, out)
				if err != nil {
					return badResult("the replacement object: %w", err)
				}
				v.Replace = rep
			}
			return nil
		})
	if err != nil {
		return hooks.Verdict{}, err
	}
	return v, nil
}

// replacement decodes a precommit's replacement object. The host keeps obj's place and
// clock and takes values[0]'s value, content type, charset, encoding, user metadata,
// index entries and links; the rest is ignored.
func (h *Host) replacement(obj *core.Object, out []byte) (*core.Object, error) {
	dec, err := h.codec.DecodeObject(out)
	if err != nil {
		return nil, err
	}
	if len(dec.Siblings) == 0 {
		return nil, errors.New(`it has no "values"`)
	}
	s := dec.Siblings[0]
	return &core.Object{
		Type: obj.Type, Bucket: obj.Bucket, Key: obj.Key, VClock: obj.VClock,
		Siblings: []core.Sibling{{
			Value: s.Value, ContentType: s.ContentType, Charset: s.Charset, Encoding: s.Encoding,
			Meta: s.Meta, Links: s.Links, Indexes: s.Indexes,
		}},
	}, nil
}

type postcommitFn struct{ fn }

// Postcommit implements hooks.Postcommit. The output is ignored.
func (f postcommitFn) Postcommit(ctx context.Context, op hooks.Op, obj *core.Object) error {
	return f.call(ctx, hooks.PointPostcommit, func(b []byte) []byte { return f.h.codec.AppendCommitInput(b, op, obj) },
		func(status abi.Status, out []byte) error {
			if status != abi.StatusOK {
				return failed(status, out)
			}
			return nil
		})
}

type keyFn struct{ fn }

// KeyHash implements hooks.KeyFun: the output must be 1 to 20 bytes.
func (f keyFn) KeyHash(ctx context.Context, typ, bucket, key string) ([]byte, error) {
	var hash []byte
	err := f.call(ctx, hooks.PointKeyFun, func(b []byte) []byte { return hookjson.AppendKeyFunInput(b, typ, bucket, key) },
		func(status abi.Status, out []byte) error {
			switch {
			case status != abi.StatusOK:
				return failed(status, out)
			case len(out) < 1 || len(out) > abi.KeyHashMaxBytes:
				return badResult("a chash_keyfun returns 1 to %d bytes, not %d", abi.KeyHashMaxBytes, len(out))
			}
			hash = bytes.Clone(out)
			return nil
		})
	return hash, err
}

type linkFn struct{ fn }

// Links implements hooks.LinkFun: the output must be [[bucket,key,tag],...].
func (f linkFn) Links(ctx context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
	var links []core.Link
	err := f.call(ctx, hooks.PointLinkFun, func(b []byte) []byte { return f.h.codec.AppendLinkFunInput(b, obj, bucket, tag) },
		func(status abi.Status, out []byte) error {
			if status != abi.StatusOK {
				return failed(status, out)
			}
			var err error
			if links, err = hookjson.DecodeLinks(out); err != nil {
				return badResult("%w", err)
			}
			return nil
		})
	return links, err
}

// values decodes a map or reduce output into values that own their bytes.
func values(status abi.Status, out []byte, dst *[]json.RawMessage) error {
	if status != abi.StatusOK {
		return failed(status, out)
	}
	vals, err := hookjson.DecodeValues(bytes.Clone(out))
	if err != nil {
		return badResult("%w", err)
	}
	*dst = vals
	return nil
}

type mapFn struct{ fn }

// Map implements hooks.Map: the output must be a JSON array.
func (f mapFn) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	var vals []json.RawMessage
	err := f.call(ctx, hooks.PointMap, func(b []byte) []byte { return f.h.codec.AppendMapInput(b, in) },
		func(status abi.Status, out []byte) error { return values(status, out, &vals) })
	return vals, err
}

type reduceFn struct{ fn }

// Reduce implements hooks.Reduce: the output must be a JSON array.
func (f reduceFn) Reduce(ctx context.Context, vals []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	var res []json.RawMessage
	err := f.call(ctx, hooks.PointReduce, func(b []byte) []byte { return hookjson.AppendReduceInput(b, vals, arg) },
		func(status abi.Status, out []byte) error { return values(status, out, &res) })
	return res, err
}

var (
	_ hooks.Precommit  = precommitFn{}
	_ hooks.Postcommit = postcommitFn{}
	_ hooks.KeyFun     = keyFn{}
	_ hooks.LinkFun    = linkFn{}
	_ hooks.Map        = mapFn{}
	_ hooks.Reduce     = reduceFn{}
)
