package s3api

import (
	"strings"

	"github.com/cairnkv/cairn/core/s3"
)

// checkExpectedOwners enforces x-amz-expected-bucket-owner (or x-obj-) on the
// addressed bucket and, on a copy, x-amz-source-expected-bucket-owner on the source's:
// when given, the header must equal the bucket owner's canonical id (Cairn's account
// id), else 403 AccessDenied. A bucket that does not exist is left to the operation
// (404 NoSuchBucket); so is a bad copy source.
func (c *call) checkExpectedOwners() error {
	if want, ok := c.headerPresent("Expected-Bucket-Owner"); ok && c.bucket != "" {
		if err := c.checkOwner(c.bucket, want); err != nil {
			return err
		}
	}
	want, ok := c.headerPresent("Source-Expected-Bucket-Owner")
	src := c.header("Copy-Source")
	if !ok || src == "" {
		return nil
	}
	bucket, _, _, err := parseCopySource(src)
	if err != nil {
		return nil //nolint:nilerr // the copy itself reports a bad source
	}
	return c.checkOwner(bucket, want)
}

// checkOwner answers 403 AccessDenied when bucket exists and want is not its owner's
// canonical id.
func (c *call) checkOwner(bucket, want string) error {
	b, err := c.a.svc.Bucket(c.r.Context(), bucket)
	if s3.IsCode(err, s3.NoSuchBucket) {
		return nil
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(want) != b.Owner.ID {
		return s3.Errorf(s3.AccessDenied, "Access Denied")
	}
	return nil
}

// headerPresent returns a request header under its x-amz- or x-obj- name (name is the
// part after the prefix) and whether either was sent, even empty.
func (c *call) headerPresent(name string) (string, bool) {
	for _, prefix := range [...]string{"X-Amz-", "X-Obj-"} {
		if v, ok := c.r.Header[prefix+name]; ok && len(v) > 0 {
			return v[0], true
		}
	}
	return "", false
}
