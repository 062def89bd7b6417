package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// Store is the storage seam: what the services (core/kv, core/s3, core/modules, ...)
// need from storage, narrow enough that both the local LevelDB (*DB) and a replicated
// log in front of a local LevelDB can implement it. The contract a second
// implementation must satisfy is checked by the conformance suite in
// core/storage/storagetest, which every implementation runs.
//
// Reads are served by a local LevelDB in every implementation, so snapshots and
// iterators are this package's *Snapshot and *Iterator.
//
// All methods are safe for concurrent use.
type Store interface {
	// Get returns the value stored under key, or an error wrapping ErrNotFound. The
	// returned slice belongs to the caller.
	Get(key []byte) ([]byte, error)

	// Read returns the value stored under key with its revision. An absent key is not
	// an error: it has Value nil and Rev NoRevision, so that a create can be made
	// conditional on the key's absence.
	Read(ctx context.Context, key []byte) (Item, error)

	// Commit applies b atomically, in order, with the derived writes of its puts and
	// deletes (see RegisterDerive), if and only if every condition of b (Batch.Require)
	// still holds when it is applied. Otherwise it returns an error wrapping ErrConflict
	// and nothing of b is written. With sync the commit is durable on stable storage
	// when Commit returns (for the LevelDB: the journal is fsynced; group commit as
	// for DB.Write). Any other error means the batch was not applied. An empty batch
	// without conditions is a no-op; one with conditions checks them.
	Commit(ctx context.Context, b *Batch, sync bool) error

	// NewSnapshot returns a consistent read-only view as of now; it must be released.
	NewSnapshot() (*Snapshot, error)

	// Iterate returns an iterator over the keys in [lo, hi) on an implicit snapshot (nil
	// bounds are open); IteratePrefix over the keys starting with prefix. Iterators must
	// be released.
	Iterate(lo, hi []byte) *Iterator
	IteratePrefix(prefix []byte) *Iterator

	// RegisterDerive makes fn compute the derived writes of every committed put or
	// delete of a key whose table tag is tag (see DeriveFunc). Registering again for a
	// tag replaces the earlier function; a nil fn removes it. Services register at
	// construction, before they write.
	RegisterDerive(tag byte, fn DeriveFunc)

	// Subscribe calls fn with the changes of every commit applied to this store from now
	// on, by anyone (this process's writers; in a cluster, the replica applier too), in
	// commit order, before the commit is acknowledged to its writer. fn must be quick
	// and must neither write to the store nor cancel a subscription (it runs in the
	// commit path). The returned function cancels the subscription; after it returns
	// fn is not called again.
	Subscribe(fn func(changes []Change)) (cancel func())

	// Stats returns storage statistics for /stats.
	Stats() map[string]any

	// Close closes the store. Release iterators and snapshots first.
	Close() error
}

// ErrConflict is returned (wrapped) by Commit when a condition of the batch no longer
// holds: the key was written (or created, or deleted) since the revision was read.
// Nothing of the batch was written; the caller reads again and retries.
var ErrConflict = errors.New("storage: conflict: a key changed since it was read")

// Revision identifies one committed state of one key. It is opaque and comparable:
// two reads of a key return equal revisions exactly when (for the purpose of
// conditions) the key holds the same state. NoRevision, the zero value, is the revision
// of an absent key. Revisions are only meaningful within one open store.
type Revision struct{ hi, lo uint64 }

// NoRevision is the revision of an absent key.
var NoRevision Revision

// MakeRevision returns the revision of two words, for implementations of Store (a
// replicated log might use its sequence number). hi and lo must not both be zero for a
// present key.
func MakeRevision(hi, lo uint64) Revision { return Revision{hi: hi, lo: lo} }

// Exists reports whether r is the revision of a present key.
func (r Revision) Exists() bool { return r != NoRevision }

// String returns r in hexadecimal, for logs and test failures.
func (r Revision) String() string { return fmt.Sprintf("%016x%016x", r.hi, r.lo) }

// Item is a value read with its revision. For an absent key Value is nil and Rev is
// NoRevision.
type Item struct {
	Value []byte
	Rev   Revision
	// stamp is what the LevelDB implementation knew when it read the item (see
	// Batch.RequireItem); zero from other implementations.
	stamp readStamp
}

// Change is one committed put or delete of a key, as Subscribe reports it. Value is nil
// for a delete (Rev is then NoRevision). Key and Value are only valid during the call:
// copy them to keep them, unless Owned. Derived writes are not reported.
type Change struct {
	Key, Value []byte
	Rev        Revision
	// Owned reports that Key and Value are never modified again (their writer handed
	// its batch over, Batch.HandOver): a subscriber may keep them without copying, and
	// must not modify them either. False when in doubt (other implementations may
	// always leave it false).
	Owned bool
	// stamp makes the change's item (Item) as good as a Read's for RequireItem; zero
	// from other implementations.
	stamp readStamp
}

// Item returns the item a read finds right after the change: value, which is the
// caller's copy of c.Value (c.Value is only valid during the notification), with c's
// revision. A write committed on it with Batch.RequireItem is settled without reading
// the key again when nothing wrote the key since.
func (c Change) Item(value []byte) Item { return Item{Value: value, Rev: c.Rev, stamp: c.stamp} }

// DeriveFunc computes the derived writes of one committed put or delete of key: the
// entries that follow from the record, such as secondary-index postings and reap-queue
// entries. old is the value committed before (nil when the key was absent) and new the
// value being committed (nil for a delete); a present empty value is a non-nil empty
// slice. It adds the writes to out; they are applied in the same atomic batch, after the
// batch's own operations (a batch should not itself write keys that its writes derive). Because every implementation calls the one registered
// function with the committed values, a replica applying a record it did not write
// recomputes the same derived writes. fn must be deterministic, must not keep old, new
// or key, and runs in the commit path (keep it quick). An error fails the commit of the
// batch (not a conflict). Derived writes are not derived from in turn.
type DeriveFunc func(key, old, new []byte, out *Derived) error

// Derived collects the derived writes of one put or delete (see DeriveFunc).
type Derived struct {
	ops []derivedOp
}

// derivedOp is one derived write; del makes it a delete.
type derivedOp struct {
	key, value []byte
	del        bool
}

// Put records storing value under key, as part of the commit. The slices are kept
// until the commit is done, not copied: do not modify them.
func (d *Derived) Put(key, value []byte) { d.ops = append(d.ops, derivedOp{key: key, value: value}) }

// Delete records removing key, as part of the commit. The slice is kept until the
// commit is done, not copied: do not modify it.
func (d *Derived) Delete(key []byte) { d.ops = append(d.ops, derivedOp{key: key, del: true}) }

// Put stores value under key through st, unconditionally; sync as for Store.Commit.
func Put(ctx context.Context, st Store, key, value []byte, sync bool) error {
	var b Batch
	b.Put(key, value)
	return st.Commit(ctx, &b, sync)
}

// Delete removes key through st, unconditionally; sync as for Store.Commit.
func Delete(ctx context.Context, st Store, key []byte, sync bool) error {
	var b Batch
	b.Delete(key)
	return st.Commit(ctx, &b, sync)
}

// StoreDir is the directory, inside a data directory, of the local LevelDB.
const StoreDir = "leveldb"

// OpenStore opens the store of the data directory dataDir (its LevelDB in
// dataDir/leveldb, see StoreDir) with opts: the one constructor through which the
// server and the offline commands get their storage. With opts.ReadOnly nothing is
// created or changed. Errors are Open's.
func OpenStore(dataDir string, opts Options) (Store, error) {
	db, err := Open(filepath.Join(dataDir, StoreDir), opts)
	if err != nil {
		return nil, err
	}
	return db, nil
}

var _ Store = (*DB)(nil)
