package s3

import (
	"context"
	"strings"
)

// IsPublic reports whether the policy makes its bucket public as S3 defines it: an
// Allow statement for every principal (Principal "*", or NotPrincipal) that no
// condition restricts to fixed callers. The conditions that restrict are positive
// (not negated, not ...IfExists) tests of who or where the caller is: aws:SourceIp on
// networks narrower than /8 (IPv4) or /32 (IPv6), and exact string tests (no
// wildcard) of aws:userid and aws:username (of the keys AWS counts, the ones Cairn's
// policies accept: the account, VPC and organization keys name nothing here).
func (p *Policy) IsPublic() bool {
	if p == nil {
		return false
	}
	for _, st := range p.statements {
		if st.deny || (!st.everyone && !st.notPrincipal) {
			continue
		}
		if !restricted(st.conds) {
			return true
		}
	}
	return false
}

// restrictingKeys are the condition keys whose fixed values name the callers a
// statement is for (lower case, as conditions keep them).
var restrictingKeys = map[string]bool{CondUserID: true, CondUsername: true}

// restricted reports whether one of conds limits a statement to fixed callers.
func restricted(conds []condition) bool {
	for _, c := range conds {
		if c.op.negate || c.ifExists {
			continue
		}
		switch {
		case c.op.kind == condIP && c.key == "aws:sourceip" && len(c.prefixes) > 0:
			narrow := true
			for _, p := range c.prefixes {
				if (p.Addr().Is4() && p.Bits() < 8) || (!p.Addr().Is4() && p.Bits() < 32) {
					narrow = false
				}
			}
			if narrow {
				return true
			}
		case c.op.kind == condString && restrictingKeys[c.key] && len(c.strs) > 0:
			fixed := true
			for _, v := range c.strs {
				if strings.ContainsAny(v, "*?") {
					fixed = false
				}
			}
			if fixed {
				return true
			}
		}
	}
	return false
}

// BucketPolicyStatus reports whether the bucket's policy makes it public (GET
// ?policyStatus). Its owner may ask, and anyone the policy allows
// s3:GetBucketPolicyStatus; a bucket without a policy is 404 NoSuchBucketPolicy.
func (s *Service) BucketPolicyStatus(ctx context.Context, r Requester, bucket string) (bool, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return false, err
	}
	if !ownsBucket(b, r) && b.policyEffect(r, ActionGetBucketPolicyStatus, "") != EffectAllow {
		return false, errAccessDenied
	}
	if b.Policy == nil {
		return false, errNoSuchPolicy
	}
	return b.Policy.IsPublic(), nil
}
