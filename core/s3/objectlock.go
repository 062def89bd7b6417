package s3

import (
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
