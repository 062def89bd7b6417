package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"testing"
)

// TestOldFormManifests: manifests written by earlier builds (JSON records as they were
// stored before the blob store became an interface) stay readable, whatever the blob
// store: a blob is named by its id (the "uuid" or a part's "id" with "blob": true),
// never by a path, so the records need no rewriting. The records are written directly,
// byte for byte as the old code wrote them, with their data; the objects read back
// whole and `check` finds the store consistent (newTestServiceBlobs's cleanup).
func TestOldFormManifests(t *testing.T) {
	for _, kind := range []blobKind{fileBlobs, memBlobs} {
		t.Run(string(kind), func(t *testing.T) { testOldFormManifests(t, kind) })
	}
}

// oldManifest is a manifest record as the build before the blob interface wrote it.
const oldManifest = `{"uuid":"%s","size":%d,"chunk_size":16%s,"etag":"%s","content_type":"text/plain",` +
	`"last_modified":"2026-11-20T10:00:00.123Z","owner":{"id":"%s","display_name":"alice"},` +
	`"acl":{"owner":{"id":"%s","display_name":"alice"},"grants":[{"grantee":{"type":"CanonicalUser","id":"%s",` +
	`"display_name":"alice"},"permission":"FULL_CONTROL"}]}%s}`

func testOldFormManifests(t *testing.T, kind blobKind) {
	ctx := context.Background()
	s, db := newTestServiceBlobs(t, kind)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "old", "")
	id := func(b byte) string { return hex.EncodeToString(bytes.Repeat([]byte{b}, 16)) }
	raw := func(h string) []byte { b, _ := hex.DecodeString(h); return b }
	etag := func(d []byte) string { s := md5.Sum(d); return hex.EncodeToString(s[:]) }
	blob := func(h string, d []byte) {
		w, err := s.cfg.Blobs.Create(ctx, raw(h))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(d)
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	chunks := func(h string, d []byte) {
		for n := 0; n*16 < len(d) || n == 0; n++ {
			if err := db.Put(chunkKey(raw(h), uint64(n)), d[n*16:min(len(d), n*16+16)], false); err != nil {
				t.Fatal(err)
			}
		}
	}
	record := func(key, uuid string, size int, blobField, tag, parts string) {
		v := fmt.Sprintf(oldManifest, uuid, size, blobField, tag, alice.ID, alice.ID, alice.ID, parts)
		if err := db.Put(objectKey("old", key), []byte(v), true); err != nil {
			t.Fatal(err)
		}
	}

	small := []byte("in one chunk")
	chunks(id(1), small)
	record("small", id(1), len(small), "", etag(small), "")

	large := bytes.Repeat([]byte("blob data "), 10)
	blob(id(2), large)
	record("blob", id(2), len(large), `,"blob":true`, etag(large), "")

	p1, p2 := bytes.Repeat([]byte("a"), 40), []byte("tail in chunks")
	blob(id(4), p1)
	chunks(id(5), p2)
	parts := fmt.Sprintf(`,"parts":[{"id":"%s","size":%d,"chunk_size":16,"blob":true},{"id":"%s","size":%d,"chunk_size":16}]`,
		id(4), len(p1), id(5), len(p2))
	whole := append(bytes.Clone(p1), p2...)
	record("multi", id(3), len(whole), "", "0123456789abcdef0123456789abcdef-2", parts)

	for _, c := range []struct {
		key  string
		want []byte
	}{{"small", small}, {"blob", large}, {"multi", whole}} {
		if got := read(t, s, alice, "old", c.key); !bytes.Equal(got, c.want) {
			t.Errorf("%s: read %q, want %q", c.key, got, c.want)
		}
	}
	// Replacing an old-form object collects its data like a new one's.
	put(t, s, alice, "old", "blob", []byte("new"))
	waitCollected(t, s)
	if _, err := s.cfg.Blobs.Stat(ctx, raw(id(2))); err == nil {
		t.Error("the replaced old-form blob was not collected")
	}
}
