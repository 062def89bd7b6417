package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/syndtr/goleveldb/leveldb"
)

// This file is *DB's implementation of Store beyond plain reads and writes: revisions,
// conditional commits, derived writes and change notification.
//
// Revisions. The revision of a present value is (its length + 1, a 64-bit maphash of
// its bytes under a seed drawn at random when the DB opens). Nothing is stored: the
// on-disk format is unchanged, and a revision is only meaningful while the DB is open.
// Two states with the same bytes share a revision (ABA); a condition that holds
// against equal bytes is still correct, because what the writer computed from the
// bytes it read is exactly what it would compute from the current ones (the writers
// merge state: clocks and siblings). A collision of different bytes under an unknown
// random seed has a chance of 2^-64 per check, and nobody can craft one.
//
// Conditions are checked in the goroutine that writes a group (commit.go), against the
// DB and the writes of the group's earlier members, so a check and the write it guards
// are atomic with respect to every other writer of this DB.

// revSeed holds the maphash seed of revisions; one per process is enough (revisions
// are never stored), and it is drawn at random so that no client can craft collisions.
var revSeed = maphash.MakeSeed()

// revisionOf returns the revision of a present value.
func revisionOf(v []byte) Revision {
	return Revision{hi: uint64(len(v)) + 1, lo: maphash.Bytes(revSeed, v)}
}

// derivers is the registry of DeriveFuncs, by table tag. The zero value is empty.
type derivers struct {
	mu sync.Mutex                          // serialises registrations
	m  atomic.Pointer[map[byte]DeriveFunc] // copy-on-write: read without a lock
}

func (d *derivers) get(tag byte) DeriveFunc {
	if m := d.m.Load(); m != nil {
		return (*m)[tag]
	}
	return nil
}

func (d *derivers) any() bool { return d.m.Load() != nil }

func (d *derivers) set(tag byte, fn DeriveFunc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := map[byte]DeriveFunc{}
	if old := d.m.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[tag] = fn
	d.m.Store(&m)
}

// subscribers is the list of Subscribe callbacks.
type subscribers struct {
	mu   sync.Mutex                      // serialises changes of list and orders cancellations with notify
	list atomic.Pointer[[]*subscription] // copy-on-write
}

type subscription struct {
	fn func([]Change)
}

func (s *subscribers) add(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var l []*subscription
	if old := s.list.Load(); old != nil {
		l = append(l, *old...)
	}
	l = append(l, sub)
	s.list.Store(&l)
}

func (s *subscribers) remove(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.list.Load()
	if old == nil {
		return
	}
	var l []*subscription
	for _, x := range *old {
		if x != sub {
			l = append(l, x)
		}
	}
	if len(l) == 0 {
		s.list.Store(nil)
		return
	}
	s.list.Store(&l)
}

func (s *subscribers) any() bool { return s.list.Load() != nil }

// Read returns the value stored under key with its revision (see Store.Read).
func (db *DB) Read(ctx context.Context, key []byte) (Item, error) {
	st := db.wlog.stamp(key) // before the read: see writeLog
	v, found, g, err := db.get(key)
	if err != nil {
		return Item{}, err
	}
	st.gen = g.id
	if !found {
		return Item{stamp: st}, nil
	}
	if v == nil {
		v = []byte{}
	}
	return Item{Value: v, Rev: revisionOf(v), stamp: st}, nil
}

// Commit applies b if its conditions hold (see Store.Commit). ctx is checked before the
// batch queues for the group commit; once queued it is written or refused as a whole.
func (db *DB) Commit(ctx context.Context, b *Batch, sync bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("storage: commit: %w", err)
	}
	return db.Write(b, sync)
}

// RegisterDerive registers the DeriveFunc of a table (see Store.RegisterDerive).
func (db *DB) RegisterDerive(tag byte, fn DeriveFunc) { db.derive.set(tag, fn) }

// Subscribe registers fn for the changes of every later commit (see Store.Subscribe).
func (db *DB) Subscribe(fn func([]Change)) (cancel func()) {
	sub := &subscription{fn: fn}
	db.subs.add(sub)
	var once sync.Once
	return func() {
		once.Do(func() {
			db.subs.remove(sub)
			// A group being notified with the old list finishes first: notify runs
			// with the committer's token, which waiting for it here would need; the
			// write lock of mu is held by nobody during a notify, so take the token.
			db.committer.token <- struct{}{}
			<-db.committer.token
		})
	}
}

// plain reports whether no write of group needs preparing: no conditions, no derived
// tables, no subscribers.
func (db *DB) plain(group []*pendingWrite) bool {
	if db.derive.any() || db.subs.any() {
		return false
	}
	for _, p := range group {
		if len(p.conds) > 0 {
			return false
		}
	}
	return true
}

// preparedGroup is a group ready to write: the merged batch of its accepted writes,
// whether any asked for sync, and the primary operations to notify.
type preparedGroup struct {
	b       *leveldb.Batch
	sync    bool
	changes []Change
}

// plainGroup merges a group that needs no preparing.
func plainGroup(group []*pendingWrite) preparedGroup {
	pr := preparedGroup{}
	for _, p := range group {
		pr.sync = pr.sync || p.sync
	}
	if len(group) == 1 {
		pr.b = group[0].b
		return pr
	}
	pr.b = new(leveldb.Batch)
	for _, p := range group {
		_ = p.b.Replay(pr.b) // a batch built by Put and Delete always replays
	}
	return pr
}

// overlay holds the values a group's accepted writes leave, by key, in front of the DB.
// A nil value with present false is a delete.
type overlay map[string]overlayValue

type overlayValue struct {
	v       []byte
	present bool
}

// groupReader reads keys as the group being prepared leaves them: the member's own
// writes (local), then the group's earlier accepted writes, then the DB.
type groupReader struct {
	g     *generation
	log   *writeLog
	group overlay // nil for a group of one write
	local localOverlay
}

// localOverlay is one write's overlay: its keys in a slice while there are few (the
// usual one to three cost no map and no key copies), in a map beyond localOverlayMax.
// Its keys alias the group's batches and conditions, which outlive the preparing.
type localOverlay struct {
	few  []localEntry
	many overlay // set once there are more than localOverlayMax keys
}

type localEntry struct {
	key []byte
	ov  overlayValue
}

const localOverlayMax = 8

func (l *localOverlay) get(key []byte) (overlayValue, bool) {
	if l.many != nil {
		ov, ok := l.many[string(key)]
		return ov, ok
	}
	for i := range l.few {
		if string(l.few[i].key) == string(key) {
			return l.few[i].ov, true
		}
	}
	return overlayValue{}, false
}

func (l *localOverlay) set(key []byte, ov overlayValue) {
	if l.many == nil {
		for i := range l.few {
			if string(l.few[i].key) == string(key) {
				l.few[i].ov = ov
				return
			}
		}
		if len(l.few) < localOverlayMax {
			l.few = append(l.few, localEntry{key, ov})
			return
		}
		l.many = make(overlay, 2*localOverlayMax)
		for _, e := range l.few {
			l.many[string(e.key)] = e.ov
		}
	}
	l.many[string(key)] = ov
}

// each calls fn for every key of the overlay.
func (l *localOverlay) each(fn func(key []byte, ov overlayValue)) {
	if l.many != nil {
		for k, v := range l.many {
			fn([]byte(k), v)
		}
		return
	}
	for _, e := range l.few {
		fn(e.key, e.ov)
	}
}

// reset empties the overlay for the next write, keeping its slice.
func (l *localOverlay) reset() {
	clear(l.few) // drop the references to the last write's bytes
	l.few, l.many = l.few[:0], nil
}

// unchanged reports whether c holds without reading its key: it comes from a Read
// (RequireRead), no earlier write of the group touched the key, and the write log
// vouches that no committed group did since the read. The value read then stands for
// the key's current one (r.local) for the write's derived writes.
func (r *groupReader) unchanged(c condition) bool {
	if c.stamp.log == nil {
		return false
	}
	if _, ok := r.local.get(c.key); ok {
		return false
	}
	if _, ok := r.group[string(c.key)]; ok {
		return false
	}
	if c.stamp.gen != r.g.id || !r.log.unchanged(c.key, c.stamp) {
		return false
	}
	r.local.set(c.key, overlayValue{v: c.old, present: c.old != nil})
	return true
}

func (r *groupReader) get(key []byte) ([]byte, bool, error) {
	if ov, ok := r.local.get(key); ok {
		return ov.v, ov.present, nil
	}
	if ov, ok := r.group[string(key)]; ok {
		return ov.v, ov.present, nil
	}
	v, err := r.g.ldb.Get(key, nil)
	switch {
	case errors.Is(err, leveldb.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, wrap("commit: read", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// prepare checks the conditions of each write of group in order and computes its
// derived writes; a write whose condition fails, or whose preparing fails, gets its
// own error (p.err) and is left out. It returns the accepted writes merged: a lone
// accepted write without derived writes is its own batch, as in plainGroup; otherwise
// each operation is copied once, with its derived writes after it.
func (db *DB) prepare(g *generation, group []*pendingWrite) preparedGroup {
	var pr preparedGroup
	r := &groupReader{g: g, log: &db.wlog}
	if len(group) > 1 {
		r.group = overlay{}
	}
	w := &writeReplay{db: db, r: r, notify: db.subs.any()}
	type accepted struct {
		p       *pendingWrite
		derived []opDerived
	}
	var acc []accepted
	for _, p := range group {
		r.local.reset()
		w.reset(&pr.changes)
		if err := db.prepareWrite(r, p, w); err != nil {
			p.err = err
			pr.changes = pr.changes[:w.changesFrom]
			continue
		}
		if r.group != nil {
			r.local.each(func(k []byte, v overlayValue) { r.group[string(k)] = v })
		}
		acc = append(acc, accepted{p, w.derived})
		pr.sync = pr.sync || p.sync
	}
	if len(acc) == 1 && len(acc[0].derived) == 0 {
		pr.b = acc[0].p.b
		return pr
	}
	pr.b = new(leveldb.Batch)
	for _, a := range acc {
		_ = a.p.b.Replay(&copyReplay{out: pr.b, derived: a.derived})
	}
	return pr
}

// prepareWrite checks p's conditions, then computes the derived writes of its
// operations (w.derived) and its changes to notify. r.local receives every key it
// writes.
func (db *DB) prepareWrite(r *groupReader, p *pendingWrite, w *writeReplay) error {
	for _, c := range p.conds {
		if r.unchanged(c) {
			continue
		}
		v, ok, err := r.get(c.key)
		if err != nil {
			return err
		}
		rev := NoRevision
		if ok {
			rev = revisionOf(v)
		}
		if rev != c.rev {
			return fmt.Errorf("storage: commit: key %q: %w", c.key, ErrConflict)
		}
	}
	_ = p.b.Replay(w)
	return w.err
}

// opDerived is the derived writes of the operation numbered op of a write.
type opDerived struct {
	op int
	b  Batch
}

// writeReplay receives the operations of one write in order: it computes the derived
// writes of each (derived), records the operation and its derived writes in the
// reader's local overlay, and appends its change to *changes when notify.
type writeReplay struct {
	db      *DB
	r       *groupReader
	notify  bool
	op      int // operations seen
	derived []opDerived
	changes *[]Change
	// changesFrom is the length of *changes before this write: a failed write's
	// changes are cut off there.
	changesFrom int
	err         error
}

// reset readies w for the next write of the group.
func (w *writeReplay) reset(changes *[]Change) {
	w.op, w.derived, w.err = 0, nil, nil
	w.changes, w.changesFrom = changes, len(*changes)
}

func (w *writeReplay) Put(key, value []byte) {
	if value == nil {
		value = []byte{}
	}
	w.apply(key, value)
}

func (w *writeReplay) Delete(key []byte) { w.apply(key, nil) }

// apply handles a put (value non-nil) or a delete (value nil).
func (w *writeReplay) apply(key, value []byte) {
	if w.err != nil {
		return
	}
	op := w.op
	w.op++
	var derived Batch
	if len(key) > 0 {
		if fn := w.db.derive.get(key[0]); fn != nil {
			old, _, err := w.r.get(key)
			if err == nil {
				err = fn(key, old, value, &Derived{b: &derived})
			}
			if err != nil {
				w.err = fmt.Errorf("storage: commit: derived writes of %q: %w", key, err)
				return
			}
		}
	}
	w.r.local.set(key, overlayValue{v: value, present: value != nil})
	if derived.Len() > 0 {
		_ = derived.b.Replay(localReplay{&w.r.local})
		w.derived = append(w.derived, opDerived{op: op, b: derived})
	}
	if w.notify {
		c := Change{Key: key, Value: value}
		if value != nil {
			c.Rev = revisionOf(value)
		}
		*w.changes = append(*w.changes, c)
	}
}

// copyReplay copies a write's operations to out, each followed by its derived writes.
type copyReplay struct {
	out     *leveldb.Batch
	derived []opDerived // by increasing op
	op      int
}

func (c *copyReplay) Put(key, value []byte) {
	c.out.Put(key, value)
	c.next()
}

func (c *copyReplay) Delete(key []byte) {
	c.out.Delete(key)
	c.next()
}

// next appends the derived writes of the operation just copied.
func (c *copyReplay) next() {
	if len(c.derived) > 0 && c.derived[0].op == c.op {
		_ = c.derived[0].b.b.Replay(c.out)
		c.derived = c.derived[1:]
	}
	c.op++
}

// localReplay records derived writes in a write's overlay.
type localReplay struct{ o *localOverlay }

func (l localReplay) Put(key, value []byte) {
	if value == nil {
		value = []byte{}
	}
	l.o.set(key, overlayValue{v: value, present: true})
}

func (l localReplay) Delete(key []byte) { l.o.set(key, overlayValue{}) }

// notify tells the subscribers about a written group. Call with the committer's token.
func (db *DB) notify(pr preparedGroup) {
	l := db.subs.list.Load()
	if l == nil || len(pr.changes) == 0 {
		return
	}
	for _, sub := range *l {
		sub.fn(pr.changes)
	}
}
