package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/storage"
)

func days(n int) *s3types.LifecycleExpiration { return &s3types.LifecycleExpiration{Days: n} }
func i64(v int64) *int64                      { return &v }

// TestCheckLifecycle: the limits of a lifecycle configuration, each with AWS's code.
func TestCheckLifecycle(t *testing.T) {
	rule := func(id string) LifecycleRule { return LifecycleRule{ID: id, Enabled: true, Expiration: days(1)} }
	many := func(n int) []LifecycleRule {
		out := make([]LifecycleRule, n)
		for i := range out {
			out[i] = rule(fmt.Sprint("r", i))
		}
		return out
	}
	with := func(f func(r *LifecycleRule)) []LifecycleRule {
		r := rule("r")
		f(&r)
		return []LifecycleRule{r}
	}
	tru := true
	for _, c := range []struct {
		name  string
		rules []LifecycleRule
		want  Code // "" = accepted
	}{
		{"one rule", many(1), ""},
		{"no rule", nil, MalformedXML},
		{"1000 rules", many(1000), ""},
		{"1001 rules", many(1001), InvalidRequest},
		{"ID of 255 characters", []LifecycleRule{rule(strings.Repeat("é", 255))}, ""},
		{"ID of 256 characters", []LifecycleRule{rule(strings.Repeat("a", 256))}, InvalidArgument},
		{"ID not UTF-8", []LifecycleRule{rule("\xff")}, InvalidArgument},
		{"same ID twice", []LifecycleRule{rule("x"), rule("x")}, InvalidArgument},
		{"no action", with(func(r *LifecycleRule) { r.Expiration = nil }), InvalidRequest},
		{"zero days", with(func(r *LifecycleRule) { r.Expiration.Days = 0 }), InvalidArgument},
		{"negative days", with(func(r *LifecycleRule) { r.Expiration.Days = -1 }), InvalidArgument},
		{"date at midnight", with(func(r *LifecycleRule) {
			r.Expiration = &s3types.LifecycleExpiration{Date: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}
		}), ""},
		{"date at noon", with(func(r *LifecycleRule) {
			r.Expiration = &s3types.LifecycleExpiration{Date: time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)}
		}), InvalidArgument},
		{"delete marker", with(func(r *LifecycleRule) { r.Expiration = &s3types.LifecycleExpiration{DeleteMarker: &tru} }), ""},
		{"delete marker with a tag", with(func(r *LifecycleRule) {
			r.Expiration = &s3types.LifecycleExpiration{DeleteMarker: &tru}
			r.Filter.Tags = []Tag{{Key: "k"}}
		}), InvalidRequest},
		{"noncurrent", with(func(r *LifecycleRule) {
			r.NoncurrentExpiration = &s3types.NoncurrentExpiration{NoncurrentDays: 3, NewerVersions: 100}
		}), ""},
		{"noncurrent zero days", with(func(r *LifecycleRule) { r.NoncurrentExpiration = &s3types.NoncurrentExpiration{} }), InvalidArgument},
		{"101 newer versions", with(func(r *LifecycleRule) {
			r.NoncurrentExpiration = &s3types.NoncurrentExpiration{NoncurrentDays: 1, NewerVersions: 101}
		}), InvalidArgument},
		{"abort", with(func(r *LifecycleRule) { r.AbortUpload = &s3types.AbortIncompleteUpload{DaysAfterInitiation: 1} }), ""},
		{"abort zero days", with(func(r *LifecycleRule) { r.AbortUpload = &s3types.AbortIncompleteUpload{} }), InvalidArgument},
		{"abort with a tag", with(func(r *LifecycleRule) {
			r.AbortUpload = &s3types.AbortIncompleteUpload{DaysAfterInitiation: 1}
			r.Filter.Tags = []Tag{{Key: "k"}}
		}), InvalidRequest},
		{"abort with a size", with(func(r *LifecycleRule) {
			r.AbortUpload = &s3types.AbortIncompleteUpload{DaysAfterInitiation: 1}
			r.Filter.SizeLessThan = i64(10)
		}), InvalidRequest},
		{"prefix of 1024 bytes", with(func(r *LifecycleRule) { r.Filter.Prefix = strings.Repeat("p", 1024) }), ""},
		{"prefix of 1025 bytes", with(func(r *LifecycleRule) { r.Filter.Prefix = strings.Repeat("p", 1025) }), InvalidArgument},
		{"ten tags", with(func(r *LifecycleRule) {
			for i := range 10 {
				r.Filter.Tags = append(r.Filter.Tags, Tag{Key: fmt.Sprint(i)})
			}
		}), ""},
		{"eleven tags", with(func(r *LifecycleRule) {
			for i := range 11 {
				r.Filter.Tags = append(r.Filter.Tags, Tag{Key: fmt.Sprint(i)})
			}
		}), InvalidArgument},
		{"tag key twice", with(func(r *LifecycleRule) { r.Filter.Tags = []Tag{{Key: "k"}, {Key: "k", Value: "v"}} }), InvalidTag},
		{"aws: tag", with(func(r *LifecycleRule) { r.Filter.Tags = []Tag{{Key: "aws:k"}} }), InvalidTag},
		{"negative size", with(func(r *LifecycleRule) { r.Filter.SizeGreaterThan = i64(-1) }), InvalidArgument},
		{"size range", with(func(r *LifecycleRule) { r.Filter.SizeGreaterThan, r.Filter.SizeLessThan = i64(1), i64(3) }), ""},
		{"empty size range", with(func(r *LifecycleRule) { r.Filter.SizeGreaterThan, r.Filter.SizeLessThan = i64(3), i64(3) }), InvalidArgument},
	} {
		err := CheckLifecycle(&Lifecycle{Rules: c.rules})
		if c.want == "" && err != nil || c.want != "" && !IsCode(err, c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestFilterMatches: every condition of a filter must hold: prefix, each tag (key and
// value), sizes exclusive.
func TestFilterMatches(t *testing.T) {
	tags := []Tag{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}
	for _, c := range []struct {
		name string
		f    s3types.LifecycleFilter
		key  string
		size int64
		want bool
	}{
		{"empty filter", s3types.LifecycleFilter{}, "x", 5, true},
		{"prefix", s3types.LifecycleFilter{Prefix: "logs/"}, "logs/a", 5, true},
		{"other prefix", s3types.LifecycleFilter{Prefix: "logs/"}, "log/a", 5, false},
		{"tag", s3types.LifecycleFilter{Tags: []Tag{{Key: "a", Value: "1"}}}, "x", 5, true},
		{"tag other value", s3types.LifecycleFilter{Tags: []Tag{{Key: "a", Value: "2"}}}, "x", 5, false},
		{"both tags", s3types.LifecycleFilter{Tags: tags}, "x", 5, true},
		{"a missing tag", s3types.LifecycleFilter{Tags: []Tag{{Key: "a", Value: "1"}, {Key: "c"}}}, "x", 5, false},
		{"greater than", s3types.LifecycleFilter{SizeGreaterThan: i64(4)}, "x", 5, true},
		{"not greater than", s3types.LifecycleFilter{SizeGreaterThan: i64(5)}, "x", 5, false},
		{"less than", s3types.LifecycleFilter{SizeLessThan: i64(6)}, "x", 5, true},
		{"not less than", s3types.LifecycleFilter{SizeLessThan: i64(5)}, "x", 5, false},
		{"and", s3types.LifecycleFilter{Prefix: "x", Tags: tags[:1], SizeGreaterThan: i64(0), SizeLessThan: i64(9)}, "xy", 5, true},
		{"and, prefix fails", s3types.LifecycleFilter{Prefix: "z", Tags: tags[:1]}, "xy", 5, false},
	} {
		if got := filterMatches(&c.f, c.key, c.size, tags); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDueAfter: creation plus the days, rounded up to the next midnight UTC (the next
// multiple of a shortened day); a sum past what a time holds is never due.
func TestDueAfter(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name string
		t    time.Time
		days int
		day  time.Duration
		want time.Time
		ok   bool
	}{
		{"mid-morning", utc("2026-01-01T10:00:00Z"), 1, 24 * time.Hour, utc("2026-01-03T00:00:00Z"), true},
		{"just after midnight", utc("2026-01-01T00:00:00.001Z"), 1, 24 * time.Hour, utc("2026-01-03T00:00:00Z"), true},
		{"at midnight", utc("2026-01-01T00:00:00Z"), 1, 24 * time.Hour, utc("2026-01-02T00:00:00Z"), true},
		{"thirty days", utc("2026-01-31T23:59:59Z"), 30, 24 * time.Hour, utc("2026-03-03T00:00:00Z"), true},
		{"other zone", time.Date(2026, 1, 1, 23, 0, 0, 0, time.FixedZone("X", -5*3600)), 1, 24 * time.Hour, utc("2026-01-04T00:00:00Z"), true},
		{"one-second day", utc("2026-01-01T00:00:10.3Z"), 2, time.Second, utc("2026-01-01T00:00:13Z"), true},
		{"huge days", utc("2026-01-01T00:00:00Z"), 1 << 30, 24 * time.Hour, time.Time{}, false},
		{"zero days", utc("2026-01-01T00:00:00Z"), 0, 24 * time.Hour, time.Time{}, false},
	} {
		got, ok := dueAfter(c.t, c.days, c.day)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestObjectExpiry: the earliest expiry of the enabled rules that select the object
// (the first rule among equals), by Days or Date; disabled rules, delete-marker rules
// and rules selecting other objects do not count.
func TestObjectExpiry(t *testing.T) {
	day := 24 * time.Hour
	mod := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	date := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	tru := true
	lc := &Lifecycle{Rules: []LifecycleRule{
		{ID: "disabled", Expiration: days(1)},
		{ID: "marker", Enabled: true, Expiration: &s3types.LifecycleExpiration{DeleteMarker: &tru}},
		{ID: "logs-10", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "logs/"}, Expiration: days(10)},
		{ID: "logs-3", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "logs/"}, Expiration: days(3)},
		{ID: "logs-3-again", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "logs/"}, Expiration: days(3)},
		{ID: "tmp-date", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "tmp/"}, Expiration: &s3types.LifecycleExpiration{Date: date}},
		{ID: "tmp-days", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "tmp/"}, Expiration: days(5)},
	}}
	for _, c := range []struct {
		key  string
		at   time.Time
		rule string
		ok   bool
	}{
		{"logs/a", time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), "logs-3", true},
		{"tmp/a", date, "tmp-date", true},
		{"other", time.Time{}, "", false},
	} {
		at, rule, ok := ObjectExpiry(lc, c.key, 1, nil, mod, day)
		if ok != c.ok || rule != c.rule || !at.Equal(c.at) {
			t.Errorf("%s: %v %q %v, want %v %q %v", c.key, at, rule, ok, c.at, c.rule, c.ok)
		}
	}
	if _, _, ok := ObjectExpiry(nil, "x", 1, nil, mod, day); ok {
		t.Error("no configuration expires something")
	}
}

// lifecycleFixture is a service with a bucket "lcb" owned by alice.
func lifecycleFixture(t *testing.T) (*Service, *storage.DB, Requester) {
	t.Helper()
	s, db := newTestService(t)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "lcb", "")
	return s, db, alice
}

func setLifecycle(t *testing.T, s *Service, r Requester, rules ...LifecycleRule) *Bucket {
	t.Helper()
	ctx := context.Background()
	if err := s.SetBucketLifecycle(ctx, r, "lcb", &Lifecycle{Rules: rules}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Bucket(ctx, "lcb")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func objectExists(t *testing.T, s *Service, r Requester, key string) bool {
	t.Helper()
	_, err := s.StatObject(context.Background(), r, "lcb", key)
	if err != nil && !IsCode(err, NoSuchKey) {
		t.Fatal(err)
	}
	return err == nil
}

// TestBucketLifecycleConfig: the owner sets, reads and deletes the configuration;
// another user may not, unless the bucket policy allows the action; a rule without ID
// gets one; none is NoSuchLifecycleConfiguration.
func TestBucketLifecycleConfig(t *testing.T) {
	ctx := context.Background()
	s, _, alice := lifecycleFixture(t)
	bob := mustUser(t, s, "bob")
	_, err := s.BucketLifecycle(ctx, alice, "lcb")
	wantCode(t, err, s3types.NoSuchLifecycleConfiguration)
	lc := &Lifecycle{Rules: []LifecycleRule{{Enabled: true, Expiration: days(2)}}}
	wantCode(t, s.SetBucketLifecycle(ctx, bob, "lcb", lc), AccessDenied)
	if err := s.SetBucketLifecycle(ctx, alice, "lcb", lc); err != nil {
		t.Fatal(err)
	}
	got, err := s.BucketLifecycle(ctx, alice, "lcb")
	if err != nil || len(got.Rules) != 1 || len(got.Rules[0].ID) != 32 || got.Rules[0].Expiration.Days != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	_, err = s.BucketLifecycle(ctx, bob, "lcb")
	wantCode(t, err, AccessDenied)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":%q},
		"Action":["s3:GetLifecycleConfiguration"],"Resource":"arn:aws:s3:::lcb"}]}`, bob.ID)
	if err := s.SetBucketPolicy(ctx, alice, "lcb", []byte(policy)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BucketLifecycle(ctx, bob, "lcb"); err != nil {
		t.Fatalf("bob, allowed by the policy: %v", err)
	}
	wantCode(t, s.DeleteBucketLifecycle(ctx, bob, "lcb"), AccessDenied)
	if err := s.DeleteBucketLifecycle(ctx, alice, "lcb"); err != nil {
		t.Fatal(err)
	}
	_, err = s.BucketLifecycle(ctx, alice, "lcb")
	wantCode(t, err, s3types.NoSuchLifecycleConfiguration)
	if err := s.DeleteBucketLifecycle(ctx, alice, "lcb"); err != nil {
		t.Fatalf("delete without one: %v", err)
	}
	bad := &Lifecycle{Rules: []LifecycleRule{{ID: "r", Enabled: true, Expiration: days(0)}}}
	wantCode(t, s.SetBucketLifecycle(ctx, alice, "lcb", bad), InvalidArgument)
}

// TestLifecycleWorker, on a fake clock: objects under a rule's prefix, with a rule's
// tag, or in a rule's size range expire at creation plus the days rounded up to
// midnight, not before; other objects stay; an upload under an abort rule is aborted,
// one elsewhere stays; a disabled rule does nothing.
func TestLifecycleWorker(t *testing.T) {
	ctx := context.Background()
	s, _, alice := lifecycleFixture(t)
	put(t, s, alice, "lcb", "logs/a", []byte("a"))
	put(t, s, alice, "lcb", "keep/b", []byte("b"))
	put(t, s, alice, "lcb", "big", bytes.Repeat([]byte("x"), 100))
	put(t, s, alice, "lcb", "disabled/d", []byte("d"))
	if _, err := s.PutObject(ctx, alice, "lcb", "tagged", PutInput{Body: strings.NewReader("t"), Size: 1,
		Tags: []Tag{{Key: "tmp", Value: "yes"}}, HasTags: true}); err != nil {
		t.Fatal(err)
	}
	old, err := s.CreateUpload(ctx, alice, "lcb", "uploads/x", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateUpload(ctx, alice, "lcb", "elsewhere", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	setLifecycle(t, s, alice,
		LifecycleRule{ID: "logs", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "logs/"}, Expiration: days(1)},
		LifecycleRule{ID: "tag", Enabled: true, Filter: s3types.LifecycleFilter{Tags: []Tag{{Key: "tmp", Value: "yes"}}}, Expiration: days(2)},
		LifecycleRule{ID: "big", Enabled: true, Filter: s3types.LifecycleFilter{SizeGreaterThan: i64(50)}, Expiration: days(1)},
		LifecycleRule{ID: "off", Filter: s3types.LifecycleFilter{Prefix: "disabled/"}, Expiration: days(1)},
		LifecycleRule{ID: "mpu", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "uploads/"},
			AbortUpload: &s3types.AbortIncompleteUpload{DaysAfterInitiation: 1}},
	)
	now := time.Now().UTC()
	midnight := now.Truncate(24 * time.Hour)
	present := func(keys ...string) {
		t.Helper()
		for _, k := range keys {
			if !objectExists(t, s, alice, k) {
				t.Errorf("%s was expired", k)
			}
		}
	}
	// Before the next-but-one midnight nothing is due.
	if err := s.lifecycleCycle(ctx, midnight.Add(48*time.Hour-time.Second)); err != nil {
		t.Fatal(err)
	}
	present("logs/a", "keep/b", "big", "disabled/d", "tagged")
	// At it, the one-day rules are.
	if err := s.lifecycleCycle(ctx, midnight.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	present("keep/b", "disabled/d", "tagged")
	if objectExists(t, s, alice, "logs/a") || objectExists(t, s, alice, "big") {
		t.Error("logs/a and big should have expired")
	}
	if _, err := s.upload(s.db.Get, "lcb", "uploads/x", old.ID); !IsCode(err, NoSuchUpload) {
		t.Errorf("upload under the abort rule: %v, want NoSuchUpload", err)
	}
	if _, err := s.upload(s.db.Get, "lcb", "elsewhere", other.ID); err != nil {
		t.Errorf("upload elsewhere: %v", err)
	}
	// A day later, the two-day tag rule.
	if err := s.lifecycleCycle(ctx, midnight.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	present("keep/b", "disabled/d")
	if objectExists(t, s, alice, "tagged") {
		t.Error("tagged should have expired")
	}
	st := s.LifecycleStats()
	if st["s3_lifecycle_objects_expired_total"] != int64(3) || st["s3_lifecycle_uploads_aborted_total"] != int64(1) {
		t.Errorf("stats %v", st)
	}
	if err := s.AbortUpload(ctx, alice, "lcb", "elsewhere", other.ID); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycleVisitsOnlyDueEntries: a cycle visits only the index entries old enough
// for a rule to be due, at most its budget of them, and resumes after the last one.
func TestLifecycleVisitsOnlyDueEntries(t *testing.T) {
	ctx := context.Background()
	s, _, alice := lifecycleFixture(t)
	for i := range 5 {
		put(t, s, alice, "lcb", fmt.Sprint("keep/", i), []byte("k"))
	}
	b := setLifecycle(t, s, alice, LifecycleRule{ID: "r", Enabled: true, Filter: s3types.LifecycleFilter{Prefix: "x/"}, Expiration: days(3)})
	now := time.Now()
	if n, err := s.expireObjects(ctx, b, now.Add(24*time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("one day on: visited %d entries (%v), want none: none is old enough", n, err)
	}
	later := now.Add(5 * 24 * time.Hour)
	if n, err := s.expireObjects(ctx, b, later, 2); err != nil || n != 2 {
		t.Fatalf("visited %d (%v), want the budget of 2", n, err)
	}
	if n, err := s.expireObjects(ctx, b, later, 100); err != nil || n != 3 {
		t.Fatalf("visited %d (%v), want the 3 after the cursor", n, err)
	}
	if n, err := s.expireObjects(ctx, b, later, 100); err != nil || n != 5 {
		t.Fatalf("a new round visited %d (%v), want all 5", n, err)
	}
}

// TestLifecycleExpireIsConditional: an object rewritten or retagged after the worker
// read its entry is not expired; an entry without its version is dropped.
func TestLifecycleExpireIsConditional(t *testing.T) {
	ctx := context.Background()
	s, db, alice := lifecycleFixture(t)
	m := put(t, s, alice, "lcb", "obj", []byte("1"))
	setLifecycle(t, s, alice, LifecycleRule{ID: "r", Enabled: true,
		Filter: s3types.LifecycleFilter{Tags: []Tag{{Key: "t", Value: "1"}}}, Expiration: days(1)})
	if err := s.SetObjectTagging(ctx, alice, "lcb", "obj", []Tag{{Key: "t", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * 24 * time.Hour)
	// Retagged so that the rule no longer selects it: kept.
	if err := s.SetObjectTagging(ctx, alice, "lcb", "obj", []Tag{{Key: "t", Value: "2"}}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.expireObject(ctx, "lcb", "obj", m.LastModified, later); err != nil || res != kept {
		t.Fatalf("retagged: %v %v, want kept", res, err)
	}
	// Rewritten: the entry read names a version that is gone.
	time.Sleep(2 * time.Millisecond)
	m2 := put(t, s, alice, "lcb", "obj", []byte("2"))
	if res, err := s.expireObject(ctx, "lcb", "obj", m.LastModified, later); err != nil || res != stale {
		t.Fatalf("rewritten: %v %v, want stale", res, err)
	}
	if !objectExists(t, s, alice, "obj") {
		t.Fatal("a rewritten object was expired")
	}
	// A stale entry (as a backfill racing a rewrite leaves) is dropped by a cycle.
	staleEntry := objectEntryKey("lcb", m.LastModified, "obj")
	if err := db.Put(staleEntry, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectTagging(ctx, alice, "lcb", "obj", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.lifecycleCycle(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(staleEntry); err == nil {
		t.Error("the stale entry is still there")
	}
	if _, err := db.Get(objectEntryKey("lcb", m2.LastModified, "obj")); err != nil {
		t.Errorf("the current entry: %v", err)
	}
}

// TestLifecycleIndex: the store derives one entry per object at its last-modified time
// and one per upload at its initiation, moved by a rewrite and removed by a delete,
// completion or abort; a store without them (written before) is backfilled; Check
// reports an entry without its record and a record without its entry.
func TestLifecycleIndex(t *testing.T) {
	ctx := context.Background()
	s, db, alice := lifecycleFixture(t)
	m1 := put(t, s, alice, "lcb", "a", []byte("1"))
	count := func(table string) int { return countPrefix(t, db, table) }
	time.Sleep(2 * time.Millisecond)
	m2 := put(t, s, alice, "lcb", "a", []byte("2"))
	if _, err := db.Get(objectEntryKey("lcb", m1.LastModified, "a")); err == nil {
		t.Error("the entry of the replaced version is still there")
	}
	if _, err := db.Get(objectEntryKey("lcb", m2.LastModified, "a")); err != nil {
		t.Errorf("entry of the current version: %v", err)
	}
	u, err := s.CreateUpload(ctx, alice, "lcb", "up", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(uploadEntryKey("lcb", u.Initiated, "up", u.ID)); err != nil {
		t.Errorf("entry of the upload: %v", err)
	}
	if count("lo") != 1 || count("lu") != 1 {
		t.Fatalf("%d object entries, %d upload entries", count("lo"), count("lu"))
	}
	// Remove the entries and the version record: the backfill puts them back.
	drop := func(prefix []byte) {
		t.Helper()
		it := db.IteratePrefix(prefix)
		var keys [][]byte
		for it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
		}
		it.Release()
		for _, k := range keys {
			if err := db.Delete(k, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, table := range []string{"lo", "lu", "lv"} {
		drop(storage.KeyString(storage.TagS3, table))
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("before the backfill, missing entries are expected: %v", err)
	}
	if err := s.backfillLifecycleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if count("lo") != 1 || count("lu") != 1 || count("lv") != 1 {
		t.Fatalf("after the backfill: %d object entries, %d upload entries, %d versions", count("lo"), count("lu"), count("lv"))
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("after the backfill: %v", err)
	}
	// Check finds an orphan entry and a missing one.
	orphan := objectEntryKey("lcb", m2.LastModified, "gone")
	if err := db.Put(orphan, nil, false); err != nil {
		t.Fatal(err)
	}
	drop(objectEntryKey("lcb", m2.LastModified, "a"))
	rep, err := Check(db, nil)
	if rep.Problems != 2 || !strings.Contains(fmt.Sprint(err), "without its record") || !strings.Contains(fmt.Sprint(err), "lacks the entry") {
		t.Fatalf("%d problems: %v", rep.Problems, err)
	}
	drop(orphan)
	if err := db.Put(objectEntryKey("lcb", m2.LastModified, "a"), nil, false); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortUpload(ctx, alice, "lcb", "up", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObject(ctx, alice, "lcb", "a"); err != nil {
		t.Fatal(err)
	}
	if count("lo") != 0 || count("lu") != 0 {
		t.Fatalf("after delete and abort: %d object entries, %d upload entries", count("lo"), count("lu"))
	}
}

// BenchmarkDeriveS3 measures what the lifecycle index adds to a manifest commit: the
// derive of a rewrite (old and new manifests of a 1 KiB object with metadata and
// tags), which decodes two times and moves the entry.
func BenchmarkDeriveS3(b *testing.B) {
	m := Manifest{UUID: strings.Repeat("ab", 16), Size: 1024, ChunkSize: DefaultChunkSize, ETag: strings.Repeat("cd", 16),
		ContentType: "text/plain", LastModified: time.Now().UTC(), Meta: []MetaPair{{"color", "blue"}},
		Owner: Owner{ID: strings.Repeat("e", 64), DisplayName: "bench"}, Tags: []Tag{{Key: "k", Value: "v"}}}
	m.ACL.Owner = m.Owner
	old, _ := json.Marshal(m)
	m.LastModified = m.LastModified.Add(time.Millisecond)
	next, _ := json.Marshal(m)
	key := objectKey("bench", "some/object/key")
	b.ReportAllocs()
	for b.Loop() {
		var d storage.Derived
		if err := deriveS3(key, old, next, &d); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIndexTime: the time found in an encoded record is the one decoding it gives,
// whatever its strings hold (a content type, metadata or tags that spell the member),
// for manifests and uploads, and a record without the member is decoded.
func TestIndexTime(t *testing.T) {
	when := time.Date(2026, 11, 27, 10, 11, 12, 345000000, time.UTC)
	spell := `x","last_modified":"2001-01-01T00:00:00Z","initiated":"2001-01-01T00:00:00Z`
	m := Manifest{UUID: "u", ContentType: spell, LastModified: when, Meta: []MetaPair{{spell, spell}},
		Headers: map[string]string{"Cache-Control": spell}, Tags: []Tag{{Key: spell, Value: spell}}}
	mv, _ := json.Marshal(m)
	u := Upload{Bucket: spell, Key: spell, ID: "id", Owner: Owner{ID: spell, DisplayName: spell}, Initiated: when}
	uv, _ := json.Marshal(u)
	for _, c := range []struct {
		name   string
		upload bool
		v      string
		want   time.Time
	}{
		{"manifest", false, string(mv), when},
		{"upload", true, string(uv), when},
		{"member first", false, `{"last_modified":"2026-11-27T10:11:12.345Z"}`, when},
		{"spaced", true, `{"id":"x", "initiated" : "2026-11-27T10:11:12.345Z"}`, when},
	} {
		got, err := indexTime(c.upload, []byte(c.v))
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := indexTime(false, []byte(`{"last_modified":`)); err == nil {
		t.Error("a record that does not decode has a time")
	}
}

// TestLifecycleSkipsBadRecord: a manifest that does not decode (disk damage: the store
// refuses to commit one) is passed over; the objects after it still expire.
func TestLifecycleSkipsBadRecord(t *testing.T) {
	ctx := context.Background()
	s, db, alice := lifecycleFixture(t)
	b := setLifecycle(t, s, alice, LifecycleRule{ID: "r", Enabled: true, Expiration: days(1)})
	bad := objectEntryKey("lcb", time.Now().Add(-time.Hour), "a-bad")
	db.RegisterDerive(storage.TagS3, nil)
	if err := db.Put(objectKey("lcb", "a-bad"), []byte("{not json"), false); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(bad, nil, false); err != nil {
		t.Fatal(err)
	}
	db.RegisterDerive(storage.TagS3, deriveS3)
	put(t, s, alice, "lcb", "b-good", []byte("x"))
	n, err := s.expireObjects(ctx, b, time.Now().Add(3*24*time.Hour), 100)
	if n != 2 || err == nil {
		t.Fatalf("visited %d (%v), want both entries and the bad record's error", n, err)
	}
	if objectExists(t, s, alice, "b-good") {
		t.Error("the object after the bad record did not expire")
	}
	for _, k := range [][]byte{objectKey("lcb", "a-bad"), bad} {
		if err := db.Delete(k, false); err != nil {
			t.Fatal(err)
		}
	}
}
