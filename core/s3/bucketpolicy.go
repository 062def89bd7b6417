package s3

import (
	"context"
	"slices"
)

var errNoSuchPolicy = &Error{Code: NoSuchBucketPolicy, Message: "The bucket policy does not exist"}

// ownsBucket reports whether r is b's owner.
func ownsBucket(b *Bucket, r Requester) bool {
	return !r.Anonymous && r.ID != "" && r.ID == b.Owner.ID
}

// BucketPolicy returns the bucket's policy document (compact JSON). The bucket's owner
// may always read it (no Deny can lock the owner out of its policy); anyone else only
// when the policy itself allows s3:GetBucketPolicy and denies it nothing. A bucket
// without a policy is 404 NoSuchBucketPolicy.
func (s *Service) BucketPolicy(ctx context.Context, r Requester, bucket string) ([]byte, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !ownsBucket(b, r) && b.policyEffect(r, ActionGetBucketPolicy, "") != EffectAllow {
		return nil, errAccessDenied
	}
	if b.Policy == nil {
		return nil, errNoSuchPolicy
	}
	return slices.Clone(b.Policy.Document()), nil
}

// SetBucketPolicy parses, checks and stores a policy document on the bucket, replacing
// any previous one. Only the bucket's owner may (a policy cannot grant the right to
// change itself); the document must be a valid policy (at most MaxPolicySize bytes)
// whose resources are all in this bucket, else 400 MalformedPolicy.
func (s *Service) SetBucketPolicy(ctx context.Context, r Requester, bucket string, doc []byte) error {
	return s.updateBucket(ctx, "set bucket policy "+bucket, bucket, func(b *Bucket) error {
		if !ownsBucket(b, r) {
			return errAccessDenied
		}
		p, err := ParsePolicy(doc)
		if err != nil {
			return err
		}
		if err := p.CheckBucket(bucket); err != nil {
			return err
		}
		b.Policy = p
		return nil
	})
}

// DeleteBucketPolicy removes the bucket's policy. Only the bucket's owner may; a bucket
// without a policy is not an error.
func (s *Service) DeleteBucketPolicy(ctx context.Context, r Requester, bucket string) error {
	return s.updateBucket(ctx, "delete bucket policy "+bucket, bucket, func(b *Bucket) error {
		if !ownsBucket(b, r) {
			return errAccessDenied
		}
		if b.Policy == nil {
			return errUnchanged
		}
		b.Policy = nil
		return nil
	})
}
