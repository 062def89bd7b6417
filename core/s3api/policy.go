package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// getBucketPolicy answers GET /?policy: the policy document as JSON.
func (c *call) getBucketPolicy() {
	doc, err := c.a.svc.BucketPolicy(c.r.Context(), c.who, c.bucket)
	if err != nil {
		c.fail(err)
		return
	}
	_ = httpx.WriteFull(c.w, http.StatusOK, "application/json", doc) // a failed write means the client left
}

// getBucketPolicyStatus answers GET /?policyStatus: whether the bucket's policy makes
// it public.
func (c *call) getBucketPolicyStatus() {
	public, err := c.a.svc.BucketPolicyStatus(c.r.Context(), c.who, c.bucket)
	if err != nil {
		c.fail(err)
		return
	}
	c.writeXML([]byte(s3xml.Header + `<PolicyStatus xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsPublic>` +
		strconv.FormatBool(public) + `</IsPublic></PolicyStatus>`))
}

// putBucketPolicy answers PUT /?policy: the body (at most s3.MaxPolicySize bytes, and
// matching Content-MD5 when one is given) becomes the bucket's policy; 204 on success.
func (c *call) putBucketPolicy() {
	var sum []byte
	if v, ok := c.r.Header["Content-Md5"]; ok {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[0]))
		if err != nil || len(b) != md5.Size {
			c.fail(s3.Errorf(s3.InvalidDigest, "The Content-MD5 you specified is not valid."))
			return
		}
		sum = b
	}
	if err := c.checkPayload(); err != nil {
		c.fail(err)
		return
	}
	// Read one byte past the limit, so the service sees an oversized document and says so.
	doc, err := io.ReadAll(io.LimitReader(c.body(), s3.MaxPolicySize+1))
	if err != nil {
		c.fail(err)
		return
	}
	if sum != nil && len(doc) <= s3.MaxPolicySize {
		if got := md5.Sum(doc); !bytes.Equal(got[:], sum) {
			c.fail(s3.Errorf(s3.BadDigest, "The Content-MD5 you specified did not match what we received."))
			return
		}
	}
	if err := c.a.svc.SetBucketPolicy(c.r.Context(), c.who, c.bucket, doc); err != nil {
		c.fail(err)
		return
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// deleteBucketPolicy answers DELETE /?policy: 204, whether or not there was a policy.
func (c *call) deleteBucketPolicy() {
	if err := c.a.svc.DeleteBucketPolicy(c.r.Context(), c.who, c.bucket); err != nil {
		c.fail(err)
		return
	}
	c.w.WriteHeader(http.StatusNoContent)
}
