package native

import (
	"context"
	"crypto/sha1"
	"encoding/binary"

	"github.com/cairnkv/cairn/core"
)

// Tags of the Erlang external term format used by the reference's term_to_binary.
const (
	termVersion   = 131 // the format's version byte
	termTuple     = 104 // SMALL_TUPLE_EXT: arity (1 byte), elements
	termBinary    = 109 // BINARY_EXT: length (4 bytes, big-endian), bytes
	binaryHdrSize = 5   // tag + length of a BINARY_EXT
)

// keyFun adapts a hash function to hooks.KeyFun.
type keyFun func(typ, bucket, key string) []byte

// KeyHash implements hooks.KeyFun; it never fails.
func (f keyFun) KeyHash(_ context.Context, typ, bucket, key string) ([]byte, error) {
	return f(typ, bucket, key), nil
}

// StdKeyHash is the reference's chash_std_keyfun: the 20-byte SHA-1 of the external
// term format of {Bucket, Key}, where Bucket is the binary bucket name for the default
// bucket type ("" also means the default type) and the tuple {Type, Bucket} for any
// other, so that keys land on the same ring positions as in the reference system.
func StdKeyHash(typ, bucket, key string) []byte {
	buf := make([]byte, 0, 1+2+2+3*binaryHdrSize+len(typ)+len(bucket)+len(key))
	buf = append(buf, termVersion, termTuple, 2)
	buf = appendBucketTerm(buf, typ, bucket)
	buf = appendBinaryTerm(buf, key)
	sum := sha1.Sum(buf)
	return sum[:]
}

// BucketOnlyKeyHash is the reference's chash_bucketonly_keyfun: the 20-byte SHA-1 of
// the external term format of the bucket alone (Bucket or {Type, Bucket}, as in
// StdKeyHash), which places every key of a bucket on the same partition. key is
// ignored.
func BucketOnlyKeyHash(typ, bucket, _ string) []byte {
	buf := make([]byte, 0, 1+2+2*binaryHdrSize+len(typ)+len(bucket))
	buf = append(buf, termVersion)
	buf = appendBucketTerm(buf, typ, bucket)
	sum := sha1.Sum(buf)
	return sum[:]
}

// appendBucketTerm appends the term the reference uses for a bucket: the binary name
// in the default type, the tuple {Type, Bucket} of two binaries otherwise.
func appendBucketTerm(buf []byte, typ, bucket string) []byte {
	if typ == "" || typ == core.DefaultType {
		return appendBinaryTerm(buf, bucket)
	}
	buf = append(buf, termTuple, 2)
	buf = appendBinaryTerm(buf, typ)
	return appendBinaryTerm(buf, bucket)
}

// appendBinaryTerm appends s as a BINARY_EXT term. Names and keys are far below the
// format's 4 GiB limit (the server caps them), so the length always fits.
func appendBinaryTerm(buf []byte, s string) []byte {
	buf = append(buf, termBinary)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}
