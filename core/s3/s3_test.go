package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// newTestService opens a service with 16-byte chunks on a fresh store; at the end of
// the test it waits for the collector and checks the S3 invariants (no leaked chunk,
// manifests whole).
func newTestService(t *testing.T) (*Service, *storage.DB) {
	t.Helper()
	return newTestServiceBlobs(t, noBlobs)
}

// blobKind names the blob store a test service keeps objects of more than one chunk in.
type blobKind string

const (
	noBlobs   blobKind = "none"   // every chunk a DB record
	fileBlobs blobKind = "files"  // storage.Blobs, the local implementation
	memBlobs  blobKind = "memory" // storage.MemBlobs: the BlobStore interface is all s3 needs
)

// blobKinds are the stores the tests of object data run against.
var blobKinds = []blobKind{noBlobs, fileBlobs, memBlobs}

// newBlobStore returns a new blob store of kind (nil for noBlobs).
func newBlobStore(t *testing.T, kind blobKind) storage.BlobStore {
	t.Helper()
	switch kind {
	case fileBlobs:
		b, err := storage.OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	case memBlobs:
		return storage.NewMemBlobs()
	}
	return nil
}

// newTestServiceBlobs is newTestService with a blob store of kind for objects of more
// than one chunk.
func newTestServiceBlobs(t *testing.T, kind blobKind) (*Service, *storage.DB) {
	t.Helper()
	return newTestServiceConfig(t, newBlobStore(t, kind), Config{ChunkSize: 16, MaxBuckets: 5})
}

// newTestServiceConfig is newTestService with cfg and the blob store blobs (nil: none).
func newTestServiceConfig(t *testing.T, blobs storage.BlobStore, cfg Config) (*Service, *storage.DB) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Blobs = blobs
	s, err := New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waitCollected(t, s)
		s.Close()
		rep, err := Check(db, blobs)
		if err != nil {
			t.Errorf("invariants after the test: %v", err)
		}
		if rep.Pending != 0 {
			t.Errorf("%d chunk sets still pending", rep.Pending)
		}
		db.Close()
	})
	return s, db
}

func waitCollected(t *testing.T, s *Service) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := s.Pending()
		if err != nil {
			t.Fatal(err)
		}
		if !p {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not finish within 10s")
		}
		s.gc.wake()
		time.Sleep(5 * time.Millisecond)
	}
}

func mustUser(t *testing.T, s *Service, name string) Requester {
	t.Helper()
	u, err := s.CreateUser(context.Background(), NewUser{Name: name, Email: name + "@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return Requester{ID: u.ID, DisplayName: u.DisplayName}
}

func mustBucket(t *testing.T, s *Service, r Requester, name, canned string) {
	t.Helper()
	acl, err := CannedACL(canned, Owner{ID: r.ID, DisplayName: r.DisplayName}, Owner{ID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	if created, err := s.CreateBucket(context.Background(), r, name, acl); err != nil || !created {
		t.Fatalf("create bucket %s: %v %v", name, created, err)
	}
}

func put(t *testing.T, s *Service, r Requester, bucket, key string, data []byte) *Manifest {
	t.Helper()
	m, err := s.PutObject(context.Background(), r, bucket, key, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return m
}

func read(t *testing.T, s *Service, r Requester, bucket, key string) []byte {
	t.Helper()
	o, err := s.OpenObject(context.Background(), r, bucket, key)
	if err != nil {
		t.Fatalf("open %s/%s: %v", bucket, key, err)
	}
	defer o.Close()
	var b bytes.Buffer
	if err := o.WriteRange(context.Background(), &b, 0, o.Manifest.Size); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func wantCode(t *testing.T, err error, c Code) {
	t.Helper()
	if !IsCode(err, c) {
		t.Fatalf("error %v, want code %s", err, c)
	}
}

func TestUsers(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Name: "Foo Bar", Email: "foobar@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.ID) != 64 || len(u.KeyID) != 20 || len(u.KeySecret) != 40 || u.DisplayName != "foobar" || !u.Enabled() {
		t.Fatalf("new user %+v", u)
	}
	if strings.ToUpper(u.KeyID) != u.KeyID {
		t.Errorf("key id %q not upper case", u.KeyID)
	}
	_, err = s.CreateUser(ctx, NewUser{Name: "x", Email: "FooBar@example.com"})
	wantCode(t, err, UserAlreadyExists)
	for _, bad := range []NewUser{{Name: "", Email: "a@b"}, {Name: "a", Email: "nope"}, {Name: "a", Email: "@b"}, {Name: "a\nb", Email: "a@b"}} {
		_, err := s.CreateUser(ctx, bad)
		wantCode(t, err, InvalidUserField)
	}
	for _, get := range []func() (*User, error){
		func() (*User, error) { return s.UserByKey(ctx, u.KeyID) },
		func() (*User, error) { return s.UserByID(ctx, u.ID) },
		func() (*User, error) { return s.UserByEmail(ctx, "FOOBAR@example.com") },
	} {
		got, err := get()
		if err != nil || got.KeyID != u.KeyID {
			t.Fatalf("lookup: %v %v", got, err)
		}
	}
	_, err = s.UserByKey(ctx, "NOPE")
	wantCode(t, err, NoSuchUser)

	disabled := StatusDisabled
	u2, err := s.UpdateUser(ctx, u.KeyID, UserUpdate{Status: &disabled}, false)
	if err != nil || u2.Enabled() {
		t.Fatalf("disable: %v %v", u2, err)
	}
	enabled := StatusEnabled
	_, err = s.UpdateUser(ctx, u.KeyID, UserUpdate{Status: &enabled}, false)
	wantCode(t, err, AccessDenied)
	if u3, err := s.UpdateUser(ctx, u.KeyID, UserUpdate{Status: &enabled, NewKeySecret: true}, true); err != nil || !u3.Enabled() || u3.KeySecret == u.KeySecret {
		t.Fatalf("enable and rotate: %v %v", u3, err)
	}
	email := "new@example.org"
	if u4, err := s.UpdateUser(ctx, u.KeyID, UserUpdate{Email: &email}, false); err != nil || u4.DisplayName != "new" {
		t.Fatalf("change email: %v %v", u4, err)
	}
	if _, err := s.UserByEmail(ctx, "foobar@example.com"); !IsCode(err, NoSuchUser) {
		t.Fatalf("old e-mail still resolves: %v", err)
	}
	all, err := s.Users(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("users: %v %v", all, err)
	}

	a, err := s.EnsureAdmin(ctx, "ADMINKEY0123456789AB", "secret-one")
	if err != nil || !s.IsAdmin(a) || s.IsAdmin(u) {
		t.Fatalf("admin: %v %v", a, err)
	}
	a2, err := s.EnsureAdmin(ctx, "ADMINKEY0123456789AB", "secret-two")
	if err != nil || a2.ID != a.ID || a2.KeySecret != "secret-two" {
		t.Fatalf("admin again: %+v %v", a2, err)
	}
	// A new admin credential makes a new admin user; the old one is no longer admin.
	a3, err := s.EnsureAdmin(ctx, "OTHERADMIN0123456789", "s")
	if err != nil || !s.IsAdmin(a3) || s.IsAdmin(a2) || a3.ID == a.ID {
		t.Fatalf("new admin: %+v %v", a3, err)
	}
}

func TestBucketNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"abc": true, "my-bucket.v2": true, "a1.b2.c3": true, strings.Repeat("a", 63): true,
		"ab": false, strings.Repeat("a", 64): false, "ABC": false, "a_b": false, "-ab": false, "ab-": false,
		"a..b": false, ".ab": false, "ab.": false, "192.168.1.1": false, "a-.b": false, "a b": false,
	} {
		if ValidBucketName(name) != ok {
			t.Errorf("ValidBucketName(%q) = %v", name, !ok)
		}
	}
}

func TestBuckets(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "photos", "")
	acl, _ := CannedACL("", Owner{ID: alice.ID}, Owner{})
	if created, err := s.CreateBucket(ctx, alice, "photos", acl); err != nil || created {
		t.Fatalf("re-create by owner: %v %v", created, err)
	}
	_, err := s.CreateBucket(ctx, bob, "photos", acl)
	wantCode(t, err, BucketAlreadyExists)
	_, err = s.CreateBucket(ctx, alice, "Bad_Name", acl)
	wantCode(t, err, InvalidBucketName)
	_, err = s.CreateBucket(ctx, AnonymousRequester, "anon", acl)
	wantCode(t, err, AccessDenied)
	for i := 1; i < 5; i++ {
		mustBucket(t, s, alice, fmt.Sprintf("b%d-x", i), "")
	}
	_, err = s.CreateBucket(ctx, alice, "one-too-many", acl)
	wantCode(t, err, TooManyBuckets)

	list, err := s.ListBuckets(ctx, alice)
	if err != nil || len(list) != 5 || list[4].Name != "photos" {
		t.Fatalf("list: %v %v", list, err)
	}
	if l, _ := s.ListBuckets(ctx, bob); len(l) != 0 {
		t.Fatalf("bob's buckets: %v", l)
	}
	_, err = s.ListBuckets(ctx, AnonymousRequester)
	wantCode(t, err, AccessDenied)

	wantCode(t, s.HeadBucket(ctx, bob, "photos"), AccessDenied)
	wantCode(t, s.HeadBucket(ctx, alice, "nope"), NoSuchBucket)
	put(t, s, alice, "photos", "k", []byte("v"))
	wantCode(t, s.DeleteBucket(ctx, bob, "photos"), AccessDenied)
	wantCode(t, s.DeleteBucket(ctx, alice, "photos"), BucketNotEmpty)
	if err := s.DeleteObject(ctx, alice, "photos", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket(ctx, alice, "photos"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.HeadBucket(ctx, alice, "photos"), NoSuchBucket)
	// The name is free again, for anyone.
	mustBucket(t, s, bob, "photos", "")
}

func TestObjects(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(fmt.Sprintf("blobs=%s", kind), func(t *testing.T) { testObjects(t, kind) })
	}
}

func testObjects(t *testing.T, kind blobKind) {
	s, db := newTestServiceBlobs(t, kind)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "data", "")
	for _, size := range []int{0, 1, 15, 16, 17, 100, 1000} {
		data := bytes.Repeat([]byte{byte(size)}, size)
		for i := range data {
			data[i] += byte(i)
		}
		key := fmt.Sprintf("obj-%d", size)
		m := put(t, s, alice, "data", key, data)
		sum := md5.Sum(data)
		if m.ETag != fmt.Sprintf("%x", sum) || m.Size != int64(size) {
			t.Fatalf("manifest %+v", m)
		}
		if got := read(t, s, alice, "data", key); !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back %d bytes, differ", size, len(got))
		}
		// Every sub-range.
		o, err := s.OpenObject(ctx, alice, "data", key)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off <= size; off += 7 {
			for n := 0; off+n <= size; n += 5 {
				var b bytes.Buffer
				if err := o.WriteRange(context.Background(), &b, int64(off), int64(n)); err != nil || !bytes.Equal(b.Bytes(), data[off:off+n]) {
					t.Fatalf("size %d range %d+%d: %v", size, off, n, err)
				}
			}
		}
		o.Close()
	}
	// Overwrite: the old chunks go, the new ones read back.
	put(t, s, alice, "data", "obj-1000", []byte("short now"))
	if got := read(t, s, alice, "data", "obj-1000"); string(got) != "short now" {
		t.Fatalf("overwritten: %q", got)
	}
	// A reader opened before an overwrite and a delete keeps its version.
	old, err := s.OpenObject(ctx, alice, "data", "obj-100")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, alice, "data", "obj-100", []byte("new"))
	if err := s.DeleteObject(ctx, alice, "data", "obj-100"); err != nil {
		t.Fatal(err)
	}
	// The collector runs meanwhile (and leaves a blob the open object pins).
	s.gc.wake()
	time.Sleep(20 * time.Millisecond)
	var b bytes.Buffer
	if err := old.WriteRange(context.Background(), &b, 0, old.Manifest.Size); err != nil || b.Len() != 100 {
		t.Fatalf("snapshot read after delete: %v, %d bytes", err, b.Len())
	}
	old.Close()
	waitCollected(t, s)
	_, err = s.OpenObject(ctx, alice, "data", "obj-100")
	wantCode(t, err, NoSuchKey)
	if err := s.DeleteObject(ctx, alice, "data", "obj-100"); err != nil {
		t.Fatalf("deleting an absent key: %v", err)
	}
	rep, err := Check(db, s.cfg.Blobs)
	if err != nil {
		t.Fatal(err)
	}
	// 0..1000 minus obj-100: chunks of 1(1) 15(1) 16(1) 17(2) 1000→"short now"(1); with
	// blobs the 17-byte object is a blob.
	want := CheckReport{Users: 1, Buckets: 1, Objects: 6, Chunks: 6}
	if kind != noBlobs {
		want.Chunks, want.Blobs = 4, 1
	}
	if rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
}

// failingReader yields n bytes, then err.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

func TestFailedWritesLeaveNothing(t *testing.T) {
	for _, kind := range blobKinds {
		t.Run(fmt.Sprintf("blobs=%s", kind), func(t *testing.T) { testFailedWrites(t, kind) })
	}
}

func testFailedWrites(t *testing.T, kind blobKind) {
	s, _ := newTestServiceBlobs(t, kind)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "data", "")
	put(t, s, alice, "data", "k", []byte("the original"))
	verify := errors.New("payload hash mismatch")
	cases := []struct {
		name string
		in   PutInput
		want func(error) bool
	}{
		{"bad digest", PutInput{Body: bytes.NewReader(make([]byte, 100)), Size: 100, MD5: make([]byte, 16)}, func(e error) bool { return IsCode(e, BadDigest) }},
		{"short body", PutInput{Body: bytes.NewReader(make([]byte, 50)), Size: 100}, func(e error) bool { return IsCode(e, IncompleteBody) }},
		{"reader error at end", PutInput{Body: &failingReader{n: 100, err: verify}, Size: 100}, func(e error) bool { return errors.Is(e, verify) }},
		{"reader error midway", PutInput{Body: &failingReader{n: 40, err: verify}, Size: 100}, func(e error) bool { return errors.Is(e, verify) }},
		{"too large", PutInput{Body: bytes.NewReader(nil), Size: 6 << 30}, func(e error) bool { return IsCode(e, EntityTooLarge) }},
		{"bad canned", PutInput{Body: bytes.NewReader(nil), Canned: "nope"}, func(e error) bool { return IsCode(e, InvalidArgument) }},
		{"big metadata", PutInput{Body: bytes.NewReader(nil), Meta: []MetaPair{{"a", strings.Repeat("x", 3000)}}}, func(e error) bool { return IsCode(e, MetadataTooLarge) }},
	}
	for _, c := range cases {
		_, err := s.PutObject(ctx, alice, "data", "k", c.in)
		if !c.want(err) {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
	if got := read(t, s, alice, "data", "k"); string(got) != "the original" {
		t.Fatalf("object after failed writes: %q", got)
	}
	_, err := s.PutObject(ctx, alice, "data", strings.Repeat("k", 1025), PutInput{Body: bytes.NewReader(nil)})
	wantCode(t, err, KeyTooLong)
	_, err = s.PutObject(ctx, alice, "nope", "k", PutInput{Body: bytes.NewReader(nil)})
	wantCode(t, err, NoSuchBucket)
}

func TestCrashedWriteIsCollected(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// What a multi-chunk PUT leaves when the process dies before its commit.
	id := bytes.Repeat([]byte{7}, 16)
	if err := db.Put(writingKey(id), []byte(`{"bucket":"b","key":"k"}`), false); err != nil {
		t.Fatal(err)
	}
	for n := uint64(0); n < 3; n++ {
		if err := db.Put(chunkKey(id, n), []byte("chunk"), false); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := Check(db, nil); err != nil || rep.Pending != 1 || rep.Chunks != 3 {
		t.Fatalf("before: %+v %v", rep, err)
	}
	// A chunk no record owns is reported as a leak.
	if err := db.Put(chunkKey(bytes.Repeat([]byte{9}, 16), 0), []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(db, nil); err == nil || !strings.Contains(err.Error(), "leaked") {
		t.Fatalf("leak not reported: %v", err)
	}
	if err := db.Delete(chunkKey(bytes.Repeat([]byte{9}, 16), 0), false); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Config{ChunkSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	waitCollected(t, s)
	s.Close()
	if rep, err := Check(db, nil); err != nil || rep.Pending != 0 || rep.Chunks != 0 {
		t.Fatalf("after: %+v %v", rep, err)
	}
	db.Close()
}

func TestListObjects(t *testing.T) {
	s, db := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "list", "")
	keys := []string{"a", "a/b", "a/c/d", "a/c/e", "b", "b/x", "c", "d/", "d//e", "z"}
	for _, k := range keys {
		put(t, s, alice, "list", k, []byte(k))
	}
	// A NUL byte sorts first; such keys are refused now, but may be stored already.
	putLegacy(t, s, db, alice, "list", "c\x00z", []byte("c\x00z"))
	type page struct {
		objs, prefixes []string
		truncated      bool
		next           string
	}
	names := func(l *Listing) page {
		p := page{truncated: l.Truncated, next: l.NextMarker}
		for _, o := range l.Objects {
			p.objs = append(p.objs, o.Key)
		}
		p.prefixes = l.CommonPrefixes
		return p
	}
	cases := []struct {
		name string
		o    ListOptions
		want page
	}{
		{"all", ListOptions{MaxKeys: 1000}, page{objs: []string{"a", "a/b", "a/c/d", "a/c/e", "b", "b/x", "c", "c\x00z", "d/", "d//e", "z"}}},
		{"delimiter", ListOptions{Delimiter: "/", MaxKeys: 1000}, page{objs: []string{"a", "b", "c", "c\x00z", "z"}, prefixes: []string{"a/", "b/", "d/"}}},
		{"prefix+delimiter", ListOptions{Prefix: "a/", Delimiter: "/", MaxKeys: 1000}, page{objs: []string{"a/b"}, prefixes: []string{"a/c/"}}},
		{"page 1", ListOptions{Delimiter: "/", MaxKeys: 2}, page{objs: []string{"a"}, prefixes: []string{"a/"}, truncated: true, next: "a/"}},
		{"page 2", ListOptions{Delimiter: "/", MaxKeys: 2, After: "a/"}, page{objs: []string{"b"}, prefixes: []string{"b/"}, truncated: true, next: "b/"}},
		{"page 3", ListOptions{Delimiter: "/", MaxKeys: 3, After: "b/"}, page{objs: []string{"c", "c\x00z"}, prefixes: []string{"d/"}, truncated: true, next: "d/"}},
		{"page 4", ListOptions{Delimiter: "/", MaxKeys: 3, After: "d/"}, page{objs: []string{"z"}}},
		{"marker inside", ListOptions{After: "a/c/d", MaxKeys: 2}, page{objs: []string{"a/c/e", "b"}, truncated: true, next: "b"}},
		{"prefix none", ListOptions{Prefix: "q", MaxKeys: 10}, page{}},
		{"max 0", ListOptions{MaxKeys: 0}, page{}},
		{"nul delimiter", ListOptions{Delimiter: "\x00", Prefix: "c", MaxKeys: 10}, page{objs: []string{"c"}, prefixes: []string{"c\x00"}}},
		{"double slash", ListOptions{Prefix: "d/", Delimiter: "/", MaxKeys: 10}, page{prefixes: []string{"d//"}, objs: []string{"d/"}}},
	}
	for _, c := range cases {
		l, err := s.ListObjects(ctx, alice, "list", c.o)
		if err != nil {
			t.Fatal(err)
		}
		got := names(l)
		if !slices.Equal(got.objs, c.want.objs) || !slices.Equal(got.prefixes, c.want.prefixes) || got.truncated != c.want.truncated || got.next != c.want.next {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	bob := mustUser(t, s, "bob")
	_, err := s.ListObjects(ctx, bob, "list", ListOptions{MaxKeys: 10})
	wantCode(t, err, AccessDenied)
}

func TestACLs(t *testing.T) {
	owner := Owner{ID: "o", DisplayName: "owner"}
	bucketOwner := Owner{ID: "bo", DisplayName: "bucket owner"}
	ownerR := Requester{ID: "o"}
	other := Requester{ID: "x"}
	bo := Requester{ID: "bo"}
	anon := AnonymousRequester
	type want map[Permission]bool
	cases := []struct {
		canned string
		who    Requester
		want   want
	}{
		{"private", ownerR, want{PermRead: true, PermWrite: true, PermReadACP: true, PermWriteACP: true}},
		{"private", other, want{}},
		{"private", anon, want{}},
		{"public-read", anon, want{PermRead: true}},
		{"public-read", other, want{PermRead: true}},
		{"public-read-write", anon, want{PermRead: true, PermWrite: true}},
		{"authenticated-read", anon, want{}},
		{"authenticated-read", other, want{PermRead: true}},
		{"bucket-owner-read", bo, want{PermRead: true}},
		{"bucket-owner-read", other, want{}},
		{"bucket-owner-full-control", bo, want{PermRead: true, PermWrite: true, PermReadACP: true, PermWriteACP: true}},
		{"log-delivery-write", anon, want{}},
		{"aws-exec-read", other, want{}},
	}
	for _, c := range cases {
		acl, err := CannedACL(c.canned, owner, bucketOwner)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Permission{PermRead, PermWrite, PermReadACP, PermWriteACP} {
			if got := acl.Allows(c.who, p); got != c.want[p] {
				t.Errorf("%s: %+v %s = %v", c.canned, c.who, p, got)
			}
		}
	}
	if _, err := CannedACL("public", owner, owner); !IsCode(err, InvalidArgument) {
		t.Fatalf("unknown canned: %v", err)
	}
	// The owner keeps READ_ACP and WRITE_ACP without grants, but not READ.
	acl := ACL{Owner: owner}
	if !acl.Allows(ownerR, PermReadACP) || !acl.Allows(ownerR, PermWriteACP) || acl.Allows(ownerR, PermRead) {
		t.Fatal("owner rights without grants")
	}
}

func TestObjectACLs(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "open", "public-read-write")
	// Bob writes into Alice's open bucket: he owns the object; Alice cannot read it.
	m, err := s.PutObject(ctx, bob, "open", "bobs", PutInput{Body: strings.NewReader("b"), Size: 1})
	if err != nil || m.Owner.ID != bob.ID {
		t.Fatalf("bob's put: %v %v", m, err)
	}
	_, err = s.OpenObject(ctx, alice, "open", "bobs")
	wantCode(t, err, AccessDenied)
	// bucket-owner-read lets her.
	if _, err := s.PutObject(ctx, bob, "open", "shared", PutInput{Body: strings.NewReader("s"), Size: 1, Canned: CannedBucketOwnerRead}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, alice, "open", "shared"); string(got) != "s" {
		t.Fatal(got)
	}
	// Only the object's owner (WRITE_ACP) changes its ACL, and not to another owner.
	pub, _ := CannedACL(CannedPublicRead, Owner{}, Owner{})
	wantCode(t, s.SetObjectACL(ctx, alice, "open", "bobs", ACLSpec{ACL: &pub}), AccessDenied)
	pub.Owner = Owner{ID: alice.ID}
	wantCode(t, s.SetObjectACL(ctx, bob, "open", "bobs", ACLSpec{ACL: &pub}), AccessDenied)
	pub.Owner = Owner{}
	if err := s.SetObjectACL(ctx, bob, "open", "bobs", ACLSpec{ACL: &pub}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, AnonymousRequester, "open", "bobs"); string(got) != "b" {
		t.Fatal(got)
	}
	acl, err := s.ObjectACL(ctx, bob, "open", "bobs")
	if err != nil || acl.Owner.ID != bob.ID {
		t.Fatalf("acl %+v %v", acl, err)
	}
	_, err = s.ObjectACL(ctx, AnonymousRequester, "open", "bobs")
	wantCode(t, err, AccessDenied)
	// Bucket ACL: READ_ACP for the owner; a new ACL with the owner's grants removed
	// still lets the owner change it back.
	if err := s.SetBucketACL(ctx, alice, "open", ACLSpec{ACL: &ACL{}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ListObjects(ctx, alice, "open", ListOptions{MaxKeys: 1})
	wantCode(t, err, AccessDenied)
	priv, _ := CannedACL("", Owner{ID: alice.ID}, Owner{})
	if err := s.SetBucketACL(ctx, alice, "open", ACLSpec{ACL: &priv}); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutObject(ctx, bob, "open", "again", PutInput{Body: strings.NewReader(""), Size: 0})
	wantCode(t, err, AccessDenied)
	if b, err := s.Bucket(ctx, "open"); err != nil || b.ACL.Owner.ID != alice.ID || len(b.ACL.Grants) != 1 {
		t.Fatalf("bucket acl %+v %v", b, err)
	}
	_ = io.EOF
}

func TestCrashedBlobWriteIsCollected(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	db, err := storage.Open(filepath.Join(tmp, "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := storage.OpenBlobs(filepath.Join(tmp, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	id := bytes.Repeat([]byte{5}, 16)
	if err := db.Put(writingKey(id), []byte(`{}`), true); err != nil {
		t.Fatal(err)
	}
	w, err := blobs.Create(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half an object"))
	w.Commit(ctx)
	leak := bytes.Repeat([]byte{6}, 16)
	if w, err = blobs.Create(ctx, leak); err != nil {
		t.Fatal(err)
	}
	w.Commit(ctx)
	if _, err := Check(db, blobs); err == nil || !strings.Contains(err.Error(), "blob 06") {
		t.Fatalf("leaked blob not reported: %v", err)
	}
	if _, err := blobs.Remove(ctx, leak); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Config{ChunkSize: 16, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	waitCollected(t, s)
	if _, n := s.Collected(); n != 1 {
		t.Fatalf("%d blobs collected", n)
	}
	s.Close()
	if rep, err := Check(db, blobs); err != nil || rep.Blobs != 0 || rep.Pending != 0 {
		t.Fatalf("after: %+v %v", rep, err)
	}
	db.Close()
}

// TestOpenRacesCollector: the collector removes the blob of the manifest a reader has
// just read, before the reader pins it; the reader opens the new version instead.
func TestOpenRacesCollector(t *testing.T) {
	s, _ := newTestServiceBlobs(t, fileBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "race", "")
	put(t, s, alice, "race", "k", bytes.Repeat([]byte("a"), 100))
	testHookOpened = func() {
		testHookOpened = nil // once
		put(t, s, alice, "race", "k", bytes.Repeat([]byte("b"), 100))
		waitCollected(t, s) // the first version's blob is gone
	}
	t.Cleanup(func() { testHookOpened = nil })
	if got := read(t, s, alice, "race", "k"); !bytes.Equal(got, bytes.Repeat([]byte("b"), 100)) {
		t.Fatalf("read %q", got)
	}
	if _, n := s.Collected(); n != 1 {
		t.Fatalf("%d blobs collected", n)
	}
}

// TestUserUpdateRacesCacheFill: a reader that missed the user cache has read the user's
// record when an update (or the admin reset) writes a new one and drops the entry;
// the reader must not put the old record back, or a disabled user or a rotated secret
// would keep working.
func TestUserUpdateRacesCacheFill(t *testing.T) {
	ctx := context.Background()
	disabled := StatusDisabled
	for _, tc := range []struct {
		name   string
		update func(t *testing.T, s *Service, u *User)
		check  func(t *testing.T, before, after *User)
	}{
		{"disable", func(t *testing.T, s *Service, u *User) {
			if _, err := s.UpdateUser(ctx, u.KeyID, UserUpdate{Status: &disabled}, false); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, before, after *User) {
			if after.Enabled() {
				t.Fatal("the disabled user is still enabled")
			}
		}},
		{"rotate", func(t *testing.T, s *Service, u *User) {
			if _, err := s.UpdateUser(ctx, u.KeyID, UserUpdate{NewKeySecret: true}, false); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, before, after *User) {
			if after.KeySecret == before.KeySecret {
				t.Fatal("the old secret still works")
			}
		}},
		{"admin reset", func(t *testing.T, s *Service, u *User) {
			if _, err := s.EnsureAdmin(ctx, u.KeyID, "new-admin-secret"); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, before, after *User) {
			if after.KeySecret != "new-admin-secret" {
				t.Fatalf("admin secret %q", after.KeySecret)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t)
			u, err := s.CreateUser(ctx, NewUser{Name: "u", Email: "u@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			fired := false
			testHookUserRead = func() {
				testHookUserRead = nil // once
				fired = true
				tc.update(t, s, u)
			}
			t.Cleanup(func() { testHookUserRead = nil })
			if _, err := s.UserByKey(ctx, u.KeyID); err != nil { // misses the cache
				t.Fatal(err)
			}
			if !fired {
				t.Fatal("the reader did not miss the cache")
			}
			after, err := s.UserByKey(ctx, u.KeyID)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, u, after)
		})
	}
}

// TestObjectKeyChecks: keys that are empty, too long or not valid UTF-8 are refused by
// every operation that takes a key, and nothing is stored.
func TestObjectKeyChecks(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "keys", "")
	for _, tc := range []struct {
		name, key string
		want      Code
	}{
		{"empty", "", InvalidArgument},
		{"too long", strings.Repeat("k", MaxKeyLength+1), KeyTooLong},
		{"invalid utf-8", "a\xffb", InvalidArgument},
		{"truncated rune", "caf\xc3", InvalidArgument},
		{"surrogate", "\xed\xa0\x80", InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, checkKey(tc.key), tc.want)
			_, err := s.PutObject(ctx, alice, "keys", tc.key, PutInput{Body: strings.NewReader("x"), Size: 1})
			wantCode(t, err, tc.want)
			_, err = s.StatObject(ctx, alice, "keys", tc.key)
			wantCode(t, err, tc.want)
			wantCode(t, s.DeleteObject(ctx, alice, "keys", tc.key), tc.want)
			_, err = s.CreateUpload(ctx, alice, "keys", tc.key, PutInput{})
			wantCode(t, err, tc.want)
		})
	}
	for _, good := range []string{"k", "caf\u00e9/\u65e5\u672c/\U0001F600", strings.Repeat("k", MaxKeyLength)} {
		if err := checkKey(good); err != nil {
			t.Errorf("checkKey(%q): %v", good, err)
		}
	}
	l, err := s.ListObjects(ctx, alice, "keys", ListOptions{MaxKeys: 10})
	if err != nil || len(l.Objects) != 0 {
		t.Fatalf("listing %+v %v", l, err)
	}
}
