package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// readVersion returns the data of version id of bucket/key.
func readVersion(t *testing.T, s *Service, r Requester, bucket, key, id string) []byte {
	t.Helper()
	o, err := s.OpenObjectVersion(context.Background(), r, bucket, key, id)
	if err != nil {
		t.Fatalf("open %s/%s version %q: %v", bucket, key, id, err)
	}
	defer o.Close()
	var b bytes.Buffer
	if err := o.WriteRange(context.Background(), &b, 0, o.Manifest.Size); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// versionsOf lists every version of the bucket in pages of max entries, and returns
// them as "key:id:flags" strings (flags: L latest, D delete marker) with the ids.
func versionsOf(t *testing.T, s *Service, r Requester, bucket string, max int) (out []string, ids []string) {
	t.Helper()
	o := VersionListOptions{MaxKeys: max}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the listing does not end")
		}
		l, err := s.ListObjectVersions(context.Background(), r, bucket, o)
		if err != nil {
			t.Fatalf("list versions: %v", err)
		}
		for _, v := range l.Versions {
			flags := ""
			if v.IsLatest {
				flags += "L"
			}
			if v.DeleteMarker {
				flags += "D"
			}
			out = append(out, v.Key+":"+flags)
			ids = append(ids, v.VersionID)
		}
		if !l.Truncated {
			return out, ids
		}
		if len(l.Versions) == 0 {
			t.Fatal("a truncated page lists nothing")
		}
		o.KeyMarker, o.VersionIDMarker = l.NextKeyMarker, l.NextVersionIDMarker
	}
}

func setVersioning(t *testing.T, s *Service, r Requester, bucket, status string) {
	t.Helper()
	if err := s.SetBucketVersioning(context.Background(), r, bucket, status); err != nil {
		t.Fatalf("set versioning %s: %v", status, err)
	}
}

func TestBucketVersioningConfig(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "bkt", "public-read-write")
	if st, err := s.BucketVersioning(ctx, alice, "bkt"); err != nil || st != "" {
		t.Fatalf("new bucket: %q %v", st, err)
	}
	for _, tc := range []struct {
		name   string
		as     Requester
		status string
		code   Code
	}{
		{"bad status", alice, "Disabled", IllegalVersioningConfiguration},
		{"empty status", alice, "", IllegalVersioningConfiguration},
		{"lower case", alice, "enabled", IllegalVersioningConfiguration},
		{"not the owner", bob, VersioningEnabled, AccessDenied},
		{"enable", alice, VersioningEnabled, ""},
		{"suspend", alice, VersioningSuspended, ""},
		{"suspend again", alice, VersioningSuspended, ""},
		{"enable again", alice, VersioningEnabled, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.SetBucketVersioning(ctx, tc.as, "bkt", tc.status)
			if tc.code == "" && err != nil || tc.code != "" && !IsCode(err, tc.code) {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
			if tc.code == "" {
				if st, _ := s.BucketVersioning(ctx, alice, "bkt"); st != tc.status {
					t.Fatalf("status %q, want %q", st, tc.status)
				}
			}
		})
	}
	if _, err := s.BucketVersioning(ctx, bob, "bkt"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob reads the configuration: %v", err)
	}
}

// TestVersionSlots: slots order newest first, ids round-trip, and malformed ids are
// refused.
func TestVersionSlots(t *testing.T) {
	a, b := newSlot(5), newSlot(6)
	if bytes.Compare(b[:], a[:]) >= 0 {
		t.Fatal("a newer slot does not sort first")
	}
	got, err := parseSlot(a.id())
	if err != nil || got != a || len(a.id()) != versionIDLength {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range []string{"", "nul", "NULL", "abc", strings.Repeat("A", 21), strings.Repeat("A", 23), a.id()[:21] + "+", a.id()[:21] + "/"} {
		if CheckVersionID(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if CheckVersionID("null") != nil || CheckVersionID(a.id()) != nil {
		t.Fatal("a good id refused")
	}
}

// TestVersionedObjects walks a key through the versioning states: the null version
// of before, versions kept on overwrite, delete markers, permanent deletes that make
// the next newest current, and suspended writes that replace the null version.
func TestVersionedObjects(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(string(kind), func(t *testing.T) { testVersionedObjects(t, kind) })
	}
}

func testVersionedObjects(t *testing.T, kind blobKind) {
	s, _ := newTestServiceBlobs(t, kind)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	long := func(tag string) []byte { return []byte(strings.Repeat(tag, 40)) } // several chunks
	put(t, s, alice, "bkt", "k", long("0"))                                    // the null version
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v1 := put(t, s, alice, "bkt", "k", long("1"))
	v2 := put(t, s, alice, "bkt", "k", []byte("two"))
	if v1.VersionID == "" || v2.VersionID == "" || v1.VersionID == v2.VersionID {
		t.Fatalf("version ids %q %q", v1.VersionID, v2.VersionID)
	}
	waitCollected(t, s)
	if got := read(t, s, alice, "bkt", "k"); string(got) != "two" {
		t.Fatalf("current: %q", got)
	}
	for id, want := range map[string][]byte{"null": long("0"), v1.VersionID: long("1"), v2.VersionID: []byte("two")} {
		if got := readVersion(t, s, alice, "bkt", "k", id); !bytes.Equal(got, want) {
			t.Fatalf("version %s: %q", id, got)
		}
	}
	list, ids := versionsOf(t, s, alice, "bkt", 1000)
	if strings.Join(list, " ") != "k:L k: k:" || ids[0] != v2.VersionID || ids[1] != v1.VersionID || ids[2] != "null" {
		t.Fatalf("versions %v %v", list, ids)
	}

	// A delete makes a marker: the key reads as missing, with the marker's id.
	res, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", "")
	if err != nil || !res.DeleteMarker || res.VersionID == "" {
		t.Fatalf("delete: %+v %v", res, err)
	}
	_, err = s.OpenObject(ctx, alice, "bkt", "k")
	var me *MarkerError
	if !IsCode(err, NoSuchKey) || !errors.As(err, &me) || me.VersionID != res.VersionID {
		t.Fatalf("read after the marker: %v", err)
	}
	_, err = s.OpenObjectVersion(ctx, alice, "bkt", "k", res.VersionID)
	if !IsCode(err, MethodNotAllowed) || !errors.As(err, &me) {
		t.Fatalf("read of the marker: %v", err)
	}
	if l, _ := s.ListObjects(ctx, alice, "bkt", ListOptions{MaxKeys: 10}); len(l.Objects) != 0 {
		t.Fatalf("listed behind a marker: %+v", l.Objects)
	}
	if list, _ := versionsOf(t, s, alice, "bkt", 1000); strings.Join(list, " ") != "k:LD k: k: k:" {
		t.Fatalf("versions with the marker %v", list)
	}
	// Deleting the marker brings v2 back.
	if res, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", res.VersionID); err != nil || !res.DeleteMarker {
		t.Fatalf("delete the marker: %+v %v", res, err)
	}
	if got := read(t, s, alice, "bkt", "k"); string(got) != "two" {
		t.Fatalf("after the marker's delete: %q", got)
	}
	// Deleting the current version for good makes v1 current; its data stays.
	if _, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", v2.VersionID); err != nil {
		t.Fatal(err)
	}
	waitCollected(t, s)
	if got := read(t, s, alice, "bkt", "k"); !bytes.Equal(got, long("1")) {
		t.Fatalf("after deleting v2: %q", got)
	}
	if _, err := s.OpenObjectVersion(ctx, alice, "bkt", "k", v2.VersionID); !IsCode(err, NoSuchVersion) {
		t.Fatalf("deleted version: %v", err)
	}
	// Deleting an absent version is no error.
	if _, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", v2.VersionID); err != nil {
		t.Fatal(err)
	}

	// Suspended: a write replaces the null version (its data is collected) and
	// keeps v1.
	setVersioning(t, s, alice, "bkt", VersioningSuspended)
	n := put(t, s, alice, "bkt", "k", []byte("new null"))
	if n.VersionID != "" {
		t.Fatalf("suspended write got id %q", n.VersionID)
	}
	list, ids = versionsOf(t, s, alice, "bkt", 1000)
	if strings.Join(list, " ") != "k:L k:" || ids[0] != "null" || ids[1] != v1.VersionID {
		t.Fatalf("suspended versions %v %v", list, ids)
	}
	put(t, s, alice, "bkt", "k", []byte("newer null"))
	if got := readVersion(t, s, alice, "bkt", "k", "null"); string(got) != "newer null" {
		t.Fatalf("null version %q", got)
	}
	// A suspended delete: a null delete marker replaces the null version.
	if res, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", ""); err != nil || res.VersionID != "null" || !res.DeleteMarker {
		t.Fatalf("suspended delete %+v %v", res, err)
	}
	if list, _ := versionsOf(t, s, alice, "bkt", 1000); strings.Join(list, " ") != "k:LD k:" {
		t.Fatalf("after the suspended delete %v", list)
	}
	// Enabled again: new versions keep the null marker below them.
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v3 := put(t, s, alice, "bkt", "k", []byte("three"))
	list, ids = versionsOf(t, s, alice, "bkt", 1000)
	if strings.Join(list, " ") != "k:L k:D k:" || ids[0] != v3.VersionID || ids[1] != "null" {
		t.Fatalf("enabled again %v %v", list, ids)
	}
	// The bucket is not empty while versions remain; it is once all are gone.
	for _, id := range ids {
		if err := s.DeleteBucket(ctx, alice, "bkt"); !IsCode(err, BucketNotEmpty) {
			t.Fatalf("delete bucket with versions: %v", err)
		}
		if _, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBucket(ctx, alice, "bkt"); err != nil {
		t.Fatalf("delete the emptied bucket: %v", err)
	}
}

// TestVersionListing: many keys and versions, listed in pages of every size, give the
// one full listing; prefixes and delimiters roll keys up; unversioned keys list as
// null versions.
func TestVersionListing(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	put(t, s, alice, "bkt", "a/old", []byte("x"))
	put(t, s, alice, "bkt", "z", []byte("x"))
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	for _, k := range []string{"a/b", "a/c", "b", "c/d/e"} {
		for i := 0; i < 4; i++ {
			put(t, s, alice, "bkt", k, []byte(fmt.Sprint(k, i)))
		}
	}
	if _, err := s.DeleteObjectVersion(ctx, alice, "bkt", "b", ""); err != nil {
		t.Fatal(err)
	}
	full, fullIDs := versionsOf(t, s, alice, "bkt", 1000)
	if len(full) != 19 {
		t.Fatalf("full listing %d entries: %v", len(full), full)
	}
	if strings.Join(full[:10], " ") != "a/b:L a/b: a/b: a/b: a/c:L a/c: a/c: a/c: a/old:L b:LD" || full[18] != "z:L" {
		t.Fatalf("full listing %v", full)
	}
	for max := 1; max <= 20; max++ {
		got, gotIDs := versionsOf(t, s, alice, "bkt", max)
		if strings.Join(got, " ") != strings.Join(full, " ") || strings.Join(gotIDs, " ") != strings.Join(fullIDs, " ") {
			t.Fatalf("pages of %d:\n%v\nwant\n%v", max, got, full)
		}
	}
	l, err := s.ListObjectVersions(ctx, alice, "bkt", VersionListOptions{Delimiter: "/", MaxKeys: 1000})
	if err != nil || strings.Join(l.CommonPrefixes, " ") != "a/ c/" || len(l.Versions) != 6 {
		t.Fatalf("delimited: %v %+v", err, l)
	}
	l, err = s.ListObjectVersions(ctx, alice, "bkt", VersionListOptions{Prefix: "a/", Delimiter: "/", MaxKeys: 1000, KeyMarker: "a/b"})
	if err != nil || len(l.CommonPrefixes) != 0 || len(l.Versions) != 5 || l.Versions[0].Key != "a/c" || !l.Versions[0].IsLatest {
		t.Fatalf("prefix and key marker: %v %+v", err, l)
	}
	// Resuming after the newest version of a key: the next is not the latest.
	l, err = s.ListObjectVersions(ctx, alice, "bkt", VersionListOptions{MaxKeys: 2, KeyMarker: "a/b", VersionIDMarker: fullIDs[0]})
	if err != nil || len(l.Versions) != 2 || l.Versions[0].IsLatest || l.Versions[0].VersionID != fullIDs[1] {
		t.Fatalf("resumed: %v %+v", err, l)
	}
	for _, o := range []VersionListOptions{{VersionIDMarker: "null"}, {KeyMarker: "a", VersionIDMarker: "bad"}} {
		if _, err := s.ListObjectVersions(ctx, alice, "bkt", o); !IsCode(err, InvalidArgument) {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	// Listing v2 shows current versions only.
	lo, err := s.ListObjects(ctx, alice, "bkt", ListOptions{MaxKeys: 100})
	if err != nil || len(lo.Objects) != 5 {
		t.Fatalf("current objects: %v %+v", err, lo)
	}
}

// TestVersionedConditionalWrites: If-None-Match and If-Match test the current
// version; a delete marker counts as no current version.
func TestVersionedConditionalWrites(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	putIf := func(body string, c WriteConditions) (*Manifest, error) {
		return s.PutObject(ctx, alice, "bkt", "k", PutInput{Body: strings.NewReader(body), Size: int64(len(body)), Conditions: c})
	}
	first, err := putIf("one", WriteConditions{IfNoneMatch: "*"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putIf("two", WriteConditions{IfNoneMatch: "*"}); !IsCode(err, PreconditionFailed) {
		t.Fatalf("create over a version: %v", err)
	}
	if _, err := putIf("two", WriteConditions{IfMatch: `"` + first.ETag + `"`}); err != nil {
		t.Fatalf("If-Match the current: %v", err)
	}
	if _, err := putIf("three", WriteConditions{IfMatch: `"` + first.ETag + `"`}); !IsCode(err, PreconditionFailed) {
		t.Fatalf("If-Match a noncurrent version: %v", err)
	}
	if _, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := putIf("four", WriteConditions{IfNoneMatch: "*"}); err != nil {
		t.Fatalf("create over a delete marker: %v", err)
	}
	if list, _ := versionsOf(t, s, alice, "bkt", 1000); strings.Join(list, " ") != "k:L k:D k: k:" {
		t.Fatalf("versions %v", list)
	}
}

// TestVersionACLsAndTags: ACLs and tags are per version; changing the current
// version's changes what GET of the key sees, a noncurrent one's does not.
func TestVersionACLsAndTags(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "bkt", "")
	put(t, s, alice, "bkt", "k", []byte("null"))
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v1 := put(t, s, alice, "bkt", "k", []byte("one"))
	if err := s.SetObjectVersionACL(ctx, alice, "bkt", "k", "null", ACLSpec{Canned: "public-read"}); err != nil {
		t.Fatal(err)
	}
	if got := readVersion(t, s, bob, "bkt", "k", "null"); string(got) != "null" {
		t.Fatalf("bob reads the public null version: %q", got)
	}
	if _, err := s.OpenObject(ctx, bob, "bkt", "k"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob reads the private current version: %v", err)
	}
	if err := s.SetObjectVersionTagging(ctx, alice, "bkt", "k", "", []Tag{{Key: "a", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if tags, err := s.ObjectVersionTagging(ctx, alice, "bkt", "k", v1.VersionID); err != nil || len(tags) != 1 {
		t.Fatalf("tags of v1 (the current): %v %v", tags, err)
	}
	if tags, err := s.ObjectVersionTagging(ctx, alice, "bkt", "k", "null"); err != nil || len(tags) != 0 {
		t.Fatalf("tags of the null version: %v %v", tags, err)
	}
	if m, err := s.StatObject(ctx, alice, "bkt", "k"); err != nil || len(m.Tags) != 1 {
		t.Fatalf("current record's tags: %+v %v", m, err)
	}
	if err := s.SetObjectVersionTagging(ctx, alice, "bkt", "k", "AAAAAAAAAAAAAAAAAAAAAA", nil); !IsCode(err, NoSuchVersion) {
		t.Fatalf("tag an unknown version: %v", err)
	}
	// Copy from a version restores it as the newest.
	m, err := s.CopyObject(ctx, alice, "bkt", "k", "bkt", "k", CopyInput{SourceVersionID: "null"})
	if err != nil || m.VersionID == "" {
		t.Fatalf("copy from the null version: %+v %v", m, err)
	}
	if got := read(t, s, alice, "bkt", "k"); string(got) != "null" {
		t.Fatalf("restored: %q", got)
	}
}

// TestSharedStoreVersionedPuts: PUTs and deletes of one key of a versioned bucket
// through two services over one store (as two cluster nodes): every write is kept as
// its own version, ids are unique, the newest version is current, and the records
// agree (the cleanup's check).
func TestSharedStoreVersionedPuts(t *testing.T) {
	a, b, _ := newSharedServices(t, fileBlobs)
	ctx := context.Background()
	alice := mustUser(t, a, "alice")
	mustBucket(t, a, alice, "shared", "")
	setVersioning(t, a, alice, "shared", VersioningEnabled)
	overtake(t, a, "commit shared/k", func() { put(t, b, alice, "shared", "k", []byte("overtaker")) })
	put(t, a, alice, "shared", "k", []byte("first"))
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		s := []*Service{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%5 == 4 {
				_, err = s.DeleteObjectVersion(ctx, alice, "shared", "k", "")
			} else {
				data := bytes.Repeat([]byte{byte('A' + i)}, 40+i)
				_, err = s.PutObject(ctx, alice, "shared", "k", PutInput{Body: bytes.NewReader(data), Size: int64(len(data))})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, ids := versionsOf(t, b, alice, "shared", 7)
	if len(list) != n+2 || !strings.HasPrefix(list[0], "k:L") {
		t.Fatalf("%d versions: %v", len(list), list)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s given twice", id)
		}
		seen[id] = true
	}
}

// TestCheckVersions: Check finds each kind of damage to the versions tables, and
// nothing once it is repaired.
func TestCheckVersions(t *testing.T) {
	s, db := newTestService(t)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v1 := put(t, s, alice, "bkt", "k", []byte("one"))
	put(t, s, alice, "bkt", "k", []byte("two"))
	slot1, _ := parseSlot(v1.VersionID)
	orig, err := db.Get(versionKey("bkt", "k", slot1))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := db.Get(headKey("bkt", "k"))
	cur, _ := db.Get(objectKey("bkt", "k"))
	for _, tc := range []struct {
		name, want string
		damage     func() error
		repair     func() error
	}{
		{"marker with data", "names data", func() error {
			return db.Put(versionKey("bkt", "k", slot1), []byte(`{"uuid":"00000000000000000000000000000000","size":3,"delete_marker":true,"version_id":"`+v1.VersionID+`"}`), false)
		}, func() error { return db.Put(versionKey("bkt", "k", slot1), orig, false) }},
		{"id not its slot", "differs from its slot", func() error {
			return db.Put(versionKey("bkt", "k", slot1), bytes.Replace(orig, []byte(v1.VersionID), []byte("AAAAAAAAAAAAAAAAAAAAAA"), 1), false)
		}, func() error { return db.Put(versionKey("bkt", "k", slot1), orig, false) }},
		{"no head", "without a head", func() error { return db.Delete(headKey("bkt", "k"), false) },
			func() error { return db.Put(headKey("bkt", "k"), head, false) }},
		{"current not the newest", "is not the newest version", func() error { return db.Put(objectKey("bkt", "k"), orig, false) },
			func() error { return db.Put(objectKey("bkt", "k"), cur, false) }},
		{"a head alone", "which has no versions", func() error { return db.Put(headKey("bkt", "x"), head, false) },
			func() error { return db.Delete(headKey("bkt", "x"), false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.damage(); err != nil {
				t.Fatal(err)
			}
			_, err := Check(db, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
			if err := tc.repair(); err != nil {
				t.Fatal(err)
			}
			if _, err := Check(db, nil); err != nil {
				t.Fatalf("after the repair: %v", err)
			}
		})
	}
}

// BenchmarkListObjectVersions lists 20 000 versions (2 000 keys of 10) in pages of
// 1000, as GET ?versions does: the service's share of the listing rate.
func BenchmarkListObjectVersions(b *testing.B) {
	s, db := newBenchService(b)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Name: "bench", Email: "bench@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	r := Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, _ := CannedACL("", Owner{ID: r.ID, DisplayName: r.DisplayName}, Owner{ID: r.ID})
	if _, err := s.CreateBucket(ctx, r, "bench", acl); err != nil {
		b.Fatal(err)
	}
	const keys, perKey = 2000, 10
	batch := new(storage.Batch)
	for k := range keys {
		key := fmt.Sprintf("dir/key-%06d", k)
		var m *Manifest
		for v := range perKey {
			slot := newSlot(uint64(v + 1))
			m = &Manifest{UUID: "0123456789abcdef0123456789abcdef", Size: 4096, ChunkSize: DefaultChunkSize,
				ETag: "0123456789abcdef0123456789abcdef", ContentType: "application/octet-stream",
				LastModified: time.Now().UTC(), Owner: acl.Owner, ACL: acl, VersionID: slot.id()}
			val, _ := json.Marshal(m)
			batch.Put(versionKey("bench", key, slot), val)
		}
		val, _ := json.Marshal(m)
		batch.Put(objectKey("bench", key), val)
		h, _ := json.Marshal(versionHead{Seq: perKey})
		batch.Put(headKey("bench", key), h)
	}
	if err := db.Commit(ctx, batch, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o := VersionListOptions{MaxKeys: 1000}
		n := 0
		for {
			l, err := s.ListObjectVersions(ctx, r, "bench", o)
			if err != nil {
				b.Fatal(err)
			}
			n += len(l.Versions)
			if !l.Truncated {
				break
			}
			o.KeyMarker, o.VersionIDMarker = l.NextKeyMarker, l.NextVersionIDMarker
		}
		if n != keys*perKey {
			b.Fatalf("listed %d", n)
		}
	}
	b.ReportMetric(float64(keys*perKey*b.N)/b.Elapsed().Seconds(), "versions/s")
}

// newBenchService opens a service on a fresh store for a benchmark.
func newBenchService(b *testing.B) (*Service, *storage.DB) {
	db, err := storage.Open(filepath.Join(b.TempDir(), "db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := New(db, Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, db
}

// TestVersionPolicyActions: a bucket policy's version actions govern the requests that
// name a version id, the plain actions those that do not.
func TestVersionPolicyActions(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "bkt", "")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v1 := put(t, s, alice, "bkt", "k", []byte("one"))
	put(t, s, alice, "bkt", "k", []byte("two"))
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":"` + bob.ID + `"},
		"Action":["s3:GetObjectVersion","s3:ListBucketVersions","s3:DeleteObjectVersion","s3:GetBucketVersioning"],"Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]}]}`
	if err := s.SetBucketPolicy(ctx, alice, "bkt", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if got := readVersion(t, s, bob, "bkt", "k", v1.VersionID); string(got) != "one" {
		t.Fatalf("bob reads v1: %q", got)
	}
	if _, err := s.OpenObject(ctx, bob, "bkt", "k"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob reads the current version without s3:GetObject: %v", err)
	}
	if _, err := s.ListObjectVersions(ctx, bob, "bkt", VersionListOptions{MaxKeys: 10}); err != nil {
		t.Fatalf("bob lists versions: %v", err)
	}
	if _, err := s.ListObjects(ctx, bob, "bkt", ListOptions{MaxKeys: 10}); !IsCode(err, AccessDenied) {
		t.Fatalf("bob lists objects without s3:ListBucket: %v", err)
	}
	if st, err := s.BucketVersioning(ctx, bob, "bkt"); err != nil || st != VersioningEnabled {
		t.Fatalf("bob reads the versioning: %q %v", st, err)
	}
	if err := s.SetBucketVersioning(ctx, bob, "bkt", VersioningSuspended); !IsCode(err, AccessDenied) {
		t.Fatalf("bob suspends: %v", err)
	}
	if _, err := s.DeleteObjectVersion(ctx, bob, "bkt", "k", ""); !IsCode(err, AccessDenied) {
		t.Fatalf("bob makes a marker without s3:DeleteObject: %v", err)
	}
	if _, err := s.DeleteObjectVersion(ctx, bob, "bkt", "k", v1.VersionID); err != nil {
		t.Fatalf("bob deletes v1: %v", err)
	}
}
