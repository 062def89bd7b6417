package kv

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
)

// MaxCheckProblems is how many problems a CheckReport lists; it counts them all.
const MaxCheckProblems = 1000

// CheckReport is what CheckStore found.
type CheckReport struct {
	// Objects, Postings and Props count the object records, index postings and stored
	// property records (buckets' and types') scanned.
	Objects, Postings, Props int
	// Problems lists the first MaxCheckProblems problems, in scan order; Count is how
	// many were found in all.
	Problems []string
	Count    int
}

func (r *CheckReport) add(format string, args ...any) {
	r.Count++
	if len(r.Problems) < MaxCheckProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Err returns nil when the report found no problem, otherwise an error listing them.
func (r *CheckReport) Err() error {
	if r.Count == 0 {
		return nil
	}
	msg := strings.Join(r.Problems, "\n")
	if r.Count > len(r.Problems) {
		msg += fmt.Sprintf("\n(and %d more)", r.Count-len(r.Problems))
	}
	return fmt.Errorf("kv: check: %d problems:\n%s", r.Count, msg)
}

// CheckStore scans the whole store on one snapshot and reports every inconsistency it
// finds, not only the first:
//   - every object key and record decodes (clock included) and holds a value;
//   - every index entry of every record has its posting, and every posting belongs to a
//     record that has that entry;
//   - every posting holds its record's expiry (postingValue);
//   - every fully deleted record has a pending reap entry;
//   - every record with an expiry has its expiry-index entry, and every expiry-index
//     entry belongs to a record with that expiry;
//   - every stored bucket and bucket-type property record decodes, its integers are in
//     their ranges and its integer quorums are not above n_val.
//
// The error is for a store that cannot be read; problems go to the report. It is meant
// for tests and `cairn check`.
func (s *Service) CheckStore() (*CheckReport, error) {
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	rep := &CheckReport{}
	want, err := s.checkObjects(snap, rep)
	if err != nil {
		return nil, err
	}
	if err := checkPostings(snap, rep, want.postings); err != nil {
		return nil, err
	}
	if err := checkReaps(snap, rep, want.tombs); err != nil {
		return nil, err
	}
	if err := checkExpiries(snap, rep, want.expiries); err != nil {
		return nil, err
	}
	if err := s.checkStoredProps(snap, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// CheckInvariants runs CheckStore and returns its problems as one error (nil when there
// are none).
func (s *Service) CheckInvariants() error {
	rep, err := s.CheckStore()
	if err != nil {
		return err
	}
	return rep.Err()
}

// wanted is what the object records of a store call for in the derived tables.
type wanted struct {
	postings map[string]string // posting key → its value (postingValue)
	tombs    map[string]bool   // object keys of tombstones
	expiries map[string]bool   // expiry-index keys
}

// checkObjects checks every object record and returns what its records want in the
// derived tables.
func (s *Service) checkObjects(snap *storage.Snapshot, rep *CheckReport) (*wanted, error) {
	want := &wanted{postings: map[string]string{}, tombs: map[string]bool{}, expiries: map[string]bool{}}
	it := snap.IteratePrefix([]byte{storage.TagObject})
	defer it.Release()
	for it.Next() {
		rep.Objects++
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 3 {
			rep.add("bad object key %q", it.Key())
			continue
		}
		typ, bucket, key := string(comps[0]), string(comps[1]), string(comps[2])
		r, err := decodeRecord(append([]byte(nil), it.Value()...))
		if err == nil {
			_, err = r.clockValue()
		}
		if err != nil {
			rep.add("object %s/%s/%s: %v", typ, bucket, key, err)
			continue
		}
		if len(r.siblings) == 0 {
			rep.add("object %s/%s/%s has no values", typ, bucket, key)
			continue
		}
		if r.allDeleted() {
			want.tombs[string(objectKey(typ, bucket, key))] = true
		}
		if r.expiry > 0 {
			want.expiries[string(storage.ExpiryKey(r.expiry, comps[0], comps[1], comps[2]))] = true
		}
		for _, e := range index.Entries(r.object(typ, bucket, key)) {
			pk, err := index.PostingKey(typ, bucket, key, e)
			if err != nil {
				rep.add("object %s/%s/%s: %v", typ, bucket, key, err)
				continue
			}
			want.postings[string(pk)] = string(postingValue(r.expiry))
		}
	}
	return want, it.Err()
}

// checkPostings reports postings no record wants, and wanted postings that are missing.
func checkPostings(snap *storage.Snapshot, rep *CheckReport, want map[string]string) error {
	it := snap.IteratePrefix([]byte{storage.TagIndex})
	defer it.Release()
	for it.Next() {
		rep.Postings++
		value, ok := want[string(it.Key())]
		if !ok {
			p, _ := index.DecodePosting(it.Key())
			rep.add("orphan posting %+v", p)
			continue
		}
		if value != string(it.Value()) {
			p, _ := index.DecodePosting(it.Key())
			rep.add("posting %+v holds expiry %x, its object's is %x", p, it.Value(), value)
		}
		delete(want, string(it.Key()))
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range sortedKeys(want) {
		p, _ := index.DecodePosting([]byte(k))
		rep.add("missing posting %+v", p)
	}
	return nil
}

// checkReaps reports tombstones without a pending reap entry.
func checkReaps(snap *storage.Snapshot, rep *CheckReport, tombs map[string]bool) error {
	it := snap.IteratePrefix([]byte{storage.TagReap})
	defer it.Release()
	for it.Next() {
		if _, typ, bucket, key, err := storage.DecodeReapKey(it.Key()); err == nil {
			delete(tombs, string(objectKey(string(typ), string(bucket), string(key))))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range sortedKeys(tombs) {
		rep.add("tombstone %q has no reap entry", k)
	}
	return nil
}

// checkExpiries reports expiry-index entries that no record has, and records with an
// expiry whose entry is missing.
func checkExpiries(snap *storage.Snapshot, rep *CheckReport, want map[string]bool) error {
	it := snap.IteratePrefix([]byte{storage.TagExpiry})
	defer it.Release()
	for it.Next() {
		if want[string(it.Key())] {
			delete(want, string(it.Key()))
			continue
		}
		at, typ, bucket, key, err := storage.DecodeExpiryKey(it.Key())
		if err != nil {
			rep.add("bad expiry entry %q", it.Key())
			continue
		}
		rep.add("expiry entry %s/%s/%s at %d has no object with that expiry", typ, bucket, key, at)
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range sortedKeys(want) {
		at, typ, bucket, key, _ := storage.DecodeExpiryKey([]byte(k))
		rep.add("object %s/%s/%s expiring at %d has no expiry entry", typ, bucket, key, at)
	}
	return nil
}

// checkStoredProps reports property records that do not decode or hold values the
// validation refuses (propProblems), which only an older build could have stored.
func (s *Service) checkStoredProps(snap *storage.Snapshot, rep *CheckReport) error {
	for _, tag := range []byte{storage.TagType, storage.TagProps} {
		it := snap.IteratePrefix([]byte{tag})
		for it.Next() {
			rep.Props++
			where, effective, own, err := s.storedPropsRecord(tag, it.Key(), it.Value())
			if err != nil {
				rep.add("%s: %v", where, err)
				continue
			}
			for _, p := range s.propProblems(own, effective) {
				rep.add("%s: %s", where, p)
			}
		}
		err := it.Err()
		it.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// storedPropsRecord decodes one stored property record: where names it ("bucket type
// T" or "bucket T/B"), own are its settings and effective the properties they make with
// the defaults and, for a bucket, its type's settings.
func (s *Service) storedPropsRecord(tag byte, k, v []byte) (where string, effective, own map[string]json.RawMessage, err error) {
	_, comps, err := storage.DecodeKey(k)
	switch {
	case err != nil || len(comps) == 0 || (tag == storage.TagProps && len(comps) != 2):
		return fmt.Sprintf("property key %q", k), nil, nil, errors.New("malformed key")
	case tag == storage.TagType:
		where = "bucket type " + string(comps[0])
		effective = s.propsDefaults(string(comps[0]))
	default:
		where = "bucket " + string(comps[0]) + "/" + string(comps[1])
		if effective, err = s.typeRaw(string(comps[0])); err != nil {
			effective = s.propsDefaults(string(comps[0]))
		}
	}
	if err := json.Unmarshal(v, &own); err != nil {
		return where, nil, nil, fmt.Errorf("stored properties do not decode: %w", err)
	}
	for name, raw := range own {
		effective[name] = raw
	}
	return where, effective, own, nil
}
