package datatype

// setStore is the element store of riak_dt_orswot: element → the dots of the adds that
// put it there. Re-adding replaces an element's dots; a remove drops the dots it saw,
// so an add concurrent with a remove wins.
type setStore struct {
	e map[string]dotSet
}

func (s *setStore) kind() Kind { return Set }

func (s *setStore) join(ac vv, o embedded, bc vv) embedded {
	b := o.(*setStore)
	out := &setStore{e: map[string]dotSet{}}
	for x, ds := range s.e {
		if j := joinDots(ds, ac, b.e[x], bc); len(j) > 0 {
			out.e[x] = j
		}
	}
	for x, ds := range b.e {
		if _, ok := s.e[x]; !ok {
			if j := joinDots(nil, ac, ds, bc); len(j) > 0 {
				out.e[x] = j
			}
		}
	}
	return out
}

func (s *setStore) reset(ctx vv) {
	for x := range s.e {
		s.resetElem(x, ctx)
	}
}

// resetElem drops the dots of x that ctx has seen.
func (s *setStore) resetElem(x string, ctx vv) {
	if ds, ok := s.e[x]; ok {
		ds.resetCovered(ctx)
		if len(ds) == 0 {
			delete(s.e, x)
		}
	}
}

func (s *setStore) empty() bool { return len(s.e) == 0 }

func (s *setStore) anyCovered(ctx vv) bool {
	for _, ds := range s.e {
		if ds.anyCovered(ctx) {
			return true
		}
	}
	return false
}

func (s *setStore) value() any { return sortedKeys(s.e) }

func (s *setStore) apply(op any, d dot, _ Writer, ctx vv) error {
	o := op.(setOp)
	for _, x := range o.remove {
		if err := s.remove(x, ctx); err != nil {
			return err
		}
	}
	for _, x := range o.add {
		s.e[x] = dotSet{d: {}}
	}
	return nil
}

// remove removes x: without a context every dot of it, with one the dots the context
// has seen; an element absent (or unseen by the context) is a precondition failure.
func (s *setStore) remove(x string, ctx vv) error {
	ds, ok := s.e[x]
	if !ok || (ctx != nil && !ds.anyCovered(ctx)) {
		return notPresentElem(x)
	}
	if ctx == nil {
		delete(s.e, x)
		return nil
	}
	s.resetElem(x, ctx)
	return nil
}

func (s *setStore) encode(e *enc) {
	xs := sortedKeys(s.e)
	e.count(len(xs))
	for _, x := range xs {
		e.str(x)
		e.dots(s.e[x])
	}
}

func decodeSetStore(d *dec) *setStore {
	n := d.count(2)
	s := &setStore{e: make(map[string]dotSet, n)}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		x := d.key(MaxElementLen, prev, i)
		ds := d.dots()
		if d.err == nil && len(ds) == 0 {
			d.fail("element without dots")
		}
		s.e[x], prev = ds, x
	}
	return s
}

// deferred is a remove whose context has seen events this replica has not: it is kept
// and applied again after every merge until the replica's clock descends the context,
// so the removed dots are dropped whenever they arrive (riak_dt's deferred operations).
type deferred struct {
	ctx  vv
	keys []string // sorted, unique
}

// joinDeferred returns the union of two deferred lists, one entry per context.
func joinDeferred(a, b []deferred) []deferred {
	byCtx := map[string]map[string]struct{}{}
	ctxs := map[string]vv{}
	for _, l := range [][]deferred{a, b} {
		for _, df := range l {
			var e enc
			e.vv(df.ctx)
			k := string(e.b)
			if byCtx[k] == nil {
				byCtx[k], ctxs[k] = map[string]struct{}{}, df.ctx.clone()
			}
			for _, x := range df.keys {
				byCtx[k][x] = struct{}{}
			}
		}
	}
	out := make([]deferred, 0, len(byCtx))
	for _, k := range sortedKeys(byCtx) {
		out = append(out, deferred{ctx: ctxs[k], keys: sortedKeys(byCtx[k])})
	}
	return out
}

// addDeferred records a remove of key under ctx.
func addDeferred(l []deferred, ctx vv, key string) []deferred {
	return joinDeferred(l, []deferred{{ctx: ctx, keys: []string{key}}})
}

// settleDeferred applies every deferred remove through reset and drops those whose
// context clock now descends.
func settleDeferred(l []deferred, clock vv, reset func(key string, ctx vv)) []deferred {
	var keep []deferred
	for _, df := range l {
		for _, k := range df.keys {
			reset(k, df.ctx)
		}
		if !clock.descends(df.ctx) {
			keep = append(keep, df)
		}
	}
	return keep
}

func encodeDeferred(e *enc, l []deferred) {
	e.count(len(l))
	for _, df := range l {
		e.vv(df.ctx)
		e.count(len(df.keys))
		for _, k := range df.keys {
			e.str(k)
		}
	}
}

// decodeDeferred reads a deferred list; contexts must be sorted by their encoding.
func decodeDeferred(d *dec, maxKey int) []deferred {
	n := d.count(3)
	var l []deferred
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		start := d.b
		ctx := d.vv()
		enc := string(start[:len(start)-len(d.b)])
		if d.err == nil && (len(ctx) == 0 || (i > 0 && enc <= prev)) {
			d.fail("deferred not canonical")
		}
		m := d.count(1)
		if d.err == nil && m == 0 {
			d.fail("deferred without keys")
		}
		keys := make([]string, 0, m)
		for j := 0; j < m && d.err == nil; j++ {
			keys = append(keys, d.key(maxKey, lastOr(keys), j))
		}
		l, prev = append(l, deferred{ctx: ctx, keys: keys}), enc
	}
	return l
}

// lastOr returns the last string of l, or "".
func lastOr(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}

// orSet is a bucket-level set: riak_dt_orswot, with its clock and deferred removes.
type orSet struct {
	clock vv
	s     *setStore
	def   []deferred
}

func (s *orSet) Kind() Kind { return Set }

func (s *orSet) Value() any { return s.s.value() }

func (s *orSet) Context() []byte { return encodeContext(s.clock) }

func (s *orSet) encode(e *enc) {
	e.vv(s.clock)
	s.s.encode(e)
	encodeDeferred(e, s.def)
}

func decodeOrSet(d *dec) *orSet {
	s := &orSet{clock: d.vv(), s: decodeSetStore(d)}
	s.def = decodeDeferred(d, MaxElementLen)
	return s
}

func (s *orSet) merge(o Data) Data {
	b := o.(*orSet)
	out := &orSet{clock: s.clock.clone(), def: joinDeferred(s.def, b.def)}
	out.s = s.s.join(s.clock, b.s, b.clock).(*setStore)
	out.clock.join(b.clock)
	out.def = settleDeferred(out.def, out.clock, out.s.resetElem)
	return out
}

func (s *orSet) apply(op Op, w Writer) error {
	o := op.body.(setOp)
	behind := op.ctx != nil && !s.clock.descends(op.ctx)
	d, err := s.clock.next(w.Actor)
	if err != nil {
		return err
	}
	if behind {
		// The context has seen adds this replica has not: drop what is here of the
		// removed elements and defer the rest.
		for _, x := range o.remove {
			s.s.resetElem(x, op.ctx)
			s.def = addDeferred(s.def, op.ctx, x)
		}
		o.remove = nil
	}
	return s.s.apply(o, d, w, op.ctx)
}
