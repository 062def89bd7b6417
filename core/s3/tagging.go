package s3

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Tag is one object or bucket tag: a key and its value (defined in s3types).
type Tag = s3types.Tag

// The tag limits AWS sets.
const (
	// MaxObjectTags and MaxBucketTags bound the tags of an object and of a bucket.
	MaxObjectTags = 10
	MaxBucketTags = 50
	// MaxTagKeyLength and MaxTagValueLength bound a tag's key (at least one) and value,
	// in Unicode characters.
	MaxTagKeyLength   = 128
	MaxTagValueLength = 256
)

// The S3 actions of tagging.
const (
	ActionGetObjectTagging    = "s3:GetObjectTagging"
	ActionPutObjectTagging    = "s3:PutObjectTagging"
	ActionDeleteObjectTagging = "s3:DeleteObjectTagging"
	ActionGetBucketTagging    = "s3:GetBucketTagging"
	ActionPutBucketTagging    = "s3:PutBucketTagging"
)

var errNoSuchTagSet = &Error{Code: NoSuchTagSet, Message: "The TagSet does not exist"}

// CheckObjectTags checks a tag set for an object: at most MaxObjectTags (400
// BadRequest, as AWS answers) and each tag valid (checkTags).
func CheckObjectTags(tags []Tag) error {
	if len(tags) > MaxObjectTags {
		return Errorf(BadRequest, "Object tags cannot be greater than %d", MaxObjectTags)
	}
	return checkTags(tags)
}

// CheckBucketTags checks a tag set for a bucket: at most MaxBucketTags and each tag
// valid (checkTags); every failure is 400 InvalidTag.
func CheckBucketTags(tags []Tag) error {
	if len(tags) > MaxBucketTags {
		return Errorf(InvalidTag, "Bucket tag count cannot be greater than %d", MaxBucketTags)
	}
	return checkTags(tags)
}

// checkTags checks each tag of a set (400 InvalidTag): a key of 1 to MaxTagKeyLength
// characters, not starting with "aws:" (AWS reserves the prefix) and not repeated, a
// value of at most MaxTagValueLength characters, both valid UTF-8 of characters an XML
// document can carry (a tag GET could not return would be stuck).
func checkTags(tags []Tag) error {
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if err := checkTagText(t.Key, "TagKey", 1, MaxTagKeyLength); err != nil {
			return err
		}
		if err := checkTagText(t.Value, "TagValue", 0, MaxTagValueLength); err != nil {
			return err
		}
		if strings.HasPrefix(strings.ToLower(t.Key), "aws:") {
			return Errorf(InvalidTag, "Your TagKey cannot be prefixed with aws:")
		}
		if seen[t.Key] {
			return Errorf(InvalidTag, "Cannot provide multiple Tags with the same key")
		}
		seen[t.Key] = true
	}
	return nil
}

// checkTagText checks a tag key or value (what names it): valid UTF-8 of XML
// characters, between lo and hi characters long.
func checkTagText(s, what string, lo, hi int) error {
	if !utf8.ValidString(s) {
		return Errorf(InvalidTag, "The %s you have provided is not valid UTF-8", what)
	}
	n := 0
	for _, c := range s {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0xFFFE || c == 0xFFFF {
			return Errorf(InvalidTag, "The %s you have provided contains the character U+%04X, which XML cannot carry", what, c)
		}
		n++
	}
	switch {
	case n < lo:
		return Errorf(InvalidTag, "The %s you have provided is invalid", what)
	case n > hi:
		return Errorf(InvalidTag, "The %s you have provided is too long, max %d", what, hi)
	}
	return nil
}

// ObjectTagging returns the object's tags (s3:GetObjectTagging in the bucket policy,
// else READ on the object).
func (s *Service) ObjectTagging(ctx context.Context, r Requester, bucket, key string) ([]Tag, error) {
	a, err := s.GetVersionTagging(ctx, r, bucket, key, "")
	return a.Tags, err
}

// SetObjectTagging replaces the object's tags (s3:PutObjectTagging in the bucket
// policy, else WRITE on the bucket) in the object's manifest record, committed on
// condition that the record is still as read: atomic with the object, a tagging never
// lands on a version that replaced the one it read.
func (s *Service) SetObjectTagging(ctx context.Context, r Requester, bucket, key string, tags []Tag) error {
	_, err := s.PutVersionTagging(ctx, r, bucket, key, "", tags)
	return err
}

// DeleteObjectTagging removes the object's tags (s3:DeleteObjectTagging in the bucket
// policy, else WRITE on the bucket).
func (s *Service) DeleteObjectTagging(ctx context.Context, r Requester, bucket, key string) error {
	_, err := s.DeleteVersionTagging(ctx, r, bucket, key, "")
	return err
}

// retag sets the tags of bucket/key's version id ("" is the current one) to tags
// (nil: none) and returns that version's id (stored form); allowed by action in the
// bucket policy (conditions see the object's current tags and, for a put, the new
// ones), else by WRITE_ACP on the object, as a change of its ACL: WRITE on the bucket
// must not let a grantee retag another's object (tags can be what a policy's
// s3:ExistingObjectTag condition grants or denies reads by).
func (s *Service) retag(ctx context.Context, r Requester, bucket, key, id, action string, tags []Tag) (string, error) {
	var asked *[]Tag
	if action == ActionPutObjectTagging || action == ActionPutObjectVersionTagging {
		asked = &tags
	}
	if len(tags) == 0 {
		tags = nil
	}
	version := ""
	err := s.changeVersion(ctx, r, bucket, key, id, "set tagging", func(b *Bucket, m *Manifest) error {
		if !s.allowedFor(b, &m.ACL, r, action, key, PermWriteACP, tagsOf(m, asked)) {
			return errAccessDenied
		}
		version = m.VersionID
		if m.Tags == nil && tags == nil {
			return errUnchanged // nothing to remove: no rewrite
		}
		m.Tags = tags
		return nil
	})
	return version, err
}

// tagsOf is what the bucket-policy tag conditions see of a request on the object whose
// manifest is m (nil: none yet): its current tags, and the tags the request asks for
// (nil when it asks for none).
func tagsOf(m *Manifest, asked *[]Tag) PolicyTags {
	var pt PolicyTags
	if m != nil {
		pt.Existing = m.Tags
	}
	if asked != nil {
		pt.Request, pt.HasRequest = *asked, true
	}
	return pt
}

// ownerOrAllowed reports whether r may perform a bucket-owner action on b: the bucket
// policy's Deny refuses and its Allow grants; otherwise only the bucket's owner may.
func ownerOrAllowed(b *Bucket, r Requester, action string) bool {
	switch b.policyEffect(r, action, "") {
	case EffectDeny:
		return false
	case EffectAllow:
		return true
	}
	return ownsBucket(b, r)
}

// BucketTagging returns the bucket's tags (its owner, or s3:GetBucketTagging in the
// bucket policy); a bucket without tags is 404 NoSuchTagSet, as AWS answers.
func (s *Service) BucketTagging(ctx context.Context, r Requester, bucket string) ([]Tag, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !ownerOrAllowed(b, r, ActionGetBucketTagging) {
		return nil, errAccessDenied
	}
	if len(b.Tags) == 0 {
		return nil, errNoSuchTagSet
	}
	return slices.Clone(b.Tags), nil // b may be the cached record
}

// SetBucketTagging replaces the bucket's tags (its owner, or s3:PutBucketTagging in
// the bucket policy); an empty set removes them.
func (s *Service) SetBucketTagging(ctx context.Context, r Requester, bucket string, tags []Tag) error {
	if err := CheckBucketTags(tags); err != nil {
		return err
	}
	return s.updateBucket(ctx, "set bucket tagging "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutBucketTagging) {
			return errAccessDenied
		}
		if len(tags) == 0 {
			tags = nil
		}
		b.Tags = tags
		return nil
	})
}

// DeleteBucketTagging removes the bucket's tags (its owner, or s3:DeleteBucketTagging
// in the bucket policy); a bucket without tags is not an error.
func (s *Service) DeleteBucketTagging(ctx context.Context, r Requester, bucket string) error {
	return s.updateBucket(ctx, "delete bucket tagging "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionDeleteBucketTagging) {
			return errAccessDenied
		}
		if b.Tags == nil {
			return errUnchanged
		}
		b.Tags = nil
		return nil
	})
}
