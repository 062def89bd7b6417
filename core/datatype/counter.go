package datatype

// pnCounter is riak_dt_pncounter: per actor, the increments and decrements it made;
// merge takes the entrywise maximum.
type pnCounter struct {
	e map[string][2]uint64 // actor → {increments, decrements}
}

func (c *pnCounter) Kind() Kind      { return Counter }
func (c *pnCounter) Context() []byte { return nil }

func (c *pnCounter) Value() any {
	v, _ := c.exact()
	return v
}

// exact returns the counter's value and whether it fits an int64 (clamped if not).
func (c *pnCounter) exact() (int64, bool) {
	var ps, ns []uint64
	for _, x := range c.e {
		ps, ns = append(ps, x[0]), append(ns, x[1])
	}
	v, ok := pnExact(ps, ns)
	if !ok {
		return pnValue(ps, ns), false
	}
	return v, true
}

func (c *pnCounter) merge(o Data) Data {
	b := o.(*pnCounter)
	out := &pnCounter{e: make(map[string][2]uint64, len(c.e))}
	for _, src := range []*pnCounter{c, b} {
		for a, x := range src.e {
			y := out.e[a]
			out.e[a] = [2]uint64{max(x[0], y[0]), max(x[1], y[1])}
		}
	}
	return out
}

func (c *pnCounter) apply(op Op, w Writer) error {
	x := c.e[w.Actor]
	p, n, err := addDelta(x[0], x[1], op.body.(counterOp).delta)
	if err != nil {
		return err
	}
	c.e[w.Actor] = [2]uint64{p, n}
	if _, ok := c.exact(); !ok {
		return errCounterRange
	}
	return nil
}

func (c *pnCounter) encode(e *enc) {
	as := sortedKeys(c.e)
	e.count(len(as))
	for _, a := range as {
		e.str(a)
		e.uv(c.e[a][0])
		e.uv(c.e[a][1])
	}
}

func decodePNCounter(d *dec) *pnCounter {
	n := d.count(4)
	c := &pnCounter{e: make(map[string][2]uint64, n)}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		a := d.key(MaxActorLen, prev, i)
		if d.err == nil && a == "" {
			d.fail("empty actor")
		}
		c.e[a], prev = [2]uint64{d.uv(), d.uv()}, a
	}
	return c
}

// gSet is riak_dt_gset: a set elements are only ever added to; merge is union.
type gSet struct {
	e map[string]struct{}
}

func (g *gSet) Kind() Kind      { return GSet }
func (g *gSet) Context() []byte { return nil }
func (g *gSet) Value() any      { return sortedKeys(g.e) }

func (g *gSet) merge(o Data) Data {
	out := &gSet{e: make(map[string]struct{}, len(g.e))}
	for _, src := range []*gSet{g, o.(*gSet)} {
		for x := range src.e {
			out.e[x] = struct{}{}
		}
	}
	return out
}

func (g *gSet) apply(op Op, _ Writer) error {
	for _, x := range op.body.(setOp).add {
		g.e[x] = struct{}{}
	}
	return nil
}

func (g *gSet) encode(e *enc) {
	xs := sortedKeys(g.e)
	e.count(len(xs))
	for _, x := range xs {
		e.str(x)
	}
}

func decodeGSet(d *dec) *gSet {
	n := d.count(1)
	g := &gSet{e: make(map[string]struct{}, n)}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		x := d.key(MaxElementLen, prev, i)
		g.e[x], prev = struct{}{}, x
	}
	return g
}
