package kv

import (
	"fmt"

	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
)

// CheckInvariants scans the whole store and reports the first inconsistency between
// object records and their derived entries:
//   - every record decodes;
//   - every index entry of every record has its posting, and every posting belongs to a
//     record that has that entry;
//   - every fully deleted record has a pending reap entry.
//
// It reads the store on one snapshot and is meant for tests and `cairn check`.
func (s *Service) CheckInvariants() error {
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return err
	}
	defer snap.Release()
	want := map[string]bool{}
	tombs := map[string]bool{}
	it := snap.IteratePrefix([]byte{storage.TagObject})
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 3 {
			it.Release()
			return fmt.Errorf("kv: check: bad object key %q", it.Key())
		}
		typ, bucket, key := string(comps[0]), string(comps[1]), string(comps[2])
		r, err := decodeRecord(append([]byte(nil), it.Value()...))
		if err == nil {
			_, err = r.clockValue()
		}
		if err != nil {
			it.Release()
			return fmt.Errorf("kv: check: %s/%s/%s: %w", typ, bucket, key, err)
		}
		if len(r.siblings) == 0 {
			it.Release()
			return fmt.Errorf("kv: check: %s/%s/%s has no values", typ, bucket, key)
		}
		if r.allDeleted() {
			tombs[string(objectKey(typ, bucket, key))] = true
		}
		for _, e := range index.Entries(r.object(typ, bucket, key)) {
			pk, err := index.PostingKey(typ, bucket, key, e)
			if err != nil {
				it.Release()
				return fmt.Errorf("kv: check: %s/%s/%s: %w", typ, bucket, key, err)
			}
			want[string(pk)] = true
		}
	}
	err = it.Err()
	it.Release()
	if err != nil {
		return err
	}
	it = snap.IteratePrefix([]byte{storage.TagIndex})
	for it.Next() {
		if !want[string(it.Key())] {
			p, _ := index.DecodePosting(it.Key())
			it.Release()
			return fmt.Errorf("kv: check: orphan posting %+v", p)
		}
		delete(want, string(it.Key()))
	}
	err = it.Err()
	it.Release()
	if err != nil {
		return err
	}
	for k := range want {
		p, _ := index.DecodePosting([]byte(k))
		return fmt.Errorf("kv: check: missing posting %+v", p)
	}
	it = snap.IteratePrefix([]byte{storage.TagReap})
	for it.Next() {
		if _, typ, bucket, key, err := storage.DecodeReapKey(it.Key()); err == nil {
			delete(tombs, string(objectKey(string(typ), string(bucket), string(key))))
		}
	}
	err = it.Err()
	it.Release()
	if err != nil {
		return err
	}
	for k := range tombs {
		return fmt.Errorf("kv: check: tombstone %q has no reap entry", k)
	}
	return nil
}
