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
	if id == "" {
		return s.ObjectTagging(ctx, r, bucket, key)
	}
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	m, err := s.versionManifest(s.db.Get, b, key, id)
	if err != nil {
		return nil, err
	}
	if !s.allowedFor(b, &m.ACL, r, ActionGetObjectVersionTagging, key, PermRead, tagsOf(m, nil)) {
		return nil, errAccessDenied
	}
	return m.Tags, nil
}

// SetObjectVersionTagging is SetObjectTagging for version id ("" is the current
// version; s3:PutObjectVersionTagging in a bucket policy for a version id).
func (s *Service) SetObjectVersionTagging(ctx context.Context, r Requester, bucket, key, id string, tags []Tag) error {
	if err := CheckObjectTags(tags); err != nil {
		return err
	}
	action := ActionPutObjectTagging
	if id != "" {
		action = ActionPutObjectVersionTagging
	}
	return s.retag(ctx, r, bucket, key, id, action, tags)
}

// DeleteObjectVersionTagging is DeleteObjectTagging for version id ("" is the
// current version; s3:DeleteObjectVersionTagging in a bucket policy for a version id).
func (s *Service) DeleteObjectVersionTagging(ctx context.Context, r Requester, bucket, key, id string) error {
	action := ActionDeleteObjectTagging
	if id != "" {
		action = ActionDeleteObjectVersionTagging
	}
	return s.retag(ctx, r, bucket, key, id, action, nil)
}

// changeVersion is changeManifest for version id of the object ("" is the current
// version): in a bucket never versioned only "null" names a version, the current one.
func (s *Service) changeVersion(ctx context.Context, r Requester, bucket, key, id, what string, change func(*Bucket, *Manifest) error) error {
	if id == "" {
		return s.changeManifest(ctx, r, bucket, key, what, change)
	}
	if err := CheckVersionID(id); err != nil {
		return err
	}
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if b.Versioning == "" {
		if id != NullVersionID {
			return errNoSuchVersion
		}
		return s.changeManifest(ctx, r, bucket, key, what, change)
	}
	return s.changeVersioned(ctx, r, b, key, id, what, change)
}

// changeVersioned is changeVersion in a bucket whose versioning was set: the version
// record and, when it is the current version, the current record change together, in
// one conditional commit under the key's lock.
func (s *Service) changeVersioned(ctx context.Context, r Requester, b *Bucket, key, id, what string, change func(*Bucket, *Manifest) error) error {
	l := s.keyLock(b.Name, key)
	l.Lock()
	defer l.Unlock()
	return s.update(ctx, what+" "+b.Name+"/"+key, func(t *txn) error {
		kv, err := s.loadVersions(t, b.Name, key)
		if err != nil {
			return err
		}
		slot, m, err := kv.find(id)
		if err != nil {
			return s.hideMissing(b, r, err)
		}
		switch err := change(b, m); {
		case errors.Is(err, errUnchanged):
			return nil
		case err != nil:
			return err
		}
		return kv.put(slot, m)
	})
}

// find returns the slot and manifest of version id (client form; "" is the current
// version): NoSuchKey without a current version, NoSuchVersion for an unknown id, a
// MarkerError (405) for a delete marker.
func (kv *keyVersions) find(id string) (versionSlot, *Manifest, error) {
	stored := id
	switch id {
	case "":
		if kv.cur == nil {
			return versionSlot{}, nil, errNoSuchKey
		}
		stored = kv.cur.VersionID
	case NullVersionID:
		stored = ""
	}
	slot, ok, err := kv.slotOf(stored)
	if err != nil {
		return slot, nil, err
	}
	var m *Manifest
	if ok {
		if m, err = kv.read(slot); err != nil {
			return slot, nil, err
		}
	}
	switch {
	case m == nil:
		return slot, nil, errNoSuchVersion
	case m.DeleteMarker:
		return slot, nil, &MarkerError{Err: errMarkerMethod, VersionID: externalID(m.VersionID), LastModified: m.LastModified}
	}
	return slot, m, nil
}
