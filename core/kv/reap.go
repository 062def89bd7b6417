package kv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// Tombstones are reaped through a persistent queue: every commit that leaves an object
// fully deleted also writes, in the same batch, a reap entry keyed by its deadline
// (tag 'x': 8-byte big-endian unix nanoseconds, type, bucket, key); the store derives
// it from the record (derive.go). The reaper scans the entries whose deadline has
// passed, so a restart loses no pending reap and a store with no tombstones costs one
// seek per tick.

func reapKey(deadline time.Time, typ, bucket, key string) []byte {
	return storage.ReapKey(deadline.UnixNano(), []byte(typ), []byte(bucket), []byte(key))
}

func (s *Service) reapLoop() {
	defer close(s.done)
	tick := s.cfg.ReapDelay / 4
	if tick > 500*time.Millisecond {
		tick = 500 * time.Millisecond
	}
	if tick < 10*time.Millisecond {
		tick = 10 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.ReapDue(); err != nil {
			s.log.Error("kv: reap tombstones", "err", err)
		}
		if _, err := s.ReapExpired(context.Background()); err != nil {
			s.log.Error("kv: reap expired objects", "err", err)
		}
	}
}

// maxReapScan bounds the due entries one pass reads, those other nodes reap included.
var maxReapScan = 100_000

// owns reports whether this node does the background work on the object key k: always
// standalone; in a cluster when it leads the key's stream (storage.Owner).
func (s *Service) owns(k []byte) bool {
	return s.owner == nil || s.owner.Owns(k)
}

// ReapDue removes every tombstone whose visibility window has passed (in a cluster,
// those of the keys this node owns: see storage.Owner). The background
// reaper calls it periodically; tests may call it directly.
func (s *Service) ReapDue() error {
	now := s.now()
	hi := storage.PrefixEnd(storage.ReapPrefix(now.UnixNano()))
	s.reapMu.Lock()
	from := s.reapFrom
	s.reapMu.Unlock()
	if from == nil {
		from = storage.Key(storage.TagReap)
	}
	it := s.db.Iterate(from, hi)
	type due struct {
		entry            []byte
		typ, bucket, key string
	}
	var list []due
	var last []byte // the last entry scanned, when the scan stopped before the end
	scanned := 0
	for ; scanned < maxReapScan && len(list) < 10_000 && it.Next(); scanned++ {
		last = append(last[:0], it.Key()...)
		_, typ, bucket, key, err := storage.DecodeReapKey(it.Key())
		if err != nil {
			// A malformed entry cannot name an object: drop it.
			list = append(list, due{entry: append([]byte(nil), it.Key()...)})
			continue
		}
		if !s.owns(objectKey(string(typ), string(bucket), string(key))) {
			continue // another node reaps it; its delete removes this entry when applied
		}
		list = append(list, due{entry: append([]byte(nil), it.Key()...), typ: string(typ), bucket: string(bucket), key: string(key)})
	}
	ended := scanned < maxReapScan && len(list) < 10_000 // the loop ran out of entries
	err := it.Err()
	it.Release()
	if err != nil {
		return err
	}
	// A scan that stopped early resumes after its last entry, so that entries other
	// nodes own (a cluster) cannot hold this node's own back; one that reached the end
	// starts again from the first.
	s.reapMu.Lock()
	if ended {
		s.reapFrom = nil
	} else {
		s.reapFrom = append(last, 0)
	}
	s.reapMu.Unlock()
	for _, e := range list {
		select {
		case <-s.stop: // shutting down: the entries stay queued for the next start
			return nil
		default:
		}
		if err := s.reapOne(context.Background(), e.entry, e.typ, e.bucket, e.key, now); err != nil {
			return err
		}
	}
	return nil
}

// reapOne removes the reap entry and, if it names a tombstone whose window has passed,
// the tombstone, on the revision read: an object written again since (by anyone) is
// live or has its own, later, entry. A conflict leaves the entry for the next pass.
func (s *Service) reapOne(ctx context.Context, entry []byte, typ, bucket, key string, now time.Time) error {
	var b storage.Batch
	b.Delete(entry)
	if key != "" || bucket != "" {
		mu := s.lock(typ, bucket, key) // spares this service's writers a conflict
		mu.Lock()
		defer mu.Unlock()
		k := objectKey(typ, bucket, key)
		r, read, err := s.readForWrite(ctx, k, true)
		if err != nil {
			return fmt.Errorf("kv: reap %s/%s: %w", bucket, key, err)
		}
		if r != nil && s.expired(r, now) {
			b.RequireItem(k, read)
			b.Delete(k)
		}
	}
	err := s.db.Commit(ctx, &b, false)
	if errors.Is(err, storage.ErrConflict) {
		return nil
	}
	return err
}
