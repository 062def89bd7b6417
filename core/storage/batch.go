package storage

import "github.com/syndtr/goleveldb/leveldb"

// Batch collects puts and deletes that DB.Write applies atomically and in order. Put and
// Delete copy their arguments, so callers may reuse key and value buffers. A Batch is not
// safe for concurrent use; its zero value is ready to use.
type Batch struct {
	b leveldb.Batch
}

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch { return new(Batch) }

// Put records storing value under key.
func (b *Batch) Put(key, value []byte) { b.b.Put(key, value) }

// Delete records removing key.
func (b *Batch) Delete(key []byte) { b.b.Delete(key) }

// Len returns the number of operations recorded.
func (b *Batch) Len() int { return b.b.Len() }

// Size returns the approximate encoded size of the batch in bytes.
func (b *Batch) Size() int { return len(b.b.Dump()) }

// Reset empties the batch, keeping its buffer for reuse.
func (b *Batch) Reset() { b.b.Reset() }
