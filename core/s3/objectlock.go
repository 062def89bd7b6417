package s3

import (
	"context"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// The two retention modes of S3 Object Lock.
const (
	// LockGovernance protects a version until its retain-until date, except from a
	// requester allowed s3:BypassGovernanceRetention who asks for the bypass.
	LockGovernance = "GOVERNANCE"
	// LockCompliance protects a version until its retain-until date from everyone; the
	// date may only be extended.
	LockCompliance = "COMPLIANCE"
)

// The S3 actions of Object Lock.
const (
	ActionPutObjectLockConfiguration = "s3:PutBucketObjectLockConfiguration"
	ActionGetObjectLockConfiguration = "s3:GetBucketObjectLockConfiguration"
	ActionPutObjectRetention         = "s3:PutObjectRetention"
	ActionGetObjectRetention         = "s3:GetObjectRetention"
	ActionPutObjectLegalHold         = "s3:PutObjectLegalHold"
	ActionGetObjectLegalHold         = "s3:GetObjectLegalHold"
	ActionBypassGovernanceRetention  = "s3:BypassGovernanceRetention"
)

// The bounds AWS sets on a default retention period.
const (
	MaxRetentionDays  = 36500
	MaxRetentionYears = 100
)

// ObjectLockConfig is a lock-enabled bucket's Object Lock configuration (defined in
// s3types).
type ObjectLockConfig = s3types.ObjectLockConfig

// Retention is one object version's retention (defined in s3types).
type Retention = s3types.Retention

var (
	errLockMissing = Errorf(InvalidRequest, "Bucket is missing Object Lock Configuration")
	errLocked      = Errorf(AccessDenied, "Access Denied because object protected by object lock.")
	errPastUntil   = Errorf(InvalidArgument, "The retain until date must be in the future!")
)

// validMode reports whether m is one of the two retention modes (case as written: AWS
// refuses "governance").
func validMode(m string) bool { return m == LockGovernance || m == LockCompliance }

// CheckLockConfig checks an Object Lock configuration's default rule: a known mode and
// exactly one positive period within AWS's bounds (400 MalformedXML for both or
// neither, as AWS, and InvalidArgument otherwise). A configuration without a rule
// (Mode "", no period) is valid.
func CheckLockConfig(c ObjectLockConfig) error {
	if c.Mode == "" && c.Days == 0 && c.Years == 0 {
		return nil
	}
	switch {
	case !validMode(c.Mode):
		return Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	case (c.Days != 0) == (c.Years != 0):
		return Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	case c.Days < 0 || c.Years < 0:
		return Errorf(InvalidArgument, "Default retention period must be a positive integer value")
	case c.Days > MaxRetentionDays:
		return Errorf(InvalidArgument, "Default retention period cannot exceed %d days", MaxRetentionDays)
	case c.Years > MaxRetentionYears:
		return Errorf(InvalidArgument, "Default retention period cannot exceed %d years", MaxRetentionYears)
	}
	return nil
}

// defaultRetention returns the retention a new version written at now gets from the
// bucket's default rule c, or nil when the bucket has none.
func defaultRetention(c *ObjectLockConfig, now time.Time) *Retention {
	if c == nil || c.Mode == "" {
		return nil
	}
	return &Retention{Mode: c.Mode, Until: now.AddDate(c.Years, 0, c.Days).UTC()}
}

// CheckRetention checks a retention a request asks for at now: a known mode and a
// retain-until date in the future.
func CheckRetention(r Retention, now time.Time) error {
	if !validMode(r.Mode) {
		return Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if !now.Before(r.Until) {
		return errPastUntil
	}
	return nil
}

// changeRetention decides whether a version's retention may go from old to next (nil:
// removed) at now. A COMPLIANCE retention still in force may only be extended, in the
// same mode; a GOVERNANCE one may be extended or made COMPLIANCE, and shortened or
// removed only with bypass (the request asked for it and may). An expired retention
// no longer protects anything.
func changeRetention(old, next *Retention, now time.Time, bypass bool) error {
	if !old.Active(now) {
		return nil
	}
	weaker := next == nil || next.Until.Before(old.Until)
	switch old.Mode {
	case LockCompliance:
		if weaker || next.Mode != LockCompliance {
			return errLocked
		}
	default:
		if weaker && !bypass {
			return errLocked
		}
	}
	return nil
}

// lockRefusal returns why a version with retention r and legal hold hold may not be
// removed (permanently deleted, or overwritten in place) at now, or nil when it may: a
// legal hold refuses always, a retention in force refuses unless it is GOVERNANCE and
// bypass is true.
func lockRefusal(r *Retention, hold bool, now time.Time, bypass bool) error {
	switch {
	case hold:
		return errLocked
	case !r.Active(now):
		return nil
	case r.Mode == LockGovernance && bypass:
		return nil
	}
	return errLocked
}

// LockRequest is the Object Lock a write asks for in its x-amz-object-lock-* headers.
type LockRequest struct {
	// Retention, when not nil, is the new version's retention (otherwise the bucket's
	// default rule, if any, applies).
	Retention *Retention
	// LegalHold says the new version starts under a legal hold.
	LegalHold bool
	// Asked says the request carried any of the headers: a bucket without Object Lock
	// refuses it.
	Asked bool
}

var (
	errNoLockConfig        = &Error{Code: ObjectLockConfigurationNotFound, Message: "Object Lock configuration does not exist for this bucket"}
	errNoRetention         = &Error{Code: NoSuchObjectLockConfiguration, Message: "The specified object does not have a ObjectLock configuration"}
	errLockNeedsVersioning = Errorf(InvalidBucketState,
		"Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
	errLockKeepsVersioning = Errorf(InvalidBucketState,
		"An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
)

// ownerOrAllowedKey is ownerOrAllowed for an action on one object of the bucket: the
// bucket policy decides when it has a statement for the request, else the bucket's
// owner alone may. Object Lock's actions are never granted by an ACL, as in AWS.
func ownerOrAllowedKey(b *Bucket, r Requester, action, key string) bool {
	switch b.policyEffect(r, action, key) {
	case EffectDeny:
		return false
	case EffectAllow:
		return true
	}
	return ownsBucket(b, r)
}

// mayBypass reports whether a request that asked to bypass GOVERNANCE retention
// (asked) may: s3:BypassGovernanceRetention, the bucket owner's unless the policy
// denies it.
func mayBypass(b *Bucket, r Requester, key string, asked bool) bool {
	return asked && ownerOrAllowedKey(b, r, ActionBypassGovernanceRetention, key)
}

// checkLockRequest checks the Object Lock a write to b/key asks for: only a bucket with
// Object Lock takes one (400 InvalidRequest), and setting a retention or a legal hold
// needs s3:PutObjectRetention or s3:PutObjectLegalHold (the bucket owner's).
func (s *Service) checkLockRequest(b *Bucket, r Requester, key string, lr LockRequest) error {
	if !lr.Asked {
		return nil
	}
	if b.ObjectLock == nil {
		return errLockMissing
	}
	if lr.Retention != nil && !ownerOrAllowedKey(b, r, ActionPutObjectRetention, key) {
		return errAccessDenied
	}
	if lr.LegalHold && !ownerOrAllowedKey(b, r, ActionPutObjectLegalHold, key) {
		return errAccessDenied
	}
	return nil
}

// ObjectLockConfiguration returns a lock-enabled bucket's Object Lock configuration
// (its owner, or s3:GetBucketObjectLockConfiguration in the bucket policy); a bucket
// without Object Lock is 404 ObjectLockConfigurationNotFoundError, as AWS answers.
func (s *Service) ObjectLockConfiguration(ctx context.Context, r Requester, bucket string) (ObjectLockConfig, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return ObjectLockConfig{}, err
	}
	if !ownerOrAllowed(b, r, ActionGetObjectLockConfiguration) {
		return ObjectLockConfig{}, errAccessDenied
	}
	if b.ObjectLock == nil {
		return ObjectLockConfig{}, errNoLockConfig
	}
	return *b.ObjectLock, nil
}

// SetObjectLockConfiguration sets the bucket's Object Lock configuration (its owner,
// or s3:PutBucketObjectLockConfiguration in the bucket policy). A bucket created
// without Object Lock gets it here only while its versioning is Enabled (409
// InvalidBucketState otherwise), and never loses it.
func (s *Service) SetObjectLockConfiguration(ctx context.Context, r Requester, bucket string, c ObjectLockConfig) error {
	if err := CheckLockConfig(c); err != nil {
		return err
	}
	return s.updateBucket(ctx, "set object lock "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutObjectLockConfiguration) {
			return errAccessDenied
		}
		if b.ObjectLock == nil && b.Versioning != VersioningEnabled {
			return errLockNeedsVersioning
		}
		if b.ObjectLock != nil && *b.ObjectLock == c {
			return errUnchanged
		}
		b.ObjectLock = &c
		return nil
	})
}

// lockedBucket returns the bucket of a retention or legal-hold call if r may make it
// (action on key, the bucket owner's: 403 AccessDenied otherwise) and the bucket has
// Object Lock (400 InvalidRequest otherwise), in that order, as AWS: whoever may not
// make the call learns nothing of the bucket's configuration. It checks the key too.
func (s *Service) lockedBucket(ctx context.Context, r Requester, bucket, key, action string) (*Bucket, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if !ownerOrAllowedKey(b, r, action, key) {
		return nil, errAccessDenied
	}
	if b.ObjectLock == nil {
		return nil, errLockMissing
	}
	return b, nil
}

// lockOf returns version id ("" the current one) of the object, if r may see its
// Object Lock by action.
func (s *Service) lockOf(ctx context.Context, r Requester, bucket, key, id, action string) (*Manifest, error) {
	b, err := s.lockedBucket(ctx, r, bucket, key, action)
	if err != nil {
		return nil, err
	}
	m, err := s.versionManifest(s.db.Get, b, key, id) // checks id
	if err != nil {
		return nil, s.hideMissing(b, r, err)
	}
	return m, nil
}

// ObjectRetention returns the retention of version id ("" the current one) of the
// object (s3:GetObjectRetention, the bucket owner's); one without is 404
// NoSuchObjectLockConfiguration.
func (s *Service) ObjectRetention(ctx context.Context, r Requester, bucket, key, id string) (Retention, error) {
	m, err := s.lockOf(ctx, r, bucket, key, id, ActionGetObjectRetention)
	if err != nil {
		return Retention{}, err
	}
	if m.Retention == nil {
		return Retention{}, errNoRetention
	}
	return *m.Retention, nil
}

// ObjectLegalHold reports whether version id ("" the current one) of the object is
// under a legal hold (s3:GetObjectLegalHold, the bucket owner's).
func (s *Service) ObjectLegalHold(ctx context.Context, r Requester, bucket, key, id string) (bool, error) {
	m, err := s.lockOf(ctx, r, bucket, key, id, ActionGetObjectLegalHold)
	if err != nil {
		return false, err
	}
	return m.LegalHold, nil
}

// SetObjectRetention sets (next nil: removes) the retention of version id ("" the
// current one) of the object (s3:PutObjectRetention, the bucket owner's), as
// changeRetention allows: bypass says the request asked to bypass GOVERNANCE
// retention (honoured with s3:BypassGovernanceRetention).
func (s *Service) SetObjectRetention(ctx context.Context, r Requester, bucket, key, id string, next *Retention, bypass bool) error {
	if _, err := s.lockedBucket(ctx, r, bucket, key, ActionPutObjectRetention); err != nil {
		return err
	}
	now := time.Now()
	if next != nil {
		if err := CheckRetention(*next, now); err != nil {
			return err
		}
	}
	return s.changeVersion(ctx, r, bucket, key, id, "set retention", func(b *Bucket, m *Manifest) error {
		if !ownerOrAllowedKey(b, r, ActionPutObjectRetention, key) {
			return errAccessDenied
		}
		if err := changeRetention(m.Retention, next, now, mayBypass(b, r, key, bypass)); err != nil {
			return err
		}
		m.Retention = next
		return nil
	})
}

// SetObjectLegalHold puts version id ("" the current one) of the object under a
// legal hold or lifts it (s3:PutObjectLegalHold, the bucket owner's).
func (s *Service) SetObjectLegalHold(ctx context.Context, r Requester, bucket, key, id string, on bool) error {
	if _, err := s.lockedBucket(ctx, r, bucket, key, ActionPutObjectLegalHold); err != nil {
		return err
	}
	return s.changeVersion(ctx, r, bucket, key, id, "set legal hold", func(b *Bucket, m *Manifest) error {
		if !ownerOrAllowedKey(b, r, ActionPutObjectLegalHold, key) {
			return errAccessDenied
		}
		if m.LegalHold == on {
			return errUnchanged
		}
		m.LegalHold = on
		return nil
	})
}

// checkLock reports, for Check, an Object Lock on version m (what label names) that
// the bucket b could not have given: a retention or legal hold in a bucket without
// Object Lock, on a delete marker, or a retention of an unknown mode.
func checkLock(label string, m *Manifest, b Bucket, bad func(string, ...any)) {
	if m.Retention == nil && !m.LegalHold {
		return
	}
	switch {
	case b.ObjectLock == nil:
		bad("s3: %s: an Object Lock in a bucket without Object Lock", label)
	case m.DeleteMarker:
		bad("s3: %s: a delete marker with an Object Lock", label)
	case m.Retention != nil && !validMode(m.Retention.Mode):
		bad("s3: %s: retention mode %q", label, m.Retention.Mode)
	}
}

// checkBucketLock reports, for Check, a bucket whose Object Lock configuration is
// invalid or whose versioning is not Enabled.
func checkBucketLock(name string, b Bucket, bad func(string, ...any)) {
	if b.ObjectLock == nil {
		return
	}
	if err := CheckLockConfig(*b.ObjectLock); err != nil {
		bad("s3: bucket %s: Object Lock configuration: %v", name, err)
	}
	if b.Versioning != VersioningEnabled {
		bad("s3: bucket %s: Object Lock with versioning %q", name, b.Versioning)
	}
}

// LockVisibility reports whether r may see, on a GET or HEAD of bucket/key, the
// version's retention (s3:GetObjectRetention) and its legal hold
// (s3:GetObjectLegalHold): AWS answers the x-amz-object-lock-* headers only to those.
func (s *Service) LockVisibility(ctx context.Context, r Requester, bucket, key string) (retention, hold bool) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return false, false
	}
	return ownerOrAllowedKey(b, r, ActionGetObjectRetention, key), ownerOrAllowedKey(b, r, ActionGetObjectLegalHold, key)
}
