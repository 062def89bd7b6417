package storage

import (
	"context"
	"errors"
	"fmt"
)

// This file exports what a replicated implementation of Store (core/cluster) needs
// from a Batch and from revisions: it publishes a batch's operations to a log and
// checks its conditions against its local replica, a *DB.

// RevisionOf returns the revision a *DB reports for a present value v (nil counts as
// empty): a replicated store in front of a local *DB checks conditions with it, so
// that the revisions services see stay the local DB's.
func RevisionOf(v []byte) Revision {
	if v == nil {
		v = []byte{}
	}
	return revisionOf(v)
}

// Condition is one condition of a batch (Batch.Require, Batch.RequireItem): the
// batch applies only if Key's revision is still Rev.
type Condition struct {
	Key []byte
	Rev Revision
}

// Conditions returns the batch's conditions in the order they were added. The keys
// belong to the batch: do not modify them.
func (b *Batch) Conditions() []Condition {
	out := make([]Condition, len(b.conds))
	for i, c := range b.conds {
		out[i] = Condition{Key: c.key, Rev: c.rev}
	}
	return out
}

// Op is one operation of a batch: a put of Value under Key, or a delete (Delete).
type Op struct {
	Key, Value []byte
	Delete     bool
}

// Ops returns the batch's operations in order. The slices are copies.
func (b *Batch) Ops() []Op {
	var r opRecorder
	_ = b.b.Replay(&r) // a batch built by Put and Delete always replays
	return r.ops
}

// opRecorder collects a replayed batch's operations.
type opRecorder struct{ ops []Op }

func (r *opRecorder) Put(key, value []byte) {
	if value == nil {
		value = []byte{}
	}
	r.ops = append(r.ops, Op{Key: append([]byte(nil), key...), Value: append([]byte{}, value...)})
}

func (r *opRecorder) Delete(key []byte) {
	r.ops = append(r.ops, Op{Key: append([]byte(nil), key...), Delete: true})
}

// CheckDerive runs the registered derive functions (RegisterDerive) on ops as a
// commit of them would, against the current values and the earlier ops, and returns
// the first error, writing nothing. A replicated store calls it before it publishes a
// batch, so that a record whose derived writes fail never enters the log (where every
// replica's applier would meet the same failure).
func (db *DB) CheckDerive(ops []Op) error {
	if !db.derive.any() {
		return nil
	}
	seen := map[string][]byte{} // the values the earlier ops leave (nil: deleted)
	var out Derived
	for _, op := range ops {
		if len(op.Key) == 0 {
			continue
		}
		fn := db.derive.get(op.Key[0])
		var value []byte
		if !op.Delete {
			value = op.Value
			if value == nil {
				value = []byte{}
			}
		}
		if fn != nil {
			old, ok := seen[string(op.Key)]
			if !ok {
				v, err := db.Get(op.Key)
				switch {
				case errors.Is(err, ErrNotFound):
				case err != nil:
					return fmt.Errorf("storage: check derived writes of %q: %w", op.Key, err)
				default:
					old = v
				}
			}
			out.ops = out.ops[:0]
			if err := fn(op.Key, old, value, &out); err != nil {
				return fmt.Errorf("storage: commit: derived writes of %q: %w", op.Key, err)
			}
		}
		seen[string(op.Key)] = value
	}
	return nil
}

// Freshener is implemented by replicated stores whose reads are served by a local
// replica that may lag: Sync waits until the replica has applied every write of key
// acknowledged before Sync began (anywhere in the cluster), bounded by ctx. Services
// call it before a read that asks for more than the local replica (kv: r > 1 or
// pr > 0). *DB does not implement it: it has nothing to wait for.
type Freshener interface {
	Sync(ctx context.Context, key []byte) error
}

// Owner is implemented by replicated stores whose background work on a key (reaping
// a tombstone, expiring an object) should be done by one node at a time: Owns reports
// whether this node is the one for key now (in a cluster, the node leading the key's
// stream). The work's commits stay conditional, so an owner that changes meanwhile
// costs a conflict, never a wrong result; work a node does not own waits for the
// owner. *DB does not implement it: it owns every key.
type Owner interface {
	Owns(key []byte) bool
}
