package s3api

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// errTaggingHeader is AWS's answer to an x-amz-tagging header that is not URL query
// parameters of distinct keys.
var errTaggingHeader = s3.Errorf(s3.InvalidArgument,
	"The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")

// parseTaggingHeader reads an x-amz-tagging header, "k1=v1&k2=v2" URL-encoded as a
// query string, into tags in the order given (a key without "=" has an empty value; an
// empty header is no tags). A part that does not decode, or a repeated key, is 400
// InvalidArgument; more than s3.MaxObjectTags tags is 400 BadRequest, found without
// splitting the rest of the header. The other limits are the service's to check.
func parseTaggingHeader(v string) ([]s3.Tag, error) {
	var tags []s3.Tag
	seen := map[string]bool{}
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, "&")
		if part == "" {
			continue
		}
		if len(tags) == s3.MaxObjectTags {
			return nil, s3.Errorf(s3.BadRequest, "Object tags cannot be greater than %d", s3.MaxObjectTags)
		}
		rk, rv, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(rk)
		val, err2 := url.QueryUnescape(rv)
		if err1 != nil || err2 != nil || seen[k] {
			return nil, errTaggingHeader
		}
		seen[k] = true
		tags = append(tags, s3.Tag{Key: k, Value: val})
	}
	return tags, nil
}

// requestTags reads the tags a write asks for in x-amz-tagging (x-obj-tagging), and
// whether the request carries the header at all. Their limits are the service's to
// check (a copy that keeps the source's tags ignores them).
func (c *call) requestTags() ([]s3.Tag, bool, error) {
	v, ok := c.headerPresent("Tagging")
	if !ok {
		return nil, false, nil
	}
	tags, err := parseTaggingHeader(v)
	return tags, true, err
}

// taggingDirective reads x-amz-tagging-directive: whether a copy replaces the source's
// tags (REPLACE) or keeps them (COPY, the default). Another value is 400
// InvalidArgument. Case is ignored, as for the metadata directive.
func (c *call) taggingDirective() (replace bool, err error) {
	switch d := strings.TrimSpace(c.header("Tagging-Directive")); {
	case d == "" || strings.EqualFold(d, "COPY"):
		return false, nil
	case strings.EqualFold(d, "REPLACE"):
		return true, nil
	default:
		return false, s3.Errorf(s3.InvalidArgument, "Unknown tagging directive.")
	}
}

// readTagging reads and parses the body of PUT ?tagging, at most
// s3xml.MaxTaggingBody bytes (more is 400 MaxMessageLengthExceeded, before parsing),
// checked against Content-MD5 and the flexible checksums the request gives (AWS asks
// for one; clients send one, so none is not refused).
func (c *call) readTagging() ([]s3.Tag, error) {
	body, err := c.readCheckedBody(s3xml.MaxTaggingBody)
	if err != nil {
		return nil, err
	}
	return s3xml.ParseTagging(body)
}

// taggingOps are the service calls of one tagged resource (an object or a bucket).
type taggingOps struct {
	get func(context.Context) ([]s3.Tag, error)
	set func(context.Context, []s3.Tag) error
	del func(context.Context) error
	// putStatus is the status of a successful PUT: 200 for an object, 204 for a
	// bucket, as AWS answers.
	putStatus int
}

// serveObjectTagging answers GET, PUT and DELETE /{bucket}/{key}?tagging, naming the
// version answered about in x-amz-version-id when the bucket keeps versions (as AWS).
// ?versionId= must name a version, as for GET (an empty one is 400).
func (c *call) serveObjectTagging() {
	svc := c.a.svc
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	answered := func(a s3.TaggingAnswer, err error) error {
		if err == nil {
			c.setVersionHeader(&s3.Manifest{VersionID: a.VersionID})
		}
		return err
	}
	c.serveTagging(taggingOps{
		get: func(ctx context.Context) ([]s3.Tag, error) {
			a, err := svc.GetVersionTagging(ctx, c.who, c.bucket, c.key, id)
			return a.Tags, answered(a, err)
		},
		set: func(ctx context.Context, t []s3.Tag) error {
			return answered(svc.PutVersionTagging(ctx, c.who, c.bucket, c.key, id, t))
		},
		del: func(ctx context.Context) error {
			return answered(svc.DeleteVersionTagging(ctx, c.who, c.bucket, c.key, id))
		},
		putStatus: http.StatusOK,
	})
}

// serveBucketTagging answers GET, PUT and DELETE /{bucket}?tagging.
func (c *call) serveBucketTagging() {
	svc := c.a.svc
	c.serveTagging(taggingOps{
		get:       func(ctx context.Context) ([]s3.Tag, error) { return svc.BucketTagging(ctx, c.who, c.bucket) },
		set:       func(ctx context.Context, t []s3.Tag) error { return svc.SetBucketTagging(ctx, c.who, c.bucket, t) },
		del:       func(ctx context.Context) error { return svc.DeleteBucketTagging(ctx, c.who, c.bucket) },
		putStatus: http.StatusNoContent,
	})
}

// serveTagging answers GET (the Tagging document), PUT (a Tagging body) and DELETE
// (204) of ?tagging with ops; other methods are 405.
func (c *call) serveTagging(ops taggingOps) {
	ctx := c.r.Context()
	var err error
	switch c.r.Method {
	case http.MethodGet:
		var tags []s3.Tag
		if tags, err = ops.get(ctx); err == nil {
			c.writeXML(s3xml.MarshalTagging(tags))
			return
		}
	case http.MethodPut:
		var tags []s3.Tag
		if tags, err = c.readTagging(); err == nil {
			err = ops.set(ctx, tags)
		}
		if err == nil {
			_ = httpx.WriteFull(c.w, ops.putStatus, "", nil) // a failed write means the client left
			return
		}
	case http.MethodDelete:
		if err = ops.del(ctx); err == nil {
			c.w.WriteHeader(http.StatusNoContent)
			return
		}
	default:
		c.methodNotAllowed()
		return
	}
	c.fail(err)
}
