package datatype

import (
	"fmt"
)

// Data is a value of one of the bucket-level types. Values are immutable: Apply and
// Merge return new values.
type Data interface {
	// Kind is the value's type.
	Kind() Kind
	// Value is the value in Riak's HTTP JSON form: counter int64, set and G-set a
	// sorted []string, HyperLogLog the uint64 estimate, map a map[string]any keyed
	// "<name>_<type>" holding int64, []string, string, bool and nested maps.
	Value() any
	// Context is the causal context a client sends back with removes (nil for the
	// types that have none: counter, HyperLogLog, G-set).
	Context() []byte

	merge(o Data) Data
	apply(op Op, w Writer) error
	encode(e *enc)
}

// Writer is who applies an operation: the node's actor id and the time (microseconds
// since the epoch), which orders register assignments.
type Writer struct {
	Actor  string
	Micros int64
}

// New returns the empty value of a bucket-level kind (nil for another kind).
func New(k Kind) Data {
	switch k {
	case Counter:
		return &pnCounter{e: map[string][2]uint64{}}
	case Set:
		return &orSet{clock: vv{}, s: &setStore{e: map[string]dotSet{}}}
	case Map:
		return &orMap{clock: vv{}, m: &mapStore{f: map[string]*field{}}}
	case HLL:
		return newHLL()
	case GSet:
		return &gSet{e: map[string]struct{}{}}
	}
	return nil
}

// Marshal returns the binary form of v.
func Marshal(v Data) []byte {
	e := enc{b: []byte{formatVersion, byte(v.Kind())}}
	v.encode(&e)
	return e.b
}

// Unmarshal decodes a value Marshal produced, refusing (with ErrMalformed) anything
// else: another version, a truncated or non-canonical body, trailing bytes.
func Unmarshal(b []byte) (Data, error) {
	d := &dec{b: b}
	if v := d.byte1(); d.err == nil && v != formatVersion {
		return nil, fmt.Errorf("%w: version %d", ErrMalformed, v)
	}
	k := Kind(d.byte1())
	var v Data
	switch k {
	case Counter:
		v = decodePNCounter(d)
	case Set:
		v = decodeOrSet(d)
	case Map:
		v = decodeOrMap(d)
	case HLL:
		v = decodeHLL(d)
	case GSet:
		v = decodeGSet(d)
	default:
		d.fail("kind %d", k)
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}

// Merge returns the merge of two values of the same kind: associative, commutative and
// idempotent.
func Merge(a, b Data) (Data, error) {
	if a.Kind() != b.Kind() {
		return nil, fmt.Errorf("datatype: merge %s with %s", a.Kind(), b.Kind())
	}
	return a.merge(b), nil
}

// Apply returns v with op applied by w; v itself is unchanged. A remove of something
// absent is a *PreconditionError, an operation out of bounds an *OpError.
func Apply(v Data, op Op, w Writer) (Data, error) {
	if op.kind != v.Kind() {
		return nil, opErrorf(fmt.Sprintf("Invalid operation on datatype '%s': operation for '%s'", v.Kind(), op.kind))
	}
	if w.Actor == "" || len(w.Actor) > MaxActorLen {
		return nil, fmt.Errorf("datatype: actor %q out of bounds", w.Actor)
	}
	// A merge with the empty value is v itself, built afresh: the copy the operation
	// changes shares nothing with v.
	c := v.merge(New(v.Kind()))
	if err := c.apply(op, w); err != nil {
		return nil, err
	}
	return c, nil
}

// contextVersion is the first byte of a causal context.
const contextVersion = 1

// encodeContext returns the causal context of a clock: a version byte and the clock.
func encodeContext(clock vv) []byte {
	e := enc{b: []byte{contextVersion}}
	e.vv(clock)
	return e.b
}

// decodeContext reads a causal context.
func decodeContext(b []byte) (vv, error) {
	d := &dec{b: b}
	if v := d.byte1(); d.err == nil && v != contextVersion {
		return nil, fmt.Errorf("%w: context version %d", ErrMalformed, v)
	}
	c := d.vv()
	d.end()
	return c, d.err
}
