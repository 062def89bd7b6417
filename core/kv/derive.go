package kv

import (
	"fmt"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
)

// An object record's derived writes — its secondary-index postings and its reap-queue
// entry — are not written by the service: deriveObjects computes them from the record
// committed before and the one being committed, and the store applies them in the
// commit's atomic batch (storage.Store.RegisterDerive). A replica applying a record it
// did not write computes the same entries, and the invariant "objects ⇔ postings ⇔ reap
// entries" (CheckInvariants) is a property of the store, not of the writers.

// objectDeriver computes the derived writes of TagObject keys.
type objectDeriver struct {
	reapDelay time.Duration
}

// derive is the storage.DeriveFunc of TagObject keys:
//   - postings: the index entries of the new record's live siblings that the old one
//     lacked are added, those it no longer has are removed;
//   - reap queue: a fully deleted new record queues its key at its last-modified time
//     plus the reap delay; the entry of a fully deleted old record that is replaced or
//     removed is dropped (the reaper tolerates entries left by older builds).
//
// The key is decoded only for a record that has derived writes (most have none: no
// index entries, not deleted), so a plain PUT pays no key decoding.
func (d objectDeriver) derive(key, old, new []byte, out *storage.Derived) error {
	prev, err := decodeOptional(old)
	if err != nil {
		return fmt.Errorf("kv: derive %s: stored record: %w", objectName(key), err)
	}
	next, err := decodeOptional(new)
	if err != nil {
		return fmt.Errorf("kv: derive %s: new record: %w", objectName(key), err)
	}
	add, remove := index.Diff(liveEntries(prev), liveEntries(next))
	if len(add) == 0 && len(remove) == 0 && !deleted(prev) && !deleted(next) {
		return nil
	}
	_, comps, err := storage.DecodeKey(key)
	if err != nil || len(comps) != 3 {
		return fmt.Errorf("kv: derive: object key %q: %w", key, storage.ErrMalformedKey)
	}
	typ, bucket, k := string(comps[0]), string(comps[1]), string(comps[2])
	for _, e := range remove {
		pk, err := index.PostingKey(typ, bucket, k, e)
		if err != nil {
			return fmt.Errorf("kv: derive %s/%s: %w", bucket, k, err)
		}
		out.Delete(pk)
	}
	for _, e := range add {
		pk, err := index.PostingKey(typ, bucket, k, e)
		if err != nil {
			return fmt.Errorf("kv: derive %s/%s: %w", bucket, k, err)
		}
		out.Put(pk, nil)
	}
	prevReap, nextReap := d.reapEntry(prev, typ, bucket, k), d.reapEntry(next, typ, bucket, k)
	if prevReap != nil && string(prevReap) != string(nextReap) {
		out.Delete(prevReap)
	}
	if nextReap != nil {
		out.Put(nextReap, nil)
	}
	return nil
}

// objectName is "bucket/key" of an object key, for errors (the key quoted when it does
// not decode).
func objectName(key []byte) string {
	_, comps, err := storage.DecodeKey(key)
	if err != nil || len(comps) != 3 {
		return fmt.Sprintf("%q", key)
	}
	return string(comps[1]) + "/" + string(comps[2])
}

// decodeOptional decodes a record; nil for none.
func decodeOptional(v []byte) (*record, error) {
	if v == nil {
		return nil, nil
	}
	return decodeRecord(v)
}

// liveEntries returns the sorted index entries of r's live siblings (none for nil).
func liveEntries(r *record) []core.IndexEntry {
	if r == nil {
		return nil
	}
	var out []core.IndexEntry
	for i := range r.siblings {
		if !r.siblings[i].Deleted {
			out = append(out, r.siblings[i].Indexes...)
		}
	}
	return index.Normalize(out)
}

// deleted reports whether r is a fully deleted record (which has a reap entry).
func deleted(r *record) bool { return r != nil && r.allDeleted() }

// reapEntry returns the reap-queue key of a fully deleted record, nil otherwise.
func (d objectDeriver) reapEntry(r *record, typ, bucket, key string) []byte {
	if !deleted(r) {
		return nil
	}
	return reapKey(r.lastModified().Add(d.reapDelay), typ, bucket, key)
}
