package s3api

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// The texts of AWS's preflight refusals.
const (
	msgCORSNotAllowed = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, " +
		"request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
	msgCORSDisabled = "CORSResponse: CORS is not enabled for this bucket."
	msgCORSOrigin   = "Insufficient information. Origin request header needed."
)

// corsVary is the Vary value of every CORS answer: what the answer depends on.
const corsVary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// readCheckedBody reads a configuration request body of at most limit bytes (more is
// 400 MaxMessageLengthExceeded, before parsing), checked against Content-MD5 and the
// flexible checksums the request gives (AWS asks for one; clients send one, so none is
// not refused).
func (c *call) readCheckedBody(limit int64) ([]byte, error) {
	if err := c.checkPayload(); err != nil {
		return nil, err
	}
	checks, err := c.bodyChecks(true)
	if err != nil {
		return nil, err
	}
	httpx.LimitRequestBody(c.w, c.r, limit)
	return io.ReadAll(c.checkedBody(checks, -1))
}

// serveBucketCORS answers GET (the CORSConfiguration), PUT (a CORSConfiguration body:
// 200) and DELETE (204) of /{bucket}?cors; other methods are 405.
func (c *call) serveBucketCORS() {
	svc := c.a.svc
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			rules, err := svc.BucketCORS(ctx, c.who, c.bucket)
			return s3xml.MarshalCORS(rules), err
		},
		put: func(ctx context.Context) error {
			body, err := c.readCheckedBody(s3xml.MaxCORSBody)
			if err != nil {
				return err
			}
			rules, err := s3xml.ParseCORS(body)
			if err != nil {
				return err
			}
			return svc.SetBucketCORS(ctx, c.who, c.bucket, rules)
		},
		del: func(ctx context.Context) error { return svc.DeleteBucketCORS(ctx, c.who, c.bucket) },
	})
}

// preflight answers an OPTIONS request on a bucket or an object (unsigned, as
// browsers send it) from the bucket's CORS rules: 200 with the Access-Control-*
// headers of the first rule that allows the Origin, the Access-Control-Request-Method
// and every Access-Control-Request-Headers name; 403 AccessForbidden when none does
// or the bucket has no rules; 400 BadRequest without an Origin or a method a rule
// could allow; 404 NoSuchBucket for a missing bucket.
func (c *call) preflight() {
	origin := c.r.Header.Get("Origin")
	if origin == "" {
		c.fail(s3.Errorf(s3.BadRequest, msgCORSOrigin))
		return
	}
	method := c.r.Header.Get("Access-Control-Request-Method")
	if !slices.Contains(s3.CORSMethods, method) {
		c.fail(s3.Errorf(s3.BadRequest, "Invalid Access-Control-Request-Method: %s", method))
		return
	}
	// Matching costs names × rules × patterns and comes before authentication: the
	// number of names is bounded (a browser asks for a handful).
	headers := requestedHeaders(c.r.Header.Get("Access-Control-Request-Headers"))
	if len(headers) > maxPreflightHeaders {
		c.fail(s3.Errorf(s3.BadRequest, "Too many Access-Control-Request-Headers: at most %d.", maxPreflightHeaders))
		return
	}
	rules, err := c.a.svc.CORSRules(c.r.Context(), c.bucket)
	if err != nil {
		c.fail(err)
		return
	}
	if len(rules) == 0 {
		c.fail(s3.Errorf(s3.AccessForbidden, msgCORSDisabled))
		return
	}
	rule := s3.MatchCORS(rules, origin, method, headers)
	if rule == nil {
		c.fail(s3.Errorf(s3.AccessForbidden, msgCORSNotAllowed))
		return
	}
	setCORSHeaders(c.w.Header(), rule, origin)
	if len(headers) > 0 {
		c.w.Header().Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
	}
	c.ok()
}

// maxPreflightHeaders bounds the names of a preflight's Access-Control-Request-Headers.
const maxPreflightHeaders = 100

// requestedHeaders splits an Access-Control-Request-Headers value into its names,
// lower-cased, empty ones dropped.
func requestedHeaders(v string) []string {
	var out []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// addCORSHeaders adds to the response of an actual (not preflight) request carrying
// an Origin the Access-Control-* headers of the first rule of the bucket's that allows
// the origin and the request's method, before the request is served, so that error
// answers carry them too (a page can then read why it was refused); Vary whether a
// rule matches or not, so that no cache gives one origin's answer to another. The
// bucket record is the cached one the request reads anyway; a missing bucket or one
// without rules adds nothing.
func (c *call) addCORSHeaders(origin string) {
	rules, err := c.a.svc.CORSRules(c.r.Context(), c.bucket)
	if err != nil || len(rules) == 0 {
		return
	}
	c.w.Header().Set("Vary", corsVary) // the answer depends on the origin, matched or not
	if rule := s3.MatchCORS(rules, origin, c.r.Method, nil); rule != nil {
		setCORSHeaders(c.w.Header(), rule, origin)
	}
}

// setCORSHeaders writes what rule tells a browser about a request from origin: the
// allowed origin ("*" for a rule allowing any, else the origin, with credentials
// allowed), the rule's methods, exposed headers and max age, and Vary.
func setCORSHeaders(h http.Header, rule *s3.CORSRule, origin string) {
	if rule.AnyOrigin() {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(rule.AllowedMethods, ", "))
	if len(rule.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposeHeaders, ", "))
	}
	if rule.HasMaxAge {
		h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAgeSeconds))
	}
	h.Set("Vary", corsVary)
}
