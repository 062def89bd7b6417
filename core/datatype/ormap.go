package datatype

// field is one map field: the dots of the updates that keep it present, and its value.
type field struct {
	p dotSet
	v embedded
}

// mapStore is the field store of riak_dt_map, keyed by kind byte + name (a field is its
// name and type: "a_counter" and "a_set" are different fields). Every update of a field
// tags it with the update's dot; removing a field drops the dots (and the embedded state)
// the remove saw, so a field removed concurrently with an update keeps only the effects of
// that update (reset-remove), and a field whose state is all removed disappears.
type mapStore struct {
	f map[string]*field
}

// fieldKey is the store key of a field.
func fieldKey(name string, k Kind) string { return string([]byte{byte(k)}) + name }

func (m *mapStore) kind() Kind { return Map }

func (m *mapStore) join(ac vv, o embedded, bc vv) embedded {
	b := o.(*mapStore)
	out := &mapStore{f: map[string]*field{}}
	for k, x := range m.f {
		y := b.f[k]
		if y == nil {
			y = &field{v: newEmbedded(Kind(k[0]))}
		}
		out.put(k, joinField(x, ac, y, bc))
	}
	for k, y := range b.f {
		if _, ok := m.f[k]; !ok {
			out.put(k, joinField(&field{v: newEmbedded(Kind(k[0]))}, ac, y, bc))
		}
	}
	return out
}

// joinField joins one field's presence dots and value.
func joinField(x *field, ac vv, y *field, bc vv) *field {
	return &field{p: joinDots(x.p, ac, y.p, bc), v: x.v.join(ac, y.v, bc)}
}

// put stores f under k, or drops k when f holds nothing.
func (m *mapStore) put(k string, f *field) {
	if len(f.p) == 0 && f.v.empty() {
		delete(m.f, k)
		return
	}
	m.f[k] = f
}

func (m *mapStore) reset(ctx vv) {
	for k := range m.f {
		m.resetField(k, ctx)
	}
}

// resetField drops what ctx has seen of field k.
func (m *mapStore) resetField(k string, ctx vv) {
	if f, ok := m.f[k]; ok {
		f.p.resetCovered(ctx)
		f.v.reset(ctx)
		m.put(k, f)
	}
}

func (m *mapStore) empty() bool { return len(m.f) == 0 }

func (m *mapStore) anyCovered(ctx vv) bool {
	for _, f := range m.f {
		if f.p.anyCovered(ctx) || f.v.anyCovered(ctx) {
			return true
		}
	}
	return false
}

func (m *mapStore) value() any {
	out := make(map[string]any, len(m.f))
	for k, f := range m.f {
		out[k[1:]+"_"+Kind(k[0]).String()] = f.v.value()
	}
	return out
}

func (m *mapStore) apply(op any, d dot, w Writer, ctx vv) error {
	o := op.(mapOp)
	for _, k := range o.remove {
		if err := m.remove(k, ctx); err != nil {
			return err
		}
	}
	for _, u := range o.update {
		f := m.f[u.key]
		if f == nil {
			f = &field{v: newEmbedded(Kind(u.key[0]))}
		}
		if err := f.v.apply(u.op, d, w, ctx); err != nil {
			return err
		}
		f.p = dotSet{d: {}}
		m.f[u.key] = f
	}
	return nil
}

// remove removes field k: without a context all of it, with one what the context has
// seen; a field absent (or unseen by the context) is a precondition failure.
func (m *mapStore) remove(k string, ctx vv) error {
	f, ok := m.f[k]
	if !ok || (ctx != nil && !f.p.anyCovered(ctx) && !f.v.anyCovered(ctx)) {
		return notPresentField(k)
	}
	if ctx == nil {
		delete(m.f, k)
		return nil
	}
	m.resetField(k, ctx)
	return nil
}

func (m *mapStore) encode(e *enc) {
	ks := sortedKeys(m.f)
	e.count(len(ks))
	for _, k := range ks {
		f := m.f[k]
		e.str(k)
		e.dots(f.p)
		f.v.encode(e)
	}
}

// decodeMapStore reads a map store nested depth maps deep.
func decodeMapStore(d *dec, depth int) *mapStore {
	if depth > MaxDepth {
		d.fail("maps nested deeper than %d", MaxDepth)
		return &mapStore{f: map[string]*field{}}
	}
	n := d.count(4)
	m := &mapStore{f: make(map[string]*field, n)}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		k := d.key(MaxElementLen+1, prev, i)
		if _, ok := fieldKind(kindOfKey(k)); !ok || d.err != nil {
			d.fail("bad field key")
			break
		}
		f := &field{p: d.dots()}
		f.v = decodeEmbedded(d, Kind(k[0]), depth+1)
		if d.err == nil && len(f.p) == 0 && f.v.empty() {
			d.fail("empty field")
		}
		m.f[k], prev = f, k
	}
	return m
}

// kindOfKey returns the name of the kind a field key starts with ("" when none).
func kindOfKey(k string) string {
	if k == "" {
		return ""
	}
	return Kind(k[0]).String()
}

// orMap is a bucket-level map: riak_dt_map, with its clock and deferred field removes.
type orMap struct {
	clock vv
	m     *mapStore
	def   []deferred
}

func (m *orMap) Kind() Kind { return Map }

func (m *orMap) Value() any { return m.m.value() }

func (m *orMap) Context() []byte { return encodeContext(m.clock) }

func (m *orMap) encode(e *enc) {
	e.vv(m.clock)
	m.m.encode(e)
	encodeDeferred(e, m.def)
}

func decodeOrMap(d *dec) *orMap {
	m := &orMap{clock: d.vv(), m: decodeMapStore(d, 1)}
	m.def = decodeDeferred(d, MaxElementLen+1)
	return m
}

func (m *orMap) merge(o Data) Data {
	b := o.(*orMap)
	out := &orMap{clock: m.clock.clone(), def: joinDeferred(m.def, b.def)}
	out.m = m.m.join(m.clock, b.m, b.clock).(*mapStore)
	out.clock.join(b.clock)
	out.def = settleDeferred(out.def, out.clock, out.m.resetField)
	return out
}

func (m *orMap) apply(op Op, w Writer) error {
	o := op.body.(mapOp)
	behind := op.ctx != nil && !m.clock.descends(op.ctx)
	d, err := m.clock.next(w.Actor)
	if err != nil {
		return err
	}
	if behind {
		// The context has seen updates this replica has not: drop what is here of the
		// removed fields and defer the rest.
		for _, k := range o.remove {
			m.m.resetField(k, op.ctx)
			m.def = addDeferred(m.def, op.ctx, k)
		}
		o.remove = nil
	}
	return m.m.apply(o, d, w, op.ctx)
}
