package s3

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/storage"
)

// versionedFixture is lifecycleFixture with the bucket's versioning enabled.
func versionedFixture(t *testing.T) (*Service, *storage.DB, Requester) {
	t.Helper()
	s, db, alice := lifecycleFixture(t)
	setVersioning(t, s, alice, "lcb", VersioningEnabled)
	return s, db, alice
}

// putVersions writes n versions of key (a millisecond apart, so that each has its own
// time) and returns their ids, oldest first.
func putVersions(t *testing.T, s *Service, r Requester, key string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		time.Sleep(2 * time.Millisecond)
		ids = append(ids, put(t, s, r, "lcb", key, []byte{byte('a' + i)}).VersionID)
	}
	return ids
}

// listed returns the version ids of key that ?versions lists, newest first, a delete
// marker's prefixed "D".
func listed(t *testing.T, s *Service, r Requester, key string) []string {
	t.Helper()
	flags, ids := versionsOf(t, s, r, "lcb", 100)
	var out []string
	for i, f := range flags {
		k, fl, _ := strings.Cut(f, ":")
		if k != key {
			continue
		}
		if strings.Contains(fl, "D") {
			out = append(out, "D"+ids[i])
		} else {
			out = append(out, ids[i])
		}
	}
	return out
}

func noncurrentRule(id string, f s3types.LifecycleFilter, days, newer int) LifecycleRule {
	return LifecycleRule{ID: id, Enabled: true, Filter: f,
		NoncurrentExpiration: &s3types.NoncurrentExpiration{NoncurrentDays: days, NewerVersions: newer}}
}

func cycle(t *testing.T, s *Service, now time.Time) {
	t.Helper()
	if err := s.lifecycleCycle(context.Background(), now); err != nil {
		t.Fatal(err)
	}
}

func wantListed(t *testing.T, s *Service, r Requester, key string, want ...string) {
	t.Helper()
	if got := listed(t, s, r, key); !slices.Equal(got, want) {
		t.Fatalf("versions of %s: %v, want %v", key, got, want)
	}
}

// TestNoncurrentExpiration: a noncurrent version is removed once NoncurrentDays
// lifecycle days have passed since its successor was made, rounded up to the next
// midnight, not before; the current version stays; with NewerNoncurrentVersions N the
// N newest noncurrent versions stay; a version becomes current again when its
// successor is deleted, and is then not expired.
func TestNoncurrentExpiration(t *testing.T) {
	s, db, alice := versionedFixture(t)
	a := putVersions(t, s, alice, "a", 3)
	n := putVersions(t, s, alice, "n/k", 4)
	back := putVersions(t, s, alice, "back", 2)
	if _, err := s.DeleteObjectVersion(context.Background(), alice, "lcb", "back", back[1]); err != nil {
		t.Fatal(err)
	}
	setLifecycle(t, s, alice,
		noncurrentRule("plain", s3types.LifecycleFilter{Prefix: "a"}, 1, 0),
		noncurrentRule("newer", s3types.LifecycleFilter{Prefix: "n/"}, 1, 2),
		noncurrentRule("back", s3types.LifecycleFilter{Prefix: "back"}, 1, 0))
	midnight := time.Now().UTC().Truncate(24 * time.Hour)
	cycle(t, s, midnight.Add(48*time.Hour-time.Second))
	wantListed(t, s, alice, "a", a[2], a[1], a[0])
	cycle(t, s, midnight.Add(48*time.Hour))
	wantListed(t, s, alice, "a", a[2])
	wantListed(t, s, alice, "n/k", n[3], n[2], n[1])
	wantListed(t, s, alice, "back", back[0])
	if got := s.LifecycleStats()["s3_lifecycle_noncurrent_expired_total"]; got != int64(3) {
		t.Errorf("noncurrent expired: %v, want 3", got)
	}
	if c := countPrefix(t, db, "ln"); c != 2 {
		t.Errorf("%d noncurrent entries left, want n/k's 2", c)
	}
}

// countPrefix counts the records of an S3 table.
func countPrefix(t *testing.T, db *storage.DB, table string) int {
	t.Helper()
	it := db.IteratePrefix(storage.KeyString(storage.TagS3, table))
	defer it.Release()
	n := 0
	for it.Next() {
		n++
	}
	return n
}

// TestNoncurrentFilters: the prefix, the tags of the version and its size select the
// noncurrent versions a rule removes; a disabled rule removes none.
func TestNoncurrentFilters(t *testing.T) {
	ctx := context.Background()
	s, _, alice := versionedFixture(t)
	putTagged := func(key, data string, tags ...Tag) string {
		t.Helper()
		time.Sleep(2 * time.Millisecond)
		m, err := s.PutObject(ctx, alice, "lcb", key, PutInput{Body: strings.NewReader(data), Size: int64(len(data)), Tags: tags, HasTags: len(tags) > 0})
		if err != nil {
			t.Fatal(err)
		}
		return m.VersionID
	}
	putTagged("t", "x", Tag{Key: "tmp", Value: "1"})
	untagged := putTagged("t", "y")
	tcur := putTagged("t", "z")
	putTagged("s", strings.Repeat("b", 100))
	small := putTagged("s", "s")
	scur := putTagged("s", "c")
	off := putVersions(t, s, alice, "off", 2)
	setLifecycle(t, s, alice,
		noncurrentRule("tag", s3types.LifecycleFilter{Prefix: "t", Tags: []Tag{{Key: "tmp", Value: "1"}}}, 1, 0),
		noncurrentRule("size", s3types.LifecycleFilter{Prefix: "s", SizeGreaterThan: i64(50)}, 1, 0),
		LifecycleRule{ID: "off", Filter: s3types.LifecycleFilter{Prefix: "off"},
			NoncurrentExpiration: &s3types.NoncurrentExpiration{NoncurrentDays: 1}})
	cycle(t, s, time.Now().Add(10*24*time.Hour))
	wantListed(t, s, alice, "t", tcur, untagged)
	wantListed(t, s, alice, "s", scur, small)
	wantListed(t, s, alice, "off", off[1], off[0])
}

// TestNoncurrentLocked: a noncurrent version under a legal hold or a retention in
// force is not removed; it is once the retention has ended or the hold is released.
func TestNoncurrentLocked(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	alice := mustUser(t, s, "alice")
	acl, err := CannedACL("", Owner{ID: alice.ID, DisplayName: alice.DisplayName}, Owner{ID: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucketWith(ctx, alice, "lcb", acl, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	putLocked := func(lr LockRequest) string {
		t.Helper()
		time.Sleep(2 * time.Millisecond)
		m, err := s.PutObject(ctx, alice, "lcb", "k", PutInput{Body: strings.NewReader("d"), Size: 1, Lock: lr})
		if err != nil {
			t.Fatal(err)
		}
		return m.VersionID
	}
	until := time.Now().Add(1500 * time.Millisecond)
	held := putLocked(LockRequest{LegalHold: true, Asked: true})
	retained := putLocked(LockRequest{Retention: &Retention{Mode: LockGovernance, Until: until}, Asked: true})
	putLocked(LockRequest{}) // noncurrent, unlocked: removed at once
	cur := putLocked(LockRequest{})
	setLifecycle(t, s, alice, noncurrentRule("r", s3types.LifecycleFilter{}, 1, 0))
	far := time.Now().Add(10 * 24 * time.Hour)
	cycle(t, s, far)
	wantListed(t, s, alice, "k", cur, retained, held)
	time.Sleep(time.Until(until) + 10*time.Millisecond)
	cycle(t, s, far)
	wantListed(t, s, alice, "k", cur, held)
	if err := s.SetObjectLegalHold(ctx, alice, "lcb", "k", held, false); err != nil {
		t.Fatal(err)
	}
	cycle(t, s, far)
	wantListed(t, s, alice, "k", cur)
}

// TestLoneDeleteMarkers: ExpiredObjectDeleteMarker removes a delete marker that is its
// key's only version (the key then has no records), in the cycle that removed its last
// noncurrent version too, and not one with noncurrent versions behind it; an
// Expiration by Days removes a lone marker that many days after it was made, as AWS
// does.
func TestLoneDeleteMarkers(t *testing.T) {
	ctx := context.Background()
	s, db, alice := versionedFixture(t)
	del := func(key string) string {
		t.Helper()
		res, err := s.DeleteObjectVersion(ctx, alice, "lcb", key, "")
		if err != nil || !res.DeleteMarker {
			t.Fatalf("delete %s: %+v %v", key, res, err)
		}
		return res.VersionID
	}
	gone := del("gone")                       // a marker over nothing: lone at once
	old := putVersions(t, s, alice, "old", 1) // a marker over a version: lone once it goes
	oldMarker := del("old")
	kept := putVersions(t, s, alice, "kept/k", 1) // under no noncurrent rule
	keptMarker := del("kept/k")
	byDays := del("days/k")
	if countPrefix(t, db, "lm") != 2 {
		t.Fatalf("%d lone marker entries, want 2", countPrefix(t, db, "lm"))
	}
	yes := true
	setLifecycle(t, s, alice,
		LifecycleRule{ID: "eodm", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "o"},
			Expiration: &s3types.LifecycleExpiration{DeleteMarker: &yes}},
		LifecycleRule{ID: "eodm2", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "g"},
			Expiration: &s3types.LifecycleExpiration{DeleteMarker: &yes}},
		LifecycleRule{ID: "kept", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "kept/"},
			Expiration: &s3types.LifecycleExpiration{DeleteMarker: &yes}},
		noncurrentRule("nc", s3types.LifecycleFilter{Prefix: "old"}, 1, 0),
		LifecycleRule{ID: "days", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "days/"}, Expiration: days(3)})
	wantListed(t, s, alice, "gone", "D"+gone)
	cycle(t, s, time.Now())
	wantListed(t, s, alice, "gone")
	wantListed(t, s, alice, "old", "D"+oldMarker, old[0])
	cycle(t, s, time.Now().Add(2*24*time.Hour+time.Hour))
	wantListed(t, s, alice, "old")
	wantListed(t, s, alice, "kept/k", "D"+keptMarker, kept[0])
	wantListed(t, s, alice, "days/k", "D"+byDays)
	cycle(t, s, time.Now().Add(4*24*time.Hour+time.Hour))
	wantListed(t, s, alice, "days/k")
	if n, m := countPrefix(t, db, "vh"), countPrefix(t, db, "lm"); n != 1 || m != 0 {
		t.Errorf("%d heads (want kept/k's) and %d lone marker entries (want none)", n, m)
	}
	if got := s.LifecycleStats()["s3_lifecycle_delete_markers_removed_total"]; got != int64(3) {
		t.Errorf("markers removed: %v, want 3", got)
	}
}

// TestVersionedLifecycleLosesRaces: a write to the key between the worker's read and
// its commit wins: a PUT over a lone marker keeps the marker (now noncurrent), a
// DELETE of the noncurrent version the worker was removing leaves nothing to remove.
func TestVersionedLifecycleLosesRaces(t *testing.T) {
	ctx := context.Background()
	a, b, _ := newSharedServices(t, noBlobs)
	alice := mustUser(t, a, "alice")
	mustBucket(t, a, alice, "lcb", "")
	setVersioning(t, a, alice, "lcb", VersioningEnabled)
	res, err := a.DeleteObjectVersion(ctx, alice, "lcb", "m", "")
	if err != nil {
		t.Fatal(err)
	}
	v := putVersions(t, a, alice, "v", 2)
	yes := true
	setLifecycle(t, a, alice,
		LifecycleRule{ID: "eodm", Enabled: true, Expiration: &s3types.LifecycleExpiration{DeleteMarker: &yes}},
		noncurrentRule("nc", s3types.LifecycleFilter{Prefix: "v"}, 1, 0))
	var newer string
	overtake(t, a, "lifecycle: remove a version of lcb/m", func() {
		newer = put(t, b, alice, "lcb", "m", []byte("new")).VersionID
	})
	if _, err := a.expireLoneMarkers(ctx, mustGetBucket(t, a), time.Now(), 10); err != nil {
		t.Fatal(err)
	}
	wantListed(t, a, alice, "m", newer, "D"+res.VersionID)
	overtake(t, a, "lifecycle: remove a version of lcb/v", func() {
		if _, err := b.DeleteObjectVersion(ctx, alice, "lcb", "v", v[0]); err != nil {
			t.Error(err)
		}
	})
	if _, err := a.expireNoncurrent(ctx, mustGetBucket(t, a), time.Now().Add(5*24*time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	wantListed(t, a, alice, "v", v[1])
	if got := a.LifecycleStats()["s3_lifecycle_noncurrent_expired_total"]; got != int64(0) {
		t.Errorf("the worker counts %v removals, want none: the DELETE won", got)
	}
}

func mustGetBucket(t *testing.T, s *Service) *Bucket {
	t.Helper()
	b, err := s.Bucket(context.Background(), "lcb")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVersionsIndexBackfillAndCheck: versions written before the indexes (without
// noncurrent_since and Lone) are backfilled; Check reports an index entry without its
// record, a record without its entry, a noncurrent version without noncurrent_since
// and a wrong Lone, and nothing once repaired.
func TestVersionsIndexBackfillAndCheck(t *testing.T) {
	ctx := context.Background()
	s, db, alice := versionedFixture(t)
	v := putVersions(t, s, alice, "k", 3)
	if _, err := s.DeleteObjectVersion(ctx, alice, "lcb", "m", ""); err != nil {
		t.Fatal(err)
	}
	ln, lm := countPrefix(t, db, "ln"), countPrefix(t, db, "lm")
	if ln != 2 || lm != 1 {
		t.Fatalf("entries: ln %d lm %d, want 2 and 1", ln, lm)
	}
	// Make the store look as one written before the indexes.
	var saved [][2][]byte
	for _, id := range v[:2] {
		slot, _ := parseSlot(id)
		k := versionKey("lcb", "k", slot)
		val, err := db.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, [2][]byte{k, val})
		var m Manifest
		mustUnmarshal(t, val, &m)
		m.NoncurrentSince = time.Time{}
		mustPut(t, db, k, mustMarshal(t, &m))
	}
	hk := headKey("lcb", "m")
	hv, _ := db.Get(hk)
	saved = append(saved, [2][]byte{hk, hv})
	var h versionHead
	mustUnmarshal(t, hv, &h)
	h.Lone = nil
	mustPut(t, db, hk, mustMarshal(t, &h))
	if countPrefix(t, db, "ln")+countPrefix(t, db, "lm") != 0 {
		t.Fatal("the derived entries stayed")
	}
	if _, err := Check(db, nil); err == nil || !strings.Contains(err.Error(), "noncurrent_since") || !strings.Contains(err.Error(), "lone") {
		t.Fatalf("check of an old store marked done: %v", err)
	}
	if err := db.Delete(versionsIndexKey(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("check before the backfill: %v", err)
	}
	if err := s.backfillVersionsIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for _, kv := range saved {
		got, _ := db.Get(kv[0])
		if string(got) != string(kv[1]) {
			t.Errorf("backfilled %q:\n%s\nwant\n%s", kv[0], got, kv[1])
		}
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("check after the backfill: %v", err)
	}
	// An entry without its record, a record without its entry.
	stray := noncurrentEntryKey("lcb", time.Unix(5, 0), "k", make([]byte, 16))
	mustPut(t, db, stray, nil)
	if _, err := Check(db, nil); err == nil || !strings.Contains(err.Error(), "without its record") {
		t.Fatalf("check with a stray entry: %v", err)
	}
	if err := db.Delete(stray, false); err != nil {
		t.Fatal(err)
	}
	it := db.IteratePrefix(storage.KeyString(storage.TagS3, "lm"))
	it.Next()
	entry := append([]byte(nil), it.Key()...)
	it.Release()
	if err := db.Delete(entry, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(db, nil); err == nil || !strings.Contains(err.Error(), "lacks the entry") {
		t.Fatalf("check without an entry: %v", err)
	}
	mustPut(t, db, entry, nil)
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
}

func mustPut(t *testing.T, db *storage.DB, k, v []byte) {
	t.Helper()
	if err := db.Put(k, v, false); err != nil {
		t.Fatal(err)
	}
}

// TestVersionsEntry: the entries derived from versions records, and the records that
// fail a commit.
func TestVersionsEntry(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	slot := newSlot(7)
	vk := versionKey("b", "k", slot)
	for _, tc := range []struct {
		name    string
		key     []byte
		v       string
		want    []byte
		wantErr bool
	}{
		{"current version", vk, `{"uuid":"u","last_modified":"2026-01-01T00:00:00Z"}`, nil, false},
		{"noncurrent", vk, `{"uuid":"u","noncurrent_since":"` + since.Format(time.RFC3339Nano) + `"}`, noncurrentEntryKey("b", since, "k", slot[:]), false},
		{"head", headKey("b", "k"), `{"seq":3}`, nil, false},
		{"lone head", headKey("b", "k"), `{"seq":3,"lone":{"id":"x","at":"` + since.Format(time.RFC3339Nano) + `"}}`, loneEntryKey("b", since, "k"), false},
		{"bad record", vk, `{"uuid":"u","noncurrent_since":"yesterday"}`, nil, true},
		{"bad slot", storage.KeyString(storage.TagS3, "v", "b", "k", "short"), `{,"noncurrent_since":"` + since.Format(time.RFC3339Nano) + `"}`, nil, true},
		{"deleted", vk, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v []byte
			if tc.v != "" {
				v = []byte(tc.v)
			}
			got, err := lifecycleEntry(tc.key, v)
			if (err != nil) != tc.wantErr || string(got) != string(tc.want) {
				t.Fatalf("entry %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func mustUnmarshal(t *testing.T, v []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(v, into); err != nil {
		t.Fatal(err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
