// Package hooks is Cairn's extension contract: one small interface per extension point
// (precommit, postcommit, chash_keyfun, linkfun, map, reduce) and the Registry that
// resolves a function named in bucket properties ({"mod": M, "fun": F}) to a loaded
// implementation. Runtimes that implement the contract (native Go built-ins, WebAssembly
// modules, go-plugin processes) live under plugins/ and are registered as Providers by
// cmd/cairn; core never imports them.
package hooks

import (
	"context"
	"encoding/json"

	"github.com/cairnkv/cairn/core"
)

// Op is the operation a commit hook sees.
type Op string

// The operations of commit hooks.
const (
	OpPut    Op = "put"
	OpDelete Op = "delete"
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

// Verdict is a precommit's answer.
type Verdict struct {
	// Reject, when true, refuses the write with Reason (403 to the client).
	Reject bool
	Reason string
	// Replace, when not nil, is the object to store instead of the one written. Its
	// place (type, bucket, key) and causal context are the host's, not the hook's.
	Replace *core.Object
}

// Precommit runs before a put or delete is stored.
type Precommit interface {
	Precommit(ctx context.Context, op Op, obj *core.Object) (Verdict, error)
}

// Postcommit runs after a put or delete is stored. Its error is logged and counted,
// never returned to the client.
type Postcommit interface {
	Postcommit(ctx context.Context, op Op, obj *core.Object) error
}

// KeyFun computes the placement hash of a key: 1 to 20 bytes, the high-order bytes of
// a 160-bit big-endian ring position (zero bytes pad a shorter hash on the right).
type KeyFun interface {
	KeyHash(ctx context.Context, typ, bucket, key string) ([]byte, error)
}

// LinkFun extracts the links of an object that match bucket and tag ("_" matches any).
type LinkFun interface {
	Links(ctx context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error)
}

// MapInput is one input of a map call: an object, or the place of a missing one.
type MapInput struct {
	// Object is the stored object; nil when the input was not found.
	Object *core.Object
	// NotFound is the missing input's place when Object is nil.
	NotFound *Place
	// KeyData is the input's key data (JSON; nil when none was given).
	KeyData json.RawMessage
	// Arg is the phase's argument (JSON; nil when none was given).
	Arg json.RawMessage
}

// Place names an object.
type Place struct {
	Type, Bucket, Key string
}

// Map maps one input to a list of JSON values.
type Map interface {
	Map(ctx context.Context, in MapInput) ([]json.RawMessage, error)
}

// Reduce reduces a list of JSON values to another. It must be re-reducible: the host
// may call it again with its own earlier output and more values.
type Reduce interface {
	Reduce(ctx context.Context, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error)
}

// MapStreamer is a Map whose runtime maps many inputs over one stream more cheaply than
// with one call each (a process plugin: one gRPC stream instead of a round trip per
// input). A MapReduce map phase sends its inputs through a stream when its function is
// a MapStreamer.
type MapStreamer interface {
	Map
	// OpenMapStream opens a stream for the inputs of one phase; ctx bounds the whole
	// stream, and its end closes it.
	OpenMapStream(ctx context.Context) (MapStream, error)
}

// MapStream maps the inputs sent on it, in order. One goroutine may Send while another
// calls Recv.
type MapStream interface {
	// Send queues one input. It may block while the runtime's buffers are full. Every
	// input of one stream has the same Arg. It may return io.EOF, as a gRPC stream's
	// Send does, to say the stream has ended; Recv then returns why.
	Send(in MapInput) error
	// Recv returns the outputs of the oldest input whose outputs have not been received
	// yet. A *CallError of kind Failed is that input's own failure and the stream goes
	// on; any other error ends the stream. After CloseSend and the last outputs, Recv
	// returns io.EOF.
	Recv() ([]json.RawMessage, error)
	// CloseSend says no more inputs will be sent.
	CloseSend() error
	// Close releases the stream, abandoning inputs not yet answered. It is safe to call
	// more than once and concurrently with Send and Recv, which then fail.
	Close()
}
