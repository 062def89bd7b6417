package kv

import (
	"encoding/binary"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// Tombstones are reaped through a persistent queue: every write that leaves an object
// fully deleted also writes, in the same batch, a reap entry keyed by its deadline
// (tag 'x': 8-byte big-endian unix nanoseconds, type, bucket, key). The reaper scans the
// entries whose deadline has passed, so a restart loses no pending reap and a store with
// no tombstones costs one seek per tick.

func reapKey(deadline time.Time, typ, bucket, key string) []byte {
	var d [8]byte
	binary.BigEndian.PutUint64(d[:], uint64(deadline.UnixNano()))
	return storage.Key(storage.TagReap, d[:], []byte(typ), []byte(bucket), []byte(key))
}

func (s *Service) kickReaper() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
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
		case <-s.wake:
			continue // a new tombstone is not due yet; the ticker will find it
		}
		if err := s.ReapDue(); err != nil {
			s.log.Error("kv: reap tombstones", "err", err)
		}
	}
}

// ReapDue removes every tombstone whose visibility window has passed. The background
// reaper calls it periodically; tests may call it directly.
func (s *Service) ReapDue() error {
	now := s.now()
	var d [8]byte
	binary.BigEndian.PutUint64(d[:], uint64(now.UnixNano()))
	hi := storage.PrefixEnd(storage.Key(storage.TagReap, d[:]))
	it := s.db.Iterate(storage.Key(storage.TagReap), hi)
	type due struct {
		entry            []byte
		typ, bucket, key string
	}
	var list []due
	for it.Next() && len(list) < 10_000 {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 4 {
			list = append(list, due{entry: append([]byte(nil), it.Key()...)})
			continue
		}
		list = append(list, due{entry: append([]byte(nil), it.Key()...), typ: string(comps[1]), bucket: string(comps[2]), key: string(comps[3])})
	}
	err := it.Err()
	it.Release()
	if err != nil {
		return err
	}
	for _, e := range list {
		if err := s.reapOne(e.entry, e.typ, e.bucket, e.key, now); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) reapOne(entry []byte, typ, bucket, key string, now time.Time) error {
	b := s.db.NewBatch()
	b.Delete(entry)
	if key != "" || bucket != "" {
		mu := s.lock(typ, bucket, key)
		mu.Lock()
		defer mu.Unlock()
		k := objectKey(typ, bucket, key)
		r, err := s.readRecord(k)
		if err != nil {
			return err
		}
		// Reap only a tombstone whose window has passed: an object written again since
		// is live (or has its own, later, reap entry).
		if r != nil && s.expired(r, now) {
			b.Delete(k)
		}
	}
	return s.db.Write(b, false)
}
