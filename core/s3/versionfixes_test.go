package s3

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// Tests of the fixes of the review of versioning, Object Lock and lifecycle (issue
// 20): decisions taken on the bucket record the commit reads, who may remove a
// version, what a requester who may not list learns, and what Check finds.

// TestDeleteDecidesVersioningInCommit: a DELETE whose cached bucket record says
// "never versioned" is overtaken by versioning being enabled (and, in one case, Object
// Lock in COMPLIANCE mode) and a versioned PUT of the key: the delete must follow
// the bucket record its commit reads, adding a delete marker, and lose no version,
// least of all a locked one.
func TestDeleteDecidesVersioningInCommit(t *testing.T) {
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			a, b, db := newSharedServices(t, noBlobs)
			ctx := context.Background()
			alice := mustUser(t, a, "alice")
			mustBucket(t, a, alice, "bkt", "private")
			put(t, a, alice, "bkt", "k", []byte("version zero, before versioning"))
			var v1 *Manifest
			overtake(t, a, "delete bkt/k", func() {
				setVersioning(t, b, alice, "bkt", VersioningEnabled)
				if locked {
					if err := b.SetObjectLockConfiguration(ctx, alice, "bkt", ObjectLockConfig{Mode: LockCompliance, Days: 1}); err != nil {
						t.Fatal(err)
					}
				}
				v1 = put(t, b, alice, "bkt", "k", []byte("version one, written while versioned"))
			})
			res, err := a.DeleteObjectVersion(ctx, alice, "bkt", "k", "")
			if err != nil || !res.DeleteMarker {
				t.Fatalf("delete: %+v %v (want a delete marker)", res, err)
			}
			testHookCommit = nil
			waitCollected(t, a)
			if got := readVersion(t, b, alice, "bkt", "k", v1.VersionID); string(got) != "version one, written while versioned" {
				t.Errorf("version %s reads %q", v1.VersionID, got)
			}
			if got := readVersion(t, b, alice, "bkt", "k", NullVersionID); string(got) != "version zero, before versioning" {
				t.Errorf("null version reads %q", got)
			}
			if _, err := Check(db, nil); err != nil {
				t.Errorf("check: %v", err)
			}
		})
	}
}

// TestChangeDecidesVersioningInCommit: an ACL or tag change whose cached bucket
// record says "never versioned" is overtaken by versioning and a versioned PUT: the
// change must land on the new current version's records, both of them (the "o"
// record and its "v" record), so that the version made private is private by its id
// too, and stays so once noncurrent.
func TestChangeDecidesVersioningInCommit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		what   string
		change func(s *Service, r Requester) error
		// holds reports whether version m carries the change.
		holds func(m *Manifest) bool
	}{
		{"set acl", func(s *Service, r Requester) error {
			return s.SetObjectACL(ctx, r, "bkt", "k", ACLSpec{Canned: "private"})
		}, func(m *Manifest) bool { return !m.ACL.Allows(AnonymousRequester, PermRead) }},
		{"set tagging", func(s *Service, r Requester) error {
			return s.SetObjectTagging(ctx, r, "bkt", "k", []Tag{{Key: "state", Value: "reviewed"}})
		}, func(m *Manifest) bool { return len(m.Tags) == 1 && m.Tags[0].Value == "reviewed" }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			a, b, db := newSharedServices(t, noBlobs)
			alice := mustUser(t, a, "alice")
			mustBucket(t, a, alice, "bkt", "private")
			if _, err := a.PutObject(ctx, alice, "bkt", "k", PutInput{Body: strings.NewReader("v0"), Size: 2, Canned: "public-read"}); err != nil {
				t.Fatal(err)
			}
			var v1 *Manifest
			overtake(t, a, tc.what+" bkt/k", func() {
				setVersioning(t, b, alice, "bkt", VersioningEnabled)
				var err error
				v1, err = b.PutObject(ctx, alice, "bkt", "k", PutInput{Body: strings.NewReader("v1 secret"), Size: 9, Canned: "public-read"})
				if err != nil {
					t.Fatal(err)
				}
			})
			if err := tc.change(a, alice); err != nil {
				t.Fatal(err)
			}
			testHookCommit = nil
			put(t, b, alice, "bkt", "k", []byte("v2"))
			m, err := b.storedVersion(db.Get, "bkt", "k", v1.VersionID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.holds(m) {
				t.Errorf("version %s, now noncurrent, lacks the change: %+v", v1.VersionID, m)
			}
			if _, err := Check(db, nil); err != nil {
				t.Errorf("check: %v", err)
			}
		})
	}
}

// TestWriteGranteeRemovesOnlyOwnVersions: WRITE on a bucket from its ACL lets a
// grantee add delete markers, and remove for good only the versions it owns; the
// bucket owner, and a grantee a policy allows s3:DeleteObjectVersion, remove any.
func TestWriteGranteeRemovesOnlyOwnVersions(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, mallory, carol := mustUser(t, s, "alice"), mustUser(t, s, "mallory"), mustUser(t, s, "carol")
	mustBucket(t, s, alice, "bkt", "public-read-write")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":%q},
		"Action":["s3:DeleteObjectVersion"],"Resource":"arn:aws:s3:::bkt/*"}]}`, carol.ID)
	if err := s.SetBucketPolicy(ctx, alice, "bkt", []byte(policy)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		owner, who Requester
		want       Code // "" allowed
	}{
		{"grantee, the owner's version", alice, mallory, AccessDenied},
		{"anonymous, the owner's version", alice, AnonymousRequester, AccessDenied},
		{"grantee, its own version", mallory, mallory, ""},
		{"bucket owner, a grantee's version", mallory, alice, ""},
		{"policy allows, the owner's version", alice, carol, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "-")
			v := put(t, s, tc.owner, "bkt", key, []byte("the only copy"))
			_, err := s.DeleteObjectVersion(ctx, tc.who, "bkt", key, v.VersionID)
			if tc.want != "" {
				wantCode(t, err, tc.want)
				if got := readVersion(t, s, alice, "bkt", key, v.VersionID); string(got) != "the only copy" {
					t.Fatalf("version reads %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.OpenObjectVersion(ctx, alice, "bkt", key, v.VersionID)
			wantCode(t, err, NoSuchVersion)
		})
	}
	// A delete marker without a version id stays anyone's with WRITE.
	put(t, s, alice, "bkt", "marked", []byte("x"))
	if res, err := s.DeleteObjectVersion(ctx, mallory, "bkt", "marked", ""); err != nil || !res.DeleteMarker {
		t.Fatalf("grantee's delete marker: %+v %v", res, err)
	}
}

// TestVersionProbesHidden: a requester who may not list a bucket cannot tell a
// missing key or version, or a delete marker, from a version it may not read: every
// read by version id answers it AccessDenied, while the owner sees the real error.
func TestVersionProbesHidden(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	acl, _ := CannedACL("private", Owner{ID: alice.ID, DisplayName: alice.DisplayName}, Owner{ID: alice.ID})
	if _, err := s.CreateBucketWith(ctx, alice, "bkt", acl, BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	put(t, s, alice, "bkt", "exists", []byte("secret"))
	marker, err := s.DeleteObjectVersion(ctx, alice, "bkt", "gone", "")
	if err != nil {
		t.Fatal(err)
	}
	unknown := newSlot(1).id()
	reads := map[string]func(r Requester, key, id string) error{
		"get": func(r Requester, key, id string) error {
			o, err := s.OpenObjectVersion(ctx, r, "bkt", key, id)
			if err == nil {
				o.Close()
			}
			return err
		},
		"acl": func(r Requester, key, id string) error {
			_, err := s.ObjectVersionACL(ctx, r, "bkt", key, id)
			return err
		},
		"tagging": func(r Requester, key, id string) error {
			_, err := s.ObjectVersionTagging(ctx, r, "bkt", key, id)
			return err
		},
		"retention": func(r Requester, key, id string) error {
			_, err := s.ObjectRetention(ctx, r, "bkt", key, id)
			return err
		},
		"legalhold": func(r Requester, key, id string) error {
			_, err := s.ObjectLegalHold(ctx, r, "bkt", key, id)
			return err
		},
		"set acl": func(r Requester, key, id string) error {
			return s.SetObjectVersionACL(ctx, r, "bkt", key, id, ACLSpec{Canned: "private"})
		},
		"set tagging": func(r Requester, key, id string) error { return s.SetObjectVersionTagging(ctx, r, "bkt", key, id, nil) },
	}
	for name, read := range reads {
		for _, tc := range []struct {
			key, id string
			owner   Code // what the owner sees
		}{
			{"missing", NullVersionID, NoSuchVersion},
			{"missing", unknown, NoSuchVersion},
			{"exists", unknown, NoSuchVersion},
			{"gone", marker.VersionID, MethodNotAllowed},
		} {
			t.Run(name+"/"+tc.key+"@"+tc.id, func(t *testing.T) {
				for _, r := range []Requester{bob, AnonymousRequester} {
					wantCode(t, read(r, tc.key, tc.id), AccessDenied)
				}
				wantCode(t, read(alice, tc.key, tc.id), tc.owner)
			})
		}
	}
}

// TestCompletedUploadKeepsVersion: a retried completion answers the version id the
// completion made, not the null version's.
func TestCompletedUploadKeepsVersion(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "private")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	u, err := s.CreateUpload(ctx, alice, "bkt", "k", PutInput{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, alice, "bkt", "k", u.ID, 1, PutInput{Body: strings.NewReader("part"), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	parts := []CompletePart{{Number: 1, ETag: p.ETag}}
	first, err := s.CompleteUpload(ctx, alice, "bkt", "k", u.ID, parts, WriteConditions{})
	if err != nil || first.VersionID == "" {
		t.Fatalf("complete: %+v %v", first, err)
	}
	again, err := s.CompleteUpload(ctx, alice, "bkt", "k", u.ID, parts, WriteConditions{})
	if err != nil || again.VersionID != first.VersionID || again.ETag != first.ETag {
		t.Fatalf("retried completion: %+v %v, first %s", again, err, first.VersionID)
	}
}

// TestCopyFromDeleteMarker: a copy whose source version id names a delete marker is
// 400 InvalidRequest, and one whose source's current version is a marker 404
// NoSuchKey, neither a MarkerError (a copy's answer has no marker headers).
func TestCopyFromDeleteMarker(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "private")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	put(t, s, alice, "bkt", "k", []byte("data"))
	marker, err := s.DeleteObjectVersion(ctx, alice, "bkt", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want Code
	}{{marker.VersionID, InvalidRequest}, {"", NoSuchKey}} {
		_, err := s.CopyObject(ctx, alice, "bkt", "k", "bkt", "c", CopyInput{SourceVersionID: tc.id})
		wantCode(t, err, tc.want)
		var me *MarkerError
		if errors.As(err, &me) {
			t.Errorf("copy from %q: a MarkerError %v", tc.id, err)
		}
	}
}

// TestObjectIsCurrent: an open version knows whether it is its key's current one.
func TestObjectIsCurrent(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "private")
	put(t, s, alice, "bkt", "k", []byte("null version"))
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v1 := put(t, s, alice, "bkt", "k", []byte("v1"))
	for _, tc := range []struct {
		id   string
		want bool
	}{{"", true}, {v1.VersionID, true}, {NullVersionID, false}} {
		o, err := s.OpenObjectVersion(ctx, alice, "bkt", "k", tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.IsCurrent(); got != tc.want {
			t.Errorf("version %q: IsCurrent %v, want %v", tc.id, got, tc.want)
		}
		o.Close()
	}
}

// TestCheckFindsVersionDisagreements: Check reports listed data queued for
// collection or still being written, and a current record that differs from its
// version record (a change that rewrote only one of them).
func TestCheckFindsVersionDisagreements(t *testing.T) {
	for _, tc := range []struct {
		name string
		// spoil changes one record of the current version cur: key, new value (nil:
		// an empty record).
		spoil func(t *testing.T, cur *Manifest) (key, value []byte)
		want  string
	}{
		{"queued", func(t *testing.T, cur *Manifest) ([]byte, []byte) {
			return garbageKey(mustHexID(t, cur.UUID)), nil
		}, "queued while still listed"},
		{"writing", func(t *testing.T, cur *Manifest) ([]byte, []byte) {
			return writingKey(mustHexID(t, cur.UUID)), nil
		}, "queued while still listed"},
		{"tags in the current record only", func(t *testing.T, cur *Manifest) ([]byte, []byte) {
			cur.Tags = []Tag{{Key: "only", Value: "here"}}
			v, err := json.Marshal(cur)
			if err != nil {
				t.Fatal(err)
			}
			return objectKey("bkt", "k"), v
		}, "differs from its version record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, db := newTestService(t)
			alice := mustUser(t, s, "alice")
			mustBucket(t, s, alice, "bkt", "private")
			setVersioning(t, s, alice, "bkt", VersioningEnabled)
			put(t, s, alice, "bkt", "k", []byte("old"))
			cur := put(t, s, alice, "bkt", "k", []byte("current"))
			waitCollected(t, s)
			if _, err := Check(db, nil); err != nil {
				t.Fatalf("check before: %v", err)
			}
			// Spoil a copy: the service's collector must not act on it.
			spoilt := copyStore(t, db)
			k, v := tc.spoil(t, cur)
			if err := spoilt.Put(k, v, false); err != nil {
				t.Fatal(err)
			}
			if _, err := Check(spoilt, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}

// copyStore returns a new store holding every record of db.
func copyStore(t *testing.T, db *storage.DB) *storage.DB {
	t.Helper()
	out, err := storage.Open(filepath.Join(t.TempDir(), "copy"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	it := db.IteratePrefix(nil)
	defer it.Release()
	for it.Next() {
		if err := out.Put(bytes.Clone(it.Key()), bytes.Clone(it.Value()), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mustHexID decodes a chunk id.
func mustHexID(t *testing.T, id string) []byte {
	t.Helper()
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != 16 {
		t.Fatalf("chunk id %q: %v", id, err)
	}
	return raw
}

// TestVersionRemovalHidesExistence: a requester who may remove only its own versions
// (WRITE from the bucket's ACL) is answered AccessDenied for a version id whether or
// not the version exists, so DELETE ?versionId= tells it nothing of others' versions;
// a requester who may remove any version still deletes a missing one without error.
func TestVersionRemovalHidesExistence(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, mallory := mustUser(t, s, "alice"), mustUser(t, s, "mallory")
	mustBucket(t, s, alice, "bkt", "public-read-write")
	mustBucket(t, s, alice, "plain", "public-read-write")
	setVersioning(t, s, alice, "bkt", VersioningEnabled)
	v := put(t, s, alice, "bkt", "k", []byte("alice's"))
	unknown := newSlot(1).id()
	for _, tc := range []struct {
		name        string
		who         Requester
		bucket, key string
		id          string
		want        Code // "" no error
	}{
		{"grantee, an existing version", mallory, "bkt", "k", v.VersionID, AccessDenied},
		{"grantee, an unknown version of a key", mallory, "bkt", "k", unknown, AccessDenied},
		{"grantee, no null version", mallory, "bkt", "k", NullVersionID, AccessDenied},
		{"grantee, a key without versions", mallory, "bkt", "none", unknown, AccessDenied},
		{"grantee, a bucket never versioned", mallory, "plain", "none", unknown, AccessDenied},
		{"anonymous, an unknown version", AnonymousRequester, "bkt", "k", unknown, AccessDenied},
		{"owner, an unknown version", alice, "bkt", "k", unknown, ""},
		{"owner, a key without versions", alice, "bkt", "none", unknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.DeleteObjectVersion(ctx, tc.who, tc.bucket, tc.key, tc.id)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				wantCode(t, err, tc.want)
			}
			if got := readVersion(t, s, alice, "bkt", "k", v.VersionID); string(got) != "alice's" {
				t.Fatalf("version reads %q", got)
			}
		})
	}
}
