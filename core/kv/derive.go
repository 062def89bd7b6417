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
//     removed is dropped (the reaper tolerates entries left by older builds);
//   - expiry index: a record with an expiry and a live sibling has an entry at its
//     expiry (expiry.go), and every posting of it holds the expiry as its value, so
//     that a query skips an expired object's postings without reading the object.
func (d objectDeriver) derive(key, old, new []byte, out *storage.Derived) error {
	var prevBuf, nextBuf [4]core.IndexEntry // most records have few entries
	prev, err := scanDerived(old, prevBuf[:0])
	if err != nil {
		return fmt.Errorf("kv: derive %q: stored record: %w", key, err)
	}
	next, err := scanDerived(new, nextBuf[:0])
	if err != nil {
		return fmt.Errorf("kv: derive %q: new record: %w", key, err)
	}
	add, remove := index.Diff(prev.entries, next.entries)
	reaps := prev.present && prev.allDeleted || next.present && next.allDeleted
	expiryChanged := prev.expiry != next.expiry
	if len(add) == 0 && len(remove) == 0 && !reaps && !expiryChanged {
		return nil // the common rewrite: nothing derived changes
	}
	if expiryChanged {
		add = next.entries // every posting carries the new expiry (postingValue)
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
		out.Put(pk, postingValue(next.expiry))
	}
	prevReap, nextReap := d.reapEntry(prev, typ, bucket, k), d.reapEntry(next, typ, bucket, k)
	if prevReap != nil && string(prevReap) != string(nextReap) {
		out.Delete(prevReap)
	}
	if nextReap != nil {
		out.Put(nextReap, nil)
	}
	deriveExpiry(prev, next, typ, bucket, k, out)
	return nil
}

// derivedInfo is what the derived writes of an object record depend on.
type derivedInfo struct {
	present    bool
	entries    []core.IndexEntry // of the live siblings, normalised (index.Normalize)
	allDeleted bool              // every sibling is a tombstone (an empty record counts)
	lastMod    time.Time         // the newest sibling's last-modified time
	expiry     int64             // the record's expiry (unix nanoseconds, 0 = none)
}

// scanDerived reads a record's derivedInfo (the zero value for nil) without decoding
// the rest of it: derive runs in the store's commit path. It refuses what
// decodeRecord refuses. The entries are appended to buf and share data's memory.
func scanDerived(data []byte, buf []core.IndexEntry) (derivedInfo, error) {
	if data == nil {
		return derivedInfo{}, nil
	}
	d := decoder{b: data}
	expiry, err := d.header()
	if err != nil {
		return derivedInfo{}, err
	}
	d.bytes() // clock
	info := derivedInfo{present: true, allDeleted: true, entries: buf, expiry: expiry}
	n := d.count()
	for i := 0; i < n && d.err == nil; i++ {
		d.bytes()   // dot actor
		d.uvarint() // dot counter
		deleted := d.byte()&1 != 0
		for range 4 { // content type, charset, encoding, vtag
			d.bytes()
		}
		if lm := time.Unix(0, d.varint()); lm.After(info.lastMod) {
			info.lastMod = lm
		}
		d.skip(2) // user metadata: name, value
		d.skip(3) // links: bucket, key, tag
		for m := d.count(); m > 0 && d.err == nil; m-- {
			e := core.IndexEntry{Field: d.string(), Value: d.string()}
			if !deleted {
				info.entries = append(info.entries, e)
			}
		}
		d.bytes() // value
		info.allDeleted = info.allDeleted && deleted
	}
	switch {
	case d.err != nil:
		return derivedInfo{}, fmt.Errorf("%w: %w", errCorrupt, d.err)
	case len(d.b) != 0:
		return derivedInfo{}, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	info.entries = index.Normalize(info.entries)
	return info, nil
}

// reapEntry returns the reap-queue key of a fully deleted record, nil otherwise.
func (d objectDeriver) reapEntry(r derivedInfo, typ, bucket, key string) []byte {
	if !r.present || !r.allDeleted {
		return nil
	}
	return reapKey(r.lastMod.Add(d.reapDelay), typ, bucket, key)
}
