package datatype

import (
	"math/big"
)

// embedded is a type held in a map field. Its state is a causal dot store sharing the
// map's context: every change an update makes is tagged with the update's map-level dot,
// so removing a field with a context drops exactly the state that context has seen
// (riak_dt_map's reset-remove) and a concurrent update's effects survive.
type embedded interface {
	kind() Kind
	// join is the causal join of the receiver (context ac) with o (context bc); it
	// returns a new value sharing nothing mutable with either.
	join(ac vv, o embedded, bc vv) embedded
	// reset drops the state ctx has seen.
	reset(ctx vv)
	// empty reports whether no state is left.
	empty() bool
	// anyCovered reports whether ctx has seen some of the state.
	anyCovered(ctx vv) bool
	// value is the HTTP JSON form.
	value() any
	// apply applies op, tagging the change with d; ctx is the client's context (nil
	// when it sent none). The receiver is a private copy: a failed apply is discarded.
	apply(op any, d dot, w Writer, ctx vv) error
	encode(e *enc)
}

// newEmbedded returns the empty value of an embedded kind.
func newEmbedded(k Kind) embedded {
	switch k {
	case Counter:
		return &emCounter{e: map[string]emEntry{}}
	case Set:
		return &setStore{e: map[string]dotSet{}}
	case Register:
		return &register{e: map[dot]regEntry{}}
	case Flag:
		return &flag{d: dotSet{}}
	default:
		return &mapStore{f: map[string]*field{}}
	}
}

// decodeEmbedded reads an embedded value of kind k at nesting depth depth.
func decodeEmbedded(d *dec, k Kind, depth int) embedded {
	switch k {
	case Counter:
		return decodeEmCounter(d)
	case Set:
		return decodeSetStore(d)
	case Register:
		return decodeRegister(d)
	case Flag:
		return &flag{d: d.dots()}
	case Map:
		return decodeMapStore(d, depth)
	}
	d.fail("unknown embedded kind %d", k)
	return newEmbedded(Flag)
}

// emEntry is one actor's contribution to an embedded counter: its cumulative increments
// and decrements, tagged with the dot of its latest update.
type emEntry struct {
	d    dot
	p, n uint64
}

// emCounter is riak_dt_emcntr: a PN-counter whose per-actor entries carry the dot of
// their latest update, so a field remove resets exactly the contributions it saw.
type emCounter struct {
	e map[string]emEntry // actor → entry
}

func (c *emCounter) kind() Kind { return Counter }

func (c *emCounter) join(ac vv, o embedded, bc vv) embedded {
	b := o.(*emCounter)
	out := &emCounter{e: map[string]emEntry{}}
	for a, x := range c.e {
		y, ok := b.e[a]
		keepX := (ok && y.d == x.d) || !bc.covers(x.d)
		keepY := ok && y.d != x.d && !ac.covers(y.d)
		switch {
		case keepX && keepY:
			// Only forged states get here: keep the later event.
			if y.d.n > x.d.n {
				x = y
			}
			out.e[a] = x
		case keepX:
			if ok && y.d == x.d {
				x.p, x.n = max(x.p, y.p), max(x.n, y.n)
			}
			out.e[a] = x
		case keepY:
			out.e[a] = y
		}
	}
	for a, y := range b.e {
		if _, ok := c.e[a]; !ok && !ac.covers(y.d) {
			out.e[a] = y
		}
	}
	return out
}

func (c *emCounter) reset(ctx vv) {
	for a, x := range c.e {
		if ctx.covers(x.d) {
			delete(c.e, a)
		}
	}
}

func (c *emCounter) empty() bool { return len(c.e) == 0 }

func (c *emCounter) anyCovered(ctx vv) bool {
	for _, x := range c.e {
		if ctx.covers(x.d) {
			return true
		}
	}
	return false
}

func (c *emCounter) value() any { return pnValue(c.parts()) }

// parts returns the actors' increments and decrements.
func (c *emCounter) parts() (ps, ns []uint64) {
	for _, x := range c.e {
		ps, ns = append(ps, x.p), append(ns, x.n)
	}
	return ps, ns
}

func (c *emCounter) apply(op any, d dot, _ Writer, _ vv) error {
	delta := op.(counterOp).delta
	x := c.e[d.actor]
	p, n, err := addDelta(x.p, x.n, delta)
	if err != nil {
		return err
	}
	c.e[d.actor] = emEntry{d: d, p: p, n: n}
	if _, ok := pnExact(c.parts()); !ok {
		return errCounterRange
	}
	return nil
}

func (c *emCounter) encode(e *enc) {
	as := sortedKeys(c.e)
	e.count(len(as))
	for _, a := range as {
		x := c.e[a]
		e.dot(x.d)
		e.uv(x.p)
		e.uv(x.n)
	}
}

// decodeEmCounter reads an embedded counter; each entry's actor is its dot's.
func decodeEmCounter(d *dec) *emCounter {
	n := d.count(5)
	c := &emCounter{e: make(map[string]emEntry, n)}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		x := emEntry{d: d.dot(), p: d.uv(), n: d.uv()}
		if d.err == nil && i > 0 && x.d.actor <= prev {
			d.fail("counter not canonical")
		}
		c.e[x.d.actor], prev = x, x.d.actor
	}
	return c
}

// errCounterRange is an increment that would take a counter out of int64's range.
var errCounterRange = opErrorf("Counter value out of range: a counter holds a signed 64-bit integer")

// addDelta adds delta to an actor's (increments, decrements) pair.
func addDelta(p, n uint64, delta int64) (uint64, uint64, error) {
	if delta >= 0 {
		if p+uint64(delta) < p {
			return 0, 0, errCounterRange
		}
		return p + uint64(delta), n, nil
	}
	m := uint64(-(delta + 1)) + 1 // |delta| without overflowing at MinInt64
	if n+m < n {
		return 0, 0, errCounterRange
	}
	return p, n + m, nil
}

// pnExact returns Σps − Σns and whether it fits an int64.
func pnExact(ps, ns []uint64) (int64, bool) {
	var sp, sn, x big.Int
	for _, p := range ps {
		sp.Add(&sp, x.SetUint64(p))
	}
	for _, n := range ns {
		sn.Add(&sn, x.SetUint64(n))
	}
	sp.Sub(&sp, &sn)
	if !sp.IsInt64() {
		return 0, false
	}
	return sp.Int64(), true
}

// pnValue returns Σps − Σns, clamped to int64's range (a merge of replicas that each
// stayed in range can leave it).
func pnValue(ps, ns []uint64) int64 {
	v, ok := pnExact(ps, ns)
	if ok {
		return v
	}
	var sp, sn uint64
	for _, p := range ps {
		sp += p
	}
	for _, n := range ns {
		sn += n
	}
	if sp >= sn {
		return int64(^uint64(0) >> 1)
	}
	return -int64(^uint64(0)>>1) - 1
}

// flag is riak_dt_od_flag: enabled while it holds a dot; enable adds one, disable drops
// those seen, so a concurrent enable wins.
type flag struct {
	d dotSet
}

func (f *flag) kind() Kind { return Flag }

func (f *flag) join(ac vv, o embedded, bc vv) embedded {
	return &flag{d: joinDots(f.d, ac, o.(*flag).d, bc)}
}

func (f *flag) reset(ctx vv)           { f.d.resetCovered(ctx) }
func (f *flag) empty() bool            { return len(f.d) == 0 }
func (f *flag) anyCovered(ctx vv) bool { return f.d.anyCovered(ctx) }
func (f *flag) value() any             { return len(f.d) > 0 }
func (f *flag) encode(e *enc)          { e.dots(f.d) }
func (f *flag) apply(op any, d dot, _ Writer, ctx vv) error {
	if op.(flagOp).enable {
		f.d = dotSet{d: {}}
		return nil
	}
	if ctx == nil {
		f.d = dotSet{}
	} else {
		f.d.resetCovered(ctx)
	}
	return nil
}

// regEntry is one assignment of a register.
type regEntry struct {
	val    string
	micros int64
	actor  string
}

// after reports whether r wins over o: later timestamp, then greater actor, then greater
// value (so the choice never depends on order).
func (r regEntry) after(o regEntry) bool {
	if r.micros != o.micros {
		return r.micros > o.micros
	}
	if r.actor != o.actor {
		return r.actor > o.actor
	}
	return r.val > o.val
}

// register is riak_dt_lwwreg embedded: the value of the latest assignment by timestamp,
// then actor. Assignments are dotted so a field remove resets those it saw; concurrent
// assignments are all kept (at most one per concurrent writer) and the latest is shown.
type register struct {
	e map[dot]regEntry
}

func (r *register) kind() Kind { return Register }

func (r *register) join(ac vv, o embedded, bc vv) embedded {
	b := o.(*register)
	out := &register{e: map[dot]regEntry{}}
	for d, x := range r.e {
		if _, ok := b.e[d]; ok || !bc.covers(d) {
			out.e[d] = x
		}
	}
	for d, x := range b.e {
		if _, ok := r.e[d]; !ok && !ac.covers(d) {
			out.e[d] = x
		}
	}
	return out
}

func (r *register) reset(ctx vv) {
	for d := range r.e {
		if ctx.covers(d) {
			delete(r.e, d)
		}
	}
}

func (r *register) empty() bool { return len(r.e) == 0 }

func (r *register) anyCovered(ctx vv) bool {
	for d := range r.e {
		if ctx.covers(d) {
			return true
		}
	}
	return false
}

func (r *register) value() any {
	var best regEntry
	first := true
	for _, x := range r.e {
		if first || x.after(best) {
			best, first = x, false
		}
	}
	return best.val
}

func (r *register) apply(op any, d dot, w Writer, _ vv) error {
	r.e = map[dot]regEntry{d: {val: op.(registerOp).val, micros: w.Micros, actor: w.Actor}}
	return nil
}

func (r *register) encode(e *enc) {
	ds := make(dotSet, len(r.e))
	for d := range r.e {
		ds[d] = struct{}{}
	}
	sorted := ds.sorted()
	e.count(len(sorted))
	for _, d := range sorted {
		x := r.e[d]
		e.dot(d)
		e.str(x.val)
		e.sv(x.micros)
		e.str(x.actor)
	}
}

func decodeRegister(d *dec) *register {
	n := d.count(6)
	r := &register{e: make(map[dot]regEntry, n)}
	var prev dot
	for i := 0; i < n && d.err == nil; i++ {
		x := d.dot()
		v := regEntry{val: d.str(MaxRegisterLen), micros: d.sv(), actor: d.actor()}
		if d.err == nil && i > 0 && !dotLess(prev, x) {
			d.fail("register not canonical")
		}
		r.e[x], prev = v, x
	}
	return r
}
