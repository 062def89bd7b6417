package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// putMultipart stores bucket/key as a multipart upload of parts (numbers 1, 2, …)
// encrypted as q asks, completed with the SSE-C key complete (nil: none), and returns
// its manifest as stored.
func putMultipart(t *testing.T, s *Service, db *storage.DB, r Requester, bucket, key string, q SSERequest, complete *CustomerKey, parts ...[]byte) Manifest {
	t.Helper()
	ctx := context.Background()
	u, err := s.CreateUpload(ctx, r, bucket, key, PutInput{SSE: q})
	if err != nil {
		t.Fatal(err)
	}
	var done []CompletePart
	for i, p := range parts {
		pi, err := s.PutPart(ctx, r, bucket, key, u.ID, i+1, PutInput{Body: bytes.NewReader(p), Size: int64(len(p)), SSE: SSERequest{Customer: q.Customer}})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, CompletePart{Number: i + 1, ETag: pi.ETag})
	}
	if _, err := s.CompleteUploadWithKey(ctx, r, bucket, key, u.ID, done, WriteConditions{}, complete); err != nil {
		t.Fatal(err)
	}
	return storedManifest(t, db, bucket, key)
}

// storedManifest reads the current record of bucket/key (an unversioned bucket's).
func storedManifest(t *testing.T, db *storage.DB, bucket, key string) Manifest {
	t.Helper()
	v, err := db.Get(objectKey(bucket, key))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// refuseTampered stores in turn, as the current record of bucket/key, copies of its
// record good with its parts reordered (renumbered to look ascending, or not),
// dropped (in the middle, at the end) and its layout MAC removed, and checks that none
// reads with the key ck (each fails the layout check); good is stored back at the end.
func refuseTampered(t *testing.T, s *Service, db *storage.DB, r Requester, bucket, key string, good Manifest, ck *CustomerKey) {
	t.Helper()
	p := good.Parts
	for change, f := range map[string]func(m *Manifest){
		"reordered": func(m *Manifest) { m.Parts = []Extent{p[1], p[0], p[2]} },
		"reordered, renumbered": func(m *Manifest) {
			a, b := p[1], p[0]
			a.Part, b.Part = 1, 2
			m.Parts = []Extent{a, b, p[2]}
		},
		"middle dropped": func(m *Manifest) { m.Parts = []Extent{p[0], p[2]}; m.Size -= p[1].Size },
		"last dropped":   func(m *Manifest) { m.Parts = p[:2]; m.Size -= p[2].Size },
		"layout removed": func(m *Manifest) { m.Parts = p[:2]; m.Size -= p[2].Size; m.SSE.Layout = nil },
	} {
		bad := good
		bad.Parts = slices.Clone(good.Parts)
		e := *good.SSE
		bad.SSE = &e
		f(&bad)
		v, _ := json.Marshal(&bad)
		if err := db.Put(objectKey(bucket, key), v, false); err != nil {
			t.Fatal(err)
		}
		got, err := readSSE(t, s, r, bucket, key, ck, 0, -1)
		if !errors.Is(err, errLayout) {
			t.Errorf("%s: read %d bytes, %v; want the layout refused", change, len(got), err)
		}
	}
	v, _ := json.Marshal(&good)
	if err := db.Put(objectKey(bucket, key), v, false); err != nil {
		t.Fatal(err)
	}
}

// TestSSELayout: the parts of an encrypted multipart object (SSE-S3, and SSE-C: its
// upload keeps its layout key wrapped with the master key, or the completion carries
// the customer's key) are bound to their part
// numbers and their layout is authenticated: a record whose parts were reordered,
// dropped or renumbered by whoever can write the store does not read (Unseal fails);
// the untouched record reads whole, and so does an object stored whole, whose
// record's layout is authenticated too.
func TestSSELayout(t *testing.T) {
	s, db, _ := newSSEService(t, fileBlobs)
	s.cfg.MinPartSize = 1
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	parts := [][]byte{randomData(70000), randomData(1500), randomData(900)}
	whole := bytes.Join(parts, nil)
	ck := customerKey(6)
	for name, c := range map[string]struct {
		q        SSERequest
		complete *CustomerKey
	}{
		"sse-s3":              {SSERequest{S3: true}, nil},
		"sse-c":               {SSERequest{Customer: ck}, nil},
		"sse-c, key complete": {SSERequest{Customer: ck}, ck},
	} {
		q := c.q
		t.Run(name, func(t *testing.T) {
			good := putMultipart(t, s, db, alice, "bkt", name, q, c.complete, parts...)
			if good.SSE == nil || good.SSE.Format != sseFormat || len(good.SSE.Layout) != 32 || good.SSE.WrappedLayoutKey != nil ||
				len(good.Parts) != 3 || good.Parts[2].Part != 3 {
				t.Fatalf("stored record: %+v %+v", good.SSE, good.Parts)
			}
			if err := checkEncryption(&good); err != nil {
				t.Fatal(err)
			}
			if got, err := readSSE(t, s, alice, "bkt", name, q.Customer, 0, -1); err != nil || !bytes.Equal(got, whole) {
				t.Fatalf("read: %d bytes, %v", len(got), err)
			}
			refuseTampered(t, s, db, alice, "bkt", name, good, q.Customer)
		})
	}
	// An object stored whole has a layout too; another extent under its record does not read.
	if _, err := s.PutObject(context.Background(), alice, "bkt", "single", PutInput{Body: bytes.NewReader(whole), Size: int64(len(whole)), SSE: SSERequest{S3: true}}); err != nil {
		t.Fatal(err)
	}
	single := storedManifest(t, db, "bkt", "single")
	if single.SSE.Format != sseFormat || len(single.SSE.Layout) != 32 {
		t.Fatalf("whole object's record: %+v", single.SSE)
	}
	if got, err := readSSE(t, s, alice, "bkt", "single", nil, 0, -1); err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("whole object read: %v", err)
	}
}

// TestSSELayoutWithoutMasterKey: an SSE-C multipart upload completed on a server
// without a master key by a completion that does not carry the customer's key (no
// key to authenticate the layout with) is stored without a layout MAC and reads; its
// parts stay bound to their numbers, so parts reordered (and renumbered to look
// ascending) fail authentication. (Dropping whole parts of such an object is what
// cannot be detected: docs/rationale.md; TestSSELayoutCompletionKey for the
// completion that carries the key.)
func TestSSELayoutWithoutMasterKey(t *testing.T) {
	s, db := newTestServiceConfig(t, nil, Config{ChunkSize: 1000, MaxBuckets: 5, MinPartSize: 1})
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	ck := customerKey(7)
	parts := [][]byte{randomData(3000), randomData(2000)}
	m := putMultipart(t, s, db, alice, "bkt", "k", SSERequest{Customer: ck}, nil, parts...)
	if m.SSE.Layout != nil || m.SSE.Format != sseFormat {
		t.Fatalf("record: %+v", m.SSE)
	}
	if err := checkEncryption(&m); err != nil {
		t.Fatal(err)
	}
	if got, err := readSSE(t, s, alice, "bkt", "k", ck, 0, -1); err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("read: %v", err)
	}
	m.Parts[0], m.Parts[1] = m.Parts[1], m.Parts[0]
	m.Parts[0].Part, m.Parts[1].Part = 1, 2 // ascending numbers, each on the other's data
	v, _ := json.Marshal(&m)
	if err := db.Put(objectKey("bkt", "k"), v, false); err != nil {
		t.Fatal(err)
	}
	if _, err := readSSE(t, s, alice, "bkt", "k", ck, 0, -1); !errors.Is(err, sse.ErrAuth) {
		t.Fatalf("reordered and renumbered parts read: %v", err)
	}
}

// TestSSELayoutCompletionKey: on a server without a master key, an SSE-C multipart
// upload whose completion carries the customer's key gets a layout MAC, and its data
// key is rewrapped bound to it: a record whose parts were reordered or dropped, or
// whose MAC was removed, by whoever can write the store does not read (an error, never
// other bytes). A completion with another key is 403 AccessDenied and one with a key
// for an upload stored in clear 400 InvalidRequest; both leave the upload to complete.
func TestSSELayoutCompletionKey(t *testing.T) {
	ctx := context.Background()
	s, db := newTestServiceConfig(t, nil, Config{ChunkSize: 1000, MaxBuckets: 5, MinPartSize: 1})
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	ck := customerKey(9)
	parts := [][]byte{randomData(70000), randomData(1500), randomData(900)}
	good := putMultipart(t, s, db, alice, "bkt", "k", SSERequest{Customer: ck}, ck, parts...)
	if len(good.SSE.Layout) != 32 || good.SSE.Format != sseFormat || good.SSE.WrappedLayoutKey != nil {
		t.Fatalf("record: %+v", good.SSE)
	}
	if _, bound, err := sse.UnwrapCustomerKeyAny(ck.Key, good.SSE.WrappedKey); err != nil || !bound {
		t.Fatalf("data key bound %v, %v", bound, err)
	}
	if err := checkEncryption(&good); err != nil {
		t.Fatal(err)
	}
	if got, err := readSSE(t, s, alice, "bkt", "k", ck, 0, -1); err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("read: %d bytes, %v", len(got), err)
	}
	refuseTampered(t, s, db, alice, "bkt", "k", good, ck)

	for name, c := range map[string]struct {
		q    SSERequest
		code Code
	}{
		"another key":     {SSERequest{Customer: ck}, AccessDenied},
		"stored in clear": {SSERequest{}, InvalidRequest},
	} {
		u, err := s.CreateUpload(ctx, alice, "bkt", name, PutInput{SSE: c.q})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.PutPart(ctx, alice, "bkt", name, u.ID, 1, PutInput{Body: bytes.NewReader(parts[2]), Size: int64(len(parts[2])), SSE: c.q})
		if err != nil {
			t.Fatal(err)
		}
		want := []CompletePart{{Number: 1, ETag: p.ETag}}
		if _, err := s.CompleteUploadWithKey(ctx, alice, "bkt", name, u.ID, want, WriteConditions{}, customerKey(10)); !IsCode(err, c.code) {
			t.Fatalf("%s: completion %v, want %s", name, err, c.code)
		}
		if _, err := s.CompleteUploadWithKey(ctx, alice, "bkt", name, u.ID, want, WriteConditions{}, c.q.Customer); err != nil {
			t.Fatalf("%s: completion after the refused one: %v", name, err)
		}
	}
}

// TestSSEFormat1Reads: objects sealed in format 1 (the records of the first release:
// no format, no part numbers, no layout MAC) still read, SSE-S3 and SSE-C, and check.
func TestSSEFormat1Reads(t *testing.T) {
	ctx := context.Background()
	s, db, _ := newSSEService(t, noBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	b, err := s.Bucket(ctx, "bkt")
	if err != nil {
		t.Fatal(err)
	}
	ck := customerKey(8)
	data := randomData(2500)
	for key, q := range map[string]SSERequest{"s3": {S3: true}, "c": {Customer: ck}} {
		enc, dk, err := s.newEncryption(b, q, false)
		if err != nil {
			t.Fatal(err)
		}
		enc.Format, dk.format, dk.bound = 0, 0, false
		if q.Customer != nil {
			if enc.WrappedKey, err = sse.WrapCustomerKey(ck.Key, dk.key); err != nil {
				t.Fatal(err)
			}
		}
		w := new(writes)
		ext, sum, err := s.storeData(ctx, PutInput{Body: bytes.NewReader(data), Size: int64(len(data))}, w, writeRecord{Bucket: "bkt", Key: key}, dk, 0)
		if err != nil || ext.Part != 0 {
			t.Fatalf("store: %+v %v", ext, err)
		}
		owner := Owner{ID: alice.ID, DisplayName: alice.DisplayName}
		acl, _ := newObjectACL(PutInput{}, owner, b)
		m := &Manifest{UUID: ext.ID, Size: int64(len(data)), ChunkSize: ext.ChunkSize, Blob: ext.Blob, ETag: dk.etag(sum), Owner: owner, ACL: acl, SSE: enc}
		if err := s.commit(ctx, "bkt", key, m, w, WriteConditions{}); err != nil {
			t.Fatal(err)
		}
		if got, err := readSSE(t, s, alice, "bkt", key, q.Customer, 100, 2000); err != nil || !bytes.Equal(got, data[100:2100]) {
			t.Fatalf("%s: format 1 read: %v", key, err)
		}
		stored := storedManifest(t, db, "bkt", key)
		if err := checkEncryption(&stored); err != nil {
			t.Fatalf("%s: check: %v", key, err)
		}
	}
}

// TestSSECBoundUploadNeedsKeyOrMaster: an SSE-C upload initiated by a server with a
// master key (its data key bound to a layout MAC) and completed by one without is
// refused unless the completion carries the customer's key, with which it completes
// into an object that reads whole (review: stored without the MAC, it never read). A
// server without a master key refuses to start on a store that records one; this is
// the node that started before the first one with a key recorded it.
func TestSSECBoundUploadNeedsKeyOrMaster(t *testing.T) {
	ctx := context.Background()
	other, db := newTestServiceConfig(t, nil, Config{ChunkSize: 1000, MaxBuckets: 5, MinPartSize: 1}) // no master key
	mk, err := sse.NewMasterKey(sse.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Config{ChunkSize: 1000, MaxBuckets: 5, MinPartSize: 1, MasterKey: mk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	ck := customerKey(11)
	data := randomData(1500)
	u, err := s.CreateUpload(ctx, alice, "bkt", "k", PutInput{SSE: SSERequest{Customer: ck}})
	if err != nil {
		t.Fatal(err)
	}
	if u.SSE == nil || u.SSE.WrappedLayoutKey == nil {
		t.Fatalf("upload initiated with a master key has no wrapped layout key: %+v", u.SSE)
	}
	p, err := s.PutPart(ctx, alice, "bkt", "k", u.ID, 1, PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: SSERequest{Customer: ck}})
	if err != nil {
		t.Fatal(err)
	}
	want := []CompletePart{{Number: 1, ETag: p.ETag}}
	if _, err := other.CompleteUploadWithKey(ctx, alice, "bkt", "k", u.ID, want, WriteConditions{}, nil); !IsCode(err, InvalidRequest) {
		t.Fatalf("keyless completion without the master key: %v, want InvalidRequest", err)
	}
	if _, err := other.CompleteUploadWithKey(ctx, alice, "bkt", "k", u.ID, want, WriteConditions{}, ck); err != nil {
		t.Fatalf("completion with the key: %v", err)
	}
	for name, svc := range map[string]*Service{"with the master key": s, "without": other} {
		if got, err := readSSE(t, svc, alice, "bkt", "k", ck, 0, -1); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s: %d bytes, %v", name, len(got), err)
		}
	}
}
