package cairn

import (
	"errors"
	"fmt"

	"github.com/cairnkv/cairn/sdk/abi"
)

// Status is what an extension function returns to the host (see abi.Status).
type Status = abi.Status

// The statuses of ABI v1.
const (
	StatusOK     = abi.StatusOK
	StatusReject = abi.StatusReject
	StatusError  = abi.StatusError
)

// Point is an extension point.
type Point int

// The extension points.
const (
	PointPrecommit Point = iota
	PointPostcommit
	PointKeyFun
	PointLinkFun
	PointMap
	PointReduce
)

var pointNames = [...]string{"precommit", "postcommit", "chash_keyfun", "linkfun", "map", "reduce"}

// String returns the point's name as bucket properties spell it.
func (p Point) String() string {
	if p < 0 || int(p) >= len(pointNames) {
		return "unknown"
	}
	return pointNames[p]
}

// Hook is an extension function ready to be exported: a typed Go function wrapped with
// the decoding of its point's input and the encoding of its result. Build one with
// Precommit, Postcommit, KeyFun, LinkFun, Map or Reduce; export it with Run (wasip1);
// test it with Call or the cairntest package.
type Hook struct {
	point Point
	fn    func(input []byte) (Status, []byte)
}

// Point returns the extension point the hook serves.
func (h Hook) Point() Point { return h.point }

// Call runs the hook on one raw input as the host sends it and returns the status and
// output the host receives. It never panics: a panic of the function, an input that
// does not decode or an output over abi.MaxOutputBytes become StatusError with a
// message.
func (h Hook) Call(input []byte) (st Status, out []byte) {
	if h.fn == nil {
		return StatusError, []byte("cairn: hook not initialized (build it with cairn.Precommit, cairn.Map, ...)")
	}
	defer func() {
		if r := recover(); r != nil {
			st, out = StatusError, fmt.Appendf(nil, "cairn: %s panicked: %v", h.point, r)
		}
	}()
	st, out = h.fn(input)
	if len(out) > abi.MaxOutputBytes {
		return StatusError, fmt.Appendf(nil, "cairn: %s output is %d bytes, over the limit of %d",
			h.point, len(out), abi.MaxOutputBytes)
	}
	return st, out
}

// fail is the result of a failed call.
func fail(err error) (Status, []byte) {
	return StatusError, []byte(err.Error())
}

// verdictKind is what a Verdict says.
type verdictKind int

const (
	verdictAccept verdictKind = iota
	verdictReplace
	verdictReject
	verdictFail
)

// Verdict is a precommit's answer: Accept, Replace, Reject or Fail. The zero Verdict
// accepts the write unchanged.
type Verdict struct {
	kind   verdictKind
	reason string
	obj    *Object
	err    error
}

// Accept lets the write proceed unchanged.
func Accept() Verdict { return Verdict{} }

// Replace lets the write proceed with obj's first value instead: its data, content
// type, charset, content encoding, user metadata, indexes and links. The host keeps its
// own place and causal context and validates the replacement again. On delete the host
// ignores a replacement. A nil obj accepts unchanged.
func Replace(obj *Object) Verdict {
	if obj == nil {
		return Accept()
	}
	return Verdict{kind: verdictReplace, obj: obj}
}

// Reject refuses the write; the client receives 403 with reason.
func Reject(reason string) Verdict { return Verdict{kind: verdictReject, reason: reason} }

// Rejectf refuses the write with a formatted reason.
func Rejectf(format string, args ...any) Verdict {
	return Reject(fmt.Sprintf(format, args...))
}

// Fail reports that the precommit itself failed (status 2): the write fails as a
// crashed hook would, with err's message in the server log.
func Fail(err error) Verdict {
	if err == nil {
		err = errors.New("precommit failed")
	}
	return Verdict{kind: verdictFail, err: err}
}

// Precommit wraps a precommit function. Its input is {"op", "object"}; its verdict
// becomes status 0 with no output (accept), status 0 with an object (replace), status
// 1 with the reason (reject) or status 2 with a message (fail).
func Precommit(f func(in *CommitInput) Verdict) Hook {
	return Hook{point: PointPrecommit, fn: func(input []byte) (Status, []byte) {
		in, err := decodeCommitInput(PointPrecommit, input)
		if err != nil {
			return fail(err)
		}
		v := f(in)
		switch v.kind {
		case verdictReplace:
			if len(v.obj.Values) == 0 {
				return fail(errors.New("cairn: precommit replacement has no values"))
			}
			return StatusOK, v.obj.appendJSON(make([]byte, 0, v.obj.sizeHint()))
		case verdictReject:
			return StatusReject, []byte(v.reason)
		case verdictFail:
			return fail(v.err)
		}
		return StatusOK, nil
	}}
}

// Postcommit wraps a postcommit function. A returned error becomes status 2 with its
// message; the host logs and counts it, and the client never sees it.
func Postcommit(f func(in *CommitInput) error) Hook {
	return Hook{point: PointPostcommit, fn: func(input []byte) (Status, []byte) {
		in, err := decodeCommitInput(PointPostcommit, input)
		if err != nil {
			return fail(err)
		}
		if err := f(in); err != nil {
			return fail(err)
		}
		return StatusOK, nil
	}}
}

// KeyFun wraps a chash_keyfun function. It must return 1 to 20 bytes, read by the host
// as the high-order bytes of a 160-bit ring position (a SHA-1 sum is all 20; zero bytes
// pad a shorter hash on the right, so 8 bytes spread keys over the ring), and be
// deterministic: keyfun modules get no clock and no random source.
func KeyFun(f func(in *KeyFunInput) ([]byte, error)) Hook {
	return Hook{point: PointKeyFun, fn: func(input []byte) (Status, []byte) {
		in, err := decodeKeyFunInput(input)
		if err != nil {
			return fail(err)
		}
		h, err := f(in)
		if err != nil {
			return fail(err)
		}
		if len(h) == 0 || len(h) > abi.KeyHashMaxBytes {
			return fail(fmt.Errorf("cairn: chash_keyfun returned %d bytes, want 1 to %d", len(h), abi.KeyHashMaxBytes))
		}
		return StatusOK, h
	}}
}

// LinkFun wraps a linkfun function: it returns the object's links that match the spec
// (LinkSpec.Filter helps), encoded as [[bucket, key, tag], ...].
func LinkFun(f func(in *LinkFunInput) ([]Link, error)) Hook {
	return Hook{point: PointLinkFun, fn: func(input []byte) (Status, []byte) {
		in, err := decodeLinkFunInput(input)
		if err != nil {
			return fail(err)
		}
		links, err := f(in)
		if err != nil {
			return fail(err)
		}
		b := []byte{'['}
		for i, l := range links {
			if i > 0 {
				b = append(b, ',')
			}
			b = l.appendJSON(b)
		}
		return StatusOK, append(b, ']')
	}}
}

// Map wraps a map function. Each returned element is encoded with encoding/json (a
// json.RawMessage passes through as is); the output is the JSON array of them.
func Map(f func(in *MapInput) ([]any, error)) Hook {
	return Hook{point: PointMap, fn: func(input []byte) (Status, []byte) {
		in, err := decodeMapInput(input)
		if err != nil {
			return fail(err)
		}
		vals, err := f(in)
		if err != nil {
			return fail(err)
		}
		return encodeList(PointMap, vals)
	}}
}

// Reduce wraps a reduce function. It must be re-reducible: the host may call it again
// with its own earlier output among the values.
func Reduce(f func(in *ReduceInput) ([]any, error)) Hook {
	return Hook{point: PointReduce, fn: func(input []byte) (Status, []byte) {
		in, err := decodeReduceInput(input)
		if err != nil {
			return fail(err)
		}
		vals, err := f(in)
		if err != nil {
			return fail(err)
		}
		return encodeList(PointReduce, vals)
	}}
}

func encodeList(p Point, vals []any) (Status, []byte) {
	if vals == nil {
		vals = []any{}
	}
	b, err := marshalValue(vals)
	if err != nil {
		return fail(fmt.Errorf("cairn: encode %s output: %w", p, err))
	}
	return StatusOK, b
}
