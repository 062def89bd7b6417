package s3

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// Bucket versioning (docs/s3.md, "Versioning"; the model is in docs/rationale.md,
// "S3 versioning: the current record and the versions table").
//
// A key of a bucket whose versioning was ever set keeps, once a versioned write has
// touched it:
//
//   - "o" bucket key: the current version's manifest when it is not a delete marker
//     (absent otherwise), exactly as in an unversioned bucket, so that GET, HEAD and
//     listing v1/v2 read one record as before;
//   - "v" bucket key slot: every version, manifests and delete markers, slot being
//     16 bytes that order the key's versions newest first (versionSlot);
//   - "vh" bucket key: the key's versionHead, which every change of the key's versions
//     reads and rewrites: the point record that makes those changes conditional
//     commits (in cluster mode too), and that says where the null version is.
//
// A key without a head has no versions records: its "o" record, if any, is its only
// version, the null one (written before versioning was set). The first versioned write
// to such a key moves that null version into the versions table ("materializes" it).

// The versioning states of a bucket (Bucket.Versioning; "" is never enabled).
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersionID is the version id of the null version.
const NullVersionID = "null"

// The S3 actions of versioning.
const (
	ActionGetBucketVersioning        = "s3:GetBucketVersioning"
	ActionPutBucketVersioning        = "s3:PutBucketVersioning"
	ActionListBucketVersions         = "s3:ListBucketVersions"
	ActionGetObjectVersion           = "s3:GetObjectVersion"
	ActionDeleteObjectVersion        = "s3:DeleteObjectVersion"
	ActionGetObjectVersionACL        = "s3:GetObjectVersionAcl"
	ActionPutObjectVersionACL        = "s3:PutObjectVersionAcl"
	ActionGetObjectVersionTagging    = "s3:GetObjectVersionTagging"
	ActionPutObjectVersionTagging    = "s3:PutObjectVersionTagging"
	ActionDeleteObjectVersionTagging = "s3:DeleteObjectVersionTagging"
)

func versionsPrefix(bucket string) []byte { return storage.KeyString(storage.TagS3, "v", bucket) }
func keyVersionsPrefix(bucket, key string) []byte {
	return storage.KeyString(storage.TagS3, "v", bucket, key)
}
func versionKey(bucket, key string, slot versionSlot) []byte {
	return storage.AppendComponent(keyVersionsPrefix(bucket, key), slot[:])
}
func headKey(bucket, key string) []byte { return storage.KeyString(storage.TagS3, "vh", bucket, key) }
func headsPrefix(bucket string) []byte  { return storage.KeyString(storage.TagS3, "vh", bucket) }

// versionSlot places a version among its key's: the bitwise complement of its
// sequence number, big-endian (so newer versions sort first), then 8 random bytes
// (so that an id is never given twice, even when the newest version was deleted and
// its sequence number is given again). A version's id is its slot in base64url.
type versionSlot [16]byte

// newSlot returns the slot of sequence number seq.
func newSlot(seq uint64) versionSlot {
	var s versionSlot
	binary.BigEndian.PutUint64(s[:8], ^seq)
	_, _ = rand.Read(s[8:])
	return s
}

// seq is the slot's sequence number.
func (s versionSlot) seq() uint64 { return ^binary.BigEndian.Uint64(s[:8]) }

// id is the version id of the slot.
func (s versionSlot) id() string { return base64.RawURLEncoding.EncodeToString(s[:]) }

// versionIDLength is the length of every version id but "null".
const versionIDLength = 22

// errBadVersionID answers a version id that is neither "null" nor one Cairn gives.
var errBadVersionID = Errorf(InvalidArgument, "Invalid version id specified")

// errNoSuchVersion answers a version id that names no version of the key.
var errNoSuchVersion = &Error{Code: NoSuchVersion, Message: "The specified version does not exist."}

// parseSlot decodes a version id other than "null" (400 InvalidArgument if it is not
// one Cairn gives).
func parseSlot(id string) (versionSlot, error) {
	var s versionSlot
	if len(id) != versionIDLength {
		return s, errBadVersionID
	}
	n, err := base64.RawURLEncoding.Decode(s[:], []byte(id))
	if err != nil || n != len(s) || s.id() != id {
		return s, errBadVersionID
	}
	return s, nil
}

// CheckVersionID refuses (400 InvalidArgument) a version id that is neither "null"
// nor one Cairn gives: a request naming one is refused before anything is read.
func CheckVersionID(id string) error {
	if id == NullVersionID {
		return nil
	}
	_, err := parseSlot(id)
	return err
}

// versionHead is the value of a key's "vh" record.
type versionHead struct {
	// Seq is the highest sequence number given to a version of the key.
	Seq uint64 `json:"seq"`
	// Null is the slot of the key's null version in the versions table (base64url),
	// "" when it has none.
	Null string `json:"null,omitempty"`
	// Lone is set when the key's only version is a delete marker (an "expired
	// object delete marker"): the "lm" lifecycle index is derived from it.
	Lone *loneMarker `json:"lone,omitempty"`
}

// MarkerError is the error of a request that met a delete marker: a GET or HEAD of a
// key whose current version is one (404 NoSuchKey), or of a marker by its version id
// (405 MethodNotAllowed). The interface answers it with x-amz-delete-marker: true and
// the marker's version id.
type MarkerError struct {
	Err       *Error
	VersionID string
	// LastModified is when the marker was made.
	LastModified time.Time
}

// Error implements error.
func (e *MarkerError) Error() string { return e.Err.Error() }

// Unwrap returns the S3 error.
func (e *MarkerError) Unwrap() error { return e.Err }

// externalID is the version id a client sees of a stored one ("" is "null").
func externalID(id string) string {
	if id == "" {
		return NullVersionID
	}
	return id
}

// BucketVersioning returns the bucket's versioning state ("" when it was never set;
// its owner, or s3:GetBucketVersioning in the bucket policy).
func (s *Service) BucketVersioning(ctx context.Context, r Requester, bucket string) (string, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return "", err
	}
	if !ownerOrAllowed(b, r, ActionGetBucketVersioning) {
		return "", errAccessDenied
	}
	return b.Versioning, nil
}

// SetBucketVersioning sets the bucket's versioning state to VersioningEnabled or
// VersioningSuspended (anything else is 400 IllegalVersioningConfigurationException;
// a bucket never goes back to unversioned); its owner, or s3:PutBucketVersioning in
// the bucket policy.
func (s *Service) SetBucketVersioning(ctx context.Context, r Requester, bucket, status string) error {
	if status != VersioningEnabled && status != VersioningSuspended {
		return Errorf(IllegalVersioningConfiguration, "The versioning configuration specified in the request is invalid: Status must be Enabled or Suspended.")
	}
	return s.updateBucket(ctx, "set bucket versioning "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutBucketVersioning) {
			return errAccessDenied
		}
		if b.Versioning == status {
			return errUnchanged
		}
		if b.ObjectLock != nil {
			return errLockKeepsVersioning
		}
		b.Versioning = status
		return nil
	})
}

// keyVersions is a key's version records as one update reads and changes them.
type keyVersions struct {
	t           *txn
	bucket, key string
	head        versionHead
	// hasHead says the key's versions are in the versions table (head read or made).
	hasHead bool
	// stored says the head was read: the key may have version records.
	stored bool
	// cur is the current record's manifest ("o"), nil when absent.
	cur *Manifest
	// pendingNull is the null version moved from "o" into the table by this update,
	// not written yet (finish writes it unless the update removed it).
	pendingNull *Manifest
	// garbage says a version's data was queued for collection.
	garbage bool
	// removed are the slots this update removed, curGone says the current version
	// is one of them (remove).
	removed []versionSlot
	curGone bool
	// mayRemove, when set, says whether the requester may remove a version for good
	// (removeVersion answers 403 AccessDenied when it says no; see versionRemover).
	mayRemove func(m *Manifest) bool
}

// loadVersions reads bucket/key's head and current record in t (both conditions of
// its commit). A key without a head but with a current record gets one: its current
// version, the null one, is moved into the table (see keyVersions.pendingNull).
func (s *Service) loadVersions(t *txn, bucket, key string) (*keyVersions, error) {
	kv := &keyVersions{t: t, bucket: bucket, key: key}
	v, err := t.get(headKey(bucket, key))
	switch {
	case err == nil:
		if err := json.Unmarshal(v, &kv.head); err != nil {
			return nil, wrapf(err, "decode version head %s/%s", bucket, key)
		}
		kv.hasHead, kv.stored = true, true
	case !errors.Is(err, storage.ErrNotFound):
		return nil, wrapf(err, "read version head %s/%s", bucket, key)
	}
	cur, err := s.manifest(t.get, bucket, key)
	switch {
	case IsCode(err, NoSuchKey):
	case err != nil:
		return nil, err
	default:
		kv.cur = cur
	}
	if !kv.hasHead && kv.cur != nil {
		// The null version of before versioning: its slot is below any new one.
		slot := newSlot(uint64(max(kv.cur.LastModified.UnixMicro(), 1)))
		kv.head = versionHead{Seq: slot.seq(), Null: slot.id()}
		kv.pendingNull = kv.cur
		kv.hasHead = true
	}
	return kv, nil
}

// nextSlot gives the slot of a new newest version: its sequence number follows the
// newest given, and is at least the clock's microseconds (ids roughly tell time;
// order never depends on the clock).
func (kv *keyVersions) nextSlot() versionSlot {
	seq := max(kv.head.Seq+1, uint64(time.Now().UnixMicro()))
	kv.head.Seq = seq
	kv.hasHead = true
	return newSlot(seq)
}

// slotOf returns the slot of version id (stored form: "" is the null version) and
// whether the key has such a version slot at all (the null version may not exist).
func (kv *keyVersions) slotOf(id string) (versionSlot, bool, error) {
	if id == "" {
		if kv.head.Null == "" {
			return versionSlot{}, false, nil
		}
		s, err := parseSlot(kv.head.Null)
		if err != nil {
			return versionSlot{}, false, wrapf(err, "version head %s/%s: null slot", kv.bucket, kv.key)
		}
		return s, true, nil
	}
	s, err := parseSlot(id)
	return s, err == nil, err
}

// read returns the version in slot, nil if absent (a pending null version counts).
func (kv *keyVersions) read(slot versionSlot) (*Manifest, error) {
	if kv.pendingNull != nil && kv.head.Null == slot.id() {
		return kv.pendingNull, nil
	}
	m, err := readManifest(kv.t.get, versionKey(kv.bucket, kv.key, slot), errAbsent, kv.bucket, kv.key)
	if errors.Is(err, errAbsent) {
		return nil, nil
	}
	return m, err
}

// remove deletes the version in slot (m, as read) and queues its data.
func (kv *keyVersions) remove(slot versionSlot, m *Manifest) {
	if kv.pendingNull != nil && kv.head.Null == slot.id() {
		kv.pendingNull = nil // never written
	} else {
		kv.t.b.Delete(versionKey(kv.bucket, kv.key, slot))
	}
	kv.removed = append(kv.removed, slot)
	if kv.cur != nil && kv.cur.VersionID == m.VersionID {
		kv.curGone = true
	}
	if m.VersionID == "" {
		kv.head.Null = ""
	}
	if !m.DeleteMarker {
		queueGarbage(&kv.t.b, m)
		kv.garbage = true
	}
}

// removeNull removes the key's null version, if it has one (a suspended bucket's
// writes replace it).
func (kv *keyVersions) removeNull() error {
	slot, ok, err := kv.slotOf("")
	if err != nil || !ok {
		return err
	}
	m, err := kv.read(slot)
	if err != nil || m == nil {
		return err
	}
	kv.remove(slot, m)
	return nil
}

// add makes m the key's newest version: a new id (null when the bucket is
// suspended, replacing the null version), its versions record, and its current
// record (deleted for a delete marker). The version m replaces as current stays.
func (kv *keyVersions) add(m *Manifest, suspended bool) error {
	slot := kv.nextSlot()
	m.VersionID = slot.id()
	if suspended {
		if err := kv.removeNull(); err != nil {
			return err
		}
		m.VersionID = ""
		kv.head.Null = slot.id()
	}
	if err := kv.demoteNewest(m); err != nil {
		return err
	}
	v, err := json.Marshal(m)
	if err != nil {
		return wrapf(err, "encode manifest %s/%s", kv.bucket, kv.key)
	}
	kv.t.b.Put(versionKey(kv.bucket, kv.key, slot), v)
	if m.DeleteMarker {
		if kv.cur != nil {
			kv.t.b.Delete(objectKey(kv.bucket, kv.key))
		}
	} else {
		kv.t.b.Put(objectKey(kv.bucket, kv.key), v)
	}
	return kv.finish()
}

// put rewrites the version in slot as m (its ACL or tags), and the current record
// too when m is the current version.
func (kv *keyVersions) put(slot versionSlot, m *Manifest) error {
	v, err := json.Marshal(m)
	if err != nil {
		return wrapf(err, "encode manifest %s/%s", kv.bucket, kv.key)
	}
	kv.writeVersion(slot, m, v)
	if kv.cur != nil && kv.cur.VersionID == m.VersionID {
		kv.t.b.Put(objectKey(kv.bucket, kv.key), v)
	}
	return kv.finish()
}

// finish writes the head (every change rewrites it, so that every other change of
// the key's versions read before conflicts) and the pending null version.
func (kv *keyVersions) finish() error {
	if kv.pendingNull != nil {
		slot, _, err := kv.slotOf("")
		if err != nil {
			return err
		}
		v, err := json.Marshal(kv.pendingNull)
		if err != nil {
			return wrapf(err, "encode manifest %s/%s", kv.bucket, kv.key)
		}
		kv.t.b.Put(versionKey(kv.bucket, kv.key, slot), v)
		kv.pendingNull = nil
	}
	h, err := json.Marshal(kv.head)
	if err != nil {
		return wrapf(err, "encode version head %s/%s", kv.bucket, kv.key)
	}
	kv.t.b.Put(headKey(kv.bucket, kv.key), h)
	return nil
}

// switchVersioned is switchManifest in a bucket whose versioning was set: m becomes
// the newest version (see keyVersions.add); the replaced current version is kept as a
// noncurrent one, unless the bucket is suspended and it was the null version. It
// reports whether data was queued for collection.
func (s *Service) switchVersioned(t *txn, b *Bucket, key string, m *Manifest, conds WriteConditions) (bool, error) {
	kv, err := s.loadVersions(t, b.Name, key)
	if err != nil {
		return false, err
	}
	if err := conds.check(kv.cur); err != nil {
		return false, err
	}
	if m.Retention == nil && !m.DeleteMarker {
		m.Retention = defaultRetention(b.ObjectLock, m.LastModified)
	}
	if err := kv.add(m, b.Versioning == VersioningSuspended); err != nil {
		return false, err
	}
	return kv.garbage, nil
}

// DeleteResult is what a delete did: the version it removed or the delete marker it
// made (VersionID, "null" for the null version, "" in a bucket that was never
// versioned) and whether that is a delete marker.
type DeleteResult struct {
	VersionID    string
	DeleteMarker bool
}

// DeleteObjectVersion deletes bucket/key as DELETE Object does. Without a version id
// (id ""), in a versioned bucket, it makes a delete marker the newest version (a
// suspended bucket's marker is the null version, replacing it); in a bucket never
// versioned it deletes the object (see DeleteObject). With one, it removes that
// version for good (s3:DeleteObjectVersion) and queues its data: the next newest
// version becomes current when it was; WRITE on the bucket from its ACL lets only the
// bucket owner and the version's owner do so (403 AccessDenied; see versionRemover).
// Deleting what is not there is not an error. Which of these a delete is follows the
// bucket record its commit reads, never a cached one. In a bucket with Object Lock, a version under a legal hold or a retention in force
// is not removed (403 AccessDenied; see DeleteObjectVersionBypassing).
func (s *Service) DeleteObjectVersion(ctx context.Context, r Requester, bucket, key, id string) (DeleteResult, error) {
	return s.DeleteObjectVersionBypassing(ctx, r, bucket, key, id, false)
}

// DeleteObjectVersionBypassing is DeleteObjectVersion for a request that may ask to
// bypass GOVERNANCE retention (bypass: x-amz-bypass-governance-retention: true): a
// version whose retention is GOVERNANCE, and that has no legal hold, is then removed
// if the requester may bypass it (s3:BypassGovernanceRetention, the bucket owner's).
func (s *Service) DeleteObjectVersionBypassing(ctx context.Context, r Requester, bucket, key, id string, bypass bool) (DeleteResult, error) {
	if err := checkKey(key); err != nil {
		return DeleteResult{}, err
	}
	if id != "" {
		if err := CheckVersionID(id); err != nil {
			return DeleteResult{}, err
		}
	}
	action := ActionDeleteObject
	if id != "" {
		action = ActionDeleteObjectVersion
	}
	if _, err := s.writableBucket(ctx, r, bucket, action, key); err != nil {
		return DeleteResult{}, err
	}
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	var res DeleteResult
	garbage := false
	err := s.update(ctx, "delete "+bucket+"/"+key, func(t *txn) error {
		// The bucket as the commit requires it, not as cached: versioning set meanwhile
		// must not let a delete of the unversioned kind drop a version.
		b, err := s.bucketIn(t, bucket)
		if err != nil {
			return err
		}
		if b.Versioning == "" && (id == "" || id == NullVersionID) {
			res = DeleteResult{}
			if id != "" {
				res.VersionID = NullVersionID
			}
			garbage, err = s.deleteCurrent(t, bucket, key, nil)
			return err
		}
		kv, err := s.loadVersions(t, bucket, key)
		if err != nil {
			return err
		}
		if id == "" {
			res, err = kv.addMarker(r, b.Versioning == VersioningSuspended)
		} else {
			kv.mayRemove = versionRemover(b, r, key)
			res, err = s.removeVersion(kv, id, mayBypass(b, r, key, bypass))
		}
		garbage = kv.garbage
		return err
	})
	if err == nil && garbage {
		s.gc.wake()
	}
	return res, err
}

// versionRemover returns what says whether r, allowed s3:DeleteObjectVersion on b's
// key, may remove a version of it for good once the version is read (nil: any). A
// policy Allow of s3:DeleteObjectVersion and the bucket's ownership remove any
// version; WRITE from the bucket's ACL only the requester's own versions, as AWS
// limits deletions by bucket WRITE to the bucket owner and the object's owner.
func versionRemover(b *Bucket, r Requester, key string) func(m *Manifest) bool {
	if b.policyEffect(r, ActionDeleteObjectVersion, key) == EffectAllow || ownsBucket(b, r) {
		return nil
	}
	return func(m *Manifest) bool { return !r.Anonymous && r.ID != "" && r.ID == m.Owner.ID }
}

// addMarker makes a delete marker, owned by r, the key's newest version.
func (kv *keyVersions) addMarker(r Requester, suspended bool) (DeleteResult, error) {
	m := &Manifest{DeleteMarker: true, Owner: Owner{ID: r.ID, DisplayName: r.DisplayName},
		LastModified: time.Now().UTC().Truncate(time.Millisecond)}
	if err := kv.add(m, suspended); err != nil {
		return DeleteResult{}, err
	}
	return DeleteResult{VersionID: externalID(m.VersionID), DeleteMarker: true}, nil
}

// removeVersion removes version id (client form) from the key's versions, and
// makes the next newest current when it was the newest. An absent version is no
// error (nothing is written) to a requester who may remove any version; to one who
// may remove only some (kv.mayRemove) it is AccessDenied, as a version it may not
// remove is, so that the answer never tells whether another's version exists.
func (s *Service) removeVersion(kv *keyVersions, id string, bypass bool) (DeleteResult, error) {
	res := DeleteResult{VersionID: id}
	slot, m, err := kv.lookup(id)
	if err != nil {
		return res, err
	}
	if kv.mayRemove != nil && (m == nil || !kv.mayRemove(m)) {
		return res, errAccessDenied
	}
	if m == nil {
		return res, nil
	}
	if err := lockRefusal(m.Retention, m.LegalHold, time.Now(), bypass); err != nil {
		return res, err
	}
	res.DeleteMarker = m.DeleteMarker
	kv.remove(slot, m)
	newest, more, err := s.newestVersion(kv, slot)
	if err != nil {
		return res, err
	}
	if err := kv.promote(newest, more); err != nil {
		return res, err
	}
	switch {
	case newest == nil:
		// No version left: the key has no records at all.
		if kv.cur != nil {
			kv.t.b.Delete(objectKey(kv.bucket, kv.key))
		}
		kv.t.b.Delete(headKey(kv.bucket, kv.key))
		return res, nil
	case newest != nil && !newest.DeleteMarker:
		if kv.cur == nil || kv.cur.VersionID != newest.VersionID {
			if err := putManifest(kv.t, kv.bucket, kv.key, newest); err != nil {
				return res, err
			}
		}
	case kv.cur != nil && kv.cur.VersionID == m.VersionID:
		kv.t.b.Delete(objectKey(kv.bucket, kv.key)) // the newest left is a marker
	}
	return res, kv.finish()
}

// newestVersion returns the key's newest version other than the one in slot gone
// (nil if none): the first record of the key's versions, or the pending null version
// when there is none (it is older than any record); more says an older one is left
// too.
func (s *Service) newestVersion(kv *keyVersions, gone versionSlot) (newest *Manifest, more bool, err error) {
	it := s.db.IteratePrefix(keyVersionsPrefix(kv.bucket, kv.key))
	defer it.Release()
	skip := versionKey(kv.bucket, kv.key, gone)
	for it.Next() {
		if string(it.Key()) == string(skip) {
			continue
		}
		if newest != nil {
			return newest, true, nil
		}
		newest = new(Manifest)
		if err := json.Unmarshal(it.Value(), newest); err != nil {
			return nil, false, wrapf(err, "decode version %s/%s", kv.bucket, kv.key)
		}
	}
	if err := it.Err(); err != nil {
		return nil, false, wrapf(err, "read versions %s/%s", kv.bucket, kv.key)
	}
	if newest == nil {
		return kv.pendingNull, false, nil
	}
	return newest, kv.pendingNull != nil, nil
}
