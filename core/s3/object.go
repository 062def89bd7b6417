package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

func writingKey(id []byte) []byte { return storage.Key(storage.TagS3, []byte("w"), id) }
func garbageKey(id []byte) []byte { return storage.Key(storage.TagS3, []byte("g"), id) }
func chunkPrefix(id []byte) []byte {
	return storage.Key(storage.TagChunk, id)
}
func chunkKey(id []byte, n uint64) []byte {
	return storage.Key(storage.TagChunk, id, storage.Uint64Component(n))
}

// PutInput is an object to store.
type PutInput struct {
	// Body yields exactly Size bytes, then io.EOF (or the error that invalidates the
	// body, such as a payload-hash mismatch, which is returned as is).
	Body io.Reader
	Size int64
	// MD5, when not nil, is the Content-MD5 the data must have (else BadDigest).
	MD5         []byte
	ContentType string
	Meta        []MetaPair
	Headers     map[string]string
	// ACL, when not nil, is the object's ACL (its owner is set to the writer). Otherwise
	// Canned names the canned ACL ("" is private).
	ACL    *ACL
	Canned string
	// Conditions, when set, are the write's preconditions on the key's current version.
	Conditions WriteConditions
	// Tags are the object's tags (x-amz-tagging); HasTags says the request gave the
	// header (even empty), for the s3:RequestObjectTag policy conditions.
	Tags    []Tag
	HasTags bool
	// SSE is the encryption the write asks for (none: the bucket's default).
	SSE SSERequest
	// Lock is the Object Lock the new version asks for (x-amz-object-lock-*).
	Lock LockRequest
}

// requestTags is what the bucket-policy tag conditions see of a new object's write.
func (in PutInput) requestTags() PolicyTags {
	return PolicyTags{Request: in.Tags, HasRequest: in.HasTags}
}

// writeRecord is the value of a "w" record: a multi-chunk write in progress.
type writeRecord struct {
	Bucket  string    `json:"bucket"`
	Key     string    `json:"key"`
	Started time.Time `json:"started"`
	// Node is the cluster node writing (Config.Node; "" standalone): only it may take
	// the write for interrupted when it starts (recoverWrites).
	Node string `json:"node,omitempty"`
}

// chunkBufs recycles chunk buffers (ChunkSize bytes).
var chunkBufs sync.Pool

func (s *Service) chunkBuf() *[]byte {
	if p, ok := chunkBufs.Get().(*[]byte); ok && cap(*p) >= s.cfg.ChunkSize {
		*p = (*p)[:s.cfg.ChunkSize]
		return p
	}
	b := make([]byte, s.cfg.ChunkSize)
	return &b
}

// checkKey refuses empty and over-long object keys, and keys that are not valid UTF-8
// (a listing could not return them: its XML holds UTF-8 text only).
func checkKey(key string) error {
	if key == "" {
		return Errorf(InvalidArgument, "The object key must not be empty")
	}
	if len(key) > MaxKeyLength {
		return errKeyTooLong
	}
	if !utf8.ValidString(key) {
		return Errorf(InvalidArgument, "The object key must be valid UTF-8")
	}
	return nil
}

// checkNewKey is checkKey for a key about to be written: it also refuses the characters
// an XML 1.0 document cannot carry (the C0 controls but tab, line feed and carriage
// return, and U+FFFE and U+FFFF), which a listing could only show as U+FFFD, a name
// that answers 404. Keys stored before the rule keep being read and deleted by their
// names, and listed faithfully with encoding-type=url.
func checkNewKey(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	for i, c := range key {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0xFFFE || c == 0xFFFF {
			return Errorf(InvalidArgument, "The object key must not contain the character U+%04X (at byte %d): an XML listing cannot carry it", c, i)
		}
	}
	return nil
}

// writableBucket returns the bucket if r may write objects into it: action on key
// under the bucket policy, else WRITE in the bucket's ACL.
func (s *Service) writableBucket(ctx context.Context, r Requester, bucket, action, key string) (*Bucket, error) {
	return s.writableBucketFor(ctx, r, bucket, action, key, PolicyTags{})
}

// writableBucketFor is writableBucket for a write whose policy conditions may test the
// tags it asks for.
func (s *Service) writableBucketFor(ctx context.Context, r Requester, bucket, action, key string, tags PolicyTags) (*Bucket, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !s.allowedFor(b, nil, r, action, key, PermWrite, tags) {
		return nil, errAccessDenied
	}
	return b, nil
}

// PutObject stores an object, replacing any previous version (WRITE on the bucket).
// The data is cut into chunks as it is read; nothing is visible until the whole body
// has arrived and matched its digest, then the manifest switches in one synced batch.
func (s *Service) PutObject(ctx context.Context, r Requester, bucket, key string, in PutInput) (*Manifest, error) {
	if err := checkNewKey(key); err != nil {
		return nil, err
	}
	if in.Size < 0 {
		return nil, Errorf(InvalidArgument, "negative size")
	}
	if in.Size > s.cfg.MaxObjectSize {
		return nil, Errorf(EntityTooLarge, "Your proposed upload exceeds the maximum allowed object size.")
	}
	if err := checkMeta(in.Meta); err != nil {
		return nil, err
	}
	if err := in.Conditions.validate(); err != nil {
		return nil, err
	}
	if err := CheckObjectTags(in.Tags); err != nil {
		return nil, err
	}
	b, err := s.writableBucketFor(ctx, r, bucket, ActionPutObject, key, in.requestTags())
	if err != nil {
		return nil, err
	}
	if err := s.checkLockRequest(b, r, key, in.Lock); err != nil {
		return nil, err
	}
	owner := Owner{ID: r.ID, DisplayName: r.DisplayName}
	acl, err := newObjectACL(in, owner, b)
	if err != nil {
		return nil, err
	}
	if err := s.precheck(bucket, key, in.Conditions); err != nil {
		return nil, err // refused before the body is stored; the commit checks again
	}
	enc, seal, err := s.newEncryption(b, in.SSE, true)
	if err != nil {
		return nil, err
	}
	data := new(writes)
	ext, sum, err := s.storeData(ctx, in, data, writeRecord{Bucket: bucket, Key: key}, seal, 0)
	if err != nil {
		return nil, err
	}
	m := &Manifest{UUID: ext.ID, Size: in.Size, ChunkSize: ext.ChunkSize, Blob: ext.Blob, ETag: seal.etag(sum),
		ContentType: in.ContentType, Meta: in.Meta, Headers: in.Headers, Owner: owner, ACL: acl, Tags: in.Tags, SSE: enc,
		Retention: in.Lock.Retention, LegalHold: in.Lock.LegalHold}
	if seal != nil {
		if err := setLayout(m, sse.LayoutKey(seal.key)); err != nil {
			s.abandonExtent(ext)
			return nil, err
		}
	}
	if err := s.commit(ctx, bucket, key, m, data, in.Conditions); err != nil {
		s.abandonExtent(ext)
		return nil, err
	}
	return m, nil
}

// precheck evaluates conds against the key's current version as stored now: a write
// bound to fail is refused before its body is stored. The commit checks them again,
// atomically.
func (s *Service) precheck(bucket, key string, conds WriteConditions) error {
	if conds == (WriteConditions{}) {
		return nil
	}
	old, err := s.manifest(s.db.Get, bucket, key)
	switch {
	case IsCode(err, NoSuchKey):
		old = nil
	case err != nil:
		return err
	}
	return conds.check(old)
}

// newObjectACL is the ACL of a new object written by owner into bucket b: in.ACL with
// owner as its owner, or the canned ACL in.Canned.
func newObjectACL(in PutInput, owner Owner, b *Bucket) (ACL, error) {
	acl, err := ACLSpec{ACL: in.ACL, Canned: in.Canned}.Build(owner, b.Owner)
	acl.Owner = owner
	return acl, err
}

// storeData stores a body under a fresh chunk id and returns where it is and its MD5.
// Data of one chunk or less under the blob size is added to commit (the writes of the
// caller's commit); a larger body is written now, as a blob (or chunk records without a
// blob store), owned meanwhile by a "w" record that commit deletes. On failure nothing
// is left behind but collection work. With seal, the data is stored sealed with it
// (Extent.Sealed), bound to part number part (0: an object stored whole; see
// Extent.Part), and the MD5 is the plaintext's.
func (s *Service) storeData(ctx context.Context, in PutInput, commit *writes, rec writeRecord, seal *dataKey, part int) (Extent, []byte, error) {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	var sealed *sealedBody
	if seal != nil {
		var err error
		if in, sealed, err = seal.sealBody(id, part, in); err != nil {
			return Extent{}, nil, err
		}
		defer sealed.enc.Close()
	}
	ext := Extent{ID: hex.EncodeToString(id), Size: in.Size, ChunkSize: s.cfg.ChunkSize}
	ext.Blob = s.cfg.Blobs != nil && in.Size >= s.cfg.BlobMinSize
	multi := ext.Blob || in.Size > int64(s.cfg.ChunkSize)
	if multi {
		// Synced: a blob or chunks must never exist without a record that owns them.
		rec.Started = time.Now().UTC()
		rec.Node = s.cfg.Node
		v, _ := json.Marshal(rec)
		if err := storage.Put(ctx, s.db, writingKey(id), v, ext.Blob); err != nil {
			return Extent{}, nil, wrapf(err, "store data")
		}
		commit.delete(writingKey(id))
	}
	var sum []byte
	var err error
	if ext.Blob {
		sum, err = s.writeBlob(ctx, id, in)
	} else {
		sum, err = s.writeChunks(ctx, id, in, commit, multi)
	}
	if err != nil {
		if multi {
			s.abandon(id)
		}
		return Extent{}, nil, err
	}
	if sealed != nil {
		ext.Size, ext.Sealed, sum = sealed.size, true, sealed.sum.Sum(nil)
		if seal.format >= sseFormat {
			ext.Part = part
		}
	}
	return ext, sum, nil
}

// abandonExtent queues the data of a stored extent whose commit failed, unless the
// commit was applied all the same (abandonUnapplied; data of one chunk was in the
// failed batch and is gone with it, or stored with it).
func (s *Service) abandonExtent(e Extent) {
	if !s.storedUpFront(e) {
		return
	}
	if id, err := hex.DecodeString(e.ID); err == nil {
		s.abandonUnapplied(id)
	}
}

// blobWriteSize is the piece in which a blob is read from the body and written: on the
// development VMs, 16 writers appending to new files spent 4-6x the CPU in the kernel
// with 1 MiB write(2)s as with 64 KiB ones (docs/benchmarks.md, "Large objects").
const blobWriteSize = 64 << 10

// blobBufs recycles blob write buffers (blobWriteSize bytes).
var blobBufs = sync.Pool{New: func() any { b := make([]byte, blobWriteSize); return &b }}

// writeBlob reads the body into a new blob, blobWriteSize bytes at a time, and syncs
// it. It returns the MD5.
func (s *Service) writeBlob(ctx context.Context, id []byte, in PutInput) ([]byte, error) {
	w, err := s.cfg.Blobs.Create(ctx, id)
	if err != nil {
		return nil, wrapf(err, "write data")
	}
	h := bodyHash(in)
	bp := blobBufs.Get().(*[]byte)
	defer blobBufs.Put(bp)
	buf := *bp
	for left := in.Size; left > 0; {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return nil, err
		}
		c := buf[:min(left, int64(len(buf)))]
		if _, err := io.ReadFull(in.Body, c); err != nil {
			w.Abort()
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errIncomplete
			}
			return nil, err
		}
		h.Write(c)
		left -= int64(len(c))
		if _, err := w.Write(c); err != nil {
			w.Abort()
			return nil, wrapf(err, "write data")
		}
	}
	sum, err := finishBody(in, h.Sum(nil))
	if err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Commit(ctx); err != nil {
		return nil, wrapf(err, "write data")
	}
	return sum, nil
}

// finishBody checks that the body ends after its size (a reader that verifies a digest
// reports a mismatch at EOF) and that the data has the MD5 the client gave.
func finishBody(in PutInput, sum []byte) ([]byte, error) {
	var one [1]byte
	if k, err := in.Body.Read(one[:]); k > 0 {
		return nil, Errorf(IncompleteBody, "The request body is longer than its Content-Length")
	} else if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if in.MD5 != nil && !bytes.Equal(sum, in.MD5) {
		return nil, errBadDigest
	}
	return sum, nil
}

// writeChunks reads the body into chunks. A single-chunk object's chunk goes into the
// commit batch; the chunks of a larger one are written as they fill. It returns the MD5.
func (s *Service) writeChunks(ctx context.Context, id []byte, in PutInput, commit *writes, multi bool) ([]byte, error) {
	h := bodyHash(in)
	bp := s.chunkBuf()
	defer chunkBufs.Put(bp)
	buf := *bp
	var n uint64
	for left := in.Size; left > 0 || n == 0; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := buf[:min(left, int64(len(buf)))]
		if _, err := io.ReadFull(in.Body, c); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errIncomplete
			}
			return nil, err
		}
		h.Write(c)
		left -= int64(len(c))
		if multi {
			if err := storage.Put(ctx, s.db, chunkKey(id, n), c, false); err != nil {
				return nil, wrapf(err, "write chunk")
			}
		} else if len(c) > 0 {
			commit.put(chunkKey(id, n), bytes.Clone(c)) // c is a pooled buffer
		}
		if left == 0 {
			break
		}
	}
	return finishBody(in, h.Sum(nil))
}

// commit switches bucket/key to m, with data's writes, in one synced conditional
// batch that also queues the chunks of the version it replaces for collection (see
// switchManifest). The bucket and key locks only keep this service's writers from
// conflicting; the conditions keep any other writer's version from being lost. A
// retry that finds an earlier attempt applied (appliedEarlier) writes nothing more.
func (s *Service) commit(ctx context.Context, bucket, key string, m *Manifest, data *writes, conds WriteConditions) error {
	m.LastModified = time.Now().UTC().Truncate(time.Millisecond)
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	replaced, retry := false, false
	upFront := s.storedUpFront(m.Extents()[0])
	err := s.update(ctx, "commit "+bucket+"/"+key, func(t *txn) error {
		if retry {
			// The store may have applied the attempt it refused (appliedEarlier).
			if done, err := s.appliedEarlier(t, bucket, key, m, upFront); err != nil || done {
				t.b = storage.Batch{}
				replaced = false
				return err
			}
		} else if upFront {
			if err := requireWriting(t, m); err != nil {
				return err
			}
		}
		retry = true
		data.addTo(&t.b)
		var err error
		replaced, err = s.switchManifest(t, bucket, key, m, conds)
		return err
	})
	if err != nil {
		return err
	}
	if replaced {
		s.gc.wake()
	}
	return nil
}

// switchManifest adds to t the switch of bucket/key to the manifest m: the
// bucket must exist (NoSuchBucket: deleted while the data was arriving) and stay as
// read, the key's current version (read in t) must meet conds and has its data queued
// for collection, unless the bucket keeps versions (switchVersioned, which sets
// m.VersionID). It reports whether data was queued for collection.
func (s *Service) switchManifest(t *txn, bucket, key string, m *Manifest, conds WriteConditions) (bool, error) {
	b, err := s.bucketIn(t, bucket)
	if err != nil {
		return false, err
	}
	m.bucket = b // the record this attempt commits against
	if b.Versioning != "" {
		return s.switchVersioned(t, b, key, m, conds)
	}
	m.VersionID = "" // an earlier attempt may have found the bucket versioned
	v, err := json.Marshal(m)
	if err != nil {
		return false, wrapf(err, "encode manifest %s/%s", bucket, key)
	}
	old, err := s.manifest(t.get, bucket, key)
	switch {
	case err == nil:
	case IsCode(err, NoSuchKey):
		old = nil
	default:
		return false, err
	}
	if err := conds.check(old); err != nil {
		return false, err
	}
	if old != nil {
		queueGarbage(&t.b, old)
	}
	t.b.Put(objectKey(bucket, key), v)
	return old != nil, nil
}

// queueGarbage adds to batch the collection of every extent of the version m.
func queueGarbage(batch *storage.Batch, m *Manifest) {
	for _, e := range m.Extents() {
		if id, err := hex.DecodeString(e.ID); err == nil && len(id) > 0 {
			batch.Put(garbageKey(id), nil)
		}
	}
}

// abandon queues the chunks of a write that failed for collection (whatever the
// request's context: it is often why the write failed).
func (s *Service) abandon(id []byte) {
	b := new(storage.Batch)
	b.Delete(writingKey(id))
	b.Put(garbageKey(id), nil)
	if err := s.db.Commit(context.Background(), b, false); err != nil {
		s.log.Warn("s3: queue the chunks of a failed write", "err", err)
		return
	}
	s.gc.wake()
}

type getter func([]byte) ([]byte, error)

func (s *Service) manifest(get getter, bucket, key string) (*Manifest, error) {
	return readManifest(get, objectKey(bucket, key), errNoSuchKey, bucket, key)
}

// readManifest reads the manifest record k of bucket/key through get: missing when
// it is absent.
func readManifest(get getter, k []byte, missing error, bucket, key string) (*Manifest, error) {
	v, err := get(k)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, missing
	}
	if err != nil {
		return nil, wrapf(err, "read %s/%s", bucket, key)
	}
	m := new(Manifest)
	if err := json.Unmarshal(v, m); err != nil {
		return nil, wrapf(err, "decode manifest %s/%s", bucket, key)
	}
	return m, nil
}

// readable returns the manifest of the object's version id ("" for the current one)
// if r may read it (READ on the object). The bucket must exist. A missing key is NoSuchKey only to a requester who may list the
// bucket; anyone else gets AccessDenied, as for a key they may not read, so that keys
// cannot be probed for (AWS answers so without s3:ListBucket).
func (s *Service) readable(ctx context.Context, get getter, r Requester, bucket, key, id string, perm Permission) (*Manifest, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	m, err := s.versionManifest(get, b, key, id)
	if err != nil {
		return nil, s.hideMissing(b, r, err)
	}
	action := readAction(perm, id)
	if !s.allowedFor(b, &m.ACL, r, action, key, perm, tagsOf(m, nil)) {
		return nil, errAccessDenied
	}
	m.bucket = b
	return m, nil
}

// Bucket returns the record of m's bucket as the service saw it when it read m
// (OpenObject, StatObject) or committed it (PutObject, copies, completions, POST
// uploads): what the answer about m says of its bucket (its versioning state, the
// lifecycle rules that expire m) without looking the bucket up again. Nil for a
// manifest the service did not read or write so (a retried completion's answer). The
// record may be the service's cached one: callers must not change it.
func (m *Manifest) Bucket() *Bucket { return m.bucket }

// hideMissing returns err, the error of reading a key's manifest, as r may see it:
// what tells whether the key or a version of it exists (NoSuchKey, NoSuchVersion, a
// delete marker's MarkerError) becomes AccessDenied unless r may list bucket b (its
// policy's s3:ListBucket, else READ in its ACL), so that keys and versions cannot be
// probed for.
func (s *Service) hideMissing(b *Bucket, r Requester, err error) error {
	if tellsExistence(err) && !s.allowed(b, nil, r, ActionListBucket, "", PermRead) {
		return errAccessDenied
	}
	return err
}

// tellsExistence reports whether err, a read's error, says whether a key or version
// exists.
func tellsExistence(err error) bool {
	var marker *MarkerError
	return IsCode(err, NoSuchKey) || IsCode(err, NoSuchVersion) || errors.As(err, &marker)
}

// StatObject returns the object's manifest (READ on the object).
func (s *Service) StatObject(ctx context.Context, r Requester, bucket, key string) (*Manifest, error) {
	return s.readable(ctx, s.db.Get, r, bucket, key, "", PermRead)
}

// Object is an open object version: its manifest and what its data is read from (a
// snapshot for chunk records, pinned blob files). The data stays readable until Close,
// whatever happens to the key meanwhile.
type Object struct {
	Manifest *Manifest
	s        *Service
	snap     *storage.Snapshot
	extents  []Extent
	pinned   []string
	// key opens the data of an encrypted object (set by Unseal).
	key *dataKey
	// bucket and objectKey name the object (see IsCurrent).
	bucket, objectKey string
}

// OpenObject opens the object for reading (READ on the object). The caller must Close it.
func (s *Service) OpenObject(ctx context.Context, r Requester, bucket, key string) (*Object, error) {
	return s.openObject(ctx, r, bucket, key, "", PermRead)
}

func (s *Service) openObject(ctx context.Context, r Requester, bucket, key, id string, perm Permission) (*Object, error) {
	for attempt := 0; ; attempt++ {
		o, err := s.tryOpen(ctx, r, bucket, key, id, perm)
		if !errors.Is(err, errBlobGone) || attempt == 3 {
			return o, err
		}
	}
}

// testHookOpened, set by tests, runs in tryOpen between reading the manifest and
// pinning its blobs: where the collector may overtake a reader.
var testHookOpened func()

// errBlobGone means a blob of the manifest a reader saw was collected before the
// reader pinned it: the object changed meanwhile, and reading again finds the new one.
var errBlobGone = errors.New("s3: the object changed while being opened")

// tryOpen reads the manifest from a fresh snapshot (chunk records need nothing more:
// the snapshot keeps them) and pins its blobs. No lock is held while reading; the
// collector's removal count, read before the snapshot, tells whether a blob may have
// gone between the snapshot and the pin (only then are the files looked at).
func (s *Service) tryOpen(ctx context.Context, r Requester, bucket, key, id string, perm Permission) (*Object, error) {
	removed := s.blobsRemoved.Load()
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return nil, wrapf(err, "open %s/%s", bucket, key)
	}
	m, err := s.readable(ctx, snap.Get, r, bucket, key, id, perm)
	if err != nil {
		snap.Release()
		return nil, err
	}
	if testHookOpened != nil {
		testHookOpened()
	}
	o := &Object{Manifest: m, s: s, snap: snap, extents: m.Extents(), bucket: bucket, objectKey: key}
	var blobs []string
	for _, e := range o.extents {
		if e.Blob {
			blobs = append(blobs, e.ID)
		}
	}
	if len(blobs) == 0 {
		return o, nil
	}
	if s.cfg.Blobs == nil {
		o.Close()
		return nil, fmt.Errorf("s3: %s/%s: the data is in a blob and no blob store is configured", bucket, key)
	}
	s.blobMu.Lock()
	for _, id := range blobs {
		s.readers[id]++ // the collector leaves a pinned blob alone
	}
	o.pinned = blobs
	s.blobMu.Unlock()
	if s.blobsRemoved.Load() != removed {
		for _, id := range blobs {
			raw, _ := hex.DecodeString(id)
			if _, err := s.cfg.Blobs.Stat(ctx, raw); err != nil {
				o.Close()
				if errors.Is(err, storage.ErrNotFound) {
					return nil, errBlobGone
				}
				return nil, wrapf(err, "open %s/%s", bucket, key)
			}
		}
	}
	return o, nil
}

// Close releases the object's snapshot and unpins its blobs.
func (o *Object) Close() {
	if o.s == nil {
		return
	}
	if o.snap != nil {
		o.snap.Release()
		o.snap = nil
	}
	if len(o.pinned) > 0 {
		wake := false
		o.s.blobMu.Lock()
		for _, id := range o.pinned {
			if o.s.readers[id]--; o.s.readers[id] <= 0 {
				delete(o.s.readers, id)
				// Only a blob the collector skipped needs it again: waking it
				// after every read would rescan the garbage queue per GET.
				if o.s.deferred[id] {
					delete(o.s.deferred, id)
					wake = true
				}
			}
		}
		o.s.blobMu.Unlock()
		o.pinned = nil
		if wake {
			o.s.gc.wake() // a blob the collector skipped may be free now
		}
	}
	o.s = nil
}

// errShortObject means the stored data does not add up to the manifest's size.
var errShortObject = errors.New("s3: stored data does not match the manifest")

// WriteRange writes n bytes of the object starting at off to w, extent by extent,
// until ctx is done.
func (o *Object) WriteRange(ctx context.Context, w io.Writer, off, n int64) error {
	if off < 0 || n < 0 || off > o.Manifest.Size || n > o.Manifest.Size-off {
		return errors.New("s3: range outside the object")
	}
	for _, e := range o.extents {
		if n == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if off >= e.Size {
			off -= e.Size
			continue
		}
		k := min(n, e.Size-off)
		var err error
		switch {
		case e.Sealed:
			err = o.writeSealed(ctx, w, e, off, k)
		case e.Blob:
			err = o.writeBlob(ctx, w, e, off, k)
		default:
			err = o.writeChunks(w, e, off, k)
		}
		if err != nil {
			return err
		}
		off, n = 0, n-k
	}
	if n > 0 {
		return errShortObject
	}
	return nil
}

// writeBlob writes n bytes of the blob extent e from off to w. The blob store's
// CopyRange keeps net/http's sendfile for local blob files.
func (o *Object) writeBlob(ctx context.Context, w io.Writer, e Extent, off, n int64) error {
	id, err := hex.DecodeString(e.ID)
	if err != nil {
		return wrapf(err, "read data")
	}
	r, err := o.s.cfg.Blobs.Open(ctx, id)
	if err != nil {
		return wrapf(err, "read data")
	}
	defer r.Close()
	if r.Size() != e.Size {
		return errShortObject
	}
	k, err := r.CopyRange(w, off, n)
	if err == nil && k < n {
		err = errShortObject
	}
	return err
}

func (o *Object) writeChunks(w io.Writer, e Extent, off, n int64) error {
	id, err := hex.DecodeString(e.ID)
	if err != nil {
		return wrapf(err, "read data")
	}
	cs := int64(e.ChunkSize)
	if e.Size <= cs {
		// One chunk: a point read, without building an iterator.
		v, err := o.snap.Get(chunkKey(id, 0))
		if err != nil || int64(len(v)) != e.Size {
			return errors.Join(errShortObject, err)
		}
		_, err = w.Write(v[off : off+n])
		return err
	}
	first := uint64(off / cs)
	it := o.snap.Scan(chunkPrefix(id))
	defer it.Release()
	if !it.Seek(chunkKey(id, first)) {
		return errors.Join(errShortObject, it.Err())
	}
	skip := off - int64(first)*cs
	for want := first; n > 0; want++ {
		if !bytes.Equal(it.Key(), chunkKey(id, want)) {
			return errShortObject
		}
		v := it.Value()
		if int64(len(v)) <= skip {
			return errShortObject
		}
		v = v[skip:]
		skip = 0
		if int64(len(v)) > n {
			v = v[:n]
		}
		if _, err := w.Write(v); err != nil {
			return err
		}
		n -= int64(len(v))
		if n > 0 && !it.Next() {
			return errors.Join(errShortObject, it.Err())
		}
	}
	return nil
}

// DeleteObject deletes the object (WRITE on the bucket); deleting an absent key is not
// an error.
func (s *Service) DeleteObject(ctx context.Context, r Requester, bucket, key string) error {
	_, err := s.DeleteObjectVersion(ctx, r, bucket, key, "")
	return err
}

// deleteCurrent adds to t the deletion of bucket/key's current version, read in t (so
// the commit is conditional on it), and the collection of its data, unless there is
// none or when (if set) refuses the version read; it reports whether it deleted. It is
// the one deletion of DeleteObject and of the lifecycle worker's expirations.
func (s *Service) deleteCurrent(t *txn, bucket, key string, when func(*Manifest) bool) (bool, error) {
	old, err := s.manifest(t.get, bucket, key)
	switch {
	case IsCode(err, NoSuchKey):
		return false, nil
	case err != nil:
		return false, err
	case when != nil && !when(old):
		return false, nil
	}
	t.b.Delete(objectKey(bucket, key))
	queueGarbage(&t.b, old)
	return true, nil
}

// ObjectACL returns the object's ACL (READ_ACP on the object).
func (s *Service) ObjectACL(ctx context.Context, r Requester, bucket, key string) (ACL, error) {
	m, err := s.readable(ctx, s.db.Get, r, bucket, key, "", PermReadACP)
	if err != nil {
		return ACL{}, err
	}
	return m.ACL.Clone(), nil
}

// SetObjectACL replaces the object's ACL (WRITE_ACP on the object). An explicit ACL's
// owner must be the object's owner (empty means the object's owner); a canned one is
// built for the object's owner and its bucket's.
func (s *Service) SetObjectACL(ctx context.Context, r Requester, bucket, key string, spec ACLSpec) error {
	return s.SetObjectVersionACL(ctx, r, bucket, key, "", spec)
}

// putManifest adds to t the rewrite of bucket/key's manifest record as m (the same
// version, changed in place: its ACL or tags).
func putManifest(t *txn, bucket, key string, m *Manifest) error {
	v, err := json.Marshal(m)
	if err != nil {
		return wrapf(err, "encode manifest %s/%s", bucket, key)
	}
	t.b.Put(objectKey(bucket, key), v)
	return nil
}

func checkMeta(meta []MetaPair) error {
	n := 0
	for _, p := range meta {
		n += len(p.Name) + len(p.Value)
	}
	if n > MaxMetaSize {
		return Errorf(MetadataTooLarge, "Your metadata headers exceed the maximum allowed metadata size.")
	}
	return nil
}
