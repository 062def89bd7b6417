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

// aclFromHeaders reads the ACL a create or write asks for: the canned ACL header, or
// the grant headers, not both (400 InvalidRequest); neither asks for private. An
// unknown canned name is 400 InvalidArgument, found here, before any body is read.
func (c *call) aclFromHeaders() (s3.ACLSpec, error) {
	canned := c.header("Acl")
	if c.grantHeaders() {
		if canned != "" {
			return s3.ACLSpec{}, s3.Errorf(s3.InvalidRequest, "Specifying both Canned ACLs and Header Grants is not allowed")
		}
		acl, _, err := s3xml.ParseGrantHeaders(c.headerGetter, s3.Owner{}, c.resolver())
		return s3.ACLSpec{ACL: &acl}, err
	}
	if _, err := s3.CannedACL(canned, s3.Owner{}, s3.Owner{}); err != nil {
		return s3.ACLSpec{}, err
	}
	return s3.ACLSpec{Canned: canned}, nil
}

// aclFromRequest reads the ACL of a PUT ?acl: from the XML body, or from the headers,
// not both.
func (c *call) aclFromRequest() (s3.ACLSpec, error) {
	body, err := c.readXMLBody()
	if err != nil {
		return s3.ACLSpec{}, err
	}
	hasHeaders := c.header("Acl") != "" || c.grantHeaders()
	if len(strings.TrimSpace(string(body))) > 0 {
		if hasHeaders {
			return s3.ACLSpec{}, s3.Errorf(s3.InvalidRequest, "Specifying both an ACL document and ACL headers is not allowed")
		}
		acl, err := s3xml.ParseACL(body, c.resolver())
		return s3.ACLSpec{ACL: &acl}, err
	}
	if !hasHeaders {
		return s3.ACLSpec{}, s3.Errorf(s3.MalformedACLError, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	return c.aclFromHeaders()
}
