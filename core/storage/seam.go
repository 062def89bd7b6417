package storage

import (
	"bytes"
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
// tables, no subscribers, and no revisions remembered (which the writes would make
// stale).
func (db *DB) plain(group []*pendingWrite) bool {
	if db.derive.any() || db.subs.any() || len(db.committer.revs) > 0 {
		return false
	}
	for _, p := range group {
		if len(p.conds) > 0 {
			return false
		}
	}
	return true
}

// maxRevs bounds the revisions the committer remembers (committer.revs).
const maxRevs = 1 << 16

// maxRememberGroup is the number of keys written by one group up to which the
// committer remembers their revisions; a larger group (a batch of hundreds of deletes)
// makes it forget every revision instead, which costs one map drop instead of hundreds
// of inserts: the revisions are a shortcut, a condition without one reads its key.
const maxRememberGroup = 512

// preparedGroup is a group ready to write: the merged batch of its accepted writes,
// whether any asked for sync, the primary operations to notify, and the values the
// keys written will have (to remember their revisions).
type preparedGroup struct {
	b       *leveldb.Batch
	sync    bool
	changes []Change
	written *groupReader
	// restore, if set, gives the single write of the group its batch back as it was
	// (prepareAlone); call it once b is written or abandoned.
	restore func()
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

// remember records the revisions of the keys a group wrote (call with the token,
// after the write succeeded); forget drops every remembered revision (after a failed
// write, whose effect on the keys is not known here).
func (c *committer) remember(r *groupReader) {
	n := len(r.group) + len(r.local)
	if n > maxRememberGroup { // cheaper to forget everything than to remember them all
		c.revs = nil
		return
	}
	if len(c.revs)+n > maxRevs {
		clear(c.revs)
	}
	if c.revs == nil {
		c.revs = make(map[string]Revision, n)
	}
	for k, v := range r.group {
		c.revs[k] = v.revision()
	}
	for _, e := range r.local { // the last member's writes (not folded into group)
		c.revs[string(e.key)] = e.revision()
	}
}

func (c *committer) forget() { clear(c.revs) }

// overlayValue is a key's value as a write leaves it, with its revision; present false
// is a delete.
type overlayValue struct {
	v       []byte
	present bool
	rev     Revision
}

// present returns the overlay value of a present value v whose revision is rev.
func present(v []byte, rev Revision) overlayValue { return overlayValue{v: v, present: true, rev: rev} }

func (v overlayValue) revision() Revision { return v.rev }

// overlayEntry is one key of a small overlay.
type overlayEntry struct {
	key []byte
	overlayValue
}

// smallOverlay is the overlay of one write: a few keys, searched from the newest.
type smallOverlay []overlayEntry

func (o smallOverlay) find(key []byte) (overlayValue, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if bytes.Equal(o[i].key, key) {
			return o[i].overlayValue, true
		}
	}
	return overlayValue{}, false
}

// groupReader reads keys as the group being prepared leaves them: the member's own
// writes (local), then the group's earlier accepted writes (group), then the values
// its conditions vouched for (known), then the DB.
type groupReader struct {
	g            *generation
	log          *writeLog           // DB.wlog: vouches for conditions made from a read (vouched)
	keys         *keyFilters         // DB.keys: knows absent keys
	revs         map[string]Revision // committer.revs
	local, known smallOverlay
	group        map[string]overlayValue // nil until a second member is prepared
	// localIdx and knownIdx index local and known once they are long, so that a write
	// of many keys, or with many conditions (the expiry reaper's), is not searched in
	// quadratic time.
	localIdx, knownIdx overlayIndex
}

// smallLocal is the length of an overlay up to which it is searched linearly.
const smallLocal = 32

// overlayIndex indexes an overlay o by key (the latest entry of each: o[:n] so far)
// once o is longer than smallLocal. The zero value is empty; an overlay cut back below
// n is indexed afresh.
type overlayIndex struct {
	m map[string]int
	n int
}

// find finds key in o, the overlay x indexes.
func (x *overlayIndex) find(o smallOverlay, key []byte) (overlayValue, bool) {
	if len(o) <= smallLocal {
		return o.find(key)
	}
	if x.m == nil || x.n > len(o) {
		x.m, x.n = make(map[string]int, len(o)), 0
	}
	for ; x.n < len(o); x.n++ {
		x.m[string(o[x.n].key)] = x.n
	}
	if i, ok := x.m[string(key)]; ok {
		return o[i].overlayValue, true
	}
	return overlayValue{}, false
}

// findLocal finds key in the local overlay.
func (r *groupReader) findLocal(key []byte) (overlayValue, bool) {
	return r.localIdx.find(r.local, key)
}

// findKnown finds key in the known overlay.
func (r *groupReader) findKnown(key []byte) (overlayValue, bool) {
	return r.knownIdx.find(r.known, key)
}

// lookup finds key in the overlays.
func (r *groupReader) lookup(key []byte) (overlayValue, bool) {
	if v, ok := r.findLocal(key); ok {
		return v, true
	}
	if v, ok := r.group[string(key)]; ok {
		return v, true
	}
	return r.findKnown(key)
}

// fold moves the accepted member's writes (local) into the group's and starts the
// next member.
func (r *groupReader) fold() {
	if len(r.local) > 0 {
		if r.group == nil {
			r.group = make(map[string]overlayValue, len(r.local))
		}
		for _, e := range r.local {
			r.group[string(e.key)] = e.overlayValue
		}
	}
	r.local, r.known = r.local[:0], r.known[:0]
	r.localIdx, r.knownIdx = overlayIndex{}, overlayIndex{}
}

func (r *groupReader) get(key []byte) ([]byte, bool, error) {
	if ov, ok := r.lookup(key); ok {
		return ov.v, ov.present, nil
	}
	if r.keys.absent(key) {
		return nil, false, nil
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

// vouched reports whether c holds without reading its key: it carries the stamp of a
// read of this store (RequireItem with the item of a Read or a notified change), no
// earlier write of the group touched the key, and the write log vouches that no
// committed group did since the read. The value read then stands for the key's current
// one (known) for the derived writes.
func (r *groupReader) vouched(c condition) bool {
	if c.stamp.log == nil || c.stamp.gen != r.g.id {
		return false
	}
	if _, ok := r.lookup(c.key); ok {
		return false
	}
	if !r.log.unchanged(c.key, c.stamp) {
		return false
	}
	ov := overlayValue{} // absent
	if c.rev.Exists() {
		ov = present(c.val, c.rev)
	}
	r.known = append(r.known, overlayEntry{key: c.key, overlayValue: ov})
	return true
}

// revision returns key's current revision as the group leaves it, from the overlays,
// the remembered revisions or the DB.
func (r *groupReader) revision(key []byte) (Revision, error) {
	if ov, ok := r.lookup(key); ok {
		return ov.revision(), nil
	}
	if rev, ok := r.revs[string(key)]; ok {
		return rev, nil
	}
	v, ok, err := r.get(key)
	if err != nil || !ok {
		return NoRevision, err
	}
	rev := revisionOf(v)
	r.known = append(r.known, overlayEntry{key: key, overlayValue: present(v, rev)})
	return rev, nil
}

// prepare checks the conditions of each write of group in order and computes its
// derived writes; a write whose condition fails, or whose preparing fails, gets its
// own error (p.err) and is left out. It returns the accepted writes merged, each
// write's operations followed by their derived writes.
func (db *DB) prepare(g *generation, group []*pendingWrite) preparedGroup {
	size := 0
	for _, p := range group {
		size += len(p.b.Dump())
	}
	w := db.committer.replay(db, g)
	r := w.r
	if len(group) == 1 {
		return w.prepareAlone(group[0])
	}
	pr := preparedGroup{b: leveldb.MakeBatch(size + 256*len(group))}
	for i, p := range group {
		if i > 0 {
			r.fold()
		}
		w.derived.ops = w.derived.ops[:0]
		if err := w.prepareWrite(p); err != nil {
			r.local, r.localIdx = r.local[:0], overlayIndex{}
			p.err = err
			continue
		}
		_ = p.b.Replay(pr.b)
		for _, d := range w.derived.ops {
			if d.del {
				pr.b.Delete(d.key)
			} else {
				pr.b.Put(d.key, d.value)
			}
		}
		pr.sync = pr.sync || p.sync
	}
	pr.changes, pr.written = w.changes, r
	return pr
}

// prepareAlone prepares a group of one write without copying it: its derived writes
// are appended to its own batch, which restore gives back as it was once written.
func (w *writeReplay) prepareAlone(p *pendingWrite) preparedGroup {
	if err := w.prepareWrite(p); err != nil {
		p.err = err
		w.r.local = w.r.local[:0]
		return preparedGroup{b: new(leveldb.Batch)}
	}
	n := len(p.b.Dump())
	for _, d := range w.derived.ops {
		if d.del {
			p.b.Delete(d.key)
		} else {
			p.b.Put(d.key, d.value)
		}
	}
	pr := preparedGroup{b: p.b, sync: p.sync, changes: w.changes, written: w.r}
	if len(w.derived.ops) > 0 {
		pr.restore = func() { _ = p.b.Load(p.b.Dump()[:n]) } // the first n bytes are p's own records
	}
	return pr
}

// replay returns the committer's writeReplay, emptied, to prepare a group on g. Call
// with the token: one group is prepared at a time, and its buffers are reused.
func (c *committer) replay(db *DB, g *generation) *writeReplay {
	w := &c.prep
	if w.r == nil {
		w.r = new(groupReader)
	}
	r := w.r
	*r = groupReader{g: g, log: &db.wlog, keys: &db.keys, revs: c.revs, local: reuse(r.local), known: reuse(r.known), group: r.group}
	// Clearing a map costs what it once held: one that held far more than the last
	// group used is dropped rather than cleared (an empty one costs nothing to clear).
	n := len(r.group)
	c.groupPeak = max(c.groupPeak, n)
	if n > maxReuse || n > 0 && c.groupPeak > smallReuse && c.groupPeak > 4*n {
		r.group, c.groupPeak = nil, 0
	}
	clear(r.group)
	*w = writeReplay{db: db, r: r, notify: db.subs.any(), derived: Derived{ops: reuse(w.derived.ops)},
		changes: reuse(w.changes)}
	return w
}

// maxReuse bounds the buffers a committer keeps from one group to the next; a buffer
// of more than smallReuse (more than the groups of 64 concurrent PUTs fill) is kept
// only while the last group used a quarter of it, so that one large group (the expiry
// reaper's batches) does not make every later small group clear a large buffer.
const (
	maxReuse   = 1024
	smallReuse = 256
)

// reuse empties a buffer for the next group, dropping its references to the last
// group's batches, or drops it if it grew large for what the last group used.
func reuse[T any](s []T) []T {
	if c := cap(s); c > maxReuse || c > smallReuse && c > 4*len(s) {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// writeReplay prepares the writes of a group, one at a time: it receives the
// operations of each in order, computes their derived writes and records them (and
// it) in the reader's local overlay.
type writeReplay struct {
	db      *DB
	r       *groupReader
	notify  bool
	owned   bool     // the write being prepared is pendingWrite.owned
	derived Derived  // the derived writes of the write being prepared
	changes []Change // of the writes accepted so far, and the current one
	err     error
}

// prepareWrite checks p's conditions and computes the derived writes of its operations
// (into w.derived) and its changes to notify (appended to w.changes, and removed on
// error). r.local receives every key it writes.
func (w *writeReplay) prepareWrite(p *pendingWrite) error {
	r := w.r
	for _, c := range p.conds {
		if r.vouched(c) {
			continue
		}
		rev, err := r.revision(c.key)
		if err != nil {
			return err
		}
		if rev != c.rev {
			return fmt.Errorf("storage: commit: key %q: %w", c.key, ErrConflict)
		}
		if c.hasVal {
			if _, seen := r.findKnown(c.key); !seen && revisionOf(c.val) == c.rev {
				r.known = append(r.known, overlayEntry{key: c.key, overlayValue: present(c.val, c.rev)})
			}
		}
	}
	n := len(w.changes)
	w.err, w.owned = nil, p.owned
	_ = p.b.Replay(w) // the keys and values replayed are p.b's own bytes
	if w.err != nil {
		w.changes = w.changes[:n]
		return w.err
	}
	return nil
}

func (w *writeReplay) Put(key, value []byte) {
	if value == nil {
		value = []byte{}
	}
	w.op(key, value)
}

func (w *writeReplay) Delete(key []byte) { w.op(key, nil) }

// op handles a put (value non-nil) or a delete (value nil).
func (w *writeReplay) op(key, value []byte) {
	if w.err != nil {
		return
	}
	if len(key) > 0 {
		if fn := w.db.derive.get(key[0]); fn != nil {
			n := len(w.derived.ops)
			old, _, err := w.r.get(key)
			if err == nil {
				err = fn(key, old, value, &w.derived)
			}
			if err != nil {
				w.err = fmt.Errorf("storage: commit: derived writes of %q: %w", key, err)
				return
			}
			for _, d := range w.derived.ops[n:] {
				ov := overlayValue{}
				if !d.del {
					v := d.value
					if v == nil {
						v = []byte{}
					}
					ov = present(v, revisionOf(v))
				}
				w.r.local = append(w.r.local, overlayEntry{key: d.key, overlayValue: ov})
			}
		}
	}
	ov := overlayValue{}
	if value != nil {
		ov = present(value, revisionOf(value))
	}
	w.r.local = append(w.r.local, overlayEntry{key: key, overlayValue: ov})
	if w.notify {
		w.changes = append(w.changes, Change{Key: key, Value: value, Rev: ov.rev, Owned: w.owned})
	}
}

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
