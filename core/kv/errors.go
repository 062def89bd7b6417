package kv

import (
	"fmt"

	"github.com/cairnkv/cairn/core"
)

// Client-facing errors of this package. Messages are the reference system's response
// bodies, which the HTTP layer sends unchanged.

func errNotFound() error { return &core.Error{Code: core.ENOTFOUND, Message: "not found\n"} }

func errUnknownType(typ string) error {
	return &core.Error{Code: core.ENOTFOUND, Message: "Unknown bucket type: " + typ}
}

func errQuorumTooLarge(n int) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf("Specified w/dw/pw values invalid for bucket n value of %d\n", n)}
}

func errTooLarge(size, limit int64) error {
	return &core.Error{Code: core.ETOOLARGE, Message: fmt.Sprintf("Object of %d bytes exceeds the maximum of %d bytes\n", size, limit)}
}

func errObjectTooLarge(size, limit, headers int64) error {
	return &core.Error{Code: core.ETOOLARGE, Message: fmt.Sprintf(
		"Object of %d bytes over all its siblings exceeds the bucket's max_object_size of %d bytes (plus %d bytes of headers)\n",
		size, limit, headers)}
}

func errTooManySiblings(n, limit int) error {
	return &core.Error{Code: core.ECONFLICT, Message: fmt.Sprintf(
		"Too many siblings: the write would leave %d, above the bucket's max_siblings of %d; "+
			"write with the object's vector clock to resolve them\n", n, limit)}
}

func errTooManyMeta(n, limit int) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
		"Too many user metadata entries: %d, the maximum is %d\n", n, limit)}
}

func errHeadersTooLarge(n, limit int64) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
		"Headers too large: %d bytes of content type, user metadata, index entries and links, the maximum is %d\n", n, limit)}
}

func errBadClock(err error) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf("Invalid vector clock: %v\n", err)}
}

func errTimeout() error { return &core.Error{Code: core.EUNAVAILABLE, Message: "request timed out\n"} }

// errUnsynced is the answer to a request whose local replica could not be brought up to
// date with its key (storage.Freshener): 503, as Riak answers when it cannot reach the
// replicas a request needs (the key's stream has no leader on this side of a partition,
// or ctx ended). The cause stays wrapped for the log. nil stays nil.
func errUnsynced(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (%w)", &core.Error{Code: core.EUNAVAILABLE,
		Message: "The key's replicas cannot be reached to confirm its latest write; try again\n"}, err)
}

// errContended is the answer to a write that conflicted with other writers of the
// store maxWriteAttempts times in a row.
func errContended(bucket, key string) error {
	return &core.Error{Code: core.EUNAVAILABLE, Message: fmt.Sprintf(
		"Write of %s/%s conflicted with concurrent writes %d times; try again\n", bucket, key, maxWriteAttempts)}
}

// IsNotFound reports whether err means the object (or bucket type) does not exist.
func IsNotFound(err error) bool { return core.ErrorCode(err) == core.ENOTFOUND }
