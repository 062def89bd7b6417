package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/maphash"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// Multipart limits.
const (
	MaxPartNumber = s3types.MaxPartNumber
	// DefaultMinPartSize is the smallest part but the last of a completed upload.
	DefaultMinPartSize = 5 << 20
	// MaxPartSize is the largest part.
	MaxPartSize = 5 << 30
	// MaxListParts and MaxListUploads cap one page of the multipart listings.
	MaxListParts   = 1000
	MaxListUploads = 1000
)

// Upload is a multipart upload in progress: what the object will be once completed.
type Upload struct {
	Bucket      string            `json:"bucket"`
	Key         string            `json:"key"`
	ID          string            `json:"id"`
	Owner       Owner             `json:"owner"`
	Initiated   time.Time         `json:"initiated"`
	ContentType string            `json:"content_type,omitempty"`
	Meta        []MetaPair        `json:"meta,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	ACL         ACL               `json:"acl"`
	// Tags are the tags the object gets at completion (x-amz-tagging at initiation).
	Tags []Tag `json:"tags,omitempty"`
	// Parts counts the part commits: each rewrites the record, so that a completion
	// or abort, conditional on the record it read, conflicts with a part committed
	// after it listed the parts (by another service over the same store).
	Parts uint64 `json:"parts,omitempty"`
	// SSE, when set, is the encryption every part is stored with and the object gets.
	SSE *Encryption `json:"sse,omitempty"`
	// Retention and LegalHold are the Object Lock the object gets at completion
	// (x-amz-object-lock-* at initiation).
	Retention *Retention `json:"retention,omitempty"`
	LegalHold bool       `json:"legal_hold,omitempty"`
}

// PartInfo is one uploaded part.
type PartInfo struct {
	Number       int       `json:"number"`
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"last_modified"`
	Extent       Extent    `json:"extent"`
}

// CompletePart names a part in a completion request (defined in s3types).
type CompletePart = s3types.CompletePart

// "mu" bucket, key, upload id → Upload; "mp" upload id, 4-byte part number → PartInfo.
func uploadKey(bucket, key, id string) []byte {
	return storage.KeyString(storage.TagS3, "mu", bucket, key, id)
}
func uploadsPrefix(bucket string) []byte { return storage.KeyString(storage.TagS3, "mu", bucket) }
func partKey(uploadID string, n int) []byte {
	return storage.Key(storage.TagS3, []byte("mp"), []byte(uploadID), binary.BigEndian.AppendUint32(nil, uint32(n)))
}
func partsPrefix(uploadID string) []byte {
	return storage.Key(storage.TagS3, []byte("mp"), []byte(uploadID))
}

// "mc" bucket, key, upload id → completedUpload, the record of a completed upload.
func completedKey(bucket, key, id string) []byte {
	return storage.KeyString(storage.TagS3, "mc", bucket, key, id)
}

// MaxCompletedUploadTTL bounds how long a completed upload stays answerable (see
// completedUpload): the records live for the upload TTL, at most this long.
const MaxCompletedUploadTTL = time.Hour

// completedUpload records a completed upload for a while (Config.UploadTTL, at most
// MaxCompletedUploadTTL), so that a retried completion naming the same parts gets the
// same answer, as AWS gives it, rather than NoSuchUpload. The collector deletes records
// past their time: their number is bounded by the completions of that period.
type completedUpload struct {
	ETag string `json:"etag"`
	// VersionID is the version the completion made (stored form: "" is the null
	// version, and what records written before versioning hold).
	VersionID string `json:"version,omitempty"`
	// Parts is the fingerprint of the completion's part list (partsFingerprint).
	Parts string    `json:"parts"`
	At    time.Time `json:"at"`
}

// partsFingerprint is the hex SHA-256 of a completion's part numbers and ETags (quotes
// trimmed, lower case), in order.
func partsFingerprint(want []CompletePart) string {
	h := sha256.New()
	for _, p := range want {
		h.Write([]byte(strconv.Itoa(p.Number) + ":" + strings.ToLower(strings.Trim(p.ETag, `"`)) + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// completedTTL is how long completion records are kept.
func (s *Service) completedTTL() time.Duration { return min(s.cfg.UploadTTL, MaxCompletedUploadTTL) }

// completedAnswer answers a completion of an upload that no longer exists: the
// object's ETag and version id when the upload was completed within completedTTL with
// the same parts, NoSuchUpload otherwise.
func (s *Service) completedAnswer(bucket, key, uploadID string, want []CompletePart) (*Manifest, error) {
	v, err := s.db.Get(completedKey(bucket, key, uploadID))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUpload
	}
	if err != nil {
		return nil, wrapf(err, "read completed upload")
	}
	var c completedUpload
	if err := json.Unmarshal(v, &c); err != nil {
		return nil, wrapf(err, "decode completed upload")
	}
	if time.Since(c.At) > s.completedTTL() || c.Parts != partsFingerprint(want) {
		return nil, errNoSuchUpload
	}
	return &Manifest{ETag: c.ETag, VersionID: c.VersionID}, nil
}

// expireCompleted deletes the completion records made before cutoff (and any that do
// not decode), gcBatch at a time.
func (s *Service) expireCompleted(ctx context.Context, cutoff time.Time) error {
	it := s.db.IteratePrefix(storage.KeyString(storage.TagS3, "mc"))
	defer it.Release()
	batch := new(storage.Batch)
	for it.Next() {
		var c completedUpload
		if err := json.Unmarshal(it.Value(), &c); err != nil || c.At.Before(cutoff) {
			batch.Delete(bytes.Clone(it.Key()))
		}
		if batch.Len() == gcBatch {
			if err := s.db.Commit(ctx, batch, false); err != nil {
				return wrapf(err, "expire completed uploads")
			}
			batch.Reset()
		}
	}
	if err := it.Err(); err != nil {
		return wrapf(err, "expire completed uploads")
	}
	if batch.Len() == 0 {
		return nil
	}
	return wrapf(s.db.Commit(ctx, batch, false), "expire completed uploads")
}

var errNoSuchUpload = &Error{Code: NoSuchUpload, Message: "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."}

// CreateUpload starts a multipart upload (WRITE on the bucket). in gives the object's
// type, metadata, headers and ACL; its body is not read.
func (s *Service) CreateUpload(ctx context.Context, r Requester, bucket, key string, in PutInput) (*Upload, error) {
	if err := checkNewKey(key); err != nil {
		return nil, err
	}
	if err := checkMeta(in.Meta); err != nil {
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
	enc, dk, err := s.newEncryption(b, in.SSE, s.cfg.MasterKey != nil)
	if err != nil {
		return nil, err
	}
	if in.SSE.Customer != nil {
		enc.CustomerKeyMD5 = in.SSE.Customer.MD5 // for CompleteMultipartUpload's answer
		if mk := s.cfg.MasterKey; mk != nil {
			if enc.WrappedLayoutKey, err = mk.WrapLayoutKey(sse.LayoutKey(dk.key)); err != nil {
				return nil, wrapf(err, "wrap layout key")
			}
		}
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	u := &Upload{Bucket: bucket, Key: key, ID: base64.RawURLEncoding.EncodeToString(id), Owner: owner,
		Initiated: time.Now().UTC().Truncate(time.Millisecond), ContentType: in.ContentType, Meta: in.Meta,
		Headers: in.Headers, ACL: acl, Tags: in.Tags, SSE: enc, Retention: in.Lock.Retention, LegalHold: in.Lock.LegalHold}
	v, err := json.Marshal(u)
	if err != nil {
		return nil, wrapf(err, "encode upload")
	}
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	err = s.update(ctx, "create upload", func(t *txn) error {
		if _, err := s.bucketIn(t, bucket); err != nil {
			return err
		}
		t.b.Put(uploadKey(bucket, key, u.ID), v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// upload reads an upload record with get (NoSuchUpload when absent).
func (s *Service) upload(get getter, bucket, key, id string) (*Upload, error) {
	v, err := get(uploadKey(bucket, key, id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUpload
	}
	if err != nil {
		return nil, wrapf(err, "read upload")
	}
	u := new(Upload)
	if err := json.Unmarshal(v, u); err != nil {
		return nil, wrapf(err, "decode upload")
	}
	return u, nil
}

// uploadLock serialises part commits, completion and abort of one upload.
func (s *Service) uploadLock(id string) func() {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(id)
	l := &s.uploadLocks[h.Sum64()%uint64(len(s.uploadLocks))]
	l.Lock()
	return l.Unlock
}

// PutPart stores part number n of an upload (WRITE on the bucket), replacing a part of
// the same number. The data is stored like an object's. A part larger than MaxPartSize
// or the configured largest object is refused (EntityTooLarge) before any is stored.
func (s *Service) PutPart(ctx context.Context, r Requester, bucket, key, uploadID string, n int, in PutInput) (*PartInfo, error) {
	if n < 1 || n > MaxPartNumber {
		return nil, Errorf(InvalidArgument, "Part number must be an integer between 1 and %d, inclusive", MaxPartNumber)
	}
	if in.Size < 0 {
		return nil, Errorf(InvalidArgument, "negative size")
	}
	if in.Size > min(MaxPartSize, s.cfg.MaxObjectSize) {
		// A part larger than an object may be could never be completed.
		return nil, Errorf(EntityTooLarge, "Your proposed upload exceeds the maximum allowed object size.")
	}
	if _, err := s.writableBucket(ctx, r, bucket, ActionPutObject, key); err != nil {
		return nil, err
	}
	u, err := s.upload(s.db.Get, bucket, key, uploadID)
	if err != nil {
		return nil, err
	}
	seal, err := s.openKey(u.SSE, in.SSE.Customer) // an SSE-C upload's parts carry its key
	if err != nil {
		return nil, err
	}
	data := new(writes)
	ext, sum, err := s.storeData(ctx, in, data, writeRecord{Bucket: bucket, Key: key}, seal, n)
	if err != nil {
		return nil, err
	}
	p := &PartInfo{Number: n, ETag: seal.etag(sum), LastModified: time.Now().UTC().Truncate(time.Millisecond), Extent: ext}
	if err := s.commitPart(ctx, bucket, key, uploadID, p, data); err != nil {
		s.abandonExtent(ext)
		return nil, err
	}
	return p, nil
}

// commitPart records part p, with data's writes, in one synced conditional batch: the
// upload must still be as read (not completed, aborted or given another part
// meanwhile: its record counts the part commits), the part it replaces has its data
// queued for collection.
func (s *Service) commitPart(ctx context.Context, bucket, key, uploadID string, p *PartInfo, data *writes) error {
	v, err := json.Marshal(p)
	if err != nil {
		return wrapf(err, "encode part")
	}
	defer s.uploadLock(uploadID)()
	err = s.update(ctx, "commit part", func(t *txn) error {
		u, err := s.upload(t.get, bucket, key, uploadID)
		if err != nil {
			return err // aborted or completed while the data arrived
		}
		data.addTo(&t.b)
		if old, err := s.part(t.get, uploadID, p.Number); err == nil {
			queueExtent(&t.b, old.Extent)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		u.Parts++
		uv, err := json.Marshal(u)
		if err != nil {
			return wrapf(err, "encode upload")
		}
		t.b.Put(uploadKey(bucket, key, uploadID), uv)
		t.b.Put(partKey(uploadID, p.Number), v)
		return nil
	})
	if err != nil {
		return err
	}
	s.gc.wake()
	return nil
}

func (s *Service) part(get getter, uploadID string, n int) (*PartInfo, error) {
	v, err := get(partKey(uploadID, n))
	if err != nil {
		return nil, err
	}
	p := new(PartInfo)
	if err := json.Unmarshal(v, p); err != nil {
		return nil, wrapf(err, "decode part")
	}
	return p, nil
}

// parts returns the parts of an upload from number after+1 on, at most max (0: all).
func (s *Service) parts(uploadID string, after, max int) ([]PartInfo, bool, error) {
	it := s.db.Iterate(partKey(uploadID, after+1), storage.PrefixEnd(partsPrefix(uploadID)))
	defer it.Release()
	var out []PartInfo
	for it.Next() {
		if max > 0 && len(out) == max {
			return out, true, nil
		}
		var p PartInfo
		if err := json.Unmarshal(it.Value(), &p); err != nil {
			return nil, false, wrapf(err, "decode part")
		}
		out = append(out, p)
	}
	return out, false, wrapf(it.Err(), "list parts")
}

func queueExtent(batch *storage.Batch, e Extent) {
	if id, err := hex.DecodeString(e.ID); err == nil && len(id) > 0 {
		batch.Put(garbageKey(id), nil)
	}
}

// CompleteUpload assembles the named parts, in order, into the object (WRITE on the
// bucket). Parts must be ascending (InvalidPartOrder), uploaded with the given ETags
// (InvalidPart), and all but the last at least MinPartSize (EntityTooSmall). Parts not
// named are collected. The object's ETag is the MD5 of the parts' binary MD5s, "-", and
// the number of parts. No data is copied: the manifest names the parts' data. For an
// SSE-C upload the manifest returned carries the upload's key MD5 (for the answer to
// echo); the one stored has none.
func (s *Service) CompleteUpload(ctx context.Context, r Requester, bucket, key, uploadID string, want []CompletePart, conds WriteConditions) (*Manifest, error) {
	return s.CompleteUploadWithKey(ctx, r, bucket, key, uploadID, want, conds, nil)
}

// CompleteUploadWithKey is CompleteUpload given the SSE-C key the completion carries
// (nil: none; AWS does not require it). With it, an SSE-C upload's object gets its
// layout MAC under the data key the customer's key opens, whether or not the server
// has a master key (completionLayoutKey); another key is 403 AccessDenied, a key for
// an upload that is not SSE-C 400 InvalidRequest. A retried completion (the upload
// already completed) ignores it.
func (s *Service) CompleteUploadWithKey(ctx context.Context, r Requester, bucket, key, uploadID string, want []CompletePart, conds WriteConditions, ck *CustomerKey) (*Manifest, error) {
	if err := conds.validate(); err != nil {
		return nil, err
	}
	if _, err := s.writableBucket(ctx, r, bucket, ActionPutObject, key); err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return nil, Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	for i := 1; i < len(want); i++ {
		if want[i].Number <= want[i-1].Number {
			return nil, Errorf(InvalidPartOrder, "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
		}
	}
	defer s.uploadLock(uploadID)()
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	var m *Manifest
	keyMD5 := ""
	err := s.update(ctx, "complete "+bucket+"/"+key, func(t *txn) error {
		u, err := s.upload(t.get, bucket, key, uploadID)
		if IsCode(err, NoSuchUpload) {
			m, err = s.completedAnswer(bucket, key, uploadID, want) // a retried completion
			return err
		}
		if err != nil {
			return err
		}
		if u.SSE != nil {
			keyMD5 = u.SSE.CustomerKeyMD5
		}
		m, err = s.completeIn(t, u, want, conds, ck)
		return err
	})
	if err != nil {
		return nil, err
	}
	if keyMD5 != "" && m.SSE != nil {
		e := *m.SSE
		e.CustomerKeyMD5 = keyMD5
		m.SSE = &e
	}
	s.gc.wake() // parts left out of the object, the version replaced
	return m, nil
}

// completeIn adds to t the completion of upload u with the parts want (read in t: the
// upload record, which a part commit rewrites, is a condition of the commit), given
// the SSE-C key ck (nil: none), and returns the new object's manifest.
func (s *Service) completeIn(t *txn, u *Upload, want []CompletePart, conds WriteConditions, ck *CustomerKey) (*Manifest, error) {
	lk, rewrapped, err := s.completionLayoutKey(u, ck)
	if err != nil {
		return nil, err
	}
	have, _, err := s.parts(u.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	byNumber := make(map[int]PartInfo, len(have))
	for _, p := range have {
		byNumber[p.Number] = p
	}
	invalid := Errorf(InvalidPart, "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
	h := md5.New()
	m := &Manifest{ChunkSize: s.cfg.ChunkSize, ContentType: u.ContentType, Meta: u.Meta, Headers: u.Headers,
		Owner: u.Owner, ACL: u.ACL, Tags: u.Tags, SSE: u.SSE.stored(), Retention: u.Retention, LegalHold: u.LegalHold}
	used := map[int]bool{}
	for i, w := range want {
		p, ok := byNumber[w.Number]
		if !ok || !strings.EqualFold(strings.Trim(w.ETag, `"`), p.ETag) {
			return nil, invalid
		}
		if i < len(want)-1 && p.Extent.Size < int64(s.cfg.MinPartSize) {
			return nil, Errorf(EntityTooSmall, "Your proposed upload is smaller than the minimum allowed size")
		}
		sum, err := hex.DecodeString(p.ETag)
		if err != nil {
			return nil, wrapf(err, "part etag")
		}
		h.Write(sum)
		m.Size += p.Extent.Size
		used[p.Number] = true
		if p.Extent.Size > 0 {
			m.Parts = append(m.Parts, p.Extent)
		}
	}
	if m.Size > s.cfg.MaxObjectSize {
		return nil, Errorf(EntityTooLarge, "Your proposed upload exceeds the maximum allowed object size.")
	}
	m.ETag = hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(want))
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	m.UUID = hex.EncodeToString(id)
	m.LastModified = time.Now().UTC().Truncate(time.Millisecond)
	if rewrapped != nil {
		m.SSE.WrappedKey = rewrapped // m.SSE is the upload's record's copy
	}
	if lk != nil {
		if err := setLayout(m, lk); err != nil {
			return nil, err
		}
	}
	t.b.Delete(uploadKey(u.Bucket, u.Key, u.ID))
	for _, p := range have {
		t.b.Delete(partKey(u.ID, p.Number))
		if !used[p.Number] || p.Extent.Size == 0 {
			queueExtent(&t.b, p.Extent)
		}
	}
	if _, err := s.switchManifest(t, u.Bucket, u.Key, m, conds); err != nil {
		return nil, err
	}
	// After the switch, which gives the version id a retried completion answers too.
	done, err := json.Marshal(completedUpload{ETag: m.ETag, VersionID: m.VersionID, Parts: partsFingerprint(want), At: time.Now().UTC()})
	if err != nil {
		return nil, wrapf(err, "encode completed upload")
	}
	t.b.Put(completedKey(u.Bucket, u.Key, u.ID), done)
	return m, nil
}

// AbortUpload discards an upload and its parts (WRITE on the bucket).
func (s *Service) AbortUpload(ctx context.Context, r Requester, bucket, key, uploadID string) error {
	if _, err := s.writableBucket(ctx, r, bucket, ActionAbortMultipartUpload, key); err != nil {
		return err
	}
	defer s.uploadLock(uploadID)()
	return s.abortLocked(ctx, bucket, key, uploadID)
}

// abortLocked deletes the upload and its parts, conditional on the upload record (see
// commitPart), and queues the parts' data for collection; the upload's lock is held.
func (s *Service) abortLocked(ctx context.Context, bucket, key, uploadID string) error {
	err := s.update(ctx, "abort upload", func(t *txn) error {
		if _, err := s.upload(t.get, bucket, key, uploadID); err != nil {
			return err
		}
		have, _, err := s.parts(uploadID, 0, 0)
		if err != nil {
			return err
		}
		t.b.Delete(uploadKey(bucket, key, uploadID))
		for _, p := range have {
			t.b.Delete(partKey(uploadID, p.Number))
			queueExtent(&t.b, p.Extent)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.gc.wake()
	return nil
}

// ListParts returns the upload and a page of at most maxParts of its parts after part
// number marker (READ on the bucket).
func (s *Service) ListParts(ctx context.Context, r Requester, bucket, key, uploadID string, marker, maxParts int) (*Upload, []PartInfo, bool, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, nil, false, err
	}
	if !s.allowed(b, nil, r, ActionListMultipartUploadParts, key, PermRead) && !s.allowed(b, nil, r, ActionListMultipartUploadParts, key, PermWrite) {
		return nil, nil, false, errAccessDenied
	}
	u, err := s.upload(s.db.Get, bucket, key, uploadID)
	if err != nil {
		return nil, nil, false, err
	}
	if maxParts <= 0 || maxParts > MaxListParts {
		maxParts = MaxListParts
	}
	ps, trunc, err := s.parts(uploadID, max(marker, 0), maxParts)
	return u, ps, trunc, err
}

// UploadListOptions select the uploads ListUploads returns.
type UploadListOptions struct {
	Prefix, Delimiter string
	// KeyMarker and UploadIDMarker: uploads of keys after KeyMarker, or of KeyMarker
	// itself with ids after UploadIDMarker.
	KeyMarker, UploadIDMarker string
	MaxUploads                int
}

// UploadListing is a page of uploads in progress, by key then upload id.
type UploadListing struct {
	Uploads                           []Upload
	CommonPrefixes                    []string
	Truncated                         bool
	NextKeyMarker, NextUploadIDMarker string
}

// ListUploads lists the bucket's uploads in progress (READ on the bucket).
func (s *Service) ListUploads(ctx context.Context, r Requester, bucket string, o UploadListOptions) (*UploadListing, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !s.allowed(b, nil, r, ActionListBucketMultipartUploads, "", PermRead) {
		return nil, errAccessDenied
	}
	if o.MaxUploads <= 0 || o.MaxUploads > MaxListUploads {
		o.MaxUploads = MaxListUploads
	}
	out := &UploadListing{}
	base := uploadsPrefix(bucket)
	it := s.db.IteratePrefix(storage.AppendComponentPrefix(append([]byte(nil), base...), o.Prefix))
	defer it.Release()
	count := 0
	lastPrefix := ""
	for it.Next() {
		var u Upload
		if err := json.Unmarshal(it.Value(), &u); err != nil {
			return nil, wrapf(err, "decode upload")
		}
		if u.Key < o.KeyMarker || u.Key == o.KeyMarker && (o.UploadIDMarker == "" || u.ID <= o.UploadIDMarker) {
			continue
		}
		if o.Delimiter != "" {
			if i := strings.Index(u.Key[len(o.Prefix):], o.Delimiter); i >= 0 {
				cp := u.Key[:len(o.Prefix)+i+len(o.Delimiter)]
				if cp == lastPrefix || strings.HasPrefix(o.KeyMarker, cp) {
					continue
				}
				if count == o.MaxUploads {
					out.Truncated = true
					break
				}
				out.CommonPrefixes = append(out.CommonPrefixes, cp)
				out.NextKeyMarker, out.NextUploadIDMarker = cp, ""
				lastPrefix = cp
				count++
				continue
			}
		}
		if count == o.MaxUploads {
			out.Truncated = true
			break
		}
		out.Uploads = append(out.Uploads, u)
		out.NextKeyMarker, out.NextUploadIDMarker = u.Key, u.ID
		count++
	}
	if err := it.Err(); err != nil {
		return nil, wrapf(err, "list uploads")
	}
	return out, nil
}

// hasUploads reports whether the bucket has uploads in progress.
func (s *Service) hasUploads(bucket string) (bool, error) {
	it := s.db.IteratePrefix(uploadsPrefix(bucket))
	defer it.Release()
	ok := it.Next()
	return ok, wrapf(it.Err(), "uploads")
}

// abortExpired aborts the uploads initiated before cutoff (abandoned uploads).
func (s *Service) abortExpired(ctx context.Context, cutoff time.Time) (int, error) {
	it := s.db.IteratePrefix(storage.KeyString(storage.TagS3, "mu"))
	var old []Upload
	for it.Next() {
		var u Upload
		if err := json.Unmarshal(it.Value(), &u); err == nil && u.Initiated.Before(cutoff) {
			old = append(old, u)
		}
	}
	err := it.Err()
	it.Release()
	if err != nil {
		return 0, wrapf(err, "expire uploads")
	}
	n := 0
	for _, u := range old {
		unlock := s.uploadLock(u.ID)
		err := s.abortLocked(ctx, u.Bucket, u.Key, u.ID)
		unlock()
		if err == nil {
			n++
		} else if !IsCode(err, NoSuchUpload) {
			return n, err
		}
	}
	return n, nil
}
