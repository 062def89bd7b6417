package s3

import "github.com/cairnkv/cairn/core/s3/s3types"

// The ACL vocabulary is defined in s3types (shared with the wire packages); these
// aliases keep its names in this package.

// Permission is an ACL permission.
type Permission = s3types.Permission

// The permissions of an ACL grant.
const (
	PermRead        = s3types.PermRead
	PermWrite       = s3types.PermWrite
	PermReadACP     = s3types.PermReadACP
	PermWriteACP    = s3types.PermWriteACP
	PermFullControl = s3types.PermFullControl
)

// ValidPermission reports whether p is one of the five permissions.
func ValidPermission(p Permission) bool { return s3types.ValidPermission(p) }

// Grantee types (s3types.GranteeCanonicalUser, s3types.GranteeGroup).
const (
	GranteeCanonicalUser = s3types.GranteeCanonicalUser
	GranteeGroup         = s3types.GranteeGroup
)

// The predefined groups.
const (
	GroupAllUsers           = s3types.GroupAllUsers
	GroupAuthenticatedUsers = s3types.GroupAuthenticatedUsers
	GroupLogDelivery        = s3types.GroupLogDelivery
)

// ValidGroup reports whether uri names a predefined group.
func ValidGroup(uri string) bool { return s3types.ValidGroup(uri) }

// Owner identifies the owner of a bucket or object (or a canonical-user grantee).
type Owner = s3types.Owner

// Grantee is who a grant is for: a canonical user or a group.
type Grantee = s3types.Grantee

// Grant gives one permission to one grantee.
type Grant = s3types.Grant

// ACL is an access control policy: the owner and the grants, in the order given.
type ACL = s3types.ACL

// Requester is who makes a request: a user or, when Anonymous, nobody in particular.
type Requester = s3types.Requester

// AnonymousRequester is the requester of an unsigned request.
var AnonymousRequester = s3types.AnonymousRequester

// OwnerKeepsACP reports whether r, as the owner, keeps perm (READ_ACP or WRITE_ACP)
// whatever the ACL says (s3types.OwnerKeepsACP).
func OwnerKeepsACP(owner Owner, r Requester, perm Permission) bool {
	return s3types.OwnerKeepsACP(owner, r, perm)
}

// Canned ACL names (x-amz-acl / x-obj-acl).
const (
	CannedPrivate                = "private"
	CannedPublicRead             = "public-read"
	CannedPublicReadWrite        = "public-read-write"
	CannedAuthenticatedRead      = "authenticated-read"
	CannedBucketOwnerRead        = "bucket-owner-read"
	CannedBucketOwnerFullControl = "bucket-owner-full-control"
	CannedLogDeliveryWrite       = "log-delivery-write"
	CannedAWSExecRead            = "aws-exec-read"
)

// awsExecReadID is the canonical id AWS grants READ to under aws-exec-read.
const awsExecReadID = "6aa5a366c34c1cbe25dc49211496e913e0351eb0e8c37aa3477e40942ec6b97c"

// CannedACL builds the ACL a canned name stands for: owner gets FULL_CONTROL, plus the
// canned grants. bucketOwner is the owner of the bucket (for bucket-owner-read and
// bucket-owner-full-control on objects; pass the owner itself for buckets). An unknown
// name is InvalidArgument.
func CannedACL(name string, owner, bucketOwner Owner) (ACL, error) {
	acl := ACL{Owner: owner, Grants: []Grant{userGrant(owner, PermFullControl)}}
	group := func(uri string, p Permission) {
		acl.Grants = append(acl.Grants, Grant{Grantee: Grantee{Type: GranteeGroup, URI: uri}, Permission: p})
	}
	switch name {
	case "", CannedPrivate:
	case CannedPublicRead:
		group(GroupAllUsers, PermRead)
	case CannedPublicReadWrite:
		group(GroupAllUsers, PermRead)
		group(GroupAllUsers, PermWrite)
	case CannedAuthenticatedRead:
		group(GroupAuthenticatedUsers, PermRead)
	case CannedBucketOwnerRead:
		if bucketOwner.ID != owner.ID {
			acl.Grants = append(acl.Grants, userGrant(bucketOwner, PermRead))
		}
	case CannedBucketOwnerFullControl:
		if bucketOwner.ID != owner.ID {
			acl.Grants = append(acl.Grants, userGrant(bucketOwner, PermFullControl))
		}
	case CannedLogDeliveryWrite:
		group(GroupLogDelivery, PermWrite)
		group(GroupLogDelivery, PermReadACP)
	case CannedAWSExecRead:
		acl.Grants = append(acl.Grants, Grant{Grantee: Grantee{Type: GranteeCanonicalUser, ID: awsExecReadID, DisplayName: "za-team"}, Permission: PermRead})
	default:
		return ACL{}, Errorf(InvalidArgument, "Invalid canned ACL %q", name)
	}
	return acl, nil
}

func userGrant(o Owner, p Permission) Grant {
	return Grant{Grantee: Grantee{Type: GranteeCanonicalUser, ID: o.ID, DisplayName: o.DisplayName}, Permission: p}
}

// ACLSpec is the ACL a request asks for: an explicit ACL (an access control policy
// document or grant headers), or the name of a canned ACL, which can only be built once
// the resource's owner and its bucket's owner are known.
type ACLSpec struct {
	ACL    *ACL
	Canned string
}

// Build returns the ACL for a resource owned by owner in a bucket owned by
// bucketOwner: a copy of the explicit ACL (its Owner as given, for the caller to check),
// or the canned ACL (InvalidArgument for an unknown name).
func (sp ACLSpec) Build(owner, bucketOwner Owner) (ACL, error) {
	if sp.ACL != nil {
		return sp.ACL.Clone(), nil
	}
	return CannedACL(sp.Canned, owner, bucketOwner)
}
