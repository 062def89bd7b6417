package storage

import "github.com/syndtr/goleveldb/leveldb"

// Batch collects puts and deletes that DB.Write and Store.Commit apply atomically and in
// order, and the conditions (Require) under which Commit applies them. Put, Delete and
// Require copy their arguments, so callers may reuse key and value buffers. A Batch is
// not safe for concurrent use, nor to be copied (its first condition is held inline);
// its zero value is ready to use.
type Batch struct {
	b     leveldb.Batch
	conds []condition
	// cond0 holds the first condition, so that a batch with one (core/kv's writes)
	// does not allocate its slice.
	cond0 [1]condition
	// handedOver is set by HandOver: the batch's bytes are never touched again once it
	// is committed.
	handedOver bool
}

// condition is one Require: the batch applies only if key's revision is still rev.
// val, when hasVal, is the value of that revision (RequireItem); stamp, what the
// LevelDB implementation knew when it read the item (writelog.go).
type condition struct {
	key    []byte
	rev    Revision
	val    []byte
	hasVal bool
	stamp  readStamp
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
	b.addCondition(condition{key: append([]byte(nil), key...), rev: rev})
}

// addCondition appends c to the batch's conditions.
func (b *Batch) addCondition(c condition) {
	if b.conds == nil {
		b.conds = b.cond0[:0]
	}
	b.conds = append(b.conds, c)
}

// RequireItem is Require(key, it.Rev) that also hands the store the value of that
// revision, it.Value, as the caller read it: the store then computes the derived writes
// of the batch's writes of key from it instead of reading key again. A value that does
// not have revision it.Rev is ignored. it.Value is not copied: the caller must not
// modify it until the commit returns. With the item of a Read (or of a notified
// change, Change.Item) of this store, the LevelDB implementation also settles the
// condition without reading key when nothing wrote the key since (writelog.go).
func (b *Batch) RequireItem(key []byte, it Item) {
	b.addCondition(condition{key: append([]byte(nil), key...), rev: it.Rev, val: it.Value,
		hasVal: it.Rev.Exists(), stamp: it.stamp})
}

// HandOver promises that the caller will not use b again (no Put, Delete, Reset or
// second commit) once it has been committed: the store may then let subscribers keep
// the bytes of its changes instead of copying them (Change.Owned). Committing a batch
// handed over is otherwise the same.
func (b *Batch) HandOver() { b.handedOver = true }

// Len returns the number of operations recorded (conditions are not operations).
func (b *Batch) Len() int { return b.b.Len() }

// Size returns the approximate encoded size of the batch in bytes.
func (b *Batch) Size() int { return len(b.b.Dump()) }

// Reset empties the batch and drops its conditions, keeping its buffer for reuse.
func (b *Batch) Reset() {
	b.b.Reset()
	clear(b.conds) // drop the references to keys and values read
	b.conds = b.conds[:0]
}
