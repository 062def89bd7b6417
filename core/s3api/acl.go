package s3api

import (
	"context"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// resolver looks grantees up for the XML package: canonical ids and e-mail addresses.
type resolver struct {
	ctx context.Context
	svc *s3.Service
}

func (r resolver) UserByID(id string) (s3.Owner, error) {
	u, err := r.svc.UserByID(r.ctx, id)
	if s3.IsCode(err, s3.NoSuchUser) {
		return s3.Owner{}, s3xml.ErrUnknownUser
	}
	if err != nil {
		return s3.Owner{}, err
	}
	return u.Owner(), nil
}

func (r resolver) UserByEmail(email string) (s3.Owner, error) {
	u, err := r.svc.UserByEmail(r.ctx, email)
	if s3.IsCode(err, s3.NoSuchUser) {
		return s3.Owner{}, s3xml.ErrUnknownUser
	}
	if err != nil {
		return s3.Owner{}, err
	}
	return u.Owner(), nil
}

func (c *call) resolver() resolver { return resolver{ctx: c.r.Context(), svc: c.a.svc} }

// grantHeaders reports whether the request carries any x-amz-grant-* (x-obj-grant-*)
// header.
func (c *call) grantHeaders() bool {
	for name := range c.r.Header {
		l := strings.ToLower(name)
		if strings.HasPrefix(l, "x-amz-grant-") || strings.HasPrefix(l, "x-obj-grant-") {
			return true
		}
	}
	return false
}

// headerGetter gives the XML package the values of one header, by exact name (it asks
// for the x-amz- and the x-obj- spelling itself).
func (c *call) headerGetter(name string) []string { return c.r.Header.Values(name) }

// aclFromHeaders builds the ACL a create or write asks for: the canned ACL header, or
// the grant headers, not both (400 InvalidRequest); neither gives private.
func (c *call) aclFromHeaders(owner, bucketOwner s3.Owner) (s3.ACL, error) {
	canned := c.header("Acl")
	if c.grantHeaders() {
		if canned != "" {
			return s3.ACL{}, s3.Errorf(s3.InvalidRequest, "Specifying both Canned ACLs and Header Grants is not allowed")
		}
		acl, _, err := s3xml.ParseGrantHeaders(c.headerGetter, owner, c.resolver())
		return acl, err
	}
	return s3.CannedACL(canned, owner, bucketOwner)
}

// aclFromRequest builds the ACL of a PUT ?acl: from the XML body, or from the headers,
// not both. owners returns the resource's owner and its bucket's owner (for canned
// ACLs and grant headers).
func (c *call) aclFromRequest(owners func() (owner, bucketOwner s3.Owner, err error)) (s3.ACL, error) {
	body, err := c.readXMLBody()
	if err != nil {
		return s3.ACL{}, err
	}
	hasHeaders := c.header("Acl") != "" || c.grantHeaders()
	if len(strings.TrimSpace(string(body))) > 0 {
		if hasHeaders {
			return s3.ACL{}, s3.Errorf(s3.InvalidRequest, "Specifying both an ACL document and ACL headers is not allowed")
		}
		return s3xml.ParseACL(body, c.resolver())
	}
	if !hasHeaders {
		return s3.ACL{}, s3.Errorf(s3.MalformedACLError, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	owner, bucketOwner, err := owners()
	if err != nil {
		return s3.ACL{}, err
	}
	return c.aclFromHeaders(owner, bucketOwner)
}
