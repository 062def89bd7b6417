package s3

// The S3 actions a bucket policy names, one per operation.
const (
	ActionGetObject                  = "s3:GetObject"
	ActionPutObject                  = "s3:PutObject"
	ActionDeleteObject               = "s3:DeleteObject"
	ActionGetObjectACL               = "s3:GetObjectAcl"
	ActionPutObjectACL               = "s3:PutObjectAcl"
	ActionListBucket                 = "s3:ListBucket"
	ActionDeleteBucket               = "s3:DeleteBucket"
	ActionGetBucketACL               = "s3:GetBucketAcl"
	ActionPutBucketACL               = "s3:PutBucketAcl"
	ActionGetBucketLocation          = "s3:GetBucketLocation"
	ActionGetBucketPolicy            = "s3:GetBucketPolicy"
	ActionGetBucketPolicyStatus      = "s3:GetBucketPolicyStatus"
	ActionPutBucketPolicy            = "s3:PutBucketPolicy"
	ActionDeleteBucketPolicy         = "s3:DeleteBucketPolicy"
	ActionAbortMultipartUpload       = "s3:AbortMultipartUpload"
	ActionListMultipartUploadParts   = "s3:ListMultipartUploadParts"
	ActionListBucketMultipartUploads = "s3:ListBucketMultipartUploads"
	ActionDeleteBucketTagging        = "s3:DeleteBucketTagging"
)

// Effect is what a bucket policy says about a request.
type Effect int

// The effects: no statement applies, an Allow applies, a Deny applies (which wins).
const (
	EffectNone Effect = iota
	EffectAllow
	EffectDeny
)

// allowed decides whether r may perform action on bucket b (key "") or on its object
// key: the bucket policy first (a Deny refuses, an Allow grants), then the ACL grants
// perm (acl is the object's ACL, or nil for the bucket's).
func (s *Service) allowed(b *Bucket, acl *ACL, r Requester, action, key string, perm Permission) bool {
	return s.allowedFor(b, acl, r, action, key, perm, PolicyTags{})
}

// allowedFor is allowed for a request whose policy conditions may test tags: the
// object's current ones and those the request asks for.
func (s *Service) allowedFor(b *Bucket, acl *ACL, r Requester, action, key string, perm Permission, tags PolicyTags) bool {
	switch b.policyEffectFor(r, action, key, tags) {
	case EffectDeny:
		return false
	case EffectAllow:
		return true
	}
	if acl == nil {
		acl = &b.ACL
	}
	return acl.Allows(r, perm)
}

// denies reports whether the bucket's policy explicitly refuses action to r.
func (b *Bucket) denies(r Requester, action, key string) bool {
	return b.policyEffect(r, action, key) == EffectDeny
}

// policyEffect evaluates the bucket's policy, if it has one.
func (b *Bucket) policyEffect(r Requester, action, key string) Effect {
	return b.policyEffectFor(r, action, key, PolicyTags{})
}

// policyEffectFor evaluates the bucket's policy, if it has one, for a request whose
// conditions may test tags.
func (b *Bucket) policyEffectFor(r Requester, action, key string, tags PolicyTags) Effect {
	if b.Policy == nil {
		return EffectNone
	}
	return b.Policy.Evaluate(PolicyRequest{Requester: r, Action: action, Bucket: b.Name, Key: key, Tags: tags})
}
