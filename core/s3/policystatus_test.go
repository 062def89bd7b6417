package s3

import (
	"context"
	"testing"
)

// TestPolicyIsPublic: S3's meaning of a public policy — an Allow for every principal
// that no condition restricts to fixed callers.
func TestPolicyIsPublic(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		effect, principal, cond string
		public                  bool
	}{
		{"Allow *", "Allow", `"*"`, "", true},
		{"Allow AWS *", "Allow", `{"AWS":"*"}`, "", true},
		{"Deny *", "Deny", `"*"`, "", false},
		{"Allow one user", "Allow", `{"AWS":"abc"}`, "", false},
		{"Allow * from one network", "Allow", `"*"`, `{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}`, false},
		{"Allow * from everywhere", "Allow", `"*"`, `{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}`, true},
		{"Allow * except a network", "Allow", `"*"`, `{"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}`, true},
		{"Allow * to one user id", "Allow", `"*"`, `{"StringEquals":{"aws:userid":"123456789012"}}`, false},
		{"Allow * to user ids matching", "Allow", `"*"`, `{"StringLike":{"aws:userid":"12*"}}`, true},
		{"Allow * to one user name, if given", "Allow", `"*"`, `{"StringEqualsIfExists":{"aws:username":"bob"}}`, true},
		{"Allow * over TLS only", "Allow", `"*"`, `{"Bool":{"aws:SecureTransport":"true"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy(policyDoc("b", tc.effect, tc.principal, "s3:GetObject", "/*", tc.cond))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.IsPublic(); got != tc.public {
				t.Fatalf("IsPublic = %v, want %v", got, tc.public)
			}
		})
	}
	var none *Policy
	if none.IsPublic() {
		t.Fatal("no policy is public")
	}
}

// TestBucketPolicyStatus: the owner (and whom the policy allows) reads the status, a
// bucket without a policy is NoSuchBucketPolicy, anyone else AccessDenied.
func TestBucketPolicyStatus(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "pub", "")
	if _, err := s.BucketPolicyStatus(ctx, alice, "pub"); !IsCode(err, NoSuchBucketPolicy) {
		t.Fatalf("no policy: %v", err)
	}
	if err := s.SetBucketPolicy(ctx, alice, "pub", policyDoc("pub", "Allow", `"*"`, "s3:GetObject", "/*", "")); err != nil {
		t.Fatal(err)
	}
	if public, err := s.BucketPolicyStatus(ctx, alice, "pub"); err != nil || !public {
		t.Fatalf("public-read policy: %v %v", public, err)
	}
	if _, err := s.BucketPolicyStatus(ctx, bob, "pub"); !IsCode(err, AccessDenied) {
		t.Fatalf("another user: %v", err)
	}
}
