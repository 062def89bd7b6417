package s3api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// serveBucketLifecycle answers GET (the LifecycleConfiguration document, 404
// NoSuchLifecycleConfiguration without one), PUT (a LifecycleConfiguration body: 200)
// and DELETE (204) of /{bucket}?lifecycle; other methods are 405.
func (c *call) serveBucketLifecycle() {
	svc := c.a.svc
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			lc, err := svc.BucketLifecycle(ctx, c.who, c.bucket)
			if err != nil {
				return nil, err
			}
			return s3xml.MarshalLifecycle(lc), nil
		},
		put: func(ctx context.Context) error {
			body, err := c.readCheckedBody(s3xml.MaxLifecycleBody)
			if err != nil {
				return err
			}
			lc, err := s3xml.ParseLifecycle(body)
			if err != nil {
				return err
			}
			return svc.SetBucketLifecycle(ctx, c.who, c.bucket, lc)
		},
		del: func(ctx context.Context) error { return svc.DeleteBucketLifecycle(ctx, c.who, c.bucket) },
	})
}

// setExpiration sets x-amz-expiration on the answer about the current version m of
// the object: when a lifecycle rule of its bucket will expire it, and which rule, as
// AWS writes it (expiry-date="Fri, 23 Dec 2012 00:00:00 GMT", rule-id="…"). Nothing
// when no rule does.
func (c *call) setExpiration(m *s3.Manifest) {
	b, err := c.bucketOf(m)
	if err != nil {
		return
	}
	if at, id, ok := c.a.svc.ManifestExpiry(b, c.key, m); ok {
		c.w.Header()[c.names.prefix+"expiration"] = []string{
			// The rule id is the bucket owner's text: URL-encoded, as at AWS, so that
			// no quote or control character reaches the header.
			`expiry-date="` + at.Format(http.TimeFormat) + `", rule-id="` + url.PathEscape(id) + `"`}
	}
}
