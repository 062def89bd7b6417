package s3

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// TestMissingKeyNeedsList is the attack of probing a private bucket for which keys
// exist (403 for an existing key, 404 for a missing one): without the right to list
// the bucket, a missing key is AccessDenied like an existing unreadable one, for every
// object read (GET, HEAD, ?acl, PUT ?acl, copy source); with it, NoSuchKey. Deletes
// are refused before the key is looked at.
func TestMissingKeyNeedsList(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "private", "")
	mustBucket(t, s, alice, "listed", "public-read")
	mustBucket(t, s, bob, "bobs", "")
	put(t, s, alice, "private", "secret", []byte("s"))
	put(t, s, alice, "listed", "secret", []byte("s"))
	pub, _ := CannedACL(CannedPublicRead, Owner{}, Owner{})
	reads := map[string]func(r Requester, bucket, key string) error{
		"GET": func(r Requester, b, k string) error {
			o, err := s.OpenObject(ctx, r, b, k)
			if err == nil {
				o.Close()
			}
			return err
		},
		"HEAD":     func(r Requester, b, k string) error { _, err := s.StatObject(ctx, r, b, k); return err },
		"GET ?acl": func(r Requester, b, k string) error { _, err := s.ObjectACL(ctx, r, b, k); return err },
		"PUT ?acl": func(r Requester, b, k string) error {
			return s.SetObjectACL(ctx, r, b, k, ACLSpec{ACL: &pub})
		},
		"copy source": func(r Requester, b, k string) error {
			_, err := s.CopyObject(ctx, r, b, k, "bobs", "copy", CopyInput{})
			return err
		},
	}
	for _, tc := range []struct {
		who             string
		r               Requester
		bucket          string
		existing, wantC Code // the answers for "secret" and for "missing"
	}{
		{"a stranger, private bucket", bob, "private", AccessDenied, AccessDenied},
		{"anonymous, private bucket", AnonymousRequester, "private", AccessDenied, AccessDenied},
		{"a stranger who may list", bob, "listed", AccessDenied, NoSuchKey},
		{"anonymous who may list", AnonymousRequester, "listed", AccessDenied, NoSuchKey},
	} {
		for name, read := range reads {
			if name == "copy source" && tc.r.Anonymous {
				continue // anonymous cannot write the copy anyway
			}
			wantCode(t, read(tc.r, tc.bucket, "secret"), tc.existing)
			if err := read(tc.r, tc.bucket, "missing"); !IsCode(err, tc.wantC) {
				t.Errorf("%s, %s of a missing key: %v, want %s", tc.who, name, err, tc.wantC)
			}
		}
		wantCode(t, s.DeleteObject(ctx, tc.r, tc.bucket, "missing"), AccessDenied)
		wantCode(t, s.DeleteObject(ctx, tc.r, tc.bucket, "secret"), AccessDenied)
	}
	// The owner, who may list, is told a key is missing.
	_, err := s.StatObject(ctx, alice, "private", "missing")
	wantCode(t, err, NoSuchKey)
	// A bucket policy granting s3:ListBucket is the right to list too.
	if err := s.SetBucketPolicy(ctx, alice, "private", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Principal":{"AWS":["`+bob.ID+`"]},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::private"}]}`)); err != nil {
		t.Fatal(err)
	}
	_, err = s.StatObject(ctx, bob, "private", "missing")
	wantCode(t, err, NoSuchKey)
	_, err = s.StatObject(ctx, bob, "private", "secret")
	wantCode(t, err, AccessDenied)
}

// TestKeysXMLCannotCarry is the attack of a key with a NUL byte, which was stored and
// then listed under a name (U+FFFD) that answered 404: a new key with a character an
// XML listing cannot carry is refused; a key stored before the rule is still read,
// listed and deleted by its own name.
func TestKeysXMLCannotCarry(t *testing.T) {
	s, db := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "keys", "")
	for _, bad := range []string{"a\x00b", "\x01", "x\x1fy", "\x0b", "\x0c", "a\uFFFEb", "\uFFFF"} {
		_, err := s.PutObject(ctx, alice, "keys", bad, PutInput{Body: strings.NewReader("x"), Size: 1})
		wantCode(t, err, InvalidArgument)
		_, err = s.CreateUpload(ctx, alice, "keys", bad, PutInput{})
		wantCode(t, err, InvalidArgument)
	}
	put(t, s, alice, "keys", "src", []byte("x"))
	_, err := s.CopyObject(ctx, alice, "keys", "src", "keys", "a\x00b", CopyInput{})
	wantCode(t, err, InvalidArgument)
	for _, good := range []string{"tab\t", "line\nfeed", "cr\r", "del\x7f", "c1\u0085", "bmp\uFFFD"} {
		put(t, s, alice, "keys", good, []byte("g"))
	}

	putLegacy(t, s, db, alice, "keys", "old\x00key", []byte("x"))
	if got := read(t, s, alice, "keys", "old\x00key"); !bytes.Equal(got, []byte("x")) {
		t.Fatalf("the old key reads %q", got)
	}
	l, err := s.ListObjects(ctx, alice, "keys", ListOptions{Prefix: "old", MaxKeys: 10})
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Key != "old\x00key" {
		t.Fatalf("listing %+v %v", l, err)
	}
	if err := s.DeleteObject(ctx, alice, "keys", "old\x00key"); err != nil {
		t.Fatal(err)
	}
	_, err = s.StatObject(ctx, alice, "keys", "old\x00key")
	wantCode(t, err, NoSuchKey)
}

// putLegacy stores an object under a key checkNewKey refuses, as an earlier version
// could: it is written under another name, whose manifest is then renamed.
func putLegacy(t *testing.T, s *Service, db *storage.DB, r Requester, bucket, key string, data []byte) {
	t.Helper()
	put(t, s, r, bucket, "legacy-tmp", data)
	v, err := db.Get(objectKey(bucket, "legacy-tmp"))
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Delete(objectKey(bucket, "legacy-tmp"))
	b.Put(objectKey(bucket, key), v)
	if err := db.Write(b, true); err != nil {
		t.Fatal(err)
	}
}
