package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// s3RecordsHolding returns the keys of the S3 records of db whose value contains b.
func s3RecordsHolding(t *testing.T, db *storage.DB, b []byte) []string {
	t.Helper()
	var out []string
	it := db.IteratePrefix([]byte{storage.TagS3})
	defer it.Release()
	for it.Next() {
		if bytes.Contains(it.Value(), b) {
			out = append(out, string(it.Key()))
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSSECKeyMD5NotStored: no object record keeps the MD5 of an SSE-C key (PUT, copy,
// completed upload); the upload record keeps it until completion, and CompleteUpload
// answers it; every object reads with the key; cairn check's checkEncryption takes
// records with the MD5 (written before) and without it.
func TestSSECKeyMD5NotStored(t *testing.T) {
	ctx := context.Background()
	s, db, _ := newSSEService(t, fileBlobs)
	s.cfg.MinPartSize = 1
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	ck := customerKey(5)
	md5 := []byte(ck.MD5)
	data := randomData(3000)
	m, err := s.PutObject(ctx, alice, "bkt", "put", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: SSERequest{Customer: ck}})
	if err != nil || m.SSE == nil || m.SSE.CustomerKeyMD5 != "" {
		t.Fatalf("put: %+v %v", m, err)
	}
	if _, err := s.CopyObject(ctx, alice, "bkt", "put", "bkt", "copy", CopyInput{SourceKey: ck, In: PutInput{SSE: SSERequest{Customer: ck}}}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUpload(ctx, alice, "bkt", "mp", PutInput{SSE: SSERequest{Customer: ck}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s3RecordsHolding(t, db, md5); len(got) != 1 {
		t.Fatalf("records holding the key MD5 before completion: %q, want the upload's alone", got)
	}
	p, err := s.PutPart(ctx, alice, "bkt", "mp", u.ID, 1, PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: SSERequest{Customer: ck}})
	if err != nil {
		t.Fatal(err)
	}
	m, err = s.CompleteUpload(ctx, alice, "bkt", "mp", u.ID, []CompletePart{{Number: 1, ETag: p.ETag}}, WriteConditions{})
	if err != nil || m.SSE == nil || m.SSE.CustomerKeyMD5 != ck.MD5 {
		t.Fatalf("complete: %+v %v", m, err)
	}
	if got := s3RecordsHolding(t, db, md5); len(got) != 0 {
		t.Fatalf("records holding the key MD5: %q", got)
	}
	for _, key := range []string{"put", "copy", "mp"} {
		if got, err := readSSE(t, s, alice, "bkt", key, ck, 0, -1); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes, %v", key, len(got), err)
		}
	}

	// A manifest of before, with the MD5, still checks.
	old, err := s.OpenObject(ctx, alice, "bkt", "put")
	if err != nil {
		t.Fatal(err)
	}
	om := *old.Manifest
	old.Close()
	e := *om.SSE
	e.CustomerKeyMD5 = ck.MD5
	om.SSE = &e
	if err := checkEncryption(&om); err != nil {
		t.Fatalf("check of a manifest with the MD5: %v", err)
	}
	if err := checkEncryption(m); err != nil {
		t.Fatalf("check of a manifest without: %v", err)
	}
}

// TestCheckEncryptionVersions: cairn check's key check unwraps the data keys of
// noncurrent versions (once each: a current record and its version share one), and
// Check verifies their encryption records.
func TestCheckEncryptionVersions(t *testing.T) {
	ctx := context.Background()
	s, db, _ := newSSEService(t, noBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	if err := s.SetBucketVersioning(ctx, alice, "bkt", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1, err := s.PutObject(ctx, alice, "bkt", "k", PutInput{Body: bytes.NewReader([]byte("one")), Size: 3, SSE: SSERequest{S3: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []SSERequest{{S3: true}, {}} { // an SSE-S3 version, then a plain current one
		if _, err := s.PutObject(ctx, alice, "bkt", "k", PutInput{Body: bytes.NewReader([]byte("two")), Size: 3, SSE: q}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutObject(ctx, alice, "bkt", "cur", PutInput{Body: bytes.NewReader([]byte("c")), Size: 1, SSE: SSERequest{S3: true}}); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckKeys(db, s.cfg.MasterKey)
	if err != nil || rep.ServerKeys != 3 || rep.Problems != 0 {
		t.Fatalf("check keys: %+v %v (want 3 server keys: two noncurrent versions and one current)", rep, err)
	}
	other, _ := sse.NewMasterKey(sse.NewKey())
	if rep, err := CheckKeys(db, other); err == nil || rep.Problems != 3 {
		t.Fatalf("check keys with another master key: %+v %v", rep, err)
	}
	if _, err := Check(db, nil); err != nil {
		t.Fatalf("a consistent store: %v", err)
	}
	slot, err := parseSlot(v1.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	key := versionKey("bkt", "k", slot)
	good, err := db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	bad := *v1
	e := *bad.SSE
	e.NoncePrefix = e.NoncePrefix[1:]
	bad.SSE = &e
	v, _ := json.Marshal(&bad)
	if err := db.Put(key, v, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(db, nil); err == nil || !strings.Contains(err.Error(), "nonce prefix of 6 bytes") {
		t.Errorf("Check with a noncurrent version's bad encryption record: %v", err)
	}
	if err := db.Put(key, good, false); err != nil { // for the invariant check after the test
		t.Fatal(err)
	}
}
