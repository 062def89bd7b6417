package s3api

import (
	"context"
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

// serveBucketObjectLock answers GET and PUT /{bucket}?object-lock; other methods are
// 405.
func (c *call) serveBucketObjectLock() {
	svc := c.a.svc
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			cfg, err := svc.ObjectLockConfiguration(ctx, c.who, c.bucket)
			return s3xml.MarshalObjectLockConfiguration(cfg), err
		},
		put: func(ctx context.Context) error {
			body, err := c.readCheckedBody(s3xml.MaxObjectLockBody)
			if err != nil {
				return err
			}
			cfg, err := s3xml.ParseObjectLockConfiguration(body)
			if err != nil {
				return err
			}
			return svc.SetObjectLockConfiguration(ctx, c.who, c.bucket, cfg)
		},
	})
}

// serveObjectRetention answers GET and PUT /{bucket}/{key}?retention (with
// ?versionId); other methods are 405.
func (c *call) serveObjectRetention() {
	svc := c.a.svc
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			r, err := svc.ObjectRetention(ctx, c.who, c.bucket, c.key, id)
			return s3xml.MarshalRetention(r), err
		},
		put: func(ctx context.Context) error {
			body, err := c.readCheckedBody(s3xml.MaxObjectLockBody)
			if err != nil {
				return err
			}
			r, err := s3xml.ParseRetention(body)
			if err != nil {
				return err
			}
			return svc.SetObjectRetention(ctx, c.who, c.bucket, c.key, id, r, c.bypassGovernance())
		},
	})
}

// serveObjectLegalHold answers GET and PUT /{bucket}/{key}?legal-hold (with
// ?versionId); other methods are 405.
func (c *call) serveObjectLegalHold() {
	svc := c.a.svc
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			on, err := svc.ObjectLegalHold(ctx, c.who, c.bucket, c.key, id)
			return s3xml.MarshalLegalHold(on), err
		},
		put: func(ctx context.Context) error {
			body, err := c.readCheckedBody(s3xml.MaxObjectLockBody)
			if err != nil {
				return err
			}
			on, err := s3xml.ParseLegalHold(body)
			if err != nil {
				return err
			}
			return svc.SetObjectLegalHold(ctx, c.who, c.bucket, c.key, id, on)
		},
	})
}

// setLockHeaders sets, on a GET or HEAD of version m, its Object Lock:
// x-amz-object-lock-mode and -retain-until-date when it has a retention and the
// requester may read it (s3:GetObjectRetention), x-amz-object-lock-legal-hold when it
// is under a hold and the requester may read that (s3:GetObjectLegalHold), as AWS.
func (c *call) setLockHeaders(m *s3.Manifest) {
	if m.Retention == nil && !m.LegalHold {
		return
	}
	seeRetention, seeHold := c.a.svc.LockVisibility(c.r.Context(), c.who, c.bucket, c.key)
	h := c.w.Header()
	if m.Retention != nil && seeRetention {
		h[c.names.prefix+"object-lock-mode"] = []string{m.Retention.Mode}
		h[c.names.prefix+"object-lock-retain-until-date"] = []string{s3xml.FormatLockDate(m.Retention.Until)}
	}
	if m.LegalHold && seeHold {
		h[c.names.prefix+"object-lock-legal-hold"] = []string{"ON"}
	}
}

// objectLockEnabled reads CreateBucket's x-amz-bucket-object-lock-enabled: "true"
// (any case) asks for Object Lock; "false" or absent does not; anything else is 400
// InvalidArgument.
func (c *call) objectLockEnabled() (bool, error) {
	v, ok := c.headerPresent("Bucket-Object-Lock-Enabled")
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, s3.Errorf(s3.InvalidArgument, "x-amz-bucket-object-lock-enabled must be true or false")
}
