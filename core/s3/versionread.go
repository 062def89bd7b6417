package s3

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/cairnkv/cairn/core/storage"
)

// Reads and in-place changes (ACL, tags) of one version of an object.

// errMarkerMethod is what a request for a delete marker's data, ACL or tags answers
// (AWS's 405, with the marker's headers: see MarkerError).
var errMarkerMethod = Errorf(MethodNotAllowed, "The specified method is not allowed against this resource.")

// readAction is the policy action of reading an object (perm READ) or its ACL
// (READ_ACP): s3:GetObject / s3:GetObjectAcl, or their Version forms when the request
// names a version id.
func readAction(perm Permission, id string) string {
	switch {
	case perm == PermReadACP && id != "":
		return ActionGetObjectVersionACL
	case perm == PermReadACP:
		return ActionGetObjectACL
	case id != "":
		return ActionGetObjectVersion
	}
	return ActionGetObject
}

// versionManifest reads version id (client form; "" is the current version) of
// bucket b's key through get. A current version that is a delete marker is a
// MarkerError wrapping NoSuchKey; a version id that is a delete marker, a MarkerError
// wrapping MethodNotAllowed; an unknown version, NoSuchVersion.
func (s *Service) versionManifest(get getter, b *Bucket, key, id string) (*Manifest, error) {
	if id == "" {
		m, err := s.manifest(get, b.Name, key)
		if IsCode(err, NoSuchKey) && b.Versioning != "" {
			return nil, s.markerOrMissing(b.Name, key)
		}
		return m, err
	}
	m, err := s.storedVersion(get, b.Name, key, id)
	if err != nil {
		return nil, err
	}
	if m.DeleteMarker {
		return nil, &MarkerError{Err: errMarkerMethod, VersionID: externalID(m.VersionID), LastModified: m.LastModified}
	}
	return m, nil
}

// storedVersion reads version id (client form, not "") of bucket/key through get,
// delete markers included: NoSuchVersion if absent.
func (s *Service) storedVersion(get getter, bucket, key, id string) (*Manifest, error) {
	if err := CheckVersionID(id); err != nil {
		return nil, err
	}
	var head versionHead
	v, err := get(headKey(bucket, key))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// No versions table: the current record is the only version, the null one.
		m, err := s.manifest(get, bucket, key)
		if IsCode(err, NoSuchKey) || err == nil && (id != NullVersionID || m.VersionID != "") {
			return nil, errNoSuchVersion
		}
		return m, err
	case err != nil:
		return nil, wrapf(err, "read version head %s/%s", bucket, key)
	}
	if err := json.Unmarshal(v, &head); err != nil {
		return nil, wrapf(err, "decode version head %s/%s", bucket, key)
	}
	slotID := id
	if id == NullVersionID {
		if slotID = head.Null; slotID == "" {
			return nil, errNoSuchVersion
		}
	}
	slot, err := parseSlot(slotID)
	if err != nil {
		return nil, err
	}
	return readManifest(get, versionKey(bucket, key, slot), errNoSuchVersion, bucket, key)
}

// markerOrMissing is the error of a read of bucket/key's current version when it has
// no current record: a MarkerError when its newest version is a delete marker, else
// NoSuchKey.
func (s *Service) markerOrMissing(bucket, key string) error {
	it := s.db.IteratePrefix(keyVersionsPrefix(bucket, key))
	defer it.Release()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return wrapf(err, "read versions %s/%s", bucket, key)
		}
		return errNoSuchKey
	}
	m := new(Manifest)
	if err := json.Unmarshal(it.Value(), m); err != nil {
		return wrapf(err, "decode version %s/%s", bucket, key)
	}
	if !m.DeleteMarker {
		return errNoSuchKey // the current record was just written
	}
	return &MarkerError{Err: errNoSuchKey, VersionID: externalID(m.VersionID), LastModified: m.LastModified}
}

// OpenObjectVersion opens version id of the object ("" is the current one; READ on
// the object, s3:GetObjectVersion in a bucket policy for a version id). The caller
// must Close it.
func (s *Service) OpenObjectVersion(ctx context.Context, r Requester, bucket, key, id string) (*Object, error) {
	return s.openObject(ctx, r, bucket, key, id, PermRead)
}

// ObjectVersionACL returns the ACL of version id of the object ("" is the current
// one; READ_ACP on it).
func (s *Service) ObjectVersionACL(ctx context.Context, r Requester, bucket, key, id string) (ACL, error) {
	m, err := s.readable(ctx, s.db.Get, r, bucket, key, id, PermReadACP)
	if err != nil {
		return ACL{}, err
	}
	return m.ACL.Clone(), nil
}

// SetObjectVersionACL is SetObjectACL for version id ("" is the current version;
// s3:PutObjectVersionAcl in a bucket policy for a version id).
func (s *Service) SetObjectVersionACL(ctx context.Context, r Requester, bucket, key, id string, spec ACLSpec) error {
	action := ActionPutObjectACL
	if id != "" {
		action = ActionPutObjectVersionACL
	}
	return s.changeVersion(ctx, r, bucket, key, id, "set acl", func(b *Bucket, m *Manifest) error {
		if !s.allowedFor(b, &m.ACL, r, action, key, PermWriteACP, tagsOf(m, nil)) {
			return errAccessDenied
		}
		acl, err := spec.Build(m.Owner, b.Owner)
		if err != nil {
			return err
		}
		if acl.Owner.ID != "" && acl.Owner.ID != m.Owner.ID {
			return errAccessDenied
		}
		acl.Owner = m.Owner
		m.ACL = acl
		return nil
	})
}

// ObjectVersionTagging is ObjectTagging for version id ("" is the current version;
// s3:GetObjectVersionTagging in a bucket policy for a version id).
func (s *Service) ObjectVersionTagging(ctx context.Context, r Requester, bucket, key, id string) ([]Tag, error) {
	a, err := s.GetVersionTagging(ctx, r, bucket, key, id)
	return a.Tags, err
}

// SetObjectVersionTagging is SetObjectTagging for version id ("" is the current
// version; s3:PutObjectVersionTagging in a bucket policy for a version id).
func (s *Service) SetObjectVersionTagging(ctx context.Context, r Requester, bucket, key, id string, tags []Tag) error {
	_, err := s.PutVersionTagging(ctx, r, bucket, key, id, tags)
	return err
}

// changeVersion rewrites version id of bucket/key ("" is the current version) in
// place (its ACL, tags or lock), as change leaves it (errUnchanged: left as it is), in
// one conditional commit under the key's lock (what names the change in errors).
// change sees the bucket and the manifest as read in the commit, and decides on
// permission; a missing key or version is NoSuchKey, NoSuchVersion or AccessDenied as
// hideMissing says. Whether the bucket keeps versions is read in the commit too (a
// cached record may predate versioning): in a bucket never versioned only "null"
// names a version, the current one (changeUnversioned); in one whose versioning was
// set, the version record changes and, when it is the current version, the current
// record with it (changeVersioned).
func (s *Service) changeVersion(ctx context.Context, r Requester, bucket, key, id, what string, change func(*Bucket, *Manifest) error) error {
	if id != "" {
		if err := CheckVersionID(id); err != nil {
			return err
		}
	}
	if _, err := s.Bucket(ctx, bucket); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	return s.update(ctx, what+" "+bucket+"/"+key, func(t *txn) error {
		b, err := s.bucketIn(t, bucket)
		if err != nil {
			return err
		}
		if b.Versioning == "" {
			return s.changeUnversioned(t, r, b, key, id, change)
		}
		return s.changeVersioned(t, r, b, key, id, change)
	})
}

// changeUnversioned adds to t the change of b's key, b never versioned: its current
// record, the only version ("" or "null").
func (s *Service) changeUnversioned(t *txn, r Requester, b *Bucket, key, id string, change func(*Bucket, *Manifest) error) error {
	if id != "" && id != NullVersionID {
		return s.hideMissing(b, r, errNoSuchVersion)
	}
	m, err := s.manifest(t.get, b.Name, key)
	if err != nil {
		return s.hideMissing(b, r, err)
	}
	if ok, err := applied(change, b, m); !ok {
		return err
	}
	return putManifest(t, b.Name, key, m)
}

// changeVersioned adds to t the change of version id of b's key, b a bucket whose
// versioning was set.
func (s *Service) changeVersioned(t *txn, r Requester, b *Bucket, key, id string, change func(*Bucket, *Manifest) error) error {
	kv, err := s.loadVersions(t, b.Name, key)
	if err != nil {
		return err
	}
	slot, m, err := kv.find(id)
	if err != nil {
		return s.hideMissing(b, r, err)
	}
	if ok, err := applied(change, b, m); !ok {
		return err
	}
	return kv.put(slot, m)
}

// applied runs change on m (of bucket b) and reports whether m is to be written: not
// when change says errUnchanged (no error then) or fails (its error).
func applied(change func(*Bucket, *Manifest) error, b *Bucket, m *Manifest) (bool, error) {
	err := change(b, m)
	if errors.Is(err, errUnchanged) {
		return false, nil
	}
	return err == nil, err
}

// find returns the slot and manifest of version id (client form; "" is the current
// version): NoSuchKey without a current version, NoSuchVersion for an unknown id, a
// MarkerError (405) for a delete marker.
func (kv *keyVersions) find(id string) (versionSlot, *Manifest, error) {
	if id == "" && kv.cur == nil {
		return versionSlot{}, nil, errNoSuchKey
	}
	slot, m, err := kv.lookup(id)
	if err != nil {
		return slot, nil, err
	}
	switch {
	case m == nil:
		return slot, nil, errNoSuchVersion
	case m.DeleteMarker:
		return slot, nil, &MarkerError{Err: errMarkerMethod, VersionID: externalID(m.VersionID), LastModified: m.LastModified}
	}
	return slot, m, nil
}

// lookup returns the slot and record of version id (client form; "" is the current
// version, "null" the null version), a delete marker included, or a nil record when
// the key has no such version.
func (kv *keyVersions) lookup(id string) (versionSlot, *Manifest, error) {
	if !kv.hasHead {
		return versionSlot{}, nil, nil // no versions at all (nor a current record)
	}
	stored := id
	switch id {
	case "":
		if kv.cur == nil {
			return versionSlot{}, nil, nil
		}
		stored = kv.cur.VersionID
	case NullVersionID:
		stored = ""
	}
	slot, ok, err := kv.slotOf(stored)
	if err != nil || !ok {
		return slot, nil, err
	}
	m, err := kv.read(slot)
	return slot, m, err
}
