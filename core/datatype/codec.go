package datatype

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Binary format, version 1:
//
//	byte version (1), byte kind, then the kind's body.
//
// Inside bodies: uvarint integers (canonical, shortest form), strings as uvarint length
// + bytes, version vectors and dot sets as a count and entries sorted strictly
// ascending, maps as a count and entries sorted strictly by key. Decoding accepts only
// that canonical form, so a value has one encoding; every count is checked against the
// bytes left before anything is allocated, so a decode allocates in proportion to its
// input (HyperLogLog's fixed 16 KiB of registers aside).
const formatVersion = 1

// Bounds on what values and operations may hold.
const (
	// MaxActorLen bounds an actor id.
	MaxActorLen = 64
	// MaxDepth bounds the nesting of maps in maps.
	MaxDepth = 16
	// MaxElementLen bounds a set element, a G-set or HyperLogLog element and a map
	// field name.
	MaxElementLen = 64 << 10
	// MaxRegisterLen bounds a register's value.
	MaxRegisterLen = 1 << 20
)

// ErrMalformed is returned (wrapped) by Unmarshal for bytes that are not a value.
var ErrMalformed = errors.New("datatype: malformed value")

// enc appends the binary form.
type enc struct{ b []byte }

func (e *enc) byte1(x byte) { e.b = append(e.b, x) }
func (e *enc) uv(x uint64)  { e.b = binary.AppendUvarint(e.b, x) }
func (e *enc) sv(x int64)   { e.b = binary.AppendVarint(e.b, x) }
func (e *enc) str(s string) { e.uv(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) dot(d dot)    { e.str(d.actor); e.uv(d.n) }
func (e *enc) count(n int)  { e.uv(uint64(n)) }
func (e *enc) raw(b []byte) { e.b = append(e.b, b...) }

// vv writes a version vector.
func (e *enc) vv(v vv) {
	as := v.sortedActors()
	e.count(len(as))
	for _, a := range as {
		e.str(a)
		e.uv(v[a])
	}
}

// dots writes a dot set.
func (e *enc) dots(s dotSet) {
	ds := s.sorted()
	e.count(len(ds))
	for _, d := range ds {
		e.dot(d)
	}
}

// dec reads the binary form; the first error sticks and later reads return zero values.
type dec struct {
	b   []byte
	err error
}

// fail records the first error.
func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *dec) byte1() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	x := d.b[0]
	d.b = d.b[1:]
	return x
}

func (d *dec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, x)) {
		d.fail("bad integer")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *dec) sv() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 || n != len(binary.AppendVarint(nil, x)) {
		d.fail("bad integer")
		return 0
	}
	d.b = d.b[n:]
	return x
}

// count reads a number of entries each at least min bytes long, refusing one the bytes
// left cannot hold.
func (d *dec) count(min int) int {
	n := d.uv()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail("count %d exceeds input", n)
		return 0
	}
	return int(n)
}

// str reads a string of at most max bytes.
func (d *dec) str(max int) string {
	n := d.uv()
	if d.err != nil {
		return ""
	}
	if n > uint64(max) || n > uint64(len(d.b)) {
		d.fail("string length %d", n)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// actor reads a non-empty actor id.
func (d *dec) actor() string {
	a := d.str(MaxActorLen)
	if d.err == nil && a == "" {
		d.fail("empty actor")
	}
	return a
}

func (d *dec) dot() dot {
	x := dot{actor: d.actor(), n: d.uv()}
	if d.err == nil && x.n == 0 {
		d.fail("zero dot")
	}
	return x
}

// vv reads a version vector: sorted unique actors, counters > 0.
func (d *dec) vv() vv {
	n := d.count(3)
	v := make(vv, n)
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		a := d.actor()
		c := d.uv()
		if d.err == nil && (c == 0 || (i > 0 && a <= prev)) {
			d.fail("clock not canonical")
		}
		v[a], prev = c, a
	}
	return v
}

// dots reads a dot set in canonical order.
func (d *dec) dots() dotSet {
	n := d.count(3)
	s := make(dotSet, n)
	var prev dot
	for i := 0; i < n && d.err == nil; i++ {
		x := d.dot()
		if d.err == nil && i > 0 && !dotLess(prev, x) {
			d.fail("dots not canonical")
		}
		s[x], prev = struct{}{}, x
	}
	return s
}

// key reads a map key that must sort strictly after prev (first: i == 0).
func (d *dec) key(max int, prev string, i int) string {
	k := d.str(max)
	if d.err == nil && i > 0 && k <= prev {
		d.fail("keys not canonical")
	}
	return k
}

// end fails unless the input is used up.
func (d *dec) end() {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
}
