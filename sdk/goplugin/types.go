package goplugin

import (
	"context"
	"encoding/json"
	"time"
)

// Op is the operation a commit hook sees.
type Op string

// The operations of commit hooks.
const (
	OpPut    Op = "put"
	OpDelete Op = "delete"
)

// Point is an extension point.
type Point string

// The extension points, named as bucket properties name them.
const (
	PointPrecommit  Point = "precommit"
	PointPostcommit Point = "postcommit"
	PointKeyFun     Point = "chash_keyfun"
	PointLinkFun    Point = "linkfun"
	PointMap        Point = "map"
	PointReduce     Point = "reduce"
)

// Link is a typed pointer from one object to another.
type Link struct {
	Bucket, Key, Tag string
}

// Pair is one user-metadata entry (Key without the X-Riak-Meta- prefix) or one index
// posting (Key is the field, "email_bin"; Value the term).
type Pair struct {
	Key, Value string
}

// Content is one value of an object. An object without conflicts has one.
type Content struct {
	Value           []byte
	ContentType     string
	Charset         string
	ContentEncoding string
	VTag            string
	LastModified    time.Time
	Links           []Link
	UserMeta        []Pair
	Indexes         []Pair
	// Deleted marks a tombstone.
	Deleted bool
}

// Object is an object: its place, its opaque causal context and its values.
type Object struct {
	BucketType, Bucket, Key string
	VClock                  []byte
	Contents                []Content
}

// Verdict is a precommit's answer: accept (the zero Verdict), reject with a reason the
// client sees (403), or replace the object written. The server keeps the replaced
// object's place and causal context and takes the first content's value, content type,
// charset, encoding, user metadata, indexes and links.
type Verdict struct {
	Reject  bool
	Reason  string
	Replace *Object
}

// MapInput is one input of a map function: a stored object, or (NotFound) only the
// place of a missing one in Object's BucketType, Bucket and Key.
type MapInput struct {
	Object   *Object
	NotFound bool
	// KeyData is the input's key data, Arg the phase's argument (JSON; nil when none).
	KeyData json.RawMessage
	Arg     json.RawMessage
}

// Precommitter is a plugin that offers precommit hooks. fun is the function named in
// the bucket properties.
type Precommitter interface {
	Precommit(ctx context.Context, fun string, op Op, obj *Object) (Verdict, error)
}

// Postcommitter is a plugin that offers postcommit hooks. Errors are logged and
// counted by the server, never shown to the client.
type Postcommitter interface {
	Postcommit(ctx context.Context, fun string, op Op, obj *Object) error
}

// KeyHasher is a plugin that offers chash_keyfun functions: 1 to 20 bytes, the
// high-order bytes of a 160-bit big-endian ring position. It must be deterministic.
type KeyHasher interface {
	KeyHash(ctx context.Context, fun, bucketType, bucket, key string) ([]byte, error)
}

// Linker is a plugin that offers linkfun functions: the links of obj that match
// bucket and tag ("_" matches any).
type Linker interface {
	Links(ctx context.Context, fun string, obj *Object, bucket, tag string) ([]Link, error)
}

// Mapper is a plugin that offers MapReduce map functions: one input to a list of JSON
// values. The server streams a phase's inputs to the plugin; Map is called once per
// input.
type Mapper interface {
	Map(ctx context.Context, fun string, in MapInput) ([]json.RawMessage, error)
}

// Reducer is a plugin that offers MapReduce reduce functions. They must be
// re-reducible: the server may call them again with their own output and more values.
type Reducer interface {
	Reduce(ctx context.Context, fun string, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error)
}

// Function is a function a plugin offers and the points it serves at.
type Function struct {
	Name   string
	Points []Point
}

// FunctionLister may be implemented by a plugin to name its functions: the server then
// refuses bucket properties and MapReduce phases that name any other. Without it, any
// function name is accepted at the points the plugin implements.
type FunctionLister interface {
	Functions() []Function
}
