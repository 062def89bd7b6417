package s3api

import (
	"context"
	"net/http"
	"net/url"
	"strings"

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
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			a, err := svc.GetVersionTagging(ctx, c.who, c.bucket, c.key, id)
			return s3xml.MarshalTagging(a.Tags), answered(a, err)
		},
		put: func(ctx context.Context) error {
			tags, err := c.readTagging()
			if err != nil {
				return err
			}
			return answered(svc.PutVersionTagging(ctx, c.who, c.bucket, c.key, id, tags))
		},
		del: func(ctx context.Context) error {
			return answered(svc.DeleteVersionTagging(ctx, c.who, c.bucket, c.key, id))
		},
	})
}

// serveBucketTagging answers GET, PUT and DELETE /{bucket}?tagging.
func (c *call) serveBucketTagging() {
	svc := c.a.svc
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			tags, err := svc.BucketTagging(ctx, c.who, c.bucket)
			return s3xml.MarshalTagging(tags), err
		},
		put: func(ctx context.Context) error {
			tags, err := c.readTagging()
			if err != nil {
				return err
			}
			return svc.SetBucketTagging(ctx, c.who, c.bucket, tags)
		},
		del:       func(ctx context.Context) error { return svc.DeleteBucketTagging(ctx, c.who, c.bucket) },
		putStatus: http.StatusNoContent, // as AWS answers a bucket's (an object's is 200)
	})
}
