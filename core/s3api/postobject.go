package s3api

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// postObject answers POST /{bucket} with a multipart/form-data body: S3's browser-based
// upload. The form's fields come first (bounded: readPostForm), then the file, which is
// streamed into PutObject. A form with a policy must carry its signature (V2 or V4),
// and the upload is then the signer's, within the policy's conditions; a form without
// one is the request's requester's (anonymous for a browser), allowed only where the
// bucket's ACL or policy lets it write. The answer is a 303 to success_action_redirect
// (or redirect), else the success_action_status (200, 201 with a PostResponse document,
// or 204, the default).
func (c *call) postObject() {
	form, err := c.readForm()
	if err != nil {
		c.fail(err)
		return
	}
	fields, err := formFields(form.fields)
	if err != nil {
		c.fail(err)
		return
	}
	key, err := c.postAuthorize(form, fields)
	if err != nil {
		c.fail(err)
		return
	}
	in, err := postInput(form, fields)
	if err != nil {
		c.fail(err)
		return
	}
	m, err := c.a.svc.PutObject(c.r.Context(), c.who, c.bucket, key, in)
	if err != nil {
		c.fail(err)
		return
	}
	c.key = key
	c.echoSSE(m.SSE, in.SSE.Customer)
	c.setExpiration(m)
	c.setVersionHeader(m)
	c.postAnswer(fields, m.ETag)
}

// readForm checks the request's framing (a multipart/form-data Content-Type, a
// Content-Length, no aws-chunked encoding) and reads the form up to its file.
func (c *call) readForm() (*postForm, error) {
	boundary, err := formBoundary(c.r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	if c.isStreaming() {
		return nil, s3.Errorf(s3.NotImplemented, "A POST object form cannot be sent aws-chunked")
	}
	if c.r.ContentLength < 0 {
		return nil, s3.Errorf(s3.MissingContentLength, "You must provide the Content-Length HTTP header.")
	}
	return readPostForm(c.body(), c.r.ContentLength, boundary)
}

// formFields indexes the form's fields by lower-case name (AWS reads them ignoring
// case); a field given twice is 400 InvalidArgument.
func formFields(list []formField) (map[string]string, error) {
	fields := make(map[string]string, len(list)+1)
	for _, f := range list {
		n := strings.ToLower(f.name)
		if _, dup := fields[n]; dup {
			return nil, s3.Errorf(s3.InvalidArgument, "POST form fields may not be repeated: %s", n)
		}
		fields[n] = f.value
	}
	return fields, nil
}

// postAuthorize verifies the form's signature (the signer becomes the requester), its
// key (with ${filename} replaced by the file's name) and, when it has a policy, the
// policy's expiration and conditions, the file's size included. It returns the key.
func (c *call) postAuthorize(form *postForm, fields map[string]string) (string, error) {
	var user *s3.User
	res, err := sig.VerifyPost(sig.PostForm{Policy: fields["policy"], AccessKeyID: fields["awsaccesskeyid"],
		Signature: fields["signature"], Algorithm: fields["x-amz-algorithm"], Credential: fields["x-amz-credential"],
		Date: fields["x-amz-date"], SignatureV4: fields["x-amz-signature"]}, c.userLookup(&user))
	if err != nil {
		return "", err
	}
	c.setUser(res, user) // the form's signer, if any, is the requester
	c.postConditionKeys(res, fields)
	key, ok := fields["key"]
	if !ok || key == "" {
		return "", s3.Errorf(s3.InvalidArgument, "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
	}
	key = strings.ReplaceAll(key, "${filename}", baseName(form.filename))
	fields["key"], fields["bucket"] = key, c.bucket
	c.resource = "/" + c.bucket + "/" + key
	if _, ok := fields["policy"]; !ok {
		return key, nil
	}
	p, err := parsePostPolicy(fields["policy"])
	if err != nil {
		return "", err
	}
	if err := p.check(fields, c.a.cfg.Now()); err != nil {
		return "", err
	}
	return key, p.checkSize(form.size)
}

// postConditionKeys updates the bucket-policy condition keys for a form upload: the
// form's signer (aws:username, aws:userid, s3:signatureversion, and s3:authType
// "POST", as AWS names it) when it is signed, s3:x-amz-acl from the acl field, and the
// encryption keys (s3:x-amz-server-side-encryption, …-customer-algorithm) from the
// form's fields only: the request's headers say nothing of what is stored.
func (c *call) postConditionKeys(res sig.Result, fields map[string]string) {
	keys := c.who.Keys
	if keys == nil {
		keys = map[string]string{}
		c.who.Keys = keys
	}
	if res.KeyID != "" && c.user != nil {
		delete(keys, s3.CondUsername)
		if c.user.Name != "" {
			keys[s3.CondUsername] = c.user.Name
		}
		keys[s3.CondUserID] = c.user.ID
		keys[s3.CondSignatureVersion] = map[int]string{2: "AWS", 4: "AWS4-HMAC-SHA256"}[res.Version]
		keys[s3.CondAuthType] = "POST"
	}
	if acl := fields["acl"]; acl != "" {
		keys[s3.CondACL] = acl
	}
	sseConditionKeys(keys, formSource(fields))
}

// baseName returns a file name without the directories some browsers send with it.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		return name[i+1:]
	}
	return name
}

// postInput builds the object a form describes: its Content-Type (the field only, as
// AWS: the file part's own type is the uploader's choice, which no policy condition
// covers, so it is not stored), the stored standard headers, the x-amz-meta-* fields,
// the canned ACL of the acl field, the tags of the tagging field (a Tagging XML
// document), the encryption of the x-amz-server-side-encryption* fields, and the
// file's checks (postBody).
func postInput(form *postForm, fields map[string]string) (s3.PutInput, error) {
	in := s3.PutInput{Size: form.size, ContentType: fields["content-type"], Canned: fields["acl"]}
	var err error
	if in.Body, in.MD5, err = postBody(form, fields); err != nil {
		return s3.PutInput{}, err
	}
	if in.SSE, err = postSSE(fields); err != nil {
		return s3.PutInput{}, err
	}
	for _, h := range storedHeaders {
		if v := fields[strings.ToLower(h)]; v != "" {
			if in.Headers == nil {
				in.Headers = map[string]string{}
			}
			in.Headers[h] = v
		}
	}
	for name, v := range fields {
		for _, p := range []string{"x-amz-meta-", "x-obj-meta-"} {
			if n, ok := strings.CutPrefix(name, p); ok {
				in.Meta = append(in.Meta, s3.MetaPair{Name: n, Value: v})
			}
		}
	}
	slices.SortFunc(in.Meta, func(a, b s3.MetaPair) int { return strings.Compare(a.Name, b.Name) })
	if err := checkHeaderFields(in); err != nil {
		return s3.PutInput{}, err
	}
	if _, err := s3.CannedACL(in.Canned, s3.Owner{}, s3.Owner{}); err != nil {
		return s3.PutInput{}, err
	}
	if t, ok := fields["tagging"]; ok {
		tags, err := s3xml.ParseTagging([]byte(t))
		if err != nil {
			return s3.PutInput{}, err
		}
		in.Tags, in.HasTags = tags, true
	}
	return in, nil
}

// postSSE reads the encryption a form asks for from its fields (sseRequestFrom); a
// KMS field is 501 NotImplemented, as the header is on a PUT.
func postSSE(fields map[string]string) (s3.SSERequest, error) {
	for _, n := range kmsHeaders {
		if _, ok := formSource(fields)(n); ok {
			return s3.SSERequest{}, errKMS
		}
	}
	return sseRequestFrom(formSource(fields))
}

// postBody returns the form's file as PutObject reads it and the MD5 it must have (the
// Content-MD5 field decoded, nil when absent; a bad value is 400 InvalidDigest): the
// file is verified, as it streams, against the x-amz-checksum-* fields (checkedReader:
// 400 BadDigest at its end, before anything is stored).
func postBody(form *postForm, fields map[string]string) (io.Reader, []byte, error) {
	var sum []byte
	if v, ok := fields["content-md5"]; ok {
		var err error
		if sum, err = decodeContentMD5(v); err != nil {
			return nil, nil, err
		}
	}
	checks, err := flexibleChecks(func(fc flexibleChecksum) string { return fields[fc.wireName()] })
	if err != nil || len(checks) == 0 {
		return form.file, sum, err
	}
	return &checkedReader{r: form.file, checks: checks, size: form.size}, sum, nil
}

// postAnswer writes the answer to a stored upload: a 303 to success_action_redirect
// (or redirect) with bucket, key and etag added to its query when it is an absolute
// http(s) URL; else the success_action_status: 200 or 201 (with the PostResponse
// document), anything else 204. Every answer says the ETag and the object's Location.
func (c *call) postAnswer(fields map[string]string, etag string) {
	h := c.w.Header()
	h.Set("ETag", `"`+etag+`"`)
	loc := c.location()
	h.Set("Location", loc)
	target, ok := fields["success_action_redirect"]
	if !ok {
		target = fields["redirect"]
	}
	if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		q := u.Query()
		q.Set("bucket", c.bucket)
		q.Set("key", c.key)
		q.Set("etag", `"`+etag+`"`)
		u.RawQuery = q.Encode()
		h.Set("Location", u.String())
		c.w.WriteHeader(http.StatusSeeOther)
		return
	}
	switch fields["success_action_status"] {
	case "200":
		c.ok()
	case "201":
		_ = httpx.WriteFull(c.w, http.StatusCreated, "application/xml", s3xml.MarshalPostResponse(loc, c.bucket, c.key, etag))
	default:
		c.w.WriteHeader(http.StatusNoContent)
	}
}

// checkHeaderFields refuses (400 InvalidArgument) form values that GET could not give
// back as headers: a metadata name that is not an HTTP token, or a value (metadata,
// Content-Type, a stored header) with a control character other than tab. A header
// of a PUT cannot carry those; a form field can.
func checkHeaderFields(in s3.PutInput) error {
	bad := func(name string) error {
		return s3.Errorf(s3.InvalidArgument, "The form field %s cannot be stored: its name or value is not a valid HTTP header.", name)
	}
	if !headerValueSafe(in.ContentType) {
		return bad("Content-Type")
	}
	for h, v := range in.Headers {
		if !headerValueSafe(v) {
			return bad(h)
		}
	}
	for _, m := range in.Meta {
		if !headerTokenSafe(m.Name) || !headerValueSafe(m.Value) {
			return bad("x-amz-meta-" + m.Name)
		}
	}
	return nil
}

// headerValueSafe reports whether v has no control character but tab.
func headerValueSafe(v string) bool {
	return !strings.ContainsFunc(v, func(c rune) bool { return c < 0x20 && c != '\t' || c == 0x7f })
}

// headerTokenSafe reports whether n is a non-empty HTTP token (RFC 9110), as a header
// name must be.
func headerTokenSafe(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}
