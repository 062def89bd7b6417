package s3

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// CORSRule is one rule of a bucket's CORS configuration (defined in s3types).
type CORSRule = s3types.CORSRule

// MatchCORS returns the first rule of rules that allows a request from origin with
// method and, for a preflight, every one of headers (nil for an actual request), or nil.
func MatchCORS(rules []CORSRule, origin, method string, headers []string) *CORSRule {
	return s3types.MatchCORS(rules, origin, method, headers)
}

// The limits of a CORS configuration (AWS's).
const (
	// MaxCORSRules bounds the rules of a configuration.
	MaxCORSRules = 100
	// MaxCORSIDLength bounds a rule's ID, in characters.
	MaxCORSIDLength = 255
)

// The S3 actions of CORS (AWS names the delete s3:PutBucketCORS too).
const (
	ActionGetBucketCORS = "s3:GetBucketCORS"
	ActionPutBucketCORS = "s3:PutBucketCORS"
)

// CORSMethods are the methods a CORS rule may allow (and a preflight may ask for).
var CORSMethods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

var errNoSuchCORS = &Error{Code: NoSuchCORSConfiguration, Message: "The CORS configuration does not exist"}

// CheckCORSRules checks a CORS configuration as AWS does: 1 to MaxCORSRules rules
// (400 MalformedXML for none, InvalidRequest for too many), each with at least one
// origin and one method (MalformedXML), methods among GET, PUT, POST, DELETE and HEAD
// (InvalidRequest "Found unsupported HTTP method in CORS config…"), origins and
// allowed headers with at most one "*" each, an ID of at most MaxCORSIDLength
// characters and a MaxAgeSeconds that is not negative (InvalidRequest).
func CheckCORSRules(rules []CORSRule) error {
	switch {
	case len(rules) == 0:
		return &Error{Code: MalformedXML, Message: "The XML you provided was not well-formed or did not validate against our published schema"}
	case len(rules) > MaxCORSRules:
		return Errorf(InvalidRequest, "The number of CORS rules should not exceed allowed limit of %d rules.", MaxCORSRules)
	}
	for i := range rules {
		if err := checkCORSRule(&rules[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkCORSRule checks one rule (see CheckCORSRules).
func checkCORSRule(r *CORSRule) error {
	if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 {
		return &Error{Code: MalformedXML, Message: "The XML you provided was not well-formed or did not validate against our published schema"}
	}
	if len([]rune(r.ID)) > MaxCORSIDLength {
		return Errorf(InvalidRequest, "The ID of a CORS rule can not be longer than %d characters.", MaxCORSIDLength)
	}
	for _, m := range r.AllowedMethods {
		if !slices.Contains(CORSMethods, m) {
			return Errorf(InvalidRequest, "Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
		}
	}
	for _, o := range r.AllowedOrigins {
		if strings.Count(o, "*") > 1 {
			return Errorf(InvalidRequest, "AllowedOrigin %q can not have more than one wildcard.", o)
		}
	}
	for _, h := range r.AllowedHeaders {
		if strings.Count(h, "*") > 1 {
			return Errorf(InvalidRequest, "AllowedHeader %q can not have more than one wildcard.", h)
		}
	}
	if r.HasMaxAge && r.MaxAgeSeconds < 0 {
		return Errorf(InvalidRequest, "MaxAgeSeconds must not be negative.")
	}
	return nil
}

// CORSRules returns the CORS rules of the bucket (nil when it has none), from the
// cached bucket record, without a permission check: preflight requests are anonymous
// and the rules are what every origin is told anyway. A missing bucket is NoSuchBucket.
// The rules must not be changed (they may be the cache's).
func (s *Service) CORSRules(ctx context.Context, bucket string) ([]CORSRule, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return b.CORS, nil
}

// BucketCORS returns the bucket's CORS rules (its owner, or s3:GetBucketCORS in the
// bucket policy); a bucket without them is 404 NoSuchCORSConfiguration.
func (s *Service) BucketCORS(ctx context.Context, r Requester, bucket string) ([]CORSRule, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !ownerOrAllowed(b, r, ActionGetBucketCORS) {
		return nil, errAccessDenied
	}
	if len(b.CORS) == 0 {
		return nil, errNoSuchCORS
	}
	return slices.Clone(b.CORS), nil // b may be the cached record
}

// SetBucketCORS replaces the bucket's CORS rules (its owner, or s3:PutBucketCORS in
// the bucket policy), checked with CheckCORSRules.
func (s *Service) SetBucketCORS(ctx context.Context, r Requester, bucket string, rules []CORSRule) error {
	if err := CheckCORSRules(rules); err != nil {
		return err
	}
	return s.updateBucket(ctx, "set bucket cors "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutBucketCORS) {
			return errAccessDenied
		}
		b.CORS = rules
		return nil
	})
}

// DeleteBucketCORS removes the bucket's CORS rules (its owner, or s3:PutBucketCORS in
// the bucket policy, as AWS names it); a bucket without them is not an error.
func (s *Service) DeleteBucketCORS(ctx context.Context, r Requester, bucket string) error {
	return s.updateBucket(ctx, "delete bucket cors "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutBucketCORS) {
			return errAccessDenied
		}
		if b.CORS == nil {
			return errUnchanged
		}
		b.CORS = nil
		return nil
	})
}
