package s3

import (
	"context"
	"errors"
)

// What the answers about one version say beyond its manifest: whether it is the
// current version, and how a copy answers a delete marker as its source.

// errCopyFromMarker answers a copy whose source version id names a delete marker, as
// AWS does.
var errCopyFromMarker = Errorf(InvalidRequest, "The source of a copy request may not specifically refer to a delete marker by version id.")

// copySourceError is the error of opening a copy's source as the copy answers it: a
// delete marker named by version id is 400 InvalidRequest, a current version that is
// a marker plain 404 NoSuchKey (a copy's answer carries no marker headers).
func copySourceError(err error) error {
	var marker *MarkerError
	switch {
	case !errors.As(err, &marker):
		return err
	case IsCode(marker.Err, MethodNotAllowed):
		return errCopyFromMarker
	}
	return marker.Err
}

// IsCurrent reports whether the open version is its key's current version, as the
// snapshot it was read from has it: the key's current record holds that version (a
// GET by version id of a noncurrent version must not be answered as the current
// one, e.g. with x-amz-expiration).
func (o *Object) IsCurrent() bool {
	if o.snap == nil {
		return false
	}
	cur, err := o.s.manifest(o.snap.Get, o.bucket, o.objectKey)
	return err == nil && cur.VersionID == o.Manifest.VersionID && cur.UUID == o.Manifest.UUID
}

// TaggingAnswer is what a tagging request of one version of an object answers with.
type TaggingAnswer struct {
	// Tags are the version's tags (what a GET answers).
	Tags []Tag
	// VersionID is the version's id (stored form: "" is the null version).
	VersionID string
}

// GetVersionTagging returns the tags of version id of the object ("" is the current
// version) and which version that is: s3:GetObjectTagging (s3:GetObjectVersionTagging
// for a version id) in the bucket policy, else READ on the object. A missing key or
// version is hidden from a requester who may not list the bucket (hideMissing).
func (s *Service) GetVersionTagging(ctx context.Context, r Requester, bucket, key, id string) (TaggingAnswer, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return TaggingAnswer{}, err
	}
	if err := checkKey(key); err != nil {
		return TaggingAnswer{}, err
	}
	action := ActionGetObjectTagging
	var m *Manifest
	if id == "" {
		m, err = s.manifest(s.db.Get, bucket, key)
	} else {
		action = ActionGetObjectVersionTagging
		m, err = s.versionManifest(s.db.Get, b, key, id)
	}
	if err != nil {
		return TaggingAnswer{}, s.hideMissing(b, r, err)
	}
	if !s.allowedFor(b, &m.ACL, r, action, key, PermRead, tagsOf(m, nil)) {
		return TaggingAnswer{}, errAccessDenied
	}
	return TaggingAnswer{Tags: m.Tags, VersionID: m.VersionID}, nil
}

// PutVersionTagging replaces the tags of version id of the object ("" is the
// current version; see SetObjectTagging, s3:PutObjectVersionTagging for a version
// id) and says which version it changed.
func (s *Service) PutVersionTagging(ctx context.Context, r Requester, bucket, key, id string, tags []Tag) (TaggingAnswer, error) {
	if err := CheckObjectTags(tags); err != nil {
		return TaggingAnswer{}, err
	}
	action := ActionPutObjectTagging
	if id != "" {
		action = ActionPutObjectVersionTagging
	}
	v, err := s.retag(ctx, r, bucket, key, id, action, tags)
	return TaggingAnswer{VersionID: v}, err
}

// DeleteVersionTagging removes the tags of version id of the object ("" is the
// current version; see DeleteObjectTagging, s3:DeleteObjectVersionTagging for a
// version id) and says which version it changed.
func (s *Service) DeleteVersionTagging(ctx context.Context, r Requester, bucket, key, id string) (TaggingAnswer, error) {
	action := ActionDeleteObjectTagging
	if id != "" {
		action = ActionDeleteObjectVersionTagging
	}
	v, err := s.retag(ctx, r, bucket, key, id, action, nil)
	return TaggingAnswer{VersionID: v}, err
}
