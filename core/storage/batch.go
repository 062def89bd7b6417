package storage

import "github.com/syndtr/goleveldb/leveldb"

// Batch collects puts and deletes that DB.Write and Store.Commit apply atomically and in
// order, and the conditions (Require) under which Commit applies them. Put, Delete and
// Require copy their arguments, so callers may reuse key and value buffers. A Batch is
// not safe for concurrent use; its zero value is ready to use.
type Batch struct {
	b     leveldb.Batch
	conds []condition
}

// condition is one Require: the batch applies only if key's revision is still rev.
// A RequireRead also carries the read's stamp and the value read (old), with which
// the LevelDB implementation may settle the condition without reading key again.
type condition struct {
	key   []byte
	rev   Revision
	stamp readStamp
	old   []byte
}

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch { return new(Batch) }

// Put records storing value under key.
func (b *Batch) Put(key, value []byte) { b.b.Put(key, value) }

// Delete records removing key.
func (b *Batch) Delete(key []byte) { b.b.Delete(key) }

// Require makes the batch conditional: it applies only if key's revision is still rev
// when it is committed (NoRevision: only if key is still absent). Otherwise the commit
// fails with ErrConflict and writes nothing.
func (b *Batch) Require(key []byte, rev Revision) {
	b.conds = append(b.conds, condition{key: append([]byte(nil), key...), rev: rev})
}

// RequireRead is Require(key, it.Rev) for the item Read returned for key. It lets the
// store settle the condition without reading key again when nothing wrote the key
// since it was read, taking it.Value as the old value for derived writes; so the
// caller must leave it.Value unmodified until the batch is committed.
func (b *Batch) RequireRead(key []byte, it Item) {
	b.conds = append(b.conds, condition{key: append([]byte(nil), key...), rev: it.Rev, stamp: it.stamp, old: it.Value})
}

// Len returns the number of operations recorded (conditions are not operations).
func (b *Batch) Len() int { return b.b.Len() }

// Size returns the approximate encoded size of the batch in bytes.
func (b *Batch) Size() int { return len(b.b.Dump()) }

// Reset empties the batch and drops its conditions, keeping its buffer for reuse.
func (b *Batch) Reset() {
	b.b.Reset()
	b.conds = b.conds[:0]
}
