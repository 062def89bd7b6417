package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// storedHeaders are the standard headers a PUT stores and GET and HEAD give back.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"}

// defaultContentType is the type of an object stored without one (Riak CS's).
const defaultContentType = "application/octet-stream"

// serveObject dispatches the object-level requests on method and sub-resource.
func (c *call) serveObject() {
	if c.refuseUnserved() {
		return
	}
	if c.has("uploadId") || c.has("uploads") || c.has("partNumber") {
		c.serveMultipart()
		return
	}
	if c.has("tagging") {
		c.serveObjectTagging()
		return
	}
	if c.has("retention") {
		c.serveObjectRetention()
		return
	}
	if c.has("legal-hold") {
		c.serveObjectLegalHold()
		return
	}
	switch c.r.Method {
	case http.MethodGet, http.MethodHead:
		if c.has("acl") {
			if c.r.Method == http.MethodHead {
				c.methodNotAllowed()
				return
			}
			id, err := c.versionID()
			if err != nil {
				c.fail(err)
				return
			}
			acl, err := c.a.svc.ObjectVersionACL(c.r.Context(), c.who, c.bucket, c.key, id)
			if err != nil {
				c.fail(err)
				return
			}
			c.writeXML(s3xml.MarshalACL(acl))
			return
		}
		c.getObject()
	case http.MethodPut:
		switch {
		case c.has("acl"):
			c.putObjectACL()
		case c.has("versionId"):
			c.fail(s3.Errorf(s3.InvalidArgument, "A PUT or copy of an object makes a new version: it takes no versionId"))
		case c.header("Copy-Source") != "":
			c.copyObject()
		default:
			c.putObject()
		}
	case http.MethodDelete:
		c.deleteObject()
	default:
		c.methodNotAllowed()
	}
}

// writeConditions are the request's conditions on the key's current version
// (If-Match, If-None-Match: S3's conditional writes).
func (c *call) writeConditions() s3.WriteConditions {
	return s3.WriteConditions{IfMatch: c.r.Header.Get("If-Match"), IfNoneMatch: c.r.Header.Get("If-None-Match")}
}

// putObject stores the request body. Every check that needs only the headers runs
// before the body is read, so a refused "Expect: 100-continue" upload is never sent.
func (c *call) putObject() {
	r := c.r
	data, err := c.uploadHeaders()
	if err != nil {
		c.fail(err)
		return
	}
	in, err := c.objectInput()
	if err != nil {
		c.fail(err)
		return
	}
	in.Body, in.Size, in.MD5 = data.Body, data.Size, data.MD5
	in.Conditions = c.writeConditions()
	m, err := c.a.svc.PutObject(r.Context(), c.who, c.bucket, c.key, in)
	if err != nil {
		c.fail(err)
		return
	}
	c.echoSSE(m.SSE, in.SSE.Customer)
	c.w.Header().Set("ETag", `"`+m.ETag+`"`)
	c.setExpiration(m)
	c.setVersionHeader(m)
	c.ok()
}

// contentMD5 returns the Content-MD5 header decoded (nil when absent); a value that is
// not the base64 of 16 bytes is 400 InvalidDigest.
func (c *call) contentMD5() ([]byte, error) {
	v, ok := c.r.Header["Content-Md5"]
	if !ok {
		return nil, nil
	}
	return decodeContentMD5(v[0])
}

// decodeContentMD5 decodes a Content-MD5 value (a header, or a POST form's field): the
// base64 of 16 bytes, else 400 InvalidDigest.
func decodeContentMD5(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != md5.Size {
		return nil, s3.Errorf(s3.InvalidDigest, "The Content-MD5 you specified is not valid.")
	}
	return b, nil
}

// objectInput reads the headers that describe a new object (PUT, multipart initiate,
// copy): Content-Type, user metadata, the stored standard headers (Content-Encoding
// without aws-chunked), the canned ACL or the grant headers (not both: 400
// InvalidRequest), the tags of x-amz-tagging, the encryption asked for (sseRequest)
// and the Object Lock of x-amz-object-lock-*. Body, Size and MD5 are left to the caller.
func (c *call) objectInput() (s3.PutInput, error) {
	r := c.r
	in := s3.PutInput{ContentType: r.Header.Get("Content-Type"), Meta: c.userMeta(), Headers: map[string]string{}}
	for _, h := range storedHeaders {
		if v := r.Header.Get(h); v != "" {
			in.Headers[h] = v
		}
	}
	if enc := in.Headers["Content-Encoding"]; enc != "" {
		in.Headers["Content-Encoding"] = stripAWSChunked(enc)
		if in.Headers["Content-Encoding"] == "" {
			delete(in.Headers, "Content-Encoding")
		}
	}
	if len(in.Headers) == 0 {
		in.Headers = nil
	}
	spec, err := c.aclFromHeaders()
	if err != nil {
		return s3.PutInput{}, err
	}
	in.ACL, in.Canned = spec.ACL, spec.Canned
	if in.Tags, in.HasTags, err = c.requestTags(); err != nil {
		return s3.PutInput{}, err
	}
	if in.Lock, err = c.lockHeaders(c.a.cfg.Now()); err != nil {
		return s3.PutInput{}, err
	}
	if in.SSE, err = c.sseRequest(); err != nil {
		return s3.PutInput{}, err
	}
	return in, nil
}

// uploadHeaders checks the headers of a request that carries object data (PUT object,
// upload part) and returns the data as the service takes it: Body (verified against
// the flexible checksums as it streams, see bodyChecks), Size and MD5 (nil when
// Content-MD5 is not given).
func (c *call) uploadHeaders() (s3.PutInput, error) {
	size, err := c.contentLength()
	if err != nil {
		return s3.PutInput{}, err
	}
	sum, err := c.contentMD5()
	if err != nil {
		return s3.PutInput{}, err
	}
	if err := c.checkPayload(); err != nil {
		return s3.PutInput{}, err
	}
	checks, err := c.bodyChecks(false) // the service checks the MD5 it computes anyway
	if err != nil {
		return s3.PutInput{}, err
	}
	return s3.PutInput{Body: c.checkedBody(checks, size), Size: size, MD5: sum}, nil
}

// contentLength returns the object's size: Content-Length, or for aws-chunked
// uploads x-amz-decoded-content-length. Without either the answer is 411.
func (c *call) contentLength() (int64, error) {
	if c.isStreaming() {
		v := c.r.Header.Get("X-Amz-Decoded-Content-Length")
		n, err := strconv.ParseInt(v, 10, 64)
		if v == "" {
			return 0, s3.Errorf(s3.MissingContentLength, "You must provide the Content-Length HTTP header.")
		}
		if err != nil || n < 0 {
			return 0, s3.Errorf(s3.InvalidArgument, "x-amz-decoded-content-length is not a length")
		}
		return n, nil
	}
	if c.r.ContentLength < 0 {
		return 0, s3.Errorf(s3.MissingContentLength, "You must provide the Content-Length HTTP header.")
	}
	return c.r.ContentLength, nil
}

// userMeta collects the x-amz-meta-* and x-obj-meta-* headers, names lower-cased.
func (c *call) userMeta() []s3.MetaPair {
	var meta []s3.MetaPair
	for name, vs := range c.r.Header {
		l := strings.ToLower(name)
		var n string
		switch {
		case strings.HasPrefix(l, "x-amz-meta-"):
			n = l[len("x-amz-meta-"):]
		case strings.HasPrefix(l, "x-obj-meta-"):
			n = l[len("x-obj-meta-"):]
		default:
			continue
		}
		meta = append(meta, s3.MetaPair{Name: n, Value: strings.Join(vs, ",")})
	}
	slices.SortFunc(meta, func(a, b s3.MetaPair) int { return strings.Compare(a.Name, b.Name) })
	return meta
}

func stripAWSChunked(enc string) string {
	var keep []string
	for _, p := range strings.Split(enc, ",") {
		if p = strings.TrimSpace(p); p != "" && !strings.EqualFold(p, "aws-chunked") {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, ",")
}

func (c *call) putObjectACL() {
	spec, err := c.aclFromRequest()
	if err != nil {
		c.fail(err)
		return
	}
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	if err := c.a.svc.SetObjectVersionACL(c.r.Context(), c.who, c.bucket, c.key, id, spec); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

// responseOverrides are the query parameters that replace response headers on GET.
var responseOverrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-language":    "Content-Language",
	"response-expires":             "Expires",
	"response-cache-control":       "Cache-Control",
	"response-content-disposition": "Content-Disposition",
	"response-content-encoding":    "Content-Encoding",
}

// getObject answers GET and HEAD of an object: headers, conditional requests, a single
// byte range, and the data streamed chunk by chunk from one snapshot.
func (c *call) getObject() {
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	obj, err := c.a.svc.OpenObjectVersion(c.r.Context(), c.who, c.bucket, c.key, id)
	if err != nil {
		c.fail(err)
		return
	}
	defer obj.Close()
	m := obj.Manifest
	c.setVersionHeader(m)
	ck, err := c.unseal(obj)
	if err != nil {
		c.fail(err)
		return
	}
	c.setLockHeaders(m)
	if err := checkConditions(c.r, m); err != nil {
		if s3.IsCode(err, s3.NotModified) {
			c.w.Header().Set("ETag", `"`+m.ETag+`"`)
			c.w.Header().Set("Last-Modified", m.LastModified.Format(http.TimeFormat))
		}
		c.fail(err)
		return
	}
	h := c.w.Header()
	ct := m.ContentType
	if ct == "" {
		ct = defaultContentType
	}
	h.Set("Content-Type", ct)
	h.Set("ETag", `"`+m.ETag+`"`)
	h.Set("Last-Modified", m.LastModified.Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	c.echoSSE(m.SSE, ck)
	for k, v := range m.Headers {
		h.Set(k, v)
	}
	if len(m.Tags) > 0 {
		h[c.names.prefix+"tagging-count"] = []string{strconv.Itoa(len(m.Tags))}
	}
	// A noncurrent version is not expired by Expiration; whether the version read is
	// current costs a read, worth it only when the bucket has rules.
	if b, err := c.bucketOf(m); err == nil && b.Lifecycle != nil && (id == "" || obj.IsCurrent()) {
		c.setExpiration(m)
	}
	for _, p := range m.Meta {
		// Lower case as the client wrote it (and AWS answers): header names are
		// case-insensitive, but SDKs (boto3's Metadata) key the map by the name as sent.
		// Older records stored no other case; ToLower keeps any such readable the same way.
		h[c.names.prefix+"meta-"+strings.ToLower(p.Name)] = []string{p.Value}
	}
	for q, name := range responseOverrides {
		if v, ok := c.query[q]; ok && !c.who.Anonymous {
			h.Set(name, v[0])
		}
	}
	off, n, partial, err := parseRange(c.r.Header.Get("Range"), m.Size)
	if err != nil {
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(m.Size, 10))
		for _, k := range []string{"Content-Type", "ETag", "Last-Modified", "Accept-Ranges"} {
			h.Del(k)
		}
		c.fail(err)
		return
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	status := http.StatusOK
	if partial {
		status = http.StatusPartialContent
		h.Set("Content-Range", "bytes "+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10)+"/"+strconv.FormatInt(m.Size, 10))
	}
	c.w.WriteHeader(status)
	if c.r.Method == http.MethodHead {
		return
	}
	if err := obj.WriteRange(c.r.Context(), c.w, off, n); err != nil {
		if !errors.Is(err, http.ErrHandlerTimeout) && !isClientGone(err) {
			c.a.log.Error("s3: object data", "bucket", c.bucket, "key", c.key, "err", err)
		}
		panic(http.ErrAbortHandler) // the status is sent: only cutting the connection tells the client
	}
}

func isClientGone(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, http.ErrAbortHandler) ||
		strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "connection reset")
}

// checkConditions evaluates If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since as S3 does: 412 PreconditionFailed, or NotModified (304).
func checkConditions(r *http.Request, m *s3.Manifest) error {
	etag := m.ETag
	lm := m.LastModified.Truncate(time.Second)
	precondition := &s3.Error{Code: s3.PreconditionFailed, Message: "At least one of the pre-conditions you specified did not hold"}
	notModified := &s3.Error{Code: s3.NotModified, Message: "Not Modified"}
	im := r.Header.Get("If-Match")
	if im != "" && !s3.ETagMatches(im, etag) {
		return precondition
	}
	if v := r.Header.Get("If-Unmodified-Since"); v != "" && im == "" {
		if t, err := http.ParseTime(v); err == nil && lm.After(t) {
			return precondition
		}
	}
	inm := r.Header.Get("If-None-Match")
	if inm != "" && s3.ETagMatches(inm, etag) {
		return notModified
	}
	if v := r.Header.Get("If-Modified-Since"); v != "" && inm == "" {
		if t, err := http.ParseTime(v); err == nil && !lm.After(t) {
			return notModified
		}
	}
	return nil
}

// parseRange interprets a Range header against an object of size bytes. One range
// gives (offset, length, true); no header, a malformed one, or several ranges give the
// whole object (as S3 does); a range that starts past the end is 416 InvalidRange.
func parseRange(h string, size int64) (off, n int64, partial bool, err error) {
	whole := func() (int64, int64, bool, error) { return 0, size, false, nil }
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return whole()
	}
	a, b, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return whole()
	}
	invalid := &s3.Error{Code: s3.InvalidRange, Message: "The requested range is not satisfiable"}
	if a == "" {
		k, err := strconv.ParseInt(b, 10, 64)
		if err != nil || k < 0 {
			return whole()
		}
		if k == 0 || size == 0 {
			return 0, 0, false, invalid
		}
		k = min(k, size)
		return size - k, k, true, nil
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return whole()
	}
	end := size - 1
	if b != "" {
		e, err := strconv.ParseInt(b, 10, 64)
		if err != nil || e < start {
			return whole()
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, false, invalid
	}
	return start, end - start + 1, true, nil
}
