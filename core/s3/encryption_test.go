package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// newSSEService is a test service with a master key, 1000-byte chunks (segments cross
// chunk boundaries) and a blob store of kind.
func newSSEService(t *testing.T, kind blobKind) (*Service, *storage.DB, storage.BlobStore) {
	t.Helper()
	mk, err := sse.NewMasterKey(sse.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobStore(t, kind)
	s, db := newTestServiceConfig(t, blobs, Config{ChunkSize: 1000, MaxBuckets: 5, MasterKey: mk})
	return s, db, blobs
}

func customerKey(seed byte) *CustomerKey {
	k := bytes.Repeat([]byte{seed}, 32)
	sum := md5.Sum(k)
	return &CustomerKey{Key: k, MD5: base64.StdEncoding.EncodeToString(sum[:])}
}

func randomData(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// readSSE reads [off, off+n) of bucket/key with the SSE-C key ck.
func readSSE(t *testing.T, s *Service, r Requester, bucket, key string, ck *CustomerKey, off, n int64) ([]byte, error) {
	t.Helper()
	o, err := s.OpenObject(context.Background(), r, bucket, key)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	if err := o.Unseal(ck); err != nil {
		return nil, err
	}
	if n < 0 {
		n = o.Manifest.Size - off
	}
	var b bytes.Buffer
	err = o.WriteRange(context.Background(), &b, off, n)
	return b.Bytes(), err
}

// storedBytes returns every chunk record and blob of the store, concatenated.
func storedBytes(t *testing.T, db *storage.DB, blobs storage.BlobStore) []byte {
	t.Helper()
	var all bytes.Buffer
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	it := snap.Scan([]byte{storage.TagChunk})
	for it.Next() {
		all.Write(it.Value())
	}
	it.Release()
	if blobs == nil {
		return all.Bytes()
	}
	err = blobs.Walk(context.Background(), func(id []byte, _ string, _ int64) error {
		r, err := blobs.Open(context.Background(), id)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = r.CopyRange(&all, 0, r.Size())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.Bytes()
}

// TestSSERoundTrip: SSE-S3 (asked for, or the bucket's default) and SSE-C objects of
// sizes around the segment size read back whole and by ranges across segment and
// chunk boundaries, in every blob store; the manifest keeps the plaintext's size, the
// ETag is the plaintext MD5 for SSE-S3 and not for SSE-C; nothing stored holds the
// plaintext.
func TestSSERoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, kind := range blobKinds {
		t.Run(string(kind), func(t *testing.T) {
			s, db, blobs := newSSEService(t, kind)
			alice := mustUser(t, s, "alice")
			mustBucket(t, s, alice, "plain", "")
			mustBucket(t, s, alice, "dflt", "")
			if err := s.SetBucketEncryption(ctx, alice, "dflt", BucketEncryption{Algorithm: SSEAlgorithm}); err != nil {
				t.Fatal(err)
			}
			ck := customerKey(7)
			modes := []struct {
				name, bucket string
				q            SSERequest
				ck           *CustomerKey
			}{
				{"sse-s3", "plain", SSERequest{S3: true}, nil},
				{"default", "dflt", SSERequest{}, nil},
				{"sse-c", "plain", SSERequest{Customer: ck}, ck},
				{"sse-c over default", "dflt", SSERequest{Customer: ck}, ck},
			}
			var plains [][]byte
			for _, mode := range modes {
				for _, size := range []int{0, 5, sse.SegmentSize + 1, 2*sse.SegmentSize + 700} {
					data := randomData(size + len(mode.name))[:size]
					plains = append(plains, data)
					key := mode.name + "/" + string(rune('a'+size%26))
					m, err := s.PutObject(ctx, alice, mode.bucket, key, PutInput{Body: bytes.NewReader(data), Size: int64(size), SSE: mode.q})
					if err != nil {
						t.Fatalf("%s %d: %v", mode.name, size, err)
					}
					sum := md5.Sum(data)
					if m.SSE == nil || m.SSE.Customer != (mode.ck != nil) || m.Size != int64(size) {
						t.Fatalf("%s %d: manifest %+v", mode.name, size, m)
					}
					if (m.ETag == hex.EncodeToString(sum[:])) == (mode.ck != nil) {
						t.Fatalf("%s %d: ETag %s (plaintext MD5 %x)", mode.name, size, m.ETag, sum)
					}
					for _, r := range [][2]int64{{0, -1}, {1, 10}, {sse.SegmentSize - 3, 6}, {int64(size) - 1, 1}, {sse.SegmentSize, int64(sse.SegmentSize) + 1}} {
						off, n := r[0], r[1]
						if off < 0 || off > int64(size) || n > int64(size)-off {
							continue
						}
						got, err := readSSE(t, s, alice, mode.bucket, key, mode.ck, off, n)
						end := int64(size)
						if n >= 0 {
							end = off + n
						}
						if err != nil || !bytes.Equal(got, data[off:end]) {
							t.Fatalf("%s %d: range %d+%d: %v (%d bytes)", mode.name, size, off, n, err, len(got))
						}
					}
				}
			}
			stored := storedBytes(t, db, blobs)
			for _, p := range plains {
				if len(p) >= 32 && bytes.Contains(stored, p[len(p)/2:len(p)/2+32]) {
					t.Fatal("the stored bytes contain plaintext")
				}
			}
		})
	}
}

// TestSSEKeys: an SSE-C object without its key is InvalidRequest, with another key
// AccessDenied; a key given for an SSE-S3 or unencrypted object is InvalidRequest;
// reading an encrypted object's data without Unseal fails.
func TestSSEKeys(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newSSEService(t, fileBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	data := randomData(3000)
	ck := customerKey(1)
	for key, q := range map[string]SSERequest{"c": {Customer: ck}, "s3": {S3: true}, "plain": {}} {
		if _, err := s.PutObject(ctx, alice, "bkt", key, PutInput{Body: bytes.NewReader(data), Size: 3000, SSE: q}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		key  string
		ck   *CustomerKey
		want Code
	}{
		{"c", nil, InvalidRequest},
		{"c", customerKey(2), AccessDenied},
		{"s3", ck, InvalidRequest},
		{"plain", ck, InvalidRequest},
	} {
		_, err := readSSE(t, s, alice, "bkt", c.key, c.ck, 0, -1)
		wantCode(t, err, c.want)
	}
	o, err := s.OpenObject(ctx, alice, "bkt", "s3")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.WriteRange(ctx, new(bytes.Buffer), 0, 10); err == nil {
		t.Fatal("encrypted data read without Unseal")
	}
}

// TestSSECopy: copies decrypt the source with its key and store the destination as
// its request (or bucket default) says: SSE-C to SSE-S3, SSE-S3 to clear, clear to
// SSE-C; a copy onto itself that changes the encryption is allowed.
func TestSSECopy(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newSSEService(t, memBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	data := randomData(sse.SegmentSize + 99)
	ck, ck2 := customerKey(1), customerKey(2)
	if _, err := s.PutObject(ctx, alice, "bkt", "src", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: SSERequest{Customer: ck}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CopyObject(ctx, alice, "bkt", "src", "bkt", "x", CopyInput{})
	wantCode(t, err, InvalidRequest) // the source's key is missing
	steps := []struct {
		src, dst string
		srcKey   *CustomerKey
		q        SSERequest
		dstKey   *CustomerKey
	}{
		{"src", "s3", ck, SSERequest{S3: true}, nil},
		{"s3", "clear", nil, SSERequest{}, nil},
		{"clear", "c2", nil, SSERequest{Customer: ck2}, ck2},
		{"c2", "c2", ck2, SSERequest{S3: true}, nil}, // onto itself
	}
	for _, st := range steps {
		m, err := s.CopyObject(ctx, alice, "bkt", st.src, "bkt", st.dst, CopyInput{SourceKey: st.srcKey, In: PutInput{SSE: st.q}})
		if err != nil {
			t.Fatalf("copy %s → %s: %v", st.src, st.dst, err)
		}
		if (m.SSE != nil) != st.q.requested() {
			t.Fatalf("copy %s → %s: encryption %+v", st.src, st.dst, m.SSE)
		}
		got, err := readSSE(t, s, alice, "bkt", st.dst, st.dstKey, 0, -1)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s: %v", st.dst, err)
		}
	}
}

// TestSSEMultipart: an SSE-C upload's parts need its key (none: InvalidRequest,
// another: AccessDenied); parts uploaded and copied (from an SSE-S3 source, by range)
// assemble into an SSE-C object that reads back whole and across part boundaries; an
// SSE-S3 upload takes parts without a key and refuses one.
func TestSSEMultipart(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newSSEService(t, fileBlobs)
	s.cfg.MinPartSize = 1
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	ck := customerKey(3)
	src := randomData(150000)
	if _, err := s.PutObject(ctx, alice, "bkt", "src", PutInput{Body: bytes.NewReader(src), Size: int64(len(src)), SSE: SSERequest{S3: true}}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUpload(ctx, alice, "bkt", "mp", PutInput{SSE: SSERequest{Customer: ck}})
	if err != nil || u.SSE == nil || !u.SSE.Customer {
		t.Fatalf("create: %+v %v", u, err)
	}
	part := randomData(70000)
	body := func() PutInput { return PutInput{Body: bytes.NewReader(part), Size: int64(len(part))} }
	_, err = s.PutPart(ctx, alice, "bkt", "mp", u.ID, 1, body())
	wantCode(t, err, InvalidRequest)
	in := body()
	in.SSE.Customer = customerKey(4)
	_, err = s.PutPart(ctx, alice, "bkt", "mp", u.ID, 1, in)
	wantCode(t, err, AccessDenied)
	in = body()
	in.SSE.Customer = ck
	p1, err := s.PutPart(ctx, alice, "bkt", "mp", u.ID, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CopyPart(ctx, alice, "bkt", "src", "", "bkt", "mp", u.ID, 2, 1000, 100000, nil, CopyKeys{})
	wantCode(t, err, InvalidRequest) // the upload's key is missing
	p2, err := s.CopyPart(ctx, alice, "bkt", "src", "", "bkt", "mp", u.ID, 2, 1000, 100000, nil, CopyKeys{Dest: ck})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.CompleteUpload(ctx, alice, "bkt", "mp", u.ID, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, WriteConditions{})
	if err != nil || m.SSE == nil || !strings.HasSuffix(m.ETag, "-2") {
		t.Fatalf("complete: %+v %v", m, err)
	}
	want := append(bytes.Clone(part), src[1000:101000]...)
	for _, r := range [][2]int64{{0, -1}, {69990, 20}, {65530, 70000}} {
		got, err := readSSE(t, s, alice, "bkt", "mp", ck, r[0], r[1])
		end := int64(len(want))
		if r[1] >= 0 {
			end = r[0] + r[1]
		}
		if err != nil || !bytes.Equal(got, want[r[0]:end]) {
			t.Fatalf("range %v: %v", r, err)
		}
	}
	u2, err := s.CreateUpload(ctx, alice, "bkt", "mp2", PutInput{SSE: SSERequest{S3: true}})
	if err != nil {
		t.Fatal(err)
	}
	in = body()
	in.SSE.Customer = ck
	_, err = s.PutPart(ctx, alice, "bkt", "mp2", u2.ID, 1, in)
	wantCode(t, err, InvalidRequest)
	if _, err := s.PutPart(ctx, alice, "bkt", "mp2", u2.ID, 1, body()); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortUpload(ctx, alice, "bkt", "mp2", u2.ID); err != nil {
		t.Fatal(err)
	}
	// An encrypted upload of one empty part: an empty object that names no data (the
	// service's cleanup checks the records).
	u3, err := s.CreateUpload(ctx, alice, "bkt", "empty", PutInput{SSE: SSERequest{S3: true}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, alice, "bkt", "empty", u3.ID, 1, PutInput{Body: bytes.NewReader(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteUpload(ctx, alice, "bkt", "empty", u3.ID, []CompletePart{{Number: 1, ETag: p.ETag}}, WriteConditions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := readSSE(t, s, alice, "bkt", "empty", nil, 0, -1); err != nil || len(got) != 0 {
		t.Fatalf("empty multipart object: %q %v", got, err)
	}
}

// TestSSEBadBodies: an encrypted PUT whose body is short, long or fails its
// Content-MD5 is refused as an unencrypted one is, and leaves nothing behind (the
// service's cleanup checks).
func TestSSEBadBodies(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newSSEService(t, fileBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	data := randomData(100000)
	wrong := md5.Sum([]byte("other"))
	for _, c := range []struct {
		name string
		in   PutInput
		want Code
	}{
		{"short", PutInput{Body: bytes.NewReader(data[:500]), Size: int64(len(data))}, IncompleteBody},
		{"long", PutInput{Body: bytes.NewReader(data), Size: 99999}, IncompleteBody},
		{"bad md5", PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), MD5: wrong[:]}, BadDigest},
		{"bad md5, one chunk", PutInput{Body: bytes.NewReader(data[:10]), Size: 10, MD5: wrong[:]}, BadDigest},
	} {
		c.in.SSE = SSERequest{S3: true}
		_, err := s.PutObject(ctx, alice, "bkt", "k", c.in)
		if !IsCode(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	if _, err := s.StatObject(ctx, alice, "bkt", "k"); !IsCode(err, NoSuchKey) {
		t.Fatalf("a refused write left an object: %v", err)
	}
}

// TestBucketEncryption: the default is set, read and removed by the owner only; none
// is ServerSideEncryptionConfigurationNotFoundError; another algorithm is refused;
// without a master key it is not offered.
func TestBucketEncryption(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newSSEService(t, noBlobs)
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "bkt", "")
	_, err := s.BucketEncryption(ctx, alice, "bkt")
	wantCode(t, err, ServerSideEncryptionConfigurationNotFoundError)
	wantCode(t, s.SetBucketEncryption(ctx, alice, "bkt", BucketEncryption{Algorithm: "aws:kms"}), MalformedXML)
	wantCode(t, s.SetBucketEncryption(ctx, bob, "bkt", BucketEncryption{Algorithm: SSEAlgorithm}), AccessDenied)
	if err := s.SetBucketEncryption(ctx, alice, "bkt", BucketEncryption{Algorithm: SSEAlgorithm, BucketKeyEnabled: true}); err != nil {
		t.Fatal(err)
	}
	if e, err := s.BucketEncryption(ctx, alice, "bkt"); err != nil || !e.BucketKeyEnabled || e.Algorithm != SSEAlgorithm {
		t.Fatalf("get: %+v %v", e, err)
	}
	_, err = s.BucketEncryption(ctx, bob, "bkt")
	wantCode(t, err, AccessDenied)
	wantCode(t, s.DeleteBucketEncryption(ctx, bob, "bkt"), AccessDenied)
	for range 2 { // deleting none is not an error
		if err := s.DeleteBucketEncryption(ctx, alice, "bkt"); err != nil {
			t.Fatal(err)
		}
	}
	if m := put(t, s, alice, "bkt", "k", []byte("after")); m.SSE != nil {
		t.Fatal("encrypted after the default was removed")
	}
	plain, _ := newTestServiceBlobs(t, noBlobs)
	carol := mustUser(t, plain, "carol")
	mustBucket(t, plain, carol, "ccc", "")
	wantCode(t, plain.SetBucketEncryption(ctx, carol, "ccc", BucketEncryption{Algorithm: SSEAlgorithm}), NotImplemented)
	_, err = plain.PutObject(ctx, carol, "ccc", "k", PutInput{Body: strings.NewReader("x"), Size: 1, SSE: SSERequest{S3: true}})
	wantCode(t, err, NotImplemented)
}

// TestMasterKeyRecorded: the first service records its master key's id; a service
// with another key, or none, refuses to start on the store, one with the same key starts;
// CheckKeys unwraps the SSE-S3 keys with the right key and reports them with another.
func TestMasterKeyRecorded(t *testing.T) {
	ctx := context.Background()
	s, db, _ := newSSEService(t, noBlobs)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	for key, q := range map[string]SSERequest{"s3": {S3: true}, "c": {Customer: customerKey(1)}} {
		if _, err := s.PutObject(ctx, alice, "bkt", key, PutInput{Body: strings.NewReader("abc"), Size: 3, SSE: q}); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := sse.NewMasterKey(sse.NewKey())
	if _, err := New(db, Config{MasterKey: other}); err == nil || !strings.Contains(err.Error(), "same master key") {
		t.Fatalf("another master key: %v", err)
	}
	if _, err := New(db, Config{}); err == nil || !strings.Contains(err.Error(), "has no master key") {
		t.Fatalf("no master key on a store that records one: %v", err)
	}
	again, err := New(db, Config{MasterKey: s.cfg.MasterKey})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	rep, err := CheckKeys(db, s.cfg.MasterKey)
	if err != nil || rep.ServerKeys != 1 || rep.CustomerKeys != 1 || rep.Problems != 0 {
		t.Fatalf("check keys: %+v %v", rep, err)
	}
	if rep, err := CheckKeys(db, other); err == nil || rep.Problems != 1 {
		t.Fatalf("check keys with another master key: %+v %v", rep, err)
	}
}

// TestCheckEncryption: records that do not agree with their extents, or are not well
// formed, are found.
func TestCheckEncryption(t *testing.T) {
	good := func() *Manifest {
		return &Manifest{UUID: "00", Size: 3, SSE: &Encryption{Algorithm: SSEAlgorithm, MasterKeyID: "id",
			WrappedKey: make([]byte, sse.WrappedSize), NoncePrefix: make([]byte, sse.NoncePrefixSize)}}
	}
	if err := checkEncryption(good()); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(m *Manifest){
		"clear extent":     func(m *Manifest) { m.Parts = []Extent{{ID: "01", Size: 3}} },
		"sealed, no SSE":   func(m *Manifest) { m.SSE = nil; m.Parts = []Extent{{ID: "01", Size: 3, Sealed: true}} },
		"algorithm":        func(m *Manifest) { m.SSE.Algorithm = "aws:kms" },
		"nonce":            func(m *Manifest) { m.SSE.NoncePrefix = nil },
		"wrapped key":      func(m *Manifest) { m.SSE.WrappedKey = m.SSE.WrappedKey[1:] },
		"sse-c, bad md5":   func(m *Manifest) { m.SSE.Customer, m.SSE.MasterKeyID, m.SSE.CustomerKeyMD5 = true, "", "short" },
		"sse-s3 no key id": func(m *Manifest) { m.SSE.MasterKeyID = "" },
		"unknown format":   func(m *Manifest) { m.SSE.Format = 3 },
		"format 2, no MAC": func(m *Manifest) { m.SSE.Format = sseFormat },
		"format 1 MAC":     func(m *Manifest) { m.SSE.Layout = make([]byte, 32) },
		"short MAC":        func(m *Manifest) { m.SSE.Format, m.SSE.Layout = sseFormat, make([]byte, 16) },
		"layout key kept":  func(m *Manifest) { m.SSE.WrappedLayoutKey = make([]byte, sse.WrappedSize) },
	} {
		m := good()
		change(m)
		if checkEncryption(m) == nil {
			t.Errorf("%s: not found", name)
		}
	}
}
