package storage

import (
	"fmt"

	"github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// Iterator walks keys in ascending order within the bounds it was created with, over a
// consistent view of the DB. A new iterator is positioned before the first key: call
// Next (or Seek) before Key and Value. An Iterator is not safe for concurrent use and
// must be released.
//
//	it := db.IteratePrefix(storage.KeyString(storage.TagObject, "default", "users"))
//	defer it.Release()
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { ... }
type Iterator struct {
	it iterator.Iterator
	// ref counts the iterator on its files; parent is its snapshot's (nil for an
	// iterator of the DB): recovery interrupts both.
	ref, parent *readerRef
	err         error // set when the iterator failed before or while iterating
	released    bool
}

func newIterator(it iterator.Iterator, ref, parent *readerRef) *Iterator {
	return &Iterator{it: it, ref: ref, parent: parent}
}

// failedIterator returns an iterator that yields nothing and reports err.
func failedIterator(err error) *Iterator { return &Iterator{err: err} }

// rangeOf builds a goleveldb range; nil bounds stay open.
func rangeOf(lo, hi []byte) *util.Range { return &util.Range{Start: lo, Limit: hi} }

// live reports whether the iterator may read: not released, not failed, and not
// interrupted by recovery (which it then records, releasing its files).
func (it *Iterator) live() bool {
	switch {
	case it.released || it.err != nil:
		return false
	case it.ref.interrupted() || it.parent != nil && it.parent.interrupted():
		it.stop()
		it.err = fmt.Errorf("storage: iterate: %w", ErrInterrupted)
		return false
	}
	return true
}

// stop releases the goleveldb iterator and uncounts it.
func (it *Iterator) stop() {
	if it.it != nil {
		it.it.Release()
		it.it = nil
		it.ref.release()
	}
}

// Next moves to the next key (the first key, on a new iterator) and reports whether
// there is one.
func (it *Iterator) Next() bool {
	return it.live() && it.it.Next()
}

// Seek moves to the first key at or after key (clamped to the iterator's bounds) and
// reports whether there is one. A following Next moves past it.
func (it *Iterator) Seek(key []byte) bool {
	return it.live() && it.it.Seek(key)
}

// Key returns the current key, or nil if the iterator is not positioned on one. The
// slice is only valid until the next call to Next, Seek or Release: copy it to keep it,
// and never modify it.
func (it *Iterator) Key() []byte {
	if it.it == nil || it.released {
		return nil
	}
	return it.it.Key()
}

// Value returns the current value, or nil if the iterator is not positioned on a key.
// The slice is only valid until the next call to Next, Seek or Release: copy it to keep
// it, and never modify it.
func (it *Iterator) Value() []byte {
	if it.it == nil || it.released {
		return nil
	}
	return it.it.Value()
}

// Err returns the error, if any, that ended the iteration early. A false Next or Seek
// with a nil Err means the range is exhausted. An iterator interrupted by recovery
// reports an error wrapping ErrInterrupted.
func (it *Iterator) Err() error {
	switch {
	case it.err != nil:
		return it.err
	case it.released || it.it == nil:
		return nil
	}
	if err := it.it.Error(); err != nil {
		return wrap("iterate", err)
	}
	return nil
}

// Release frees the iterator and its implicit snapshot. It is safe to call more than
// once; after it Next and Seek return false.
func (it *Iterator) Release() {
	if it.released {
		return
	}
	it.released = true
	it.stop()
}
