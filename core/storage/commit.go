package storage

import (
	"errors"
	"sync"

	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
)

// maxGroupBytes bounds the batches merged into one goleveldb write (goleveldb's own
// merge limit): a group starts with the oldest queued batch, whatever its size.
const maxGroupBytes = 1 << 20

// committer merges concurrent writes into one goleveldb write (group commit: one
// journal write and at most one fsync for the whole group) and runs one goleveldb write
// at a time, so that every journal byte written meanwhile belongs to that write (see
// journalObserver). The goroutine holding token writes the oldest queued batches as
// one group, acknowledges each of them, and lets the next writer take the token.
type committer struct {
	token chan struct{} // capacity 1: held by the goroutine writing a group
	mu    sync.Mutex    // guards queue
	queue []*pendingWrite
	// revs remembers the revisions of keys recently written (at most maxRevs), so that
	// a condition on a hot key is checked without reading it. Guarded by token: every
	// write goes through the token holder, which keeps it exact (seam.go).
	revs map[string]Revision
	// prep prepares groups (seam.go); guarded by token, reused from group to group.
	prep writeReplay
	// groupPeak is the most keys prep's map of a group's keys (groupReader.group) has
	// held since it was made; guarded by token.
	groupPeak int
	// group holds the group being written; guarded by token, reused from group to group
	// (emptied once every member has its result).
	group []*pendingWrite
}

// pendingWrites recycles pendingWrite values with their channels: a write allocates
// neither. A value goes back once its writer has received its result; the token
// holder that sent it reads only the members after it (writeAndAnswer).
var pendingWrites = sync.Pool{New: func() any { return &pendingWrite{done: make(chan error, 1)} }}

// pendingWrite is one caller's batch waiting in the queue.
type pendingWrite struct {
	b     *leveldb.Batch
	conds []condition // checked in the commit goroutine (Batch.Require)
	sync  bool
	owned bool       // b is never touched again once written (Batch.HandOver)
	done  chan error // capacity 1: the write's result
	// err, set while the group is prepared, fails this write alone (a conflict, a
	// failed read of a condition, a failed DeriveFunc): nothing of it is written.
	err error
}

// commit writes b (synced when sync) through the queue, if conds hold, and returns its
// result. owned: nobody modifies b once it is written (Change.Owned).
//
// The writer that takes the token collects the queue at once. Yielding the processor
// first (runtime.Gosched) would let more writers join its group (15 writes per group
// instead of 1.4 under the load benchmark), but behind HTTP the yield cost more than
// the journal writes it saved (docs/benchmarks.md, "Faster KV PUTs").
func (db *DB) commit(b *leveldb.Batch, conds []condition, sync, owned bool) error {
	c := &db.committer
	p := pendingWrites.Get().(*pendingWrite)
	p.b, p.conds, p.sync, p.owned = b, conds, sync, owned
	c.mu.Lock()
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	err := c.await(db, p)
	*p = pendingWrite{done: p.done} // the channel is empty: its one result was received
	pendingWrites.Put(p)
	return err
}

// await waits for p's result, writing groups (p's, or ones before it) whenever it
// holds the token.
func (c *committer) await(db *DB, p *pendingWrite) error {
	for {
		select {
		case err := <-p.done:
			return err
		default:
		}
		select {
		case err := <-p.done:
			return err
		case c.token <- struct{}{}:
		}
		if group := c.take(); len(group) > 0 {
			c.writeAndAnswer(db, group)
		}
		<-c.token
	}
}

// writeAndAnswer writes group and sends each member its result. Call with the token;
// group is c.group, emptied afterwards. A member answered may already be back in
// pendingWrites (and in use by another write) while the rest are answered: only the
// later members are read.
func (c *committer) writeAndAnswer(db *DB, group []*pendingWrite) {
	err := db.writeGroup(group)
	for _, q := range group {
		if q.err != nil {
			q.done <- q.err
		} else {
			q.done <- err
		}
	}
	clear(group)
}

// take removes from the queue the oldest batch and the ones after it that fit in
// maxGroupBytes with it. The group is c.group, reused: call with the token.
func (c *committer) take() []*pendingWrite {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, size := 0, 0
	for n < len(c.queue) {
		s := len(c.queue[n].b.Dump())
		if n > 0 && size+s > maxGroupBytes {
			break
		}
		size += s
		n++
	}
	if cap(c.group) > maxReuse {
		c.group = nil
	}
	c.group = append(c.group[:0], c.queue[:n]...)
	rest := copy(c.queue, c.queue[n:])
	clear(c.queue[rest:])
	c.queue = c.queue[:rest]
	return c.group
}

// writeGroup writes one group: it checks each write's conditions and computes its
// derived writes (prepare), then writes the accepted ones as one goleveldb batch and
// tells the subscribers. A write refused while preparing has its own error (p.err);
// the returned error is that of the others.
func (db *DB) writeGroup(group []*pendingWrite) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	g, err := db.writableLocked("write")
	if err != nil {
		return err
	}
	var pr preparedGroup
	if db.plain(group) {
		pr = plainGroup(group)
	} else {
		pr = db.prepare(g, group)
	}
	if pr.restore != nil {
		defer pr.restore()
	}
	if pr.b.Len() == 0 {
		return nil
	}
	if err := db.writeLocked(g, pr.b, pr.sync); err != nil {
		db.committer.forget()
		db.wlog.fail()
		return err
	}
	if pr.written != nil {
		db.committer.remember(pr.written)
	}
	db.wlog.record(pr.b, pr.changes, g.id)
	db.notify(pr)
	return nil
}

// writeLocked writes b with goleveldb. A failure that leaves goleveldb unable to write
// (any I/O error: its journal writer keeps its first error for good) suspends writes
// until recovery (heal.go); the observer of the journal tells whether the batch itself
// was applied: if its journal write succeeded, it is durable and is acknowledged. Call
// with mu held (shared).
func (db *DB) writeLocked(g *generation, b *leveldb.Batch, sync bool) error {
	mark := g.fs.journal.begin()
	err := g.ldb.Write(b, writeOpts(sync))
	if err == nil {
		return nil
	}
	failed, wrote := g.fs.journal.since(mark)
	applied := wrote && !failed // journaled (and synced) before goleveldb failed
	switch {
	case permanent(err):
		if applied {
			return nil
		}
		return wrap("write", err)
	case applied:
		db.suspend(err)
		return nil
	}
	if p, ok := g.fs.journal.failurePoint(); failed && ok {
		// Cut the group's bytes off now, not only at recovery: a complete record whose
		// sync failed would otherwise come back if the process stopped before that.
		// goleveldb writes nothing more to this journal while writes are suspended.
		if cerr := cutJournal(db.dir, p); cerr != nil {
			db.log.Warn("storage: cut a failed write off the journal", "dir", db.dir, "err", cerr)
		}
	}
	return db.suspend(err).refuse("write")
}

// permanent reports whether err is one that recovery cannot help: the DB closed,
// opened read-only, or corrupted (goleveldb then refuses writes for good).
func permanent(err error) bool {
	return errors.Is(err, leveldb.ErrClosed) || errors.Is(err, leveldb.ErrReadOnly) || lerrors.IsCorrupted(err)
}
