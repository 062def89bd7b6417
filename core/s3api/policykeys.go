package s3api

import (
	"net/http"

	"github.com/cairnkv/cairn/core/s3"
)

// conditionKeys returns the bucket-policy condition keys the request carries (see
// s3.Requester.Keys): aws:Referer and aws:UserAgent from their headers,
// aws:username (the user's name) and aws:userid (its canonical id) for a signed
// request, s3:signatureversion ("AWS" for V2, "AWS4-HMAC-SHA256" for V4) and
// s3:authtype ("REST-HEADER" or "REST-QUERY-STRING"), s3:x-amz-acl on a PUT that
// names a canned ACL, and on a PUT or POST the encryption headers it carries
// (s3:x-amz-server-side-encryption, …-customer-algorithm; a POST object form's
// postConditionKeys replaces them with its fields').
// The listing keys are added by listObjects (listKeys).
func (c *call) conditionKeys() map[string]string {
	keys := make(map[string]string, 8)
	h := c.r.Header
	if v, ok := h["Referer"]; ok && len(v) > 0 {
		keys[s3.CondReferer] = v[0]
	}
	if v, ok := h["User-Agent"]; ok && len(v) > 0 {
		keys[s3.CondUserAgent] = v[0]
	}
	if c.user != nil {
		if c.user.Name != "" {
			keys[s3.CondUsername] = c.user.Name
		}
		keys[s3.CondUserID] = c.user.ID
	}
	switch c.auth.Version {
	case 2:
		keys[s3.CondSignatureVersion] = "AWS"
	case 4:
		keys[s3.CondSignatureVersion] = "AWS4-HMAC-SHA256"
	}
	if c.auth.Version != 0 {
		keys[s3.CondAuthType] = "REST-HEADER"
		if c.auth.Presigned {
			keys[s3.CondAuthType] = "REST-QUERY-STRING"
		}
	}
	if c.r.Method == http.MethodPut {
		if v := c.header("Acl"); v != "" {
			keys[s3.CondACL] = v
		}
	}
	if c.r.Method == http.MethodPut || c.r.Method == http.MethodPost {
		sseConditionKeys(keys, c.headerPresent)
	}
	return keys
}

// listKeys adds the condition keys of a listing (s3:prefix, s3:delimiter,
// s3:max-keys) that the request's query gives.
func (c *call) listKeys() {
	for param, key := range map[string]string{"prefix": s3.CondPrefix, "delimiter": s3.CondDelimiter, "max-keys": s3.CondMaxKeys} {
		if v, ok := c.query[param]; ok && len(v) > 0 {
			c.who.Keys[key] = v[0]
		}
	}
}
