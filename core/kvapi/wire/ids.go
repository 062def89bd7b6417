package wire

import (
	"github.com/cairnkv/cairn/core"

	"crypto/md5"
	crand "crypto/rand"
	"encoding/binary"
	"math/bits"
)

// base62Digits is the reference system's base-62 alphabet.
const base62Digits = core.Base62Digits

// UniqueIDLen is the length of NewBoundary results.
const UniqueIDLen = core.KeyLen

// NewBoundary returns a multipart boundary: UniqueIDLen random base-62 characters drawn
// from crypto/rand, so a client cannot predict it and plant it in a stored value.
func NewBoundary() string {
	var b [UniqueIDLen]byte
	var rnd [32]byte
	used := len(rnd)
	for i := 0; i < len(b); {
		if used == len(rnd) {
			_, _ = crand.Read(rnd[:]) // never fails (Go 1.24+ crashes the program instead)
			used = 0
		}
		v := rnd[used] & 63
		used++
		if v < 62 {
			b[i] = base62Digits[v]
			i++
		}
	}
	return string(b[:])
}

// ETagOfClock returns the entity tag of a response listing siblings (300): the MD5 of
// the encoded vector clock read as a 128-bit big-endian integer, written in base 62
// without leading zeros (up to 22 characters), as the reference computes it. The value
// is opaque to clients; the server quotes it in the ETag header.
func ETagOfClock(clock []byte) string {
	sum := md5.Sum(clock)
	hi := binary.BigEndian.Uint64(sum[:8])
	lo := binary.BigEndian.Uint64(sum[8:])
	var buf [22]byte
	i := len(buf)
	for {
		var r uint64
		hi, r = hi/62, hi%62
		lo, r = bits.Div64(r, lo, 62)
		i--
		buf[i] = base62Digits[r]
		if hi == 0 && lo == 0 {
			break
		}
	}
	return string(buf[i:])
}
