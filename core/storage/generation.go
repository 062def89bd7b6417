package storage

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
)

// generation is one opening of the LevelDB files. A DB starts with one and replaces it
// when it recovers from a failed write (heal.go); the iterators and snapshots taken
// from a generation are counted, so that it is closed only once none is left.
// generations numbers the generations opened in this process.
var generations atomic.Uint64

type generation struct {
	id  uint64 // unique in the process (generations): read stamps name it
	ldb *leveldb.DB
	fs  *fileStorage
	// readOnly: opened read-only because opening for writing failed (a full disk);
	// writes are suspended while it serves.
	readOnly bool

	readers atomic.Int64  // live iterators and snapshots
	seq     atomic.Uint64 // numbers readers in the order they were taken
	cutoff  atomic.Uint64 // readers numbered up to cutoff are interrupted
	idle    chan struct{} // capacity 1: signalled when readers drops to 0
}

// openGeneration opens dir (Recover rebuilds the manifest first) with goleveldb's
// options lo.
func openGeneration(dir string, o Options, recover, readOnly bool) (*generation, error) {
	lo := o.leveldbOptions()
	lo.ReadOnly = readOnly
	fs, err := openFileStorage(dir, readOnly, o)
	if err != nil {
		return nil, err
	}
	var ldb *leveldb.DB
	if recover {
		ldb, err = leveldb.Recover(fs, lo)
	} else {
		ldb, err = leveldb.Open(fs, lo)
	}
	if err != nil {
		_ = fs.Close()
		return nil, err
	}
	return &generation{id: generations.Add(1), ldb: ldb, fs: fs, readOnly: readOnly && !o.ReadOnly, idle: make(chan struct{}, 1)}, nil
}

// close closes the LevelDB, then its storage (which releases the directory lock).
func (g *generation) close() error {
	err := g.ldb.Close()
	if errors.Is(err, leveldb.ErrClosed) {
		err = nil
	}
	return errors.Join(err, g.fs.Close())
}

// readerRef is one live iterator or snapshot of a generation.
type readerRef struct {
	g    *generation
	n    uint64
	once sync.Once
}

// acquire counts a new reader.
func (g *generation) acquire() *readerRef {
	g.readers.Add(1)
	return &readerRef{g: g, n: g.seq.Add(1)}
}

// interrupted reports whether recovery interrupted the reader.
func (r *readerRef) interrupted() bool { return r.n <= r.g.cutoff.Load() }

// release uncounts the reader (once).
func (r *readerRef) release() {
	r.once.Do(func() {
		if r.g.readers.Add(-1) == 0 {
			select {
			case r.g.idle <- struct{}{}:
			default:
			}
		}
	})
}

// waitIdle waits until no reader is left: for grace, then it interrupts the readers
// still open (their next read fails with ErrInterrupted and releases them) and waits
// up to timeout more. It reports whether none is left; stop ends the wait early.
func (g *generation) waitIdle(grace, timeout time.Duration, stop <-chan struct{}) bool {
	deadline := time.Now().Add(grace)
	interrupted := false
	for g.readers.Load() > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			if interrupted {
				return false
			}
			g.cutoff.Store(g.seq.Load())
			interrupted = true
			deadline = time.Now().Add(timeout)
			continue
		}
		t := time.NewTimer(left)
		select {
		case <-g.idle:
		case <-t.C:
		case <-stop:
			t.Stop()
			return false
		}
		t.Stop()
	}
	return true
}
