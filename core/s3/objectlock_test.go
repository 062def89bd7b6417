package s3

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func codeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		return "?"
	}
	return e.Code
}

// TestCheckLockConfig: a default rule has a known mode and exactly one period within
// AWS's bounds; no rule at all is valid.
func TestCheckLockConfig(t *testing.T) {
	for _, tc := range []struct {
		c    ObjectLockConfig
		code Code
	}{
		{ObjectLockConfig{}, ""},
		{ObjectLockConfig{Mode: LockGovernance, Days: 1}, ""},
		{ObjectLockConfig{Mode: LockCompliance, Years: 100}, ""},
		{ObjectLockConfig{Mode: LockCompliance, Days: MaxRetentionDays}, ""},
		{ObjectLockConfig{Mode: "governance", Days: 1}, MalformedXML},
		{ObjectLockConfig{Days: 1}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance, Days: 1, Years: 1}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance, Days: -1}, InvalidArgument},
		{ObjectLockConfig{Mode: LockGovernance, Days: MaxRetentionDays + 1}, InvalidArgument},
		{ObjectLockConfig{Mode: LockGovernance, Years: MaxRetentionYears + 1}, InvalidArgument},
	} {
		if got := codeOf(CheckLockConfig(tc.c)); got != tc.code {
			t.Errorf("CheckLockConfig(%+v) = %q, want %q", tc.c, got, tc.code)
		}
	}
}

// TestDefaultRetention: the default rule's period counts from the write, in days or
// calendar years; no rule gives no retention.
func TestDefaultRetention(t *testing.T) {
	now := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	if r := defaultRetention(nil, now); r != nil {
		t.Errorf("nil config gave %+v", r)
	}
	if r := defaultRetention(&ObjectLockConfig{}, now); r != nil {
		t.Errorf("config without a rule gave %+v", r)
	}
	r := defaultRetention(&ObjectLockConfig{Mode: LockGovernance, Days: 2}, now)
	if r.Mode != LockGovernance || !r.Until.Equal(now.Add(48*time.Hour)) {
		t.Errorf("2 days: %+v", r)
	}
	r = defaultRetention(&ObjectLockConfig{Mode: LockCompliance, Years: 1}, now)
	if want := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC); !r.Until.Equal(want) {
		t.Errorf("1 year from Feb 29: %v, want %v", r.Until, want)
	}
}

// TestRetentionRules: which retention changes and which removals a lock allows.
func TestRetentionRules(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	later, latest, past := now.Add(time.Hour), now.Add(2*time.Hour), now.Add(-time.Hour)
	gov := &Retention{Mode: LockGovernance, Until: later}
	comp := &Retention{Mode: LockCompliance, Until: later}
	expired := &Retention{Mode: LockCompliance, Until: past}
	for _, tc := range []struct {
		name      string
		old, next *Retention
		bypass    bool
		code      Code
	}{
		{"none to governance", nil, gov, false, ""},
		{"governance extended", gov, &Retention{Mode: LockGovernance, Until: latest}, false, ""},
		{"governance to compliance", gov, comp, false, ""},
		{"governance shortened", gov, &Retention{Mode: LockGovernance, Until: now.Add(time.Minute)}, false, AccessDenied},
		{"governance shortened with bypass", gov, &Retention{Mode: LockGovernance, Until: now.Add(time.Minute)}, true, ""},
		{"governance removed", gov, nil, false, AccessDenied},
		{"governance removed with bypass", gov, nil, true, ""},
		{"compliance extended", comp, &Retention{Mode: LockCompliance, Until: latest}, false, ""},
		{"compliance same", comp, comp, false, ""},
		{"compliance to governance", comp, &Retention{Mode: LockGovernance, Until: latest}, true, AccessDenied},
		{"compliance shortened with bypass", comp, &Retention{Mode: LockCompliance, Until: now.Add(time.Minute)}, true, AccessDenied},
		{"compliance removed with bypass", comp, nil, true, AccessDenied},
		{"expired compliance removed", expired, nil, false, ""},
	} {
		if got := codeOf(changeRetention(tc.old, tc.next, now, tc.bypass)); got != tc.code {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.code)
		}
	}
	for _, tc := range []struct {
		name   string
		r      *Retention
		hold   bool
		bypass bool
		code   Code
	}{
		{"unlocked", nil, false, false, ""},
		{"legal hold", nil, true, true, AccessDenied},
		{"governance", gov, false, false, AccessDenied},
		{"governance bypassed", gov, false, true, ""},
		{"governance bypassed under hold", gov, true, true, AccessDenied},
		{"compliance bypassed", comp, false, true, AccessDenied},
		{"expired", expired, false, false, ""},
	} {
		if got := codeOf(lockRefusal(tc.r, tc.hold, now, tc.bypass)); got != tc.code {
			t.Errorf("removal, %s: %q, want %q", tc.name, got, tc.code)
		}
	}
	if got := codeOf(CheckRetention(Retention{Mode: LockGovernance, Until: past}, now)); got != InvalidArgument {
		t.Errorf("retention in the past: %q", got)
	}
	if got := codeOf(CheckRetention(Retention{Mode: "X", Until: later}, now)); got != MalformedXML {
		t.Errorf("unknown mode: %q", got)
	}
}

// TestObjectLockService: buckets with Object Lock (at creation, or later on a
// versioned bucket), default and explicit retention, legal holds, and what each
// refuses: permanent deletes of protected versions (GOVERNANCE only with a permitted
// bypass), shortening COMPLIANCE, suspending versioning. Delete markers stay allowed.
func TestObjectLockService(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	acl, err := CannedACL("public-read-write", Owner{ID: alice.ID, DisplayName: alice.DisplayName}, Owner{ID: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucketWith(ctx, alice, "locked", acl, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.BucketVersioning(ctx, alice, "locked"); err != nil || st != VersioningEnabled {
		t.Fatalf("a lock bucket's versioning: %q, %v", st, err)
	}
	wantCode(t, s.SetBucketVersioning(ctx, alice, "locked", VersioningSuspended), InvalidBucketState)
	if c, err := s.ObjectLockConfiguration(ctx, alice, "locked"); err != nil || c != (ObjectLockConfig{}) {
		t.Fatalf("lock configuration: %+v, %v", c, err)
	}
	_, err = s.ObjectLockConfiguration(ctx, bob, "locked")
	wantCode(t, err, AccessDenied)
	wantCode(t, s.SetObjectLockConfiguration(ctx, alice, "locked", ObjectLockConfig{Mode: LockGovernance}), MalformedXML)
	wantCode(t, s.SetObjectLockConfiguration(ctx, bob, "locked", ObjectLockConfig{Mode: LockGovernance, Days: 1}), AccessDenied)
	if err := s.SetObjectLockConfiguration(ctx, alice, "locked", ObjectLockConfig{Mode: LockGovernance, Days: 1}); err != nil {
		t.Fatal(err)
	}
	put := func(r Requester, key string, lr LockRequest) *Manifest {
		t.Helper()
		m, err := s.PutObject(ctx, r, "locked", key, PutInput{Body: strings.NewReader("data"), Size: 4, Lock: lr})
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return m
	}

	// The default rule: GOVERNANCE for a day.
	gov := put(bob, "gov", LockRequest{})
	if gov.Retention == nil || gov.Retention.Mode != LockGovernance || time.Until(gov.Retention.Until) < 23*time.Hour {
		t.Fatalf("default retention: %+v", gov.Retention)
	}
	if r, err := s.ObjectRetention(ctx, alice, "locked", "gov", gov.VersionID); err != nil || r != *gov.Retention {
		t.Fatalf("retention read back: %+v, %v", r, err)
	}
	_, err = s.DeleteObjectVersion(ctx, alice, "locked", "gov", gov.VersionID)
	wantCode(t, err, AccessDenied)
	_, err = s.DeleteObjectVersionBypassing(ctx, bob, "locked", "gov", gov.VersionID, true)
	wantCode(t, err, AccessDenied) // bob may write, not bypass
	if res, err := s.DeleteObjectVersion(ctx, bob, "locked", "gov", ""); err != nil || !res.DeleteMarker {
		t.Fatalf("a delete marker over a locked version: %+v, %v", res, err)
	}
	wantCode(t, s.SetObjectRetention(ctx, alice, "locked", "gov", gov.VersionID, nil, false), AccessDenied)
	if _, err := s.DeleteObjectVersionBypassing(ctx, alice, "locked", "gov", gov.VersionID, true); err != nil {
		t.Fatalf("the owner bypassing governance: %v", err)
	}

	// COMPLIANCE, asked for by the write: only ever extended.
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	comp := put(alice, "comp", LockRequest{Asked: true, Retention: &Retention{Mode: LockCompliance, Until: until}})
	if comp.Retention == nil || comp.Retention.Mode != LockCompliance || !comp.Retention.Until.Equal(until) {
		t.Fatalf("explicit retention: %+v", comp.Retention)
	}
	_, err = s.DeleteObjectVersionBypassing(ctx, alice, "locked", "comp", comp.VersionID, true)
	wantCode(t, err, AccessDenied)
	shorter := &Retention{Mode: LockCompliance, Until: until.Add(-time.Minute)}
	wantCode(t, s.SetObjectRetention(ctx, alice, "locked", "comp", comp.VersionID, shorter, true), AccessDenied)
	weaker := &Retention{Mode: LockGovernance, Until: until.Add(time.Hour)}
	wantCode(t, s.SetObjectRetention(ctx, alice, "locked", "comp", comp.VersionID, weaker, true), AccessDenied)
	longer := &Retention{Mode: LockCompliance, Until: until.Add(time.Hour)}
	if err := s.SetObjectRetention(ctx, alice, "locked", "comp", "", longer, false); err != nil {
		t.Fatalf("extending compliance: %v", err)
	}
	wantCode(t, s.SetObjectRetention(ctx, alice, "locked", "comp", "", &Retention{Mode: LockCompliance, Until: time.Now().Add(-time.Hour)}, false), InvalidArgument)
	// Writing a retention or a hold takes the lock permissions, not bucket WRITE.
	_, err = s.PutObject(ctx, bob, "locked", "x", PutInput{Body: strings.NewReader(""), Lock: LockRequest{Asked: true, LegalHold: true}})
	wantCode(t, err, AccessDenied)

	// A legal hold, without the default rule: refuses until lifted.
	if err := s.SetObjectLockConfiguration(ctx, alice, "locked", ObjectLockConfig{}); err != nil {
		t.Fatal(err)
	}
	held := put(alice, "held", LockRequest{Asked: true, LegalHold: true})
	if held.Retention != nil || !held.LegalHold {
		t.Fatalf("held version: %+v %v", held.Retention, held.LegalHold)
	}
	_, err = s.ObjectRetention(ctx, alice, "locked", "held", "")
	wantCode(t, err, NoSuchObjectLockConfiguration)
	_, err = s.DeleteObjectVersionBypassing(ctx, alice, "locked", "held", held.VersionID, true)
	wantCode(t, err, AccessDenied)
	if err := s.SetObjectLegalHold(ctx, alice, "locked", "held", held.VersionID, false); err != nil {
		t.Fatal(err)
	}
	if on, err := s.ObjectLegalHold(ctx, alice, "locked", "held", held.VersionID); err != nil || on {
		t.Fatalf("hold lifted: %v, %v", on, err)
	}
	if _, err := s.DeleteObjectVersion(ctx, alice, "locked", "held", held.VersionID); err != nil {
		t.Fatalf("delete after the hold: %v", err)
	}

	// Multipart uploads carry the lock asked for at initiation.
	u, err := s.CreateUpload(ctx, alice, "locked", "mp", PutInput{Lock: LockRequest{Asked: true, LegalHold: true}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, alice, "locked", "mp", u.ID, 1, PutInput{Body: strings.NewReader("part"), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := s.CompleteUpload(ctx, alice, "locked", "mp", u.ID, []CompletePart{{Number: 1, ETag: p.ETag}}, WriteConditions{})
	if err != nil || !mp.LegalHold {
		t.Fatalf("completed upload: %+v, %v", mp, err)
	}

	// A bucket without Object Lock takes none of it, and gets it only once versioned.
	mustBucket(t, s, alice, "plain", "")
	_, err = s.PutObject(ctx, alice, "plain", "k", PutInput{Body: strings.NewReader(""), Lock: LockRequest{Asked: true, LegalHold: true}})
	wantCode(t, err, InvalidRequest)
	_, err = s.ObjectLockConfiguration(ctx, alice, "plain")
	wantCode(t, err, ObjectLockConfigurationNotFound)
	_, err = s.ObjectRetention(ctx, alice, "plain", "k", "")
	wantCode(t, err, InvalidRequest)
	wantCode(t, s.SetObjectLockConfiguration(ctx, alice, "plain", ObjectLockConfig{}), InvalidBucketState)
	if err := s.SetBucketVersioning(ctx, alice, "plain", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectLockConfiguration(ctx, alice, "plain", ObjectLockConfig{Mode: LockCompliance, Years: 1}); err != nil {
		t.Fatalf("lock on a versioned bucket: %v", err)
	}
}

// TestCheckObjectLock: Check reports a lock its bucket could not have given (a legal
// hold in a bucket without Object Lock, an unknown retention mode) and a lock bucket
// that is not versioned; a consistent lock bucket passes.
func TestCheckObjectLock(t *testing.T) {
	s, db := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	acl, err := CannedACL("", Owner{ID: alice.ID, DisplayName: alice.DisplayName}, Owner{ID: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucketWith(ctx, alice, "locked", acl, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject(ctx, alice, "locked", "k", PutInput{Body: strings.NewReader("x"), Size: 1,
		Lock: LockRequest{Asked: true, LegalHold: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("a consistent lock bucket: %v", err)
	}
	mustBucket(t, s, alice, "plain", "")
	m, err := s.PutObject(ctx, alice, "plain", "k", PutInput{Body: strings.NewReader("x"), Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	good, err := db.Get(objectKey("plain", "k"))
	if err != nil {
		t.Fatal(err)
	}
	goodBucket, err := db.Get(bucketKey("locked"))
	if err != nil {
		t.Fatal(err)
	}
	m.LegalHold = true
	m.Retention = &Retention{Mode: "FOREVER", Until: time.Now()}
	v, _ := json.Marshal(m)
	if err := db.Put(objectKey("plain", "k"), v, false); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Bucket(ctx, "locked")
	b.Versioning = VersioningSuspended
	bv, _ := json.Marshal(b)
	if err := db.Put(bucketKey("locked"), bv, false); err != nil {
		t.Fatal(err)
	}
	_, err = Check(db, nil)
	for _, want := range []string{"plain/k: an Object Lock in a bucket without Object Lock", `bucket locked: Object Lock with versioning "Suspended"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v; want %q", err, want)
		}
	}
	// Put the records back for the invariant check after the test.
	if db.Put(objectKey("plain", "k"), good, false) != nil || db.Put(bucketKey("locked"), goodBucket, false) != nil {
		t.Fatal("restoring the records")
	}
}
