package storage

import (
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// Snapshot is a consistent read-only view of the DB at the moment it was taken; later
// writes are invisible to it. It is safe for concurrent use and must be released.
type Snapshot struct {
	s *leveldb.Snapshot
}

// Get returns the value stored under key in the snapshot, or ErrNotFound. The returned
// slice belongs to the caller.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	v, err := s.s.Get(key, nil)
	if err != nil {
		return nil, wrap("snapshot get", err)
	}
	return v, nil
}

// Has reports whether key exists in the snapshot.
func (s *Snapshot) Has(key []byte) (bool, error) {
	ok, err := s.s.Has(key, nil)
	if err != nil {
		return false, wrap("snapshot has", err)
	}
	return ok, nil
}

// Iterate returns an iterator over the snapshot's keys in [lo, hi); see DB.Iterate.
func (s *Snapshot) Iterate(lo, hi []byte) *Iterator {
	return newIterator(s.s.NewIterator(rangeOf(lo, hi), nil))
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
	return newIterator(s.s.NewIterator(rangeOf(prefix, PrefixEnd(prefix)), scanOptions))
}

// Release frees the snapshot. Iterators created from it stay valid until released. It
// is safe to call more than once; afterwards Get returns ErrClosed.
func (s *Snapshot) Release() { s.s.Release() }
