package security

import (
	"fmt"
	"strconv"
)

// MaxNameLen bounds, in bytes, a key id and the type and bucket names of a grant. A
// bucket with a longer name can be reached by a grant on its type or on any.
const MaxNameLen = 512

// Scope is where a grant applies, and where a permission is needed: any bucket (Any),
// every bucket of a type (Type, no Bucket), or one bucket of a type.
type Scope struct {
	Any    bool   `json:"any,omitempty"`
	Type   string `json:"type,omitempty"`
	Bucket string `json:"bucket,omitempty"`
}

// AnyScope is every bucket of every type.
func AnyScope() Scope { return Scope{Any: true} }

// TypeScope is every bucket of the bucket type typ (and the type itself).
func TypeScope(typ string) Scope { return Scope{Type: typ} }

// BucketScope is the bucket of the bucket type typ.
func BucketScope(typ, bucket string) Scope { return Scope{Type: typ, Bucket: bucket} }

// Validate checks that sc names any, or a type and maybe a bucket, with names of at
// most MaxNameLen bytes.
func (sc Scope) Validate() error {
	switch {
	case sc.Any && (sc.Type != "" || sc.Bucket != ""):
		return fmt.Errorf("%w: a grant on any names no type or bucket", ErrInvalidScope)
	case sc.Any:
		return nil
	case sc.Type == "":
		return fmt.Errorf("%w: name a bucket type (and maybe a bucket), or any", ErrInvalidScope)
	case len(sc.Type) > MaxNameLen || len(sc.Bucket) > MaxNameLen:
		return fmt.Errorf("%w: type and bucket names are at most %d bytes", ErrInvalidScope, MaxNameLen)
	}
	return nil
}

// kind is the scope's kind as stored in a grant key.
func (sc Scope) kind() string {
	switch {
	case sc.Any:
		return "any"
	case sc.Bucket == "":
		return "type"
	}
	return "bucket"
}

// String describes the scope for messages and logs: any, "type", or "type" "bucket".
func (sc Scope) String() string {
	switch sc.kind() {
	case "any":
		return "any"
	case "type":
		return strconv.Quote(sc.Type)
	}
	return strconv.Quote(sc.Type) + " " + strconv.Quote(sc.Bucket)
}

// erlang renders the scope as Riak's refusals do: ANY, <<"type">>, or
// {<<"type">>,<<"bucket">>}.
func (sc Scope) erlang() string {
	switch sc.kind() {
	case "any":
		return "ANY"
	case "type":
		return erlangBinary(sc.Type)
	}
	return "{" + erlangBinary(sc.Type) + "," + erlangBinary(sc.Bucket) + "}"
}

// Grant is the permissions a user holds on one scope.
type Grant struct {
	Scope
	Permissions Permission `json:"-"`
}
