package cairn

import (
	"encoding/json"
	"fmt"

	"github.com/cairnkv/cairn/sdk/abi"
)

// The operations a commit hook sees (CommitInput.Op).
const (
	OpPut    = abi.OpPut
	OpDelete = abi.OpDelete
)

// Wildcard is the linkfun spec value that matches any bucket or any tag.
const Wildcard = abi.Wildcard

// CommitInput is the input of a precommit or postcommit: {"op": ..., "object": ...}.
//
// A precommit on put sees the value being written (one element in Values, the client's
// causal context, no VTag or LastModified yet); on delete it sees a tombstone (one
// value, empty data, Deleted set). A postcommit sees the object as stored: all its
// siblings and its new causal context.
type CommitInput struct {
	// Op is OpPut or OpDelete.
	Op     string  `json:"op"`
	Object *Object `json:"object"`
}

// KeyFunInput is the input of a chash_keyfun: the place of the key to hash.
type KeyFunInput struct {
	BucketType string `json:"bucket_type"`
	Bucket     string `json:"bucket"`
	Key        string `json:"key"`
}

// LinkFunInput is the input of a linkfun: an object and the spec of the links wanted.
type LinkFunInput struct {
	Object *Object  `json:"object"`
	Spec   LinkSpec `json:"spec"`
}

// LinkSpec selects links by bucket and tag; Wildcard ("_") matches any.
type LinkSpec struct {
	Bucket string `json:"bucket"`
	Tag    string `json:"tag"`
}

// Matches reports whether l is selected by the spec.
func (s LinkSpec) Matches(l Link) bool {
	return (s.Bucket == Wildcard || s.Bucket == l.Bucket) && (s.Tag == Wildcard || s.Tag == l.Tag)
}

// Filter returns the links that the spec selects, in order.
func (s LinkSpec) Filter(links []Link) []Link {
	var out []Link
	for _, l := range links {
		if s.Matches(l) {
			out = append(out, l)
		}
	}
	return out
}

// Place names an object: the input of a map whose object was not found.
type Place struct {
	BucketType string `json:"bucket_type"`
	Bucket     string `json:"bucket"`
	Key        string `json:"key"`
}

// MapInput is the input of a map: an object (or the place of a missing one), the
// input's key data and the phase's argument.
type MapInput struct {
	// Object is the input object; nil when it was not found.
	Object *Object `json:"object,omitempty"`
	// NotFound is the missing object's place when Object is nil.
	NotFound *Place `json:"not_found,omitempty"`
	// KeyData is the input's key data as JSON; nil when none was given.
	KeyData json.RawMessage `json:"keydata"`
	// Arg is the phase's argument as JSON; nil when none was given.
	Arg json.RawMessage `json:"arg"`
}

// DecodeKeyData unmarshals the key data into dst; it leaves dst alone when there is
// none.
func (in *MapInput) DecodeKeyData(dst any) error { return decodeOptional("keydata", in.KeyData, dst) }

// DecodeArg unmarshals the argument into dst; it leaves dst alone when there is none.
func (in *MapInput) DecodeArg(dst any) error { return decodeOptional("arg", in.Arg, dst) }

// ReduceInput is the input of a reduce: the values to reduce and the phase's argument.
// The values may include the function's own earlier output: a reduce must be
// re-reducible.
type ReduceInput struct {
	Values []json.RawMessage `json:"values"`
	// Arg is the phase's argument as JSON; nil when none was given.
	Arg json.RawMessage `json:"arg"`
}

// DecodeArg unmarshals the argument into dst; it leaves dst alone when there is none.
func (in *ReduceInput) DecodeArg(dst any) error { return decodeOptional("arg", in.Arg, dst) }

func decodeOptional(what string, raw json.RawMessage, dst any) error {
	if isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("cairn: %s: %w", what, err)
	}
	return nil
}
