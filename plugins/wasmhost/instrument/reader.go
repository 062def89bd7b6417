package instrument

import (
	"errors"
	"fmt"
)

// errTruncated is the cause of every read past the end of the input.
var errTruncated = errors.New("unexpected end")

// reader decodes the binary format from b. The first failure is kept in err and every
// later read returns zero values, so callers check err once after a group of reads.
type reader struct {
	b   []byte
	pos int
	// base is the offset of b[0] in the module, for error messages.
	base int
	err  error
}

// fail records the first error, located at the current offset.
func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at offset %#x: %w", r.base+r.pos, fmt.Errorf(format, args...))
	}
}

// done reports whether every byte was read (or reading failed).
func (r *reader) done() bool { return r.err != nil || r.pos >= len(r.b) }

// remaining is the number of unread bytes.
func (r *reader) remaining() int { return len(r.b) - r.pos }

// byte1 reads one byte.
func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail("%w", errTruncated)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// bytesN reads n bytes, a sub-slice of the input.
func (r *reader) bytesN(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.remaining() {
		r.fail("%w: want %d bytes, %d left", errTruncated, n, r.remaining())
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

// uleb reads an unsigned LEB128 number of at most bits bits, rejecting encodings longer
// than needed for bits and set bits beyond them, as the specification does.
func (r *reader) uleb(bits uint) uint64 {
	if r.err != nil {
		return 0
	}
	maxLen := int((bits + 6) / 7)
	var v uint64
	for i := 0; ; i++ {
		c := r.byte1()
		if r.err != nil {
			return 0
		}
		shift := uint(7 * i)
		if i == maxLen-1 {
			// The last byte may only carry the bits that remain, and no continuation.
			if rest := bits - shift; c>>rest != 0 {
				r.fail("LEB128 number longer than %d bytes or over %d bits", maxLen, bits)
				return 0
			}
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number of at most bits bits (32, 33 or 64).
func (r *reader) sleb(bits uint) int64 {
	if r.err != nil {
		return 0
	}
	maxLen := int((bits + 6) / 7)
	var v int64
	var shift uint
	for i := 0; ; i++ {
		c := r.byte1()
		if r.err != nil {
			return 0
		}
		if i == maxLen-1 {
			// The unused high bits of the last byte must copy the sign bit, and it
			// must not continue.
			// used is the number of bits this byte carries, the sign bit included;
			// hi is payload bits used-1..6, sign-extended: all copies of the sign.
			used := bits - shift
			hi := int8(c<<1) >> used
			if c&0x80 != 0 || (hi != 0 && hi != -1) {
				r.fail("LEB128 number longer than %d bytes or over %d bits", maxLen, bits)
				return 0
			}
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// u32 reads an unsigned 32-bit LEB128 number.
func (r *reader) u32() uint32 { return uint32(r.uleb(32)) }

// count reads a vector length and checks that that many elements of at least minSize
// bytes each can still follow, so that crafted counts cannot make callers allocate.
func (r *reader) count(minSize int, what string) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(minSize) > uint64(r.remaining()) {
		r.fail("%d %s cannot fit in the %d bytes left", n, what, r.remaining())
		return 0
	}
	return int(n)
}
