package s3api

import (
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// lockHeaders reads the Object Lock a write asks for: x-amz-object-lock-mode and
// x-amz-object-lock-retain-until-date (both or neither) and
// x-amz-object-lock-legal-hold (ON or OFF), with AWS's 400 InvalidArgument answers for
// what is malformed. Whether the bucket takes them is the service's to say.
func (c *call) lockHeaders(now time.Time) (s3.LockRequest, error) {
	var lr s3.LockRequest
	mode, hasMode := c.headerPresent("Object-Lock-Mode")
	until, hasUntil := c.headerPresent("Object-Lock-Retain-Until-Date")
	hold, hasHold := c.headerPresent("Object-Lock-Legal-Hold")
	lr.Asked = hasMode || hasUntil || hasHold
	if hasMode != hasUntil {
		return lr, s3.Errorf(s3.InvalidArgument, "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
	}
	if hasMode {
		mode = strings.TrimSpace(mode)
		if mode != s3.LockGovernance && mode != s3.LockCompliance {
			return lr, s3.Errorf(s3.InvalidArgument, "Unknown wormMode directive.")
		}
		t, err := s3xml.ParseLockDate(until)
		if err != nil {
			return lr, s3.Errorf(s3.InvalidArgument, "The retain until date must be provided in ISO 8601 format")
		}
		r := s3.Retention{Mode: mode, Until: t}
		if err := s3.CheckRetention(r, now); err != nil {
			return lr, err
		}
		lr.Retention = &r
	}
	if hasHold {
		switch strings.TrimSpace(hold) {
		case "ON":
			lr.LegalHold = true
		case "OFF":
		default:
			return lr, s3.Errorf(s3.InvalidArgument, "Legal Hold must be either of 'ON' or 'OFF'")
		}
	}
	return lr, nil
}

// bypassGovernance reports whether the request asks to bypass GOVERNANCE retention
// (x-amz-bypass-governance-retention: true); whether it may is the service's to say.
func (c *call) bypassGovernance() bool {
	v, _ := c.headerPresent("Bypass-Governance-Retention")
	return strings.EqualFold(strings.TrimSpace(v), "true")
}
