package vclock

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Wire format, version 1 (what clients see base64-encoded as X-Store-Vclock):
//
//	byte    version (1)
//	uvarint number of entries
//	per entry, sorted by actor, actors unique:
//	  uvarint actor length (1..MaxActorLen), actor bytes
//	  uvarint counter (> 0)
//	  varint  timestamp (unix seconds)
//
// Decode accepts exactly what Encode produces (canonical varints, sorted unique actors,
// no trailing bytes), so a clock has one encoding and a forged or truncated one is refused.
const (
	formatVersion = 1
	// MaxActorLen bounds an actor id.
	MaxActorLen = 64
	// MaxEntries bounds the number of entries a decoded clock may have.
	MaxEntries = 4096
)

// ErrMalformed is returned (wrapped) by Decode for bytes that are not a valid clock.
var ErrMalformed = errors.New("vclock: malformed clock")

// Encode returns the binary form of c.
func (c VClock) Encode() []byte {
	n := 2
	for _, e := range c {
		n += 3*binary.MaxVarintLen64 + len(e.Actor)
	}
	b := make([]byte, 0, n)
	return c.AppendEncode(b)
}

// EncodedLen returns the length of c's binary form (len(c.Encode()), computed without
// encoding), so that a caller can write a length prefix and then AppendEncode.
func (c VClock) EncodedLen() int {
	n := 1 + uvarintLen(uint64(len(c)))
	for _, e := range c {
		n += uvarintLen(uint64(len(e.Actor))) + len(e.Actor) + uvarintLen(e.Counter) + varintLen(e.Timestamp)
	}
	return n
}

// uvarintLen is the length of x as binary.AppendUvarint writes it.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// varintLen is the length of x as binary.AppendVarint writes it (zig-zag encoded).
func varintLen(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return uvarintLen(ux)
}

// AppendEncode appends the binary form of c to dst.
func (c VClock) AppendEncode(dst []byte) []byte {
	dst = append(dst, formatVersion)
	dst = binary.AppendUvarint(dst, uint64(len(c)))
	for _, e := range c {
		dst = binary.AppendUvarint(dst, uint64(len(e.Actor)))
		dst = append(dst, e.Actor...)
		dst = binary.AppendUvarint(dst, e.Counter)
		dst = binary.AppendVarint(dst, e.Timestamp)
	}
	return dst
}

// Decode parses the binary form produced by Encode. An empty input is the empty clock.
func Decode(b []byte) (VClock, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != formatVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrMalformed, b[0])
	}
	r := reader{b: b[1:]}
	n := r.uvarint()
	if r.err != nil || n > MaxEntries || n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: bad entry count", ErrMalformed)
	}
	var c VClock
	if n > 0 {
		c = make(VClock, 0, n)
	}
	for i := uint64(0); i < n; i++ {
		l := r.uvarint()
		if r.err != nil || l == 0 || l > MaxActorLen || l > uint64(len(r.b)) {
			return nil, fmt.Errorf("%w: bad actor in entry %d", ErrMalformed, i)
		}
		actor := string(r.b[:l])
		r.b = r.b[l:]
		ctr := r.uvarint()
		ts := r.varint()
		if r.err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrMalformed, i, r.err)
		}
		if ctr == 0 {
			return nil, fmt.Errorf("%w: zero counter in entry %d", ErrMalformed, i)
		}
		if len(c) > 0 && c[len(c)-1].Actor >= actor {
			return nil, fmt.Errorf("%w: actors not sorted and unique", ErrMalformed)
		}
		c = append(c, Entry{Actor: actor, Counter: ctr, Timestamp: ts})
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.b))
	}
	return c, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	if n != len(binary.AppendUvarint(nil, v)) {
		r.err = errors.New("non-canonical varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	if n != len(binary.AppendVarint(nil, v)) {
		r.err = errors.New("non-canonical varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}
