package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// The lifecycle actions on versions (docs/s3.md, "Lifecycle"; the design is in
// docs/rationale.md, "S3 lifecycle of versions: noncurrent_since and lone markers"):
// NoncurrentVersionExpiration, and the removal of expired object delete markers
// (ExpiredObjectDeleteMarker, and an Expiration by Days or Date, as AWS does). Two
// more indexes, derived by the store like "lo" and "lu" (lifecycleindex.go):
//
//	"ln" bucket, 8-byte noncurrent since (unix ns), key, slot → ""  (one per noncurrent version)
//	"lm" bucket, 8-byte marker made (unix ns), key            → ""  (one per lone delete marker)
//
// The "ln" entry is derived from a version record's noncurrent_since, which
// keyVersions.add writes into the version it supersedes (in the same commit), and
// removeVersion clears from a version that becomes current again. The "lm" entry is
// derived from the key's head, whose Lone says the key's only version is a delete
// marker (set and cleared by every change of the key's versions).

// Prefixes of the versions tables the indexes are derived from.
var (
	versionTable = storage.KeyString(storage.TagS3, "v")
	headTable    = storage.KeyString(storage.TagS3, "vh")
)

// versionsIndexVersion names the build of the "ln" and "lm" indexes: the "lv"
// "versions" record holds it once the versions written before them are backfilled.
const versionsIndexVersion = "1"

func versionsIndexKey() []byte { return storage.KeyString(storage.TagS3, "lv", "versions") }

// loneMarker is versionHead.Lone: the key's only version is the delete marker ID
// (client form: "null" for the null version), made at At.
type loneMarker struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// noncurrentEntryKey is the "ln" entry of the version in slot, noncurrent since t.
func noncurrentEntryKey(bucket string, t time.Time, key string, slot []byte) []byte {
	return storage.Key(storage.TagS3, []byte("ln"), []byte(bucket), storage.Uint64Component(unixNano(t)), []byte(key), slot)
}

// loneEntryKey is the "lm" entry of a key whose only version is a marker made at t.
func loneEntryKey(bucket string, t time.Time, key string) []byte {
	return storage.Key(storage.TagS3, []byte("lm"), []byte(bucket), storage.Uint64Component(unixNano(t)), []byte(key))
}

// isVersionsRecord reports whether key is a version record or a version head.
func isVersionsRecord(key []byte) bool {
	return bytes.HasPrefix(key, versionTable) || bytes.HasPrefix(key, headTable)
}

// noncurrentMember is the member holding a version record's noncurrent_since, as
// encoding/json writes it (see indexTime for why finding it is sound).
var noncurrentMember = []byte(`,"noncurrent_since":"`)

// versionsEntry returns the index entry of the versions record key holding v (nil
// for none): the "ln" entry of a noncurrent version, the "lm" entry of a head with
// a lone marker. A version record without the member derives nothing without being
// decoded: the commit path of every versioned write runs this.
func versionsEntry(key, v []byte) ([]byte, error) {
	head := bytes.HasPrefix(key, headTable)
	if v == nil || !head && !bytes.Contains(v, noncurrentMember) || head && !bytes.Contains(v, []byte(`"lone":`)) {
		return nil, nil
	}
	_, comps, err := storage.DecodeKey(key)
	if err != nil || head && len(comps) != 3 || !head && (len(comps) != 4 || len(comps[3]) != len(versionSlot{})) {
		return nil, fmt.Errorf("s3: derive: key %q: %w", key, storage.ErrMalformedKey)
	}
	bucket, name := string(comps[1]), string(comps[2])
	if head {
		var h versionHead
		if err := json.Unmarshal(v, &h); err != nil {
			return nil, fmt.Errorf("s3: derive %q: %w", key, err)
		}
		if h.Lone == nil {
			return nil, nil
		}
		return loneEntryKey(bucket, h.Lone.At, name), nil
	}
	since, ok := memberTime(v, noncurrentMember)
	if !ok {
		var m struct {
			Since time.Time `json:"noncurrent_since"`
		}
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("s3: derive %q: %w", key, err)
		}
		since = m.Since
	}
	if since.IsZero() {
		return nil, nil
	}
	return noncurrentEntryKey(bucket, since, name, comps[3]), nil
}

// newestLeft returns the key's newest version that this update has not removed, and
// its slot (nil if none): the current record when it is that, else the first version
// record (read from the store: the head, a condition of the commit, guards them).
func (kv *keyVersions) newestLeft() (*Manifest, versionSlot, error) {
	if kv.cur != nil && !kv.curGone {
		slot, ok, err := kv.slotOf(kv.cur.VersionID)
		if err != nil {
			return nil, slot, err
		}
		if ok {
			return kv.cur, slot, nil
		}
	}
	if !kv.stored {
		return nil, versionSlot{}, nil // no version records (a pending null is cur)
	}
	it := kv.t.st.IteratePrefix(keyVersionsPrefix(kv.bucket, kv.key))
	defer it.Release()
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 4 || len(comps[3]) != len(versionSlot{}) {
			return nil, versionSlot{}, fmt.Errorf("s3: versions of %s/%s: key %q: %w", kv.bucket, kv.key, it.Key(), storage.ErrMalformedKey)
		}
		slot := versionSlot(comps[3])
		if slices.Contains(kv.removed, slot) {
			continue
		}
		m := new(Manifest)
		if err := json.Unmarshal(it.Value(), m); err != nil {
			return nil, slot, wrapf(err, "decode version %s/%s", kv.bucket, kv.key)
		}
		return m, slot, nil
	}
	return nil, versionSlot{}, wrapf(it.Err(), "read versions %s/%s", kv.bucket, kv.key)
}

// demoteNewest is add's step before m becomes the key's newest version: the newest
// version left becomes noncurrent since m's creation (its record rewritten with
// noncurrent_since, from which its "ln" entry derives), and the head's Lone says
// whether m, a delete marker, is then the key's only version.
func (kv *keyVersions) demoteNewest(m *Manifest) error {
	kv.head.Lone = nil
	prev, slot, err := kv.newestLeft()
	switch {
	case err != nil:
		return err
	case prev == nil:
		if m.DeleteMarker {
			kv.head.Lone = &loneMarker{ID: externalID(m.VersionID), At: m.LastModified}
		}
		return nil
	case !prev.NoncurrentSince.IsZero():
		return nil // already noncurrent (the current null version was just replaced)
	}
	demoted := *prev
	demoted.NoncurrentSince = m.LastModified
	if demoted.NoncurrentSince.IsZero() {
		demoted.NoncurrentSince = time.Now().UTC()
	}
	return kv.encodeVersion(slot, &demoted)
}

// promote is removeVersion's step once a version is gone: newest, the newest
// version left (nil if none), is current again (its noncurrent_since cleared), and
// the head's Lone says whether it is a delete marker with no other version (more).
func (kv *keyVersions) promote(newest *Manifest, more bool) error {
	kv.head.Lone = nil
	if newest == nil {
		return nil
	}
	if newest.DeleteMarker && !more {
		kv.head.Lone = &loneMarker{ID: externalID(newest.VersionID), At: newest.LastModified}
	}
	if newest.NoncurrentSince.IsZero() {
		return nil
	}
	newest.NoncurrentSince = time.Time{}
	slot, ok, err := kv.slotOf(newest.VersionID)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("s3: version head %s/%s: no null slot: %w", kv.bucket, kv.key, storage.ErrMalformedKey)
	}
	return kv.encodeVersion(slot, newest)
}

// encodeVersion writes m as the version in slot (writeVersion).
func (kv *keyVersions) encodeVersion(slot versionSlot, m *Manifest) error {
	v, err := json.Marshal(m)
	if err != nil {
		return wrapf(err, "encode manifest %s/%s", kv.bucket, kv.key)
	}
	kv.writeVersion(slot, m, v)
	return nil
}

// writeVersion writes m (encoded: v) as the version in slot: its record, or the
// pending null version when slot is that.
func (kv *keyVersions) writeVersion(slot versionSlot, m *Manifest, v []byte) {
	if kv.pendingNull != nil && kv.head.Null == slot.id() {
		kv.pendingNull = m
		return
	}
	kv.t.b.Put(versionKey(kv.bucket, kv.key, slot), v)
}

// applyVersionedLifecycle is the lifecycle worker's step for the actions that need
// versions (NoncurrentVersionExpiration, ExpiredObjectDeleteMarker, and an expiration
// in a versioned bucket, which makes a delete marker): in a bucket whose
// versioning was set, it removes the noncurrent versions and the lone delete markers
// that b's rules make due at now, visiting at most budget "ln" and "lm" entries; it
// returns how many it visited.
func (s *Service) applyVersionedLifecycle(ctx context.Context, b *Bucket, now time.Time, budget int) (int, error) {
	if b.Versioning == "" {
		return 0, nil // no versions records
	}
	n, err := s.expireNoncurrent(ctx, b, now, budget)
	m, err2 := s.expireLoneMarkers(ctx, b, now, budget-n)
	return n + m, errors.Join(err, err2)
}

// noncurrentDays is dueCutoff's days of a rule's NoncurrentVersionExpiration.
func noncurrentDays(r *LifecycleRule) int {
	if r.NoncurrentExpiration == nil {
		return 0
	}
	return r.NoncurrentExpiration.NoncurrentDays
}

// markerFilterMatches reports whether a rule's filter selects a delete marker of key:
// its prefix does, and it has no tag or size condition (a marker has neither).
func markerFilterMatches(r *LifecycleRule, key string) bool {
	return !objectOnlyFilter(&r.Filter) && filterMatches(&r.Filter, key, 0, nil)
}

// versionFilterMatches is filterMatches for a version (markerFilterMatches for a
// delete marker).
func versionFilterMatches(r *LifecycleRule, key string, m *Manifest) bool {
	if m.DeleteMarker {
		return markerFilterMatches(r, key)
	}
	return filterMatches(&r.Filter, key, m.Size, m.Tags)
}

// noncurrentDue reports whether an enabled rule of lc removes m, a version of key
// noncurrent since m.NoncurrentSince, at now: its filter selects m, NoncurrentDays
// lifecycle days have passed (rounded up to the next lifecycle midnight, as
// dueAfter), and, with NewerNoncurrentVersions N, at least N newer noncurrent
// versions exist (newer counts them, up to its argument).
func noncurrentDue(lc *Lifecycle, key string, m *Manifest, now time.Time, day time.Duration, newer func(limit int) (int, error)) (bool, error) {
	counted := -1
	for i := range lc.Rules {
		r := &lc.Rules[i]
		n := r.NoncurrentExpiration
		if !r.Enabled || n == nil || !versionFilterMatches(r, key, m) {
			continue
		}
		if at, ok := dueAfter(m.NoncurrentSince, n.NoncurrentDays, day); !ok || at.After(now) {
			continue
		}
		if n.NewerVersions > 0 && counted < 0 {
			c, err := newer(MaxNewerNoncurrentVersions)
			if err != nil {
				return false, err
			}
			counted = c
		}
		if n.NewerVersions == 0 || counted >= n.NewerVersions {
			return true, nil
		}
	}
	return false, nil
}

// newerNoncurrent counts the noncurrent versions of kv's key newer than the one in
// slot, up to limit: the versions before slot but the newest (the current one).
func (kv *keyVersions) newerNoncurrent(slot versionSlot, limit int) (int, error) {
	prefix := keyVersionsPrefix(kv.bucket, kv.key)
	it := kv.t.st.Iterate(prefix, versionKey(kv.bucket, kv.key, slot))
	defer it.Release()
	n := 0
	for n <= limit && it.Next() {
		n++
	}
	return max(n-1, 0), wrapf(it.Err(), "read versions %s/%s", kv.bucket, kv.key)
}

// expireNoncurrent removes the noncurrent versions of b that its rules make due at
// now, visiting at most budget "ln" entries.
func (s *Service) expireNoncurrent(ctx context.Context, b *Bucket, now time.Time, budget int) (int, error) {
	return s.scanDueIndex(ctx, "ln", b, now, budget, noncurrentDays, func(_ []byte, t time.Time, comps [][]byte) error {
		if len(comps) != 5 || len(comps[4]) != len(versionSlot{}) {
			return nil
		}
		removed, err := s.removeDueVersion(ctx, b.Name, string(comps[3]), versionSlot(comps[4]), t, now)
		if removed {
			s.lc.noncurrent.Add(1)
		}
		return err
	})
}

// removeDueVersion removes the version of bucket/key in slot, as DELETE ?versionId
// does (removeVersion: its data queued for collection), in a commit conditional on
// the key's head, if it is still noncurrent since t, the bucket's rules as read make
// it due at now (noncurrentDue), and no legal hold or retention in force protects it
// (such a version stays until its lock ends). It reports whether it removed it.
func (s *Service) removeDueVersion(ctx context.Context, bucket, key string, slot versionSlot, since, now time.Time) (bool, error) {
	day := s.lifecycleDay()
	return s.lifecycleRemove(ctx, bucket, key, func(b *Bucket, kv *keyVersions) (string, error) {
		m, err := kv.read(slot)
		if err != nil || m == nil || !m.NoncurrentSince.Equal(since) {
			return "", err
		}
		if lockRefusal(m.Retention, m.LegalHold, time.Now(), false) != nil {
			return "", nil
		}
		due, err := noncurrentDue(b.Lifecycle, key, m, now, day, func(limit int) (int, error) {
			return kv.newerNoncurrent(slot, limit)
		})
		if err != nil || !due {
			return "", err
		}
		return externalID(m.VersionID), nil
	})
}

// lifecycleRemove removes, under the key's lock and in one update conditional on the
// bucket record and the key's head, the version of bucket/key that pick names (client
// form; "" to remove nothing) given the bucket and the versions as read; it reports
// whether it removed one, and wakes the collector when data was queued.
func (s *Service) lifecycleRemove(ctx context.Context, bucket, key string, pick func(*Bucket, *keyVersions) (string, error)) (bool, error) {
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	removed, garbage := false, false
	err := s.update(ctx, "lifecycle: remove a version of "+bucket+"/"+key, func(t *txn) error {
		removed = false
		b, err := s.bucketIn(t, bucket)
		if err != nil || b.Lifecycle == nil {
			return err
		}
		kv, err := s.loadVersions(t, bucket, key)
		if err != nil || !kv.stored {
			return err
		}
		id, err := pick(b, kv)
		if err != nil || id == "" {
			return err
		}
		if _, err := s.removeVersion(kv, id, false); err != nil {
			return err
		}
		removed, garbage = true, kv.garbage
		return nil
	})
	switch {
	case IsCode(err, NoSuchBucket):
		return false, nil
	case err != nil:
		return false, err
	}
	if garbage {
		s.gc.wake()
	}
	return removed, nil
}

// loneMarkerDays is dueCutoff's days of a rule for a lone delete marker: as AWS,
// ExpiredObjectDeleteMarker removes one at once, and an Expiration by Date (once
// past) or by Days (counted from the marker's creation) removes one too; rules with
// tag or size filters select no marker.
func loneMarkerDays(now time.Time) func(*LifecycleRule) int {
	current := expirationDays(now)
	return func(r *LifecycleRule) int {
		switch e := r.Expiration; {
		case e == nil || objectOnlyFilter(&r.Filter):
			return 0
		case e.DeleteMarker != nil:
			if *e.DeleteMarker {
				return -1
			}
			return 0
		}
		return current(r)
	}
}

// loneMarkerDue reports whether an enabled rule of lc removes a lone delete marker of
// key made at made, at now (loneMarkerDays).
func loneMarkerDue(lc *Lifecycle, key string, made, now time.Time, day time.Duration) bool {
	days := loneMarkerDays(now)
	for i := range lc.Rules {
		r := &lc.Rules[i]
		if !r.Enabled || !markerFilterMatches(r, key) {
			continue
		}
		switch d := days(r); {
		case d < 0:
			return true
		case d > 0:
			if at, ok := dueAfter(made, d, day); ok && !at.After(now) {
				return true
			}
		}
	}
	return false
}

// expireLoneMarkers removes the lone delete markers of b that its rules make due at
// now, visiting at most budget "lm" entries: the key is then left with no records.
func (s *Service) expireLoneMarkers(ctx context.Context, b *Bucket, now time.Time, budget int) (int, error) {
	day := s.lifecycleDay()
	return s.scanDueIndex(ctx, "lm", b, now, budget, loneMarkerDays(now), func(_ []byte, t time.Time, comps [][]byte) error {
		if len(comps) != 4 {
			return nil
		}
		key := string(comps[3])
		if !loneMarkerDue(b.Lifecycle, key, t, now, day) {
			return nil
		}
		removed, err := s.lifecycleRemove(ctx, b.Name, key, func(b *Bucket, kv *keyVersions) (string, error) {
			lone := kv.head.Lone
			if lone == nil || !lone.At.Equal(t) || !loneMarkerDue(b.Lifecycle, key, t, now, day) {
				return "", nil
			}
			return lone.ID, nil
		})
		if removed {
			s.lc.markers.Add(1)
		}
		return err
	})
}

// backfillVersionsIndex gives the versions written before the "ln" and "lm" indexes
// existed their noncurrent_since and their heads their Lone, once per store (the "lv"
// "versions" record says it is done), a batch of keys at a time, stopping early when
// ctx is done (the next start resumes: what is fixed stays fixed and is skipped). Each
// key is fixed by backfillKey, in bounded chunks; the "lv" record is written only
// after every key is done, so a version left without its entry is never called done.
func (s *Service) backfillVersionsIndex(ctx context.Context) error {
	v, err := s.db.Get(versionsIndexKey())
	if err == nil && string(v) == versionsIndexVersion {
		return nil
	}
	from := headTable
	for {
		keys, err := s.readEntries(from, storage.PrefixEnd(headTable), gcBatch)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			_, comps, err := storage.DecodeKey(k)
			if err != nil || len(comps) != 3 {
				continue // Check reports malformed keys
			}
			if err := s.backfillKey(ctx, string(comps[1]), string(comps[2])); err != nil {
				return wrapf(err, "backfill versions index")
			}
		}
		from = append(keys[len(keys)-1], 0)
	}
	return wrapf(storage.Put(ctx, s.db, versionsIndexKey(), []byte(versionsIndexVersion), true), "versions index version")
}

// backfillChunkVersions and backfillChunkBytes bound one commit of the versions-index
// backfill: at most this many version records rewritten, and no more once their
// encoded size reaches this many bytes, so that a key with a long history is fixed in
// many commits of bounded size (a cluster commit takes at most a few thousand
// writes). Variables so that tests can lower them.
var (
	backfillChunkVersions = 1000
	backfillChunkBytes    = 1 << 20
)

// backfillKey fixes bucket/key's versions (backfillKeyVersions) one chunk per update,
// each conditional on the key's head, which every change of its versions rewrites:
// each chunk resumes at the version the previous one wrote last, until a chunk
// reaches the oldest version.
func (s *Service) backfillKey(ctx context.Context, bucket, key string) error {
	var from []byte // the version record the last chunk wrote last; nil: none yet
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var next []byte
		err := s.update(ctx, "backfill versions index "+bucket+"/"+key, func(t *txn) error {
			var err error
			next, err = s.backfillKeyVersions(t, bucket, key, from)
			return err
		})
		if err != nil || next == nil {
			return err
		}
		from = next
	}
}

// backfillKeyVersions writes, in t, the noncurrent_since that versions of bucket/key
// lack (their successor's creation), older ones than the version record from (nil:
// all but the newest; then the head's Lone too), until backfillChunkVersions records
// or backfillChunkBytes bytes are written. It returns the key of the last record it
// wrote if it stopped at that bound (the next chunk resumes there), nil once it has
// reached the oldest version. A from that is gone (removed meanwhile) makes it start
// again from the newest version: the ones already fixed are only read.
func (s *Service) backfillKeyVersions(t *txn, bucket, key string, from []byte) ([]byte, error) {
	kv, err := s.loadVersions(t, bucket, key)
	if err != nil || !kv.stored {
		return nil, err
	}
	hadLone := kv.head.Lone != nil
	var next []byte
	resumed := false
	if from != nil {
		if next, resumed, err = backfillChunk(kv, from); err != nil {
			return nil, err
		}
	}
	if !resumed {
		if next, _, err = backfillChunk(kv, nil); err != nil {
			return nil, err
		}
	}
	if t.b.Len() == 0 && hadLone == (kv.head.Lone != nil) {
		return nil, nil // nothing to change
	}
	return next, kv.finish()
}

// backfillChunk is one chunk of backfillKeyVersions: from the version record after
// (which is then only its first record's successor; resumed reports that it was still
// there, when not the chunk did nothing), or with after nil from the newest version,
// which then also sets the head's Lone (the key's only version and a delete marker).
// The commit requires each record it rewrites, and the successor it took the time
// from, to be as read: a store's revisions follow content, so the head, which a
// removal may rewrite unchanged, does not by itself catch a version removed meanwhile,
// and the chunk must not write one back.
func backfillChunk(kv *keyVersions, after []byte) (next []byte, resumed bool, err error) {
	prefix := keyVersionsPrefix(kv.bucket, kv.key)
	lo := prefix
	if after != nil {
		lo = after
	}
	it := kv.t.st.Iterate(lo, storage.PrefixEnd(prefix))
	defer it.Release()
	var newer *Manifest // the version before this one
	var newerKey []byte // its record's key
	newerHeld := false  // whether the commit requires it already
	n, written, size, more := 0, 0, 0, false
	for ; it.Next(); n++ {
		if n%1024 == 0 {
			if err := kv.t.ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		if after != nil && n == 0 && !bytes.Equal(it.Key(), after) {
			return nil, false, nil // the version to resume after is gone
		}
		m := new(Manifest)
		if err := json.Unmarshal(it.Value(), m); err != nil {
			return nil, false, wrapf(err, "decode version %s/%s", kv.bucket, kv.key)
		}
		held := false
		if n > 0 && m.NoncurrentSince.IsZero() {
			if more = written >= backfillChunkVersions || size >= backfillChunkBytes; more {
				break // the next chunk goes on after next
			}
			if err := holdVersions(kv.t, newerKey, newerHeld, it.Key()); err != nil {
				return nil, false, err
			}
			// The condition is on the record as read now; a change since the
			// iterator's view (a legal hold, a retention, tags) rewrites the record
			// but leaves the head's bytes, so only comparing the two catches it.
			cur, err := kv.t.get(it.Key())
			if err != nil {
				return nil, false, err
			}
			if !bytes.Equal(cur, it.Value()) {
				return nil, false, errAgain // changed since the chunk's snapshot
			}
			m.NoncurrentSince = newer.LastModified
			v, err := json.Marshal(m)
			if err != nil {
				return nil, false, wrapf(err, "encode manifest %s/%s", kv.bucket, kv.key)
			}
			next = bytes.Clone(it.Key())
			kv.t.b.Put(next, v)
			written, size, held = written+1, size+len(next)+len(v), true
		}
		if after == nil && n == 0 && m.DeleteMarker {
			kv.head.Lone = &loneMarker{ID: externalID(m.VersionID), At: m.LastModified}
		}
		newer, newerKey, newerHeld = m, append(newerKey[:0], it.Key()...), held
	}
	if err := it.Err(); err != nil {
		return nil, false, wrapf(err, "read versions %s/%s", kv.bucket, kv.key)
	}
	if after == nil && (more || n != 1) {
		kv.head.Lone = nil
	}
	if !more {
		next = nil
	}
	return next, after != nil, nil
}

// holdVersions makes t's commit require the version record key, and its successor's
// record newer unless held already, to be unchanged since now; one already gone is a
// conflict (the chunk starts again).
func holdVersions(t *txn, newer []byte, held bool, key []byte) error {
	if !held {
		if err := holdVersion(t, newer); err != nil {
			return err
		}
	}
	return holdVersion(t, key)
}

// holdVersion is holdVersions for one record.
func holdVersion(t *txn, key []byte) error {
	_, err := t.get(key)
	if errors.Is(err, errAbsent) {
		return errAgain
	}
	return err
}

// checkVersionsIndex adds to bad every disagreement between the "ln" and "lm" indexes
// and the versions tables (as Check reads them): an entry without its record, a
// record without its entry; and, once the backfill is done (the "lv" "versions"
// record), a newest version marked noncurrent, an older one not, or a head whose Lone
// does not say exactly whether the key's only version is a delete marker.
func checkVersionsIndex(tables map[string]map[string][]byte, bad func(string, ...any)) {
	type version struct {
		slot string
		m    Manifest
	}
	ln, lm := map[string]bool{}, map[string]bool{}
	byKey := map[string][]version{}
	for k, v := range tables["v"] {
		parts := splitKey(k)
		var ver version
		if len(parts) != 3 || json.Unmarshal(v, &ver.m) != nil {
			continue // reported by checkVersions
		}
		ver.slot = parts[2]
		if !ver.m.NoncurrentSince.IsZero() {
			ln[joinKey(parts[0], entryStamp(ver.m.NoncurrentSince), parts[1], parts[2])] = true
		}
		byKey[joinKey(parts[0], parts[1])] = append(byKey[joinKey(parts[0], parts[1])], ver)
	}
	heads := map[string]versionHead{}
	for k, v := range tables["vh"] {
		var h versionHead
		parts := splitKey(k)
		if len(parts) != 2 || json.Unmarshal(v, &h) != nil {
			continue // reported by checkVersions
		}
		heads[k] = h
		if h.Lone != nil {
			lm[joinKey(parts[0], entryStamp(h.Lone.At), parts[1])] = true
		}
	}
	compareIndex("ln", ln, tables["ln"], true, bad)
	compareIndex("lm", lm, tables["lm"], true, bad)
	if string(tables["lv"][joinKey("versions")]) != versionsIndexVersion {
		return
	}
	for k, vs := range byKey {
		slices.SortFunc(vs, func(a, b version) int { return strings.Compare(a.slot, b.slot) })
		name := strings.Join(splitKey(k), "/")
		for i, ver := range vs {
			if (i == 0) != ver.m.NoncurrentSince.IsZero() {
				bad("s3: version %s %s: noncurrent_since %v on the version %d from the newest", name, versionSlot([]byte(ver.slot)).id(), ver.m.NoncurrentSince, i)
			}
		}
		newest := vs[0].m
		lone := len(vs) == 1 && newest.DeleteMarker
		h, ok := heads[k]
		switch {
		case !ok:
		case lone && (h.Lone == nil || h.Lone.ID != externalID(newest.VersionID) || !h.Lone.At.Equal(newest.LastModified)):
			bad("s3: version head of %s: its only version is a delete marker, lone is %+v", name, h.Lone)
		case !lone && h.Lone != nil:
			bad("s3: version head of %s names a lone delete marker, but the key has %d versions", name, len(vs))
		}
	}
}

// entryStamp is the time component of a lifecycle index entry at t, as Check's
// tables hold it.
func entryStamp(t time.Time) string { return string(storage.Uint64Component(unixNano(t))) }
