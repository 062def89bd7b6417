package storage

import (
	"encoding/binary"
	"fmt"
)

// Table tags: the first byte of every key names the table the key belongs to.
const (
	// TagObject keys are (type, bucket, key) and hold an object record.
	TagObject byte = 'o'
	// TagIndex keys are (type, bucket, index field, encoded term, key) with an empty
	// value: one secondary-index posting.
	TagIndex byte = 'i'
	// TagProps keys are (type, bucket) and hold the bucket properties as JSON.
	TagProps byte = 'p'
	// TagType keys are (type) and hold the bucket-type properties.
	TagType byte = 't'
	// TagModule keys are (module name) and hold a registered extension module record.
	TagModule byte = 'm'
	// TagS3 is the table of S3 records (users, buckets, manifests, multipart uploads).
	TagS3 byte = 's'
	// TagChunk keys are (chunk id, chunk number) and hold at most 1 MiB of object data.
	TagChunk byte = 'c'
	// TagReap keys are (8-byte big-endian unix-nano deadline, type, bucket, key) with an
	// empty value: the tombstone reap queue, in deadline order. See ReapKey.
	TagReap byte = 'x'
	// TagExpiry keys are (8-byte big-endian unix-nano expiry, type, bucket, key) with an
	// empty value: the expiry index of objects with a TTL, in expiry order. See ExpiryKey.
	TagExpiry byte = 'e'
	// TagMeta keys are (name) and hold server metadata such as the schema version
	// ("schema", see SchemaVersion) and the node id.
	TagMeta byte = 'v'
	// TagGrant keys are (user key id, scope kind, type, bucket) and hold the KV
	// permissions granted to that user on that scope (core/security; the kind is "any",
	// "type" or "bucket", and the unused names are empty).
	TagGrant byte = 'g'
)

// Component framing bytes. Inside a component 0x00 is escaped as 0x00 0xFF; a
// component ends with 0x00 0x01. Because the terminator sorts below every escaped or
// literal continuation, a shorter component sorts before any longer one it prefixes.
const (
	escByte  = 0x00
	escZero  = 0xFF
	termByte = 0x01
)

// Key builds a key from a table tag and components. Each component is encoded
// order-preservingly and prefix-free (see AppendComponent), so any byte may appear in a
// component, bytes.Compare on two keys with the same tag equals the lexicographic
// order of their component tuples, and Key(tag, c1..ck) is a prefix of exactly the keys
// whose first k components are c1..ck. The result is a fresh slice.
func Key(tag byte, components ...[]byte) []byte {
	n := 1
	for _, c := range components {
		n += len(c) + 2
	}
	dst := make([]byte, 1, n+4)
	dst[0] = tag
	for _, c := range components {
		dst = appendComponent(dst, c)
	}
	return dst
}

// KeyString is Key with string components. It is not written as one generic function
// with Key: a call to a generic instantiation inlined into another package loses escape
// information, and the variadic slice of every object key (the GET and PUT paths) would
// then be heap-allocated.
func KeyString(tag byte, components ...string) []byte {
	n := 1
	for _, c := range components {
		n += len(c) + 2
	}
	dst := make([]byte, 1, n+4)
	dst[0] = tag
	for _, c := range components {
		dst = appendComponent(dst, c)
	}
	return dst
}

// AppendComponent appends the encoding of one component to dst and returns the
// extended slice: every 0x00 byte of c becomes 0x00 0xFF, and the component ends with
// 0x00 0x01. Use it to extend a key (or a scan prefix) built by Key.
func AppendComponent(dst, c []byte) []byte { return appendComponent(dst, c) }

// AppendComponentPrefix appends the encoding of c without the component terminator:
// the result is a prefix of every key whose next component starts with c, so it is the
// scan prefix of "keys whose component begins with c" (an S3 listing's prefix).
func AppendComponentPrefix(dst []byte, c string) []byte {
	dst = appendComponent(dst, c)
	return dst[:len(dst)-2]
}

func appendComponent[T ~string | ~[]byte](dst []byte, c T) []byte {
	for i := 0; i < len(c); i++ {
		if b := c[i]; b == escByte {
			dst = append(dst, escByte, escZero)
		} else {
			dst = append(dst, b)
		}
	}
	return append(dst, escByte, termByte)
}

// DecodeKey splits a key built by Key back into its tag and components. The returned
// components are fresh copies that do not alias k. It returns an error wrapping
// ErrMalformedKey if k is empty, ends inside a component, or holds a 0x00 byte that is
// followed by anything other than 0xFF or 0x01. A key that decodes re-encodes to
// exactly the same bytes.
func DecodeKey(k []byte) (tag byte, components [][]byte, err error) {
	if len(k) == 0 {
		return 0, nil, fmt.Errorf("storage: decode key: empty key: %w", ErrMalformedKey)
	}
	tag = k[0]
	rest := k[1:]
	for len(rest) > 0 {
		var c []byte
		c, rest, err = decodeComponent(rest)
		if err != nil {
			return 0, nil, fmt.Errorf("storage: decode key %q: component %d: %w", k, len(components), err)
		}
		components = append(components, c)
	}
	return tag, components, nil
}

// decodeComponent decodes the first component of b and returns it (a fresh copy) and
// the remaining bytes.
func decodeComponent(b []byte) (c, rest []byte, err error) {
	c = make([]byte, 0, 16)
	for i := 0; i < len(b); i++ {
		if b[i] != escByte {
			c = append(c, b[i])
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, fmt.Errorf("truncated escape: %w", ErrMalformedKey)
		}
		switch b[i+1] {
		case escZero:
			c = append(c, escByte)
			i++
		case termByte:
			return c, b[i+2:], nil
		default:
			return nil, nil, fmt.Errorf("invalid escape 0x00 0x%02x: %w", b[i+1], ErrMalformedKey)
		}
	}
	return nil, nil, fmt.Errorf("missing terminator: %w", ErrMalformedKey)
}

// PrefixEnd returns the smallest key greater than every key that has prefix p, for use
// as an exclusive upper bound of a scan. It returns nil (meaning "to the end of the
// keyspace") if there is no such key, i.e. if p is empty or consists only of 0xFF
// bytes. The result is a fresh slice.
func PrefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xFF {
			end := make([]byte, i+1)
			copy(end, p[:i+1])
			end[i]++
			return end
		}
	}
	return nil
}

// Uint64Component returns the 8-byte big-endian encoding of v; as a component it sorts
// in numeric order.
func Uint64Component(v uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v)
}

// ReapKey returns the TagReap key for an object whose tombstone may be removed at the
// given deadline (unix nanoseconds): Key(TagReap, Uint64Component(deadline), typ,
// bucket, key). Reap keys sort by deadline, so a scan up to ReapPrefix(now+1) finds
// everything that is due.
func ReapKey(deadlineUnixNano int64, typ, bucket, key []byte) []byte {
	return Key(TagReap, Uint64Component(uint64(deadlineUnixNano)), typ, bucket, key)
}

// ReapPrefix returns the TagReap key prefix for the given deadline; use it as an
// exclusive upper bound to scan the reap entries due strictly before the deadline.
func ReapPrefix(deadlineUnixNano int64) []byte {
	return Key(TagReap, Uint64Component(uint64(deadlineUnixNano)))
}

// DecodeReapKey is the inverse of ReapKey.
func DecodeReapKey(k []byte) (deadlineUnixNano int64, typ, bucket, key []byte, err error) {
	return decodeTimedKey(k, TagReap, "reap")
}

// ExpiryKey returns the TagExpiry key of an object that expires at the given time (unix
// nanoseconds): Key(TagExpiry, Uint64Component(expiry), typ, bucket, key). Expiry keys
// sort by expiry, so a scan up to ExpiryPrefix(now+1) finds every expired object.
func ExpiryKey(expiryUnixNano int64, typ, bucket, key []byte) []byte {
	return Key(TagExpiry, Uint64Component(uint64(expiryUnixNano)), typ, bucket, key)
}

// ExpiryPrefix returns the TagExpiry key prefix for the given time; use it as an
// exclusive upper bound to scan the objects expiring strictly before it.
func ExpiryPrefix(expiryUnixNano int64) []byte {
	return Key(TagExpiry, Uint64Component(uint64(expiryUnixNano)))
}

// DecodeExpiryKey is the inverse of ExpiryKey.
func DecodeExpiryKey(k []byte) (expiryUnixNano int64, typ, bucket, key []byte, err error) {
	return decodeTimedKey(k, TagExpiry, "expiry")
}

// decodeTimedKey decodes a key of tag made of an 8-byte time and type, bucket and key.
func decodeTimedKey(k []byte, want byte, what string) (unixNano int64, typ, bucket, key []byte, err error) {
	tag, cs, err := DecodeKey(k)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	if tag != want || len(cs) != 4 || len(cs[0]) != 8 {
		return 0, nil, nil, nil, fmt.Errorf("storage: decode %s key %q: not a %s key: %w", what, k, what, ErrMalformedKey)
	}
	return int64(binary.BigEndian.Uint64(cs[0])), cs[1], cs[2], cs[3], nil
}
