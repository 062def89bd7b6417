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
// journalObserver). Writers queue their batches; one goroutine, owned by the DB (started
// by open, stopped by Close), writes the oldest queued batches as one group,
// acknowledges each of them, and goes on with what queued meanwhile, holding token for
// each group.
//
// A dedicated goroutine rather than a writer taking the turn (leader/follower): under
// load the turn passed to a waiting writer's goroutine, which then queued behind every
// runnable request before it could write, and all writers waited for it (2.8 writes
// per group, a group every 140 µs at 21,000 PUT/s). The committer keeps running while
// writes are queued, and a writer that finds the queue empty wakes it onto its own
// processor just before blocking (docs/rationale.md, "One committer goroutine").
type committer struct {
	token chan struct{} // capacity 1: held while a group is written (and by Subscribe's cancel)
	wake  chan struct{} // capacity 1: a batch was queued to an empty queue
	quit  chan struct{} // closed by stop
	done  chan struct{} // closed when the goroutine has returned
	mu    sync.Mutex    // guards queue and stopped
	queue []*pendingWrite
	// stopped is set once the goroutine has returned: later writes fail at once.
	stopped bool
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
// neither. A value goes back once its writer has received its result; the committer
// reads only the members after the one it answered (writeAndAnswer).
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

// start starts the committer's goroutine for db.
func (c *committer) start(db *DB) {
	c.token = make(chan struct{}, 1)
	c.wake = make(chan struct{}, 1)
	c.quit = make(chan struct{})
	c.done = make(chan struct{})
	go c.run(db)
}

// stop stops the committer's goroutine and waits for it. Writes queued by then are
// written first (the caller has closed the DB, so they fail with ErrClosed); later
// ones fail at once.
func (c *committer) stop() {
	close(c.quit)
	<-c.done
}

// commit writes b (synced when sync) through the queue, if conds hold, and returns its
// result. owned: nobody modifies b once it is written (Change.Owned).
func (db *DB) commit(b *leveldb.Batch, conds []condition, sync, owned bool) error {
	c := &db.committer
	p := pendingWrites.Get().(*pendingWrite)
	p.b, p.conds, p.sync, p.owned = b, conds, sync, owned
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		*p = pendingWrite{done: p.done}
		pendingWrites.Put(p)
		return wrap("write", leveldb.ErrClosed)
	}
	c.queue = append(c.queue, p)
	first := len(c.queue) == 1
	c.mu.Unlock()
	if first {
		select {
		case c.wake <- struct{}{}:
		default: // already woken
		}
	}
	err := <-p.done
	*p = pendingWrite{done: p.done} // the channel is empty: its one result was received
	pendingWrites.Put(p)
	return err
}

// run writes groups while batches are queued and sleeps while none are, until stop.
// Whoever queues to an empty queue wakes it; a batch queued to a non-empty queue is
// found by the take that follows the current group, so none waits unseen.
func (c *committer) run(db *DB) {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			c.drain(db)
			return
		}
		for c.writeNext(db) {
		}
	}
}

// writeNext writes the next group, if any is queued, and reports whether it did.
func (c *committer) writeNext(db *DB) bool {
	c.token <- struct{}{}
	defer func() { <-c.token }()
	group := c.take()
	if len(group) == 0 {
		return false
	}
	c.writeAndAnswer(db, group)
	return true
}

// drain writes what is queued and marks the committer stopped, so that no write
// queued later waits for it.
func (c *committer) drain(db *DB) {
	for c.writeNext(db) {
	}
	c.mu.Lock()
	c.stopped = true
	rest := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, p := range rest { // queued between the last take and stopped
		p.done <- wrap("write", leveldb.ErrClosed)
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
	db.addKeys(pr.b) // before LevelDB has them: see keyFilter
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
