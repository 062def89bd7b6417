package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// failure is why writes are suspended.
type failure struct {
	cause   error // the goleveldb error that suspended writes
	noSpace bool  // cause is a full device
	since   time.Time
}

// refuse returns the error of an op refused while writes are suspended: it wraps
// ErrNoSpace for a full device, ErrWritesSuspended otherwise, and names the cause.
func (f *failure) refuse(op string) error {
	if f.noSpace {
		return fmt.Errorf("storage: %s: %w (%w)", op, ErrNoSpace, f.cause)
	}
	return fmt.Errorf("storage: %s: %w (%w)", op, ErrWritesSuspended, f.cause)
}

// suspend suspends writes after cause, unless they are suspended already, and makes
// sure recovery runs. It returns the failure in force.
func (db *DB) suspend(cause error) *failure {
	f := &failure{cause: cause, noSpace: isNoSpace(cause), since: time.Now()}
	if !db.fail.CompareAndSwap(nil, f) {
		return db.fail.Load()
	}
	if f.noSpace {
		db.log.Warn("storage: the data directory's disk is full: writes are refused until space is freed; reads go on",
			"dir", db.dir, "err", cause)
	} else {
		db.log.Warn("storage: a write failed: writes are suspended until the database has reopened its files; reads go on",
			"dir", db.dir, "err", cause)
	}
	db.startRecovery()
	return f
}

// startRecovery starts the recovery goroutine unless it runs already (or the DB is
// closing). Close stops it.
func (db *DB) startRecovery() {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	if db.recovering {
		return
	}
	select {
	case <-db.stop:
		return
	default:
	}
	db.recovering = true
	db.recoveryWG.Add(1)
	go db.recoveryLoop()
}

// recoveryLoop tries to recover every recoveryInterval until writes are resumed or the
// DB closes.
func (db *DB) recoveryLoop() {
	defer db.recoveryWG.Done()
	attempts := 0
	for {
		t := time.NewTimer(db.o.recoveryInterval)
		select {
		case <-db.stop:
			t.Stop()
			db.endRecovery()
			return
		case <-t.C:
		}
		attempts++
		if err := db.resume(); err != nil && attempts%30 == 1 {
			db.log.Warn("storage: writes are still suspended", "dir", db.dir, "attempts", attempts, "err", err)
		}
		db.failMu.Lock()
		if db.fail.Load() == nil {
			db.recovering = false
			db.failMu.Unlock()
			return
		}
		db.failMu.Unlock()
	}
}

// endRecovery marks the recovery goroutine gone.
func (db *DB) endRecovery() {
	db.failMu.Lock()
	db.recovering = false
	db.failMu.Unlock()
}

// errNoRoom means the device has not freed enough space yet to try.
var errNoRoom = errors.New("not enough free space yet")

// resume makes one attempt to resume writes: once the device has room for what
// reopening writes (a table of the journals' contents, a manifest, a journal), it waits
// for the readers of the current files to finish (interrupting those that take too
// long), closes the LevelDB, cuts the failed write's bytes off the journal, and opens
// it again: goleveldb's open replays the journals, so every acknowledged write is kept,
// and starts with fresh journal and manifest writers. If opening for writing fails, the
// files are opened read-only so that reads go on, and a later attempt tries again.
func (db *DB) resume() error {
	f := db.fail.Load()
	if f == nil {
		return nil
	}
	if f.noSpace && !db.roomToResume() {
		return errNoRoom
	}
	done, ok := db.drain()
	if !ok {
		return errors.New("readers did not finish in time")
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	defer db.endDrain(done)
	if err := db.reopenLocked(); err != nil {
		return err
	}
	db.fail.Store(nil)
	db.recoveries.Add(1)
	db.log.Info("storage: writes resumed", "dir", db.dir, "suspended_for", time.Since(f.since).Round(time.Millisecond))
	return nil
}

// drain stops new iterators and snapshots from starting (they wait for endDrain) and
// waits for those of the current files to finish. It returns the channel endDrain
// closes, and whether no reader is left.
func (db *DB) drain() (chan struct{}, bool) {
	db.mu.Lock()
	done := make(chan struct{})
	db.draining = done
	g := db.cur
	db.mu.Unlock()
	if g == nil || g.waitIdle(db.o.drainGrace, db.o.drainTimeout, db.stop) {
		return done, true
	}
	db.mu.Lock()
	db.endDrain(done)
	db.mu.Unlock()
	return nil, false
}

// endDrain lets waiting readers go on. Call with mu held.
func (db *DB) endDrain(done chan struct{}) {
	db.draining = nil
	close(done)
}

// reopenLocked closes the current files and opens them again for writing, or, failing
// that, read-only (db.cur is nil if even that fails). Call with mu held and no reader
// left.
func (db *DB) reopenLocked() error {
	if g := db.cur; g != nil {
		db.cur = nil
		if err := g.close(); err != nil {
			db.log.Debug("storage: close before reopening", "dir", db.dir, "err", err)
		}
		if p, ok := g.fs.journal.failurePoint(); ok {
			if err := cutJournal(db.dir, p); err != nil {
				return fmt.Errorf("storage: recover: cut the failed write off the journal: %w", err)
			}
		}
	}
	g, err := openGeneration(db.dir, db.o, false, false)
	if err == nil {
		db.cur = g
		return nil
	}
	ro, rerr := openGeneration(db.dir, db.o, false, true)
	if rerr != nil {
		return fmt.Errorf("storage: recover: reopen %q: %w; read-only: %w", db.dir, err, rerr)
	}
	db.cur = ro
	return fmt.Errorf("storage: recover: reopen %q: %w", db.dir, err)
}

// roomToResume reports whether the device has room for reopening: the journals'
// size (their contents become a table) and resumeFreeSpace more. A system that cannot
// tell the free space always has room.
func (db *DB) roomToResume() bool {
	free, ok := freeSpace(db.dir)
	if !ok {
		return true
	}
	return free >= journalBytes(db.dir)+db.o.resumeFreeSpace
}

// journalBytes returns the size of the journal files in dir.
func journalBytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			n += fi.Size()
		}
	}
	return n
}
