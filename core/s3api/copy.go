package s3api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// copyObject answers PUT with x-amz-copy-source (or x-obj-copy-source): the source's
// data becomes the addressed object. x-amz-metadata-directive COPY (the default) keeps
// the source's content type, metadata and stored headers, REPLACE takes them from the
// request; the new object's ACL always comes from the request's canned ACL or grant
// headers (private without either). x-amz-tagging-directive COPY (the default) keeps
// the source's tags, REPLACE takes x-amz-tagging. The x-amz-copy-source-if-* conditions are checked
// against the source before any data moves (412 PreconditionFailed).
func (c *call) copyObject() {
	srcBucket, srcKey, srcVersion, err := parseCopySource(c.header("Copy-Source"))
	if err != nil {
		c.fail(err)
		return
	}
	replace := false
	switch d := strings.TrimSpace(c.header("Metadata-Directive")); {
	case d == "" || strings.EqualFold(d, "COPY"):
	case strings.EqualFold(d, "REPLACE"):
		replace = true
	default:
		c.fail(s3.Errorf(s3.InvalidArgument, "Unknown metadata directive."))
		return
	}
	replaceTags, err := c.taggingDirective()
	if err != nil {
		c.fail(err)
		return
	}
	in, err := c.objectInput()
	if err != nil {
		c.fail(err)
		return
	}
	srcSSEKey, err := c.customerKey("Copy-Source-")
	if err != nil {
		c.fail(err)
		return
	}
	var src *s3.Manifest
	conds := c.copyConditions()
	check := func(m *s3.Manifest) error {
		src = m // the version copied, for x-amz-copy-source-version-id
		if conds == nil {
			return nil
		}
		return conds(m)
	}
	m, err := c.a.svc.CopyObject(c.r.Context(), c.who, srcBucket, srcKey, c.bucket, c.key,
		s3.CopyInput{Check: check, ReplaceMeta: replace, ReplaceTags: replaceTags, In: in, SourceKey: srcSSEKey,
			SourceVersionID: srcVersion})
	if err != nil {
		c.fail(err)
		return
	}
	c.echoSSE(m.SSE, in.SSE.Customer)
	c.setCopySourceVersion(srcBucket, srcVersion, src)
	c.setVersionHeader(m)
	c.writeXML(s3xml.MarshalCopyObjectResult(m.LastModified, m.ETag))
}

// uploadPartCopy answers PUT ?partNumber=N&uploadId=U with x-amz-copy-source: part n
// is copied from the source (the version its ?versionId names, else the current one),
// whole or the x-amz-copy-source-range bytes, under the same conditions as a copy.
func (c *call) uploadPartCopy(uploadID string, n int) {
	srcBucket, srcKey, srcVersion, err := parseCopySource(c.header("Copy-Source"))
	if err != nil {
		c.fail(err)
		return
	}
	off, length := int64(0), int64(-1)
	if v := c.header("Copy-Source-Range"); v != "" {
		if off, length, err = parseCopyRange(v); err != nil {
			c.fail(err)
			return
		}
	}
	var keys s3.CopyKeys
	if keys.Source, err = c.customerKey("Copy-Source-"); err == nil {
		keys.Dest, err = c.customerKey("")
	}
	if err != nil {
		c.fail(err)
		return
	}
	p, err := c.a.svc.CopyPart(c.r.Context(), c.who, srcBucket, srcKey, srcVersion, c.bucket, c.key, uploadID, n, off, length, c.copyConditions(), keys)
	if err != nil {
		c.fail(err)
		return
	}
	c.echoPartSSE(p, keys.Dest)
	c.setCopySourceVersion(srcBucket, srcVersion, nil)
	c.writeXML(s3xml.MarshalCopyPartResult(p.LastModified, p.ETag))
}

// parseCopySource splits an x-amz-copy-source value, "/bucket/key" or "bucket/key"
// URL-encoded, optionally followed by "?versionId=…", into the source bucket, key and
// version id ("" when not given). A value without both a bucket and a key, not
// URL-decodable, or with a malformed version id is 400 InvalidArgument.
func parseCopySource(v string) (bucket, key, version string, err error) {
	path, query, hasQuery := strings.Cut(strings.TrimSpace(v), "?")
	if hasQuery {
		q, err := url.ParseQuery(query)
		if err != nil {
			return "", "", "", s3.Errorf(s3.InvalidArgument, "Invalid copy source version id")
		}
		if vid, ok := q["versionId"]; ok {
			if s3.CheckVersionID(vid[0]) != nil {
				return "", "", "", s3.Errorf(s3.InvalidArgument, "Invalid copy source version id")
			}
			version = vid[0]
		}
	}
	p, err := url.PathUnescape(path)
	if err != nil {
		return "", "", "", s3.Errorf(s3.InvalidArgument, "Invalid copy source encoding")
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if bucket == "" || key == "" {
		return "", "", "", s3.Errorf(s3.InvalidArgument, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey")
	}
	return bucket, key, version, nil
}

// parseCopyRange reads x-amz-copy-source-range, "bytes=first-last" with both offsets
// given, zero-based and inclusive, first ≤ last; it returns the offset and the length.
// Anything else is 400 InvalidArgument. Whether the range fits the source is the
// service's to check.
func parseCopyRange(v string) (off, length int64, err error) {
	bad := s3.Errorf(s3.InvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	spec, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !ok {
		return 0, 0, bad
	}
	a, b, ok := strings.Cut(spec, "-")
	first, err1 := parseOffset(a)
	last, err2 := parseOffset(b)
	if !ok || err1 != nil || err2 != nil || last < first {
		return 0, 0, bad
	}
	return first, last - first + 1, nil
}

// parseOffset parses a non-empty run of decimal digits.
func parseOffset(s string) (int64, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// copyConditions returns the check of the x-amz-copy-source-if-* headers against the
// source (nil when there are none), as S3 evaluates them: if-match false, or
// if-unmodified-since false without if-match, or if-none-match naming the source's ETag,
// or if-modified-since false without if-none-match, is 412 PreconditionFailed. Dates
// that do not parse are ignored.
func (c *call) copyConditions() func(*s3.Manifest) error {
	im, inm := c.header("Copy-Source-If-Match"), c.header("Copy-Source-If-None-Match")
	ims, ius := c.header("Copy-Source-If-Modified-Since"), c.header("Copy-Source-If-Unmodified-Since")
	if im == "" && inm == "" && ims == "" && ius == "" {
		return nil
	}
	return func(m *s3.Manifest) error {
		precondition := &s3.Error{Code: s3.PreconditionFailed, Message: "At least one of the pre-conditions you specified did not hold"}
		lm := m.LastModified.Truncate(time.Second)
		if im != "" && !s3.ETagMatches(im, m.ETag) {
			return precondition
		}
		if ius != "" && im == "" {
			if t, err := http.ParseTime(ius); err == nil && lm.After(t) {
				return precondition
			}
		}
		if inm != "" && s3.ETagMatches(inm, m.ETag) {
			return precondition
		}
		if ims != "" && inm == "" {
			if t, err := http.ParseTime(ims); err == nil && !lm.After(t) {
				return precondition
			}
		}
		return nil
	}
}

// setCopySourceVersion sets x-amz-copy-source-version-id on a copy's answer: the
// version the request named, else, when the source bucket keeps versions, the id of
// the version copied (src; "null" for the null version), as AWS answers. A source
// bucket never versioned gets none.
func (c *call) setCopySourceVersion(srcBucket, asked string, src *s3.Manifest) {
	id := asked
	if id == "" && src != nil {
		b, err := c.a.svc.Bucket(c.r.Context(), srcBucket)
		if err != nil || b.Versioning == "" {
			return
		}
		if id = src.VersionID; id == "" {
			id = s3.NullVersionID
		}
	}
	if id != "" {
		c.w.Header()[c.names.prefix+"copy-source-version-id"] = []string{id}
	}
}
