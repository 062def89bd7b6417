package s3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// The lifecycle indexes: the store derives them (storage.Store.RegisterDerive) from the
// records they index, so a cluster replica applying a record recomputes them and they
// always agree with the records, whoever wrote those.
//
//	"lo" bucket, 8-byte last-modified (unix ns), key      → ""  (one per current object)
//	"lu" bucket, 8-byte initiated (unix ns), key, upload → ""  (one per upload in progress)
//
// They are ordered by time within a bucket, so the lifecycle worker scans only the
// entries old enough for some rule of the bucket to be due (lifecycleworker.go).

// Prefixes of the tables the lifecycle indexes are derived from.
var (
	objectTable = storage.KeyString(storage.TagS3, "o")
	uploadTable = storage.KeyString(storage.TagS3, "mu")
)

// lifecycleIndexVersion names the build of the lifecycle indexes: the "lv" record holds
// it ("lv" "index" → version) once every record written before the indexes existed
// has its entry (backfill).
const lifecycleIndexVersion = "1"

func lifecycleVersionKey() []byte { return storage.KeyString(storage.TagS3, "lv", "index") }

// objectEntryKey is the "lo" entry of an object last modified at t.
func objectEntryKey(bucket string, t time.Time, key string) []byte {
	return storage.Key(storage.TagS3, []byte("lo"), []byte(bucket), storage.Uint64Component(unixNano(t)), []byte(key))
}

// uploadEntryKey is the "lu" entry of an upload initiated at t.
func uploadEntryKey(bucket string, t time.Time, key, id string) []byte {
	return storage.Key(storage.TagS3, []byte("lu"), []byte(bucket), storage.Uint64Component(unixNano(t)), []byte(key), []byte(id))
}

// unixNano is t in unix nanoseconds, 0 for times before 1970 (none is written).
func unixNano(t time.Time) uint64 { return uint64(max(t.UnixNano(), 0)) }

// recordTimes are the times the lifecycle indexes are ordered by, read from a
// manifest or an upload record (only these fields are decoded).
type recordTimes struct {
	LastModified time.Time `json:"last_modified"`
	Initiated    time.Time `json:"initiated"`
}

// The members holding the times indexTime reads, as encoding/json writes them.
var (
	lastModifiedMember = []byte(`,"last_modified":"`)
	initiatedMember    = []byte(`,"initiated":"`)
)

// indexTime returns the time a manifest ("o") or upload ("mu") record is indexed at.
// It runs in the commit path of every manifest write, so it finds the member in the
// encoded record rather than decoding it all (a tenth of the time): in JSON that
// encoding/json wrote, a quote after a comma is never inside a string (a string's
// quotes are escaped), and no nested object of these records has a member of that
// name. A record where the member is not so found is decoded.
func indexTime(upload bool, v []byte) (time.Time, error) {
	member := lastModifiedMember
	if upload {
		member = initiatedMember
	}
	if t, ok := memberTime(v, member); ok {
		return t, nil
	}
	var t recordTimes
	if err := json.Unmarshal(v, &t); err != nil {
		return time.Time{}, err
	}
	if upload {
		return t.Initiated, nil
	}
	return t.LastModified, nil
}

// memberTime returns the time that member (`,"name":"`) holds in the encoded record
// v, found as indexTime explains; ok is false when it is not so found.
func memberTime(v, member []byte) (time.Time, bool) {
	i := bytes.Index(v, member)
	if i < 0 {
		return time.Time{}, false
	}
	rest := v[i+len(member):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return t, err == nil
}

// deriveS3 is the storage.DeriveFunc of the S3 table: a manifest ("o") has its "lo"
// entry and an upload ("mu") its "lu" entry (a noncurrent version its "ln" entry and
// a head its "lm" entry: versionsEntry), moved when the record's time changes and
// removed with the record. Other S3 records derive nothing. A stored record that does
// not decode derives nothing to remove (so that it can still be replaced or deleted);
// a new one that does not decode fails the commit.
func deriveS3(key, old, new []byte, out *storage.Derived) error {
	if !bytes.HasPrefix(key, uploadTable) && !bytes.HasPrefix(key, objectTable) && !isVersionsRecord(key) {
		return nil
	}
	prev, _ := lifecycleEntry(key, old)
	next, err := lifecycleEntry(key, new)
	if err != nil {
		return err
	}
	if bytes.Equal(prev, next) {
		return nil // the common rewrite (tags, ACL, a part): the time is the same
	}
	if prev != nil {
		out.Delete(prev)
	}
	if next != nil {
		out.Put(next, nil)
	}
	return nil
}

// lifecycleEntry returns the lifecycle index entry of the S3 record key holding v:
// the "lo" entry of a manifest, the "lu" entry of an upload, the "ln" or "lm" entry
// of a versions record (versionsEntry), nil for other records or a nil v.
func lifecycleEntry(key, v []byte) ([]byte, error) {
	if isVersionsRecord(key) {
		return versionsEntry(key, v) // "ln" and "lm" (lifecyclenoncurrent.go)
	}
	upload := bytes.HasPrefix(key, uploadTable)
	if v == nil || !upload && !bytes.HasPrefix(key, objectTable) {
		return nil, nil
	}
	_, comps, err := storage.DecodeKey(key)
	if err != nil || upload && len(comps) != 4 || !upload && len(comps) != 3 {
		return nil, fmt.Errorf("s3: derive: key %q: %w", key, storage.ErrMalformedKey)
	}
	t, err := indexTime(upload, v)
	if err != nil {
		return nil, fmt.Errorf("s3: derive %q: %w", key, err)
	}
	if upload {
		return uploadEntryKey(string(comps[1]), t, string(comps[2]), string(comps[3])), nil
	}
	return objectEntryKey(string(comps[1]), t, string(comps[2])), nil
}

// backfillLifecycleIndex gives the manifests and uploads written before the lifecycle
// indexes existed their entries, once per store (the "lv" record says it is done),
// in batches, stopping early when ctx is done (the next start resumes). Each entry is
// written on condition that its record is still as read, so that a record rewritten or
// deleted meanwhile (whose commit derived its own entries) never gets a stale one.
func (s *Service) backfillLifecycleIndex(ctx context.Context) error {
	v, err := s.db.Get(lifecycleVersionKey())
	if err == nil && string(v) == lifecycleIndexVersion {
		return nil
	}
	for _, table := range [][]byte{objectTable, uploadTable} {
		if err := s.backfillTable(ctx, table); err != nil {
			return err
		}
	}
	return wrapf(storage.Put(ctx, s.db, lifecycleVersionKey(), []byte(lifecycleIndexVersion), true), "lifecycle index version")
}

// backfillTable writes the lifecycle entries of every record of table, gcBatch records
// at a time.
func (s *Service) backfillTable(ctx context.Context, table []byte) error {
	from := table
	for {
		keys, err := s.readEntries(from, storage.PrefixEnd(table), gcBatch)
		if err != nil || len(keys) == 0 {
			return err
		}
		err = storage.RetryConflicts(ctx, maxCommitAttempts, func() error {
			return s.backfillBatch(ctx, keys)
		})
		if err != nil {
			return wrapf(err, "backfill lifecycle index")
		}
		from = append(keys[len(keys)-1], 0)
	}
}

// backfillBatch commits the entries of the records keys, each on condition that its
// record is unchanged since read.
func (s *Service) backfillBatch(ctx context.Context, keys [][]byte) error {
	b := new(storage.Batch)
	for _, k := range keys {
		it, err := s.db.Read(ctx, k)
		if err != nil {
			return err
		}
		if e, err := lifecycleEntry(k, it.Value); err == nil && e != nil {
			b.RequireItem(k, it)
			b.Put(e, nil)
		}
	}
	return s.db.Commit(ctx, b, false)
}

// checkLifecycleIndex adds to bad every disagreement between the lifecycle indexes and
// the records they index (tables as Check reads them): a record without its entry, an
// entry without its record (or at another time). Before the backfill is done (no
// "lv" record) missing entries are expected and not reported.
func checkLifecycleIndex(tables map[string]map[string][]byte, bad func(string, ...any)) {
	lvDone := string(tables["lv"][joinKey("index")]) == lifecycleIndexVersion
	for _, spec := range []struct {
		record, index string
		upload        bool
	}{{"o", "lo", false}, {"mu", "lu", true}} {
		want := map[string]bool{}
		for k, v := range tables[spec.record] {
			parts := splitKey(k)
			t, err := indexTime(spec.upload, v)
			if err != nil {
				continue // Check reports records that do not decode
			}
			want[joinKey(append([]string{parts[0], entryStamp(t)}, parts[1:]...)...)] = true
		}
		compareIndex(spec.index, want, tables[spec.index], lvDone, bad)
	}
}

// compareIndex adds to bad every entry of the index table have (as Check reads it)
// that is not in want, the entries its records derive, and, when missing is set,
// every entry of want that have lacks.
func compareIndex(index string, want map[string]bool, have map[string][]byte, missing bool, bad func(string, ...any)) {
	for k := range have {
		if !want[k] {
			bad("s3: lifecycle index %q has an entry %q without its record", index, k)
		}
	}
	if !missing {
		return
	}
	for k := range want {
		if _, ok := have[k]; !ok {
			bad("s3: lifecycle index %q lacks the entry %q", index, k)
		}
	}
}

// entryTime decodes the 8-byte time component of a lifecycle index entry.
func entryTime(c []byte) (time.Time, bool) {
	if len(c) != 8 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(c))).UTC(), true
}
