package storage

import (
	"fmt"
	"sync"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// Snapshot is a consistent read-only view of the DB at the moment it was taken; later
// writes are invisible to it. It is safe for concurrent use and must be released.
type Snapshot struct {
	s    *leveldb.Snapshot
	ref  *readerRef
	once sync.Once // frees s
}

// interrupted reports whether recovery interrupted the snapshot, and then frees it
// (concurrent reads of it fail cleanly: goleveldb's snapshots are safe for that).
func (s *Snapshot) interrupted(op string) error {
	if !s.ref.interrupted() {
		return nil
	}
	s.free()
	return fmt.Errorf("storage: %s: %w", op, ErrInterrupted)
}

// free releases the goleveldb snapshot and uncounts it, once.
func (s *Snapshot) free() {
	s.once.Do(func() {
		s.s.Release()
		s.ref.release()
	})
}

// Get returns the value stored under key in the snapshot, or ErrNotFound. The returned
// slice belongs to the caller.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if err := s.interrupted("snapshot get"); err != nil {
		return nil, err
	}
	v, err := s.s.Get(key, nil)
	if err != nil {
		return nil, wrap("snapshot get", err)
	}
	return v, nil
}

// Has reports whether key exists in the snapshot.
func (s *Snapshot) Has(key []byte) (bool, error) {
	if err := s.interrupted("snapshot has"); err != nil {
		return false, err
	}
	ok, err := s.s.Has(key, nil)
	if err != nil {
		return false, wrap("snapshot has", err)
	}
	return ok, nil
}

// Iterate returns an iterator over the snapshot's keys in [lo, hi); see DB.Iterate.
func (s *Snapshot) Iterate(lo, hi []byte) *Iterator {
	return s.iterator(rangeOf(lo, hi), nil)
}

// iterator returns an iterator of the snapshot, counted on its files.
func (s *Snapshot) iterator(r *util.Range, ro *opt.ReadOptions) *Iterator {
	if err := s.interrupted("iterate"); err != nil {
		return failedIterator(err)
	}
	ref := s.ref.g.acquire()
	return newIterator(s.s.NewIterator(r, ro), ref, s.ref)
}

// IteratePrefix returns an iterator over the snapshot's keys that start with prefix.
func (s *Snapshot) IteratePrefix(prefix []byte) *Iterator {
	return s.Iterate(prefix, PrefixEnd(prefix))
}

// scanOptions are the read options of a bulk scan: the table blocks it reads are not
// added to the block cache, so one listing of a whole bucket neither grows the server's
// memory by the cache's size nor evicts the blocks that serve point reads (LevelDB's
// advice for bulk scans).
var scanOptions = &opt.ReadOptions{DontFillCache: true}

// Scan is IteratePrefix for bulk scans (listings): blocks read are not cached.
func (s *Snapshot) Scan(prefix []byte) *Iterator {
	return s.iterator(rangeOf(prefix, PrefixEnd(prefix)), scanOptions)
}

// Release frees the snapshot. Iterators created from it stay valid until released. It
// is safe to call more than once; afterwards Get returns ErrClosed.
func (s *Snapshot) Release() { s.free() }
