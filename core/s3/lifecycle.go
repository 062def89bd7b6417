package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Lifecycle is a bucket's lifecycle configuration (defined in s3types).
type Lifecycle = s3types.Lifecycle

// LifecycleRule is one rule of a lifecycle configuration (defined in s3types).
type LifecycleRule = s3types.LifecycleRule

// The limits of a lifecycle configuration, as AWS sets them.
const (
	// MaxLifecycleRules bounds the rules of one configuration.
	MaxLifecycleRules = 1000
	// MaxLifecycleRuleID bounds a rule's ID, in characters.
	MaxLifecycleRuleID = 255
	// MaxNewerNoncurrentVersions bounds NewerNoncurrentVersions.
	MaxNewerNoncurrentVersions = 100
)

// DefaultLifecycleDay is Config.LifecycleDay's default: the day of AWS's rules.
const DefaultLifecycleDay = 24 * time.Hour

// The S3 actions of lifecycle configuration (AWS has no separate delete action: DELETE
// ?lifecycle is s3:PutLifecycleConfiguration).
const (
	ActionGetLifecycleConfiguration = "s3:GetLifecycleConfiguration"
	ActionPutLifecycleConfiguration = "s3:PutLifecycleConfiguration"
)

var errNoSuchLifecycle = &Error{Code: s3types.NoSuchLifecycleConfiguration,
	Message: "The lifecycle configuration does not exist"}

// BucketLifecycle returns the bucket's lifecycle configuration (its owner, or
// s3:GetLifecycleConfiguration in the bucket policy); a bucket without one is 404
// NoSuchLifecycleConfiguration.
func (s *Service) BucketLifecycle(ctx context.Context, r Requester, bucket string) (*Lifecycle, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !ownerOrAllowed(b, r, ActionGetLifecycleConfiguration) {
		return nil, errAccessDenied
	}
	if b.Lifecycle == nil {
		return nil, errNoSuchLifecycle
	}
	return b.Lifecycle, nil // never changed in place: a new PUT stores a new one
}

// SetBucketLifecycle replaces the bucket's lifecycle configuration (its owner, or
// s3:PutLifecycleConfiguration in the bucket policy) after checking it
// (CheckLifecycle); a rule without an ID gets a random one, as AWS gives.
func (s *Service) SetBucketLifecycle(ctx context.Context, r Requester, bucket string, lc *Lifecycle) error {
	for i := range lc.Rules {
		if lc.Rules[i].ID == "" {
			lc.Rules[i].ID = randomRuleID()
		}
	}
	if err := CheckLifecycle(lc); err != nil {
		return err
	}
	return s.updateBucket(ctx, "set bucket lifecycle "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutLifecycleConfiguration) {
			return errAccessDenied
		}
		b.Lifecycle = lc
		return nil
	})
}

// DeleteBucketLifecycle removes the bucket's lifecycle configuration (its owner, or
// s3:PutLifecycleConfiguration in the bucket policy, as AWS asks); a bucket without
// one is not an error.
func (s *Service) DeleteBucketLifecycle(ctx context.Context, r Requester, bucket string) error {
	return s.updateBucket(ctx, "delete bucket lifecycle "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutLifecycleConfiguration) {
			return errAccessDenied
		}
		if b.Lifecycle == nil {
			return errUnchanged
		}
		b.Lifecycle = nil
		return nil
	})
}

// randomRuleID returns a fresh rule ID: 32 random hex digits.
func randomRuleID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// CheckLifecycle checks a lifecycle configuration against AWS's limits, with AWS's
// codes: 1 to MaxLifecycleRules rules (InvalidRequest beyond), IDs of at most
// MaxLifecycleRuleID characters of valid UTF-8 and unique (InvalidArgument), at least
// one action per rule (InvalidRequest), then each rule's filter and actions
// (checkRule).
func CheckLifecycle(lc *Lifecycle) error {
	switch n := len(lc.Rules); {
	case n == 0:
		return Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	case n > MaxLifecycleRules:
		return Errorf(InvalidRequest, "The number of lifecycle rules must not exceed the allowed limit of %d rules", MaxLifecycleRules)
	}
	seen := make(map[string]bool, len(lc.Rules))
	for i := range lc.Rules {
		r := &lc.Rules[i]
		switch {
		case utf8.RuneCountInString(r.ID) > MaxLifecycleRuleID:
			return Errorf(InvalidArgument, "ID length should not exceed allowed limit of %d", MaxLifecycleRuleID)
		case !utf8.ValidString(r.ID):
			return Errorf(InvalidArgument, "The rule ID is not valid UTF-8")
		case seen[r.ID]:
			return Errorf(InvalidArgument, "Rule ID must be unique. Found same ID for more than one rule")
		}
		seen[r.ID] = true
		if err := checkRule(r); err != nil {
			return err
		}
	}
	return nil
}

// checkRule checks one rule's filter (checkFilter) and actions: at least one; a
// positive Days or a Date at midnight UTC; positive NoncurrentDays and
// DaysAfterInitiation; NewerNoncurrentVersions up to MaxNewerNoncurrentVersions; no
// tag or size filter with AbortIncompleteMultipartUpload (an upload has neither) or
// ExpiredObjectDeleteMarker (a delete marker has neither).
func checkRule(r *LifecycleRule) error {
	if r.Expiration == nil && r.NoncurrentExpiration == nil && r.AbortUpload == nil {
		return Errorf(InvalidRequest, "At least one action needs to be specified in a rule")
	}
	if err := checkFilter(&r.Filter); err != nil {
		return err
	}
	objectOnly := objectOnlyFilter(&r.Filter)
	if e := r.Expiration; e != nil {
		switch {
		case e.DeleteMarker != nil:
			if objectOnly {
				return Errorf(InvalidRequest, "ExpiredObjectDeleteMarker cannot be specified with Tags or object size filters.")
			}
		case !e.Date.IsZero():
			if !e.Date.Equal(e.Date.Truncate(24 * time.Hour)) {
				return Errorf(InvalidArgument, "'Date' must be at midnight GMT")
			}
		case e.Days < 1:
			return Errorf(InvalidArgument, "'Days' for Expiration action must be a positive integer")
		}
	}
	if n := r.NoncurrentExpiration; n != nil {
		if n.NoncurrentDays < 1 {
			return Errorf(InvalidArgument, "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		if n.NewerVersions < 0 || n.NewerVersions > MaxNewerNoncurrentVersions {
			return Errorf(InvalidArgument, "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to %d", MaxNewerNoncurrentVersions)
		}
	}
	if a := r.AbortUpload; a != nil {
		if a.DaysAfterInitiation < 1 {
			return Errorf(InvalidArgument, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		if objectOnly {
			return Errorf(InvalidRequest, "AbortIncompleteMultipartUpload cannot be specified with Tags or object size filters.")
		}
	}
	return nil
}

// checkFilter checks a rule's filter: a prefix no longer than a key, at most
// MaxObjectTags tags (an object has no more) each valid as a tag (checkTags), sizes
// not negative and a range that is not empty.
func checkFilter(f *s3types.LifecycleFilter) error {
	if len(f.Prefix) > MaxKeyLength {
		return Errorf(InvalidArgument, "The prefix is longer than the longest key (%d bytes)", MaxKeyLength)
	}
	if len(f.Tags) > MaxObjectTags {
		return Errorf(InvalidArgument, "A filter cannot name more than %d tags", MaxObjectTags)
	}
	if err := checkTags(f.Tags); err != nil {
		return err
	}
	gt, lt := f.SizeGreaterThan, f.SizeLessThan
	switch {
	case gt != nil && *gt < 0, lt != nil && *lt < 0:
		return Errorf(InvalidArgument, "'ObjectSizeGreaterThan' and 'ObjectSizeLessThan' must be non-negative integers")
	case gt != nil && lt != nil && *gt >= *lt:
		return Errorf(InvalidArgument, "'ObjectSizeGreaterThan' must be less than 'ObjectSizeLessThan'")
	}
	return nil
}

// objectOnlyFilter reports whether f has a tag or size condition, which only an
// object meets: never an upload or a delete marker.
func objectOnlyFilter(f *s3types.LifecycleFilter) bool {
	return len(f.Tags) > 0 || f.SizeGreaterThan != nil || f.SizeLessThan != nil
}

// filterMatches reports whether an object (key, size, tags) meets every condition of
// f.
func filterMatches(f *s3types.LifecycleFilter, key string, size int64, tags []Tag) bool {
	if !strings.HasPrefix(key, f.Prefix) {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(tags, t) {
			return false
		}
	}
	if gt := f.SizeGreaterThan; gt != nil && size <= *gt {
		return false
	}
	if lt := f.SizeLessThan; lt != nil && size >= *lt {
		return false
	}
	return true
}

// dueAfter returns when something made at t is due under a rule of days lifecycle
// days: t plus days days, rounded up to the next multiple of day since the Unix epoch
// (the next midnight UTC for a 24-hour day, as AWS rounds). ok is false when that is
// beyond what a time.Time in nanoseconds holds (never, in practice).
func dueAfter(t time.Time, days int, day time.Duration) (time.Time, bool) {
	n, d := max(t.UnixNano(), 0), int64(day)
	if days < 1 || d <= 0 || int64(days) > (math.MaxInt64-n)/d-1 {
		return time.Time{}, false
	}
	n += int64(days) * d
	if r := n % d; r != 0 {
		n += d - r
	}
	return time.Unix(0, n).UTC(), true
}

// ObjectExpiry returns when the enabled rules of lc expire an object that is current
// (key, size, tags, last modified at modified) and the ID of the rule that does, the
// earliest of them (the first in order among equals); ok is false when no rule expires
// it. day is the length of a lifecycle day (Config.LifecycleDay).
func ObjectExpiry(lc *Lifecycle, key string, size int64, tags []Tag, modified time.Time, day time.Duration) (at time.Time, ruleID string, ok bool) {
	if lc == nil {
		return time.Time{}, "", false
	}
	for i := range lc.Rules {
		r := &lc.Rules[i]
		e := r.Expiration
		if !r.Enabled || e == nil || e.DeleteMarker != nil || !filterMatches(&r.Filter, key, size, tags) {
			continue
		}
		t, due := e.Date, !e.Date.IsZero()
		if !due {
			t, due = dueAfter(modified, e.Days, day)
		}
		if due && (!ok || t.Before(at)) {
			at, ruleID, ok = t, r.ID, true
		}
	}
	return at, ruleID, ok
}

// ManifestExpiry is ObjectExpiry for the current version m of key in bucket b, with
// the service's lifecycle day: what x-amz-expiration says on GET, HEAD, PUT and a
// multipart completion. A manifest without a time (a retried completion's answer) has
// none.
func (s *Service) ManifestExpiry(b *Bucket, key string, m *Manifest) (time.Time, string, bool) {
	if b == nil || b.Lifecycle == nil || m == nil || m.LastModified.IsZero() {
		return time.Time{}, "", false
	}
	return ObjectExpiry(b.Lifecycle, key, m.Size, m.Tags, m.LastModified, s.lifecycleDay())
}

// uploadAbortAt returns when the enabled rules of lc abort an upload of key initiated
// at initiated, the earliest of them; ok is false when none does.
func uploadAbortAt(lc *Lifecycle, key string, initiated time.Time, day time.Duration) (at time.Time, ok bool) {
	if lc == nil {
		return time.Time{}, false
	}
	for i := range lc.Rules {
		r := &lc.Rules[i]
		if !r.Enabled || r.AbortUpload == nil || !strings.HasPrefix(key, r.Filter.Prefix) {
			continue
		}
		if t, due := dueAfter(initiated, r.AbortUpload.DaysAfterInitiation, day); due && (!ok || t.Before(at)) {
			at, ok = t, true
		}
	}
	return at, ok
}

// lifecycleDay is the length of a lifecycle day (Config.LifecycleDay).
func (s *Service) lifecycleDay() time.Duration {
	if s.cfg.LifecycleDay > 0 {
		return s.cfg.LifecycleDay
	}
	return DefaultLifecycleDay
}
