package kv

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// View is a consistent, read-only view of the store for listings and queries: every
// method reads the one storage snapshot taken when the view was opened, so a listing
// produced twice (to learn its length, then to send it) is the same both times, and a
// listing never holds its whole result in memory. A View must be closed.
type View struct {
	s    *Service
	snap *storage.Snapshot
	// now is the view's clock: a tombstone is listed while its visibility window (the
	// reap delay) is open at now.
	now time.Time
}

// View opens a view on the current state of the store.
func (s *Service) View(ctx context.Context) (*View, error) {
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("kv: view: %w", err)
	}
	return &View{s: s, snap: snap, now: s.now()}, nil
}

// Close releases the view's snapshot.
func (v *View) Close() { v.snap.Release() }

// Snapshot returns the view's storage snapshot, for queries built in other packages
// (secondary indexes). It is valid until Close.
func (v *View) Snapshot() *storage.Snapshot { return v.snap }

// CheckType returns a not-found error when typ is not a bucket type (the default type
// always exists).
func (v *View) CheckType(ctx context.Context, typ string) error {
	_, err := v.s.typeRaw(typ)
	return err
}

// checkEvery is how many entries a scan reads between checks of its context.
const checkEvery = 1024

// Keys calls fn with every key of typ/bucket, in key order, including deleted keys whose
// tombstone is still visible (as the reference lists them). It stops at fn's first error
// and returns it, and returns ctx's error when ctx ends. An unknown type is a not-found
// error.
func (v *View) Keys(ctx context.Context, typ, bucket string, fn func(key string) error) error {
	if err := v.CheckType(ctx, typ); err != nil {
		return err
	}
	prefix := storage.KeyString(storage.TagObject, typ, bucket)
	it := v.snap.Scan(prefix)
	defer it.Release()
	n := 0
	for it.Next() {
		if n++; n%checkEvery == 0 {
			if err := core.Expired(ctx); err != nil {
				return err
			}
		}
		key, ok := lastComponent(it.Key()[len(prefix):])
		if !ok {
			return fmt.Errorf("kv: list keys %s/%s: malformed key %q: %w", typ, bucket, it.Key(), errCorrupt)
		}
		visible, err := v.visible(it.Value())
		if err != nil {
			return fmt.Errorf("kv: list keys %s/%s/%s: %w", typ, bucket, key, err)
		}
		if !visible {
			continue
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("kv: list keys %s/%s: %w", typ, bucket, err)
	}
	return nil
}

// Buckets calls fn with every bucket of typ that holds at least one listed key, in
// bucket order. It seeks from one bucket to the next: a bucket costs one seek plus the
// keys it takes to find a visible one, never a scan of its keys.
func (v *View) Buckets(ctx context.Context, typ string, fn func(bucket string) error) error {
	if err := v.CheckType(ctx, typ); err != nil {
		return err
	}
	typePrefix := storage.KeyString(storage.TagObject, typ)
	it := v.snap.Scan(typePrefix)
	defer it.Release()
	ok := it.Next()
	n := 0
	for ok {
		if n++; n%checkEvery == 0 {
			if err := core.Expired(ctx); err != nil {
				return err
			}
		}
		rest := it.Key()[len(typePrefix):]
		bucket, used, good := firstComponent(rest)
		if !good {
			return fmt.Errorf("kv: list buckets %s: malformed key %q: %w", typ, it.Key(), errCorrupt)
		}
		bucketPrefix := append([]byte(nil), it.Key()[:len(typePrefix)+used]...)
		found := false
		for ok && hasPrefix(it.Key(), bucketPrefix) {
			visible, err := v.visible(it.Value())
			if err != nil {
				return fmt.Errorf("kv: list buckets %s/%s: %w", typ, bucket, err)
			}
			if visible {
				found = true
				break
			}
			ok = it.Next()
		}
		if found {
			if err := fn(bucket); err != nil {
				return err
			}
		}
		ok = it.Seek(storage.PrefixEnd(bucketPrefix))
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("kv: list buckets %s: %w", typ, err)
	}
	return nil
}

// visible reports whether a stored record is listed: it has a live sibling, or it is a
// tombstone inside its visibility window. It walks the record without building it.
func (v *View) visible(data []byte) (bool, error) {
	allDeleted, lastMod, expiry, err := probeRecord(data)
	if err != nil {
		return false, err
	}
	if expiredAt(expiry, v.now) {
		return false, nil
	}
	return !allDeleted || v.now.Sub(lastMod) < v.s.cfg.ReapDelay, nil
}

// probeRecord reads the deleted flags, the latest last-modified time and the expiry of
// a stored record without allocating (see decodeRecord for the layout).
func probeRecord(data []byte) (allDeleted bool, lastMod time.Time, expiry int64, err error) {
	d := decoder{b: data}
	if expiry, err = d.header(); err != nil {
		return false, time.Time{}, 0, err
	}
	d.bytes() // clock
	n := d.count()
	allDeleted = true
	var latest int64
	for i := 0; i < n && d.err == nil; i++ {
		d.bytes()   // dot actor
		d.uvarint() // dot counter
		if d.byte()&1 == 0 {
			allDeleted = false
		}
		for j := 0; j < 4; j++ { // content type, charset, encoding, vtag
			d.bytes()
		}
		if lm := d.varint(); lm > latest {
			latest = lm
		}
		for _, per := range []int{2, 3, 2} { // meta, links, index entries
			m := d.count()
			for j := 0; j < m*per && d.err == nil; j++ {
				d.bytes()
			}
		}
		d.bytes() // value
	}
	if d.err != nil {
		return false, time.Time{}, 0, fmt.Errorf("%w: %w", errCorrupt, d.err)
	}
	return allDeleted, time.Unix(0, latest), expiry, nil
}

// firstComponent decodes the first key component of b (see storage.Key), returning it
// and the number of bytes it took, terminator included.
func firstComponent(b []byte) (c string, used int, ok bool) {
	var out []byte // built only when the component holds an escaped zero byte
	from := 0
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0x00 {
			continue
		}
		switch b[i+1] {
		case 0xFF:
			out = append(out, b[from:i]...)
			out = append(out, 0x00)
			i++
			from = i + 1
		case 0x01:
			if out == nil {
				return string(b[:i]), i + 2, true
			}
			return string(append(out, b[from:i]...)), i + 2, true
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// lastComponent decodes b as exactly one key component.
func lastComponent(b []byte) (string, bool) {
	c, used, ok := firstComponent(b)
	if !ok || used != len(b) {
		return "", false
	}
	return c, true
}

func hasPrefix(b, prefix []byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}
