package storage

import (
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
	it       iterator.Iterator
	released bool
}

func newIterator(it iterator.Iterator) *Iterator { return &Iterator{it: it} }

// rangeOf builds a goleveldb range; nil bounds stay open.
func rangeOf(lo, hi []byte) *util.Range { return &util.Range{Start: lo, Limit: hi} }

// Next moves to the next key (the first key, on a new iterator) and reports whether
// there is one.
func (it *Iterator) Next() bool {
	if it.released {
		return false
	}
	return it.it.Next()
}

// Seek moves to the first key at or after key (clamped to the iterator's bounds) and
// reports whether there is one. A following Next moves past it.
func (it *Iterator) Seek(key []byte) bool {
	if it.released {
		return false
	}
	return it.it.Seek(key)
}

// Key returns the current key, or nil if the iterator is not positioned on one. The
// slice is only valid until the next call to Next, Seek or Release: copy it to keep it,
// and never modify it.
func (it *Iterator) Key() []byte {
	if it.released {
		return nil
	}
	return it.it.Key()
}

// Value returns the current value, or nil if the iterator is not positioned on a key.
// The slice is only valid until the next call to Next, Seek or Release: copy it to keep
// it, and never modify it.
func (it *Iterator) Value() []byte {
	if it.released {
		return nil
	}
	return it.it.Value()
}

// Err returns the error, if any, that ended the iteration early. A false Next or Seek
// with a nil Err means the range is exhausted.
func (it *Iterator) Err() error {
	if it.released {
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
	it.it.Release()
}
