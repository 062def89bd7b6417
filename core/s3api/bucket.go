package s3api

import (
	"encoding/base64"
	"io"
	"net/http"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// maxXMLBody bounds the XML bodies of bucket configuration and ACL requests.
const maxXMLBody = 1 << 20

// serveService answers requests without a bucket: GET lists the requester's buckets.
func (c *call) serveService() {
	if c.r.Method != http.MethodGet && c.r.Method != http.MethodHead {
		c.methodNotAllowed()
		return
	}
	bs, err := c.a.svc.ListBuckets(c.r.Context(), c.who)
	if err != nil {
		c.fail(err)
		return
	}
	c.writeXML(s3xml.MarshalBuckets(s3.Owner{ID: c.who.ID, DisplayName: c.who.DisplayName}, bs))
}

// serveBucket dispatches the bucket-level requests on method and sub-resource.
func (c *call) serveBucket() {
	if c.refuseUnserved() {
		return
	}
	if c.has("tagging") {
		c.serveBucketTagging()
		return
	}
	if c.has("cors") {
		c.serveBucketCORS()
		return
	}
	if c.has("lifecycle") {
		c.serveBucketLifecycle()
		return
	}
	if c.has("encryption") {
		c.serveBucketEncryption()
		return
	}
	if c.has("object-lock") {
		c.serveBucketObjectLock()
		return
	}
	ctx := c.r.Context()
	switch c.r.Method {
	case http.MethodGet:
		switch {
		case c.has("acl"):
			acl, err := c.a.svc.BucketACL(ctx, c.who, c.bucket)
			if err != nil {
				c.fail(err)
				return
			}
			c.writeXML(s3xml.MarshalACL(acl))
		case c.has("location"):
			loc, err := c.a.svc.BucketLocation(ctx, c.who, c.bucket)
			if err != nil {
				c.fail(err)
				return
			}
			if loc == "us-east-1" {
				loc = "" // S3's answer for the default region, which clients expect
			}
			c.writeXML(s3xml.MarshalLocation(loc))
		case c.has("versioning"):
			c.getBucketVersioning()
		case c.has("versions"):
			c.listVersions()
		case c.has("policyStatus"):
			c.getBucketPolicyStatus()
		case c.has("policy"):
			c.getBucketPolicy()
		case c.has("uploads"):
			c.listUploads()
		default:
			c.listObjects()
		}
	case http.MethodHead:
		if err := c.a.svc.HeadBucket(ctx, c.who, c.bucket); err != nil {
			c.fail(err)
			return
		}
		c.ok()
	case http.MethodPut:
		switch {
		case c.has("policyStatus"):
			c.methodNotAllowed()
		case c.has("acl"):
			c.putBucketACL()
		case c.has("policy"):
			c.putBucketPolicy()
		case c.has("versioning"):
			c.putBucketVersioning()
		default:
			c.createBucket()
		}
	case http.MethodDelete:
		if c.has("policy") && !c.has("policyStatus") {
			c.deleteBucketPolicy()
			return
		}
		if c.hasSubResource() {
			c.methodNotAllowed()
			return
		}
		if err := c.a.svc.DeleteBucket(ctx, c.who, c.bucket); err != nil {
			c.fail(err)
			return
		}
		c.w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		if c.has("delete") {
			c.deleteObjects()
			return
		}
		if !c.hasSubResource() {
			c.postObject() // S3's browser-based form upload
			return
		}
		c.methodNotAllowed()
	default:
		c.methodNotAllowed()
	}
}

// readXMLBody reads a request body of at most maxXMLBody bytes.
func (c *call) readXMLBody() ([]byte, error) {
	httpx.LimitRequestBody(c.w, c.r, maxXMLBody)
	if err := c.checkPayload(); err != nil {
		return nil, err
	}
	return io.ReadAll(c.body())
}

func (c *call) createBucket() {
	if c.who.Anonymous {
		c.fail(&s3.Error{Code: s3.AccessDenied, Message: "Access Denied"})
		return
	}
	body, err := c.readXMLBody()
	if err != nil {
		c.fail(err)
		return
	}
	if _, err := s3xml.ParseCreateBucketConfiguration(body); err != nil {
		c.fail(err)
		return
	}
	owner := s3.Owner{ID: c.who.ID, DisplayName: c.who.DisplayName}
	spec, err := c.aclFromHeaders()
	if err != nil {
		c.fail(err)
		return
	}
	acl, err := spec.Build(owner, owner)
	if err != nil {
		c.fail(err)
		return
	}
	lock, err := c.objectLockEnabled()
	if err != nil {
		c.fail(err)
		return
	}
	if _, err := c.a.svc.CreateBucketWith(c.r.Context(), c.who, c.bucket, acl, s3.BucketOptions{ObjectLock: lock}); err != nil {
		c.fail(err)
		return
	}
	c.w.Header().Set("Location", "/"+c.bucket)
	c.ok()
}

func (c *call) putBucketACL() {
	spec, err := c.aclFromRequest()
	if err != nil {
		c.fail(err)
		return
	}
	if err := c.a.svc.SetBucketACL(c.r.Context(), c.who, c.bucket, spec); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

// listObjects answers GET Bucket, version 1 or (list-type=2) version 2.
func (c *call) listObjects() {
	c.listKeys()
	q := c.query
	opts := s3.ListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter")}
	var encURL bool
	var err error
	if opts.MaxKeys, encURL, err = c.listParams(); err != nil {
		c.fail(err)
		return
	}
	v2 := q.Get("list-type") == "2"
	if lt := q.Get("list-type"); lt != "" && lt != "2" {
		c.fail(s3.Errorf(s3.InvalidArgument, "Invalid List Type specified in Request"))
		return
	}
	var token string
	if v2 {
		opts.After = q.Get("start-after")
		if t, ok := q["continuation-token"]; ok {
			k, err := base64.RawURLEncoding.DecodeString(t[0])
			if err != nil || t[0] == "" {
				c.fail(s3.Errorf(s3.InvalidArgument, "The continuation token provided is incorrect"))
				return
			}
			token = t[0]
			opts.After = max(opts.After, string(k))
		}
	} else {
		opts.After = q.Get("marker")
	}
	l, err := c.a.svc.ListObjects(c.r.Context(), c.who, c.bucket, opts)
	if err != nil {
		c.fail(err)
		return
	}
	if !v2 {
		c.writeXML(s3xml.MarshalListV1(s3xml.ListV1{Bucket: c.bucket, Prefix: opts.Prefix, Marker: q.Get("marker"),
			Delimiter: opts.Delimiter, MaxKeys: opts.MaxKeys, EncodingURL: encURL, Listing: l}))
		return
	}
	next := ""
	if l.Truncated {
		next = base64.RawURLEncoding.EncodeToString([]byte(l.NextMarker))
	}
	c.writeXML(s3xml.MarshalListV2(s3xml.ListV2{Bucket: c.bucket, Prefix: opts.Prefix, Delimiter: opts.Delimiter,
		StartAfter: q.Get("start-after"), ContinuationToken: token, NextContinuationToken: next, MaxKeys: opts.MaxKeys,
		EncodingURL: encURL, FetchOwner: q.Get("fetch-owner") == "true", Listing: l}))
}
