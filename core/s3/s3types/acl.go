package s3types

import (
	"net/netip"
	"slices"
)

// Permission is an ACL permission.
type Permission string

// The permissions of an ACL grant.
const (
	PermRead        Permission = "READ"
	PermWrite       Permission = "WRITE"
	PermReadACP     Permission = "READ_ACP"
	PermWriteACP    Permission = "WRITE_ACP"
	PermFullControl Permission = "FULL_CONTROL"
)

// ValidPermission reports whether p is one of the five permissions.
func ValidPermission(p Permission) bool {
	switch p {
	case PermRead, PermWrite, PermReadACP, PermWriteACP, PermFullControl:
		return true
	}
	return false
}

// Grantee types. A grant by e-mail address is resolved to CanonicalUser when the ACL is
// set, so stored ACLs hold only these two.
const (
	GranteeCanonicalUser = "CanonicalUser"
	GranteeGroup         = "Group"
)

// The predefined groups.
const (
	GroupAllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	GroupAuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	GroupLogDelivery        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

// ValidGroup reports whether uri names a predefined group.
func ValidGroup(uri string) bool {
	return uri == GroupAllUsers || uri == GroupAuthenticatedUsers || uri == GroupLogDelivery
}

// Owner identifies the owner of a bucket or object (or a canonical-user grantee).
type Owner struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
}

// Grantee is who a grant is for: a canonical user (ID, DisplayName) or a group (URI).
type Grantee struct {
	Type        string `json:"type"`
	ID          string `json:"id,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	URI         string `json:"uri,omitempty"`
}

// Grant gives one permission to one grantee.
type Grant struct {
	Grantee    Grantee    `json:"grantee"`
	Permission Permission `json:"permission"`
}

// ACL is an access control policy: the owner and the grants, in the order they were
// given.
type ACL struct {
	Owner  Owner   `json:"owner"`
	Grants []Grant `json:"grants"`
}

// Requester is who makes a request: a user (ID is the canonical id) or, when Anonymous,
// nobody in particular.
type Requester struct {
	ID          string
	DisplayName string
	Anonymous   bool
	// SourceIP and Secure describe the connection, for bucket-policy conditions
	// (aws:SourceIp, aws:SecureTransport).
	SourceIP netip.Addr
	Secure   bool
	// Keys are the request's values of the other bucket-policy condition keys it
	// carries, by lower-case key name (the Cond* constants: aws:referer,
	// s3:prefix, ...); a key the request does not carry is absent. Nil is no key.
	Keys map[string]string
}

// AnonymousRequester is the requester of an unsigned request.
var AnonymousRequester = Requester{Anonymous: true}

// OwnerKeepsACP is the one rule that keeps an owner in control of its resource
// (AWS's): the owner of a bucket, or of an object, holds READ_ACP and WRITE_ACP on it
// whatever its ACL says, so an owner who granted everything away can still read the
// ACL and put a new one back. It gives nothing else (no READ, WRITE or FULL_CONTROL),
// and nothing to anonymous requesters or to an owner without an id.
func OwnerKeepsACP(owner Owner, r Requester, perm Permission) bool {
	return !r.Anonymous && r.ID != "" && r.ID == owner.ID && (perm == PermReadACP || perm == PermWriteACP)
}

// Allows reports whether the ACL grants perm to r. FULL_CONTROL implies every
// permission; AllUsers matches everyone, AuthenticatedUsers every signed request. The
// owner always holds READ_ACP and WRITE_ACP ([OwnerKeepsACP]); every other access
// comes from grants.
func (a *ACL) Allows(r Requester, perm Permission) bool {
	if OwnerKeepsACP(a.Owner, r, perm) {
		return true
	}
	for _, g := range a.Grants {
		if g.Permission != perm && g.Permission != PermFullControl {
			continue
		}
		switch g.Grantee.Type {
		case GranteeCanonicalUser:
			if !r.Anonymous && g.Grantee.ID == r.ID {
				return true
			}
		case GranteeGroup:
			switch g.Grantee.URI {
			case GroupAllUsers:
				return true
			case GroupAuthenticatedUsers:
				if !r.Anonymous {
					return true
				}
			}
		}
	}
	return false
}

// Clone returns a deep copy.
func (a ACL) Clone() ACL {
	a.Grants = slices.Clone(a.Grants)
	return a
}
