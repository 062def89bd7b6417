package datatype

import (
	"errors"
	"math"
	"sort"
)

// vv is a version vector: actor → number of events seen from it. It is the causal
// context of a set or map: a dot (actor, n) is "seen" when vv[actor] ≥ n.
type vv map[string]uint64

// dot names one event: the n-th event of actor.
type dot struct {
	actor string
	n     uint64
}

// errClockExhausted is an actor whose counter cannot grow (only a forged value has one).
var errClockExhausted = errors.New("datatype: actor counter exhausted")

// covers reports whether v has seen d.
func (v vv) covers(d dot) bool { return v[d.actor] >= d.n }

// descends reports whether v has seen every event o has.
func (v vv) descends(o vv) bool {
	for a, n := range o {
		if v[a] < n {
			return false
		}
	}
	return true
}

// join raises v to the entrywise maximum of v and o.
func (v vv) join(o vv) {
	for a, n := range o {
		if n > v[a] {
			v[a] = n
		}
	}
}

// clone returns a copy of v.
func (v vv) clone() vv {
	c := make(vv, len(v))
	c.join(v)
	return c
}

// next records a new event of actor and returns its dot.
func (v vv) next(actor string) (dot, error) {
	if v[actor] == math.MaxUint64 {
		return dot{}, errClockExhausted
	}
	v[actor]++
	return dot{actor, v[actor]}, nil
}

// sortedActors returns v's actors in byte order.
func (v vv) sortedActors() []string {
	as := make([]string, 0, len(v))
	for a := range v {
		as = append(as, a)
	}
	sort.Strings(as)
	return as
}

// dotSet is a set of dots.
type dotSet map[dot]struct{}

// joinDots is the causal join of two dot sets with their contexts: a dot survives when
// both hold it, or when one holds it and the other has not seen it (had the other seen
// it and dropped it, it was removed).
func joinDots(a dotSet, ac vv, b dotSet, bc vv) dotSet {
	out := dotSet{}
	for d := range a {
		if _, ok := b[d]; ok || !bc.covers(d) {
			out[d] = struct{}{}
		}
	}
	for d := range b {
		if _, ok := a[d]; !ok && !ac.covers(d) {
			out[d] = struct{}{}
		}
	}
	return out
}

// resetCovered drops the dots ctx has seen and reports whether it dropped any.
func (s dotSet) resetCovered(ctx vv) bool {
	dropped := false
	for d := range s {
		if ctx.covers(d) {
			delete(s, d)
			dropped = true
		}
	}
	return dropped
}

// anyCovered reports whether ctx has seen one of s's dots.
func (s dotSet) anyCovered(ctx vv) bool {
	for d := range s {
		if ctx.covers(d) {
			return true
		}
	}
	return false
}

// sorted returns s's dots ordered by actor then counter.
func (s dotSet) sorted() []dot {
	ds := make([]dot, 0, len(s))
	for d := range s {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return dotLess(ds[i], ds[j]) })
	return ds
}

// dotLess orders dots by actor, then counter.
func dotLess(a, b dot) bool {
	if a.actor != b.actor {
		return a.actor < b.actor
	}
	return a.n < b.n
}

// sortedKeys returns a map's string keys in byte order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
