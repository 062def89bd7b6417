package s3api

import (
	"net/http"
	"strconv"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// serveMultipart dispatches the object requests that name a multipart sub-resource:
//
//	POST   ?uploads                  initiate
//	PUT    ?partNumber=N&uploadId=U  upload part (upload part copy with x-amz-copy-source)
//	POST   ?uploadId=U               complete
//	DELETE ?uploadId=U               abort
//	GET    ?uploadId=U               list parts
//
// GET and HEAD with ?partNumber alone (reading one part of a completed upload) answer
// 501; a PUT naming only one of partNumber and uploadId is 400 InvalidArgument; any
// other combination is 405.
func (c *call) serveMultipart() {
	uploadID, hasID := c.query["uploadId"]
	switch c.r.Method {
	case http.MethodPost:
		switch {
		case c.has("uploads") && !hasID:
			c.initiateUpload()
			return
		case hasID:
			c.completeUpload(uploadID[0])
			return
		}
	case http.MethodPut:
		if hasID != c.has("partNumber") {
			c.fail(s3.Errorf(s3.InvalidArgument, "Uploading a part requires both the partNumber and the uploadId query parameters"))
			return
		}
		if hasID {
			c.uploadPart(uploadID[0])
			return
		}
	case http.MethodDelete:
		if hasID {
			c.abortUpload(uploadID[0])
			return
		}
	case http.MethodGet, http.MethodHead:
		switch {
		case hasID && c.r.Method == http.MethodGet:
			c.listParts(uploadID[0])
			return
		case !hasID && c.has("partNumber"):
			c.notImplemented("?partNumber on GET and HEAD")
			return
		}
	}
	c.methodNotAllowed()
}

// initiateUpload answers POST ?uploads: the headers describe the object to be (as a PUT's
// do); the answer carries the new upload id.
func (c *call) initiateUpload() {
	in, err := c.objectInput()
	if err != nil {
		c.fail(err)
		return
	}
	u, err := c.a.svc.CreateUpload(c.r.Context(), c.who, c.bucket, c.key, in)
	if err != nil {
		c.fail(err)
		return
	}
	c.echoSSE(u.SSE, in.SSE.Customer)
	c.writeXML(s3xml.MarshalInitiateMultipartUpload(c.bucket, c.key, u.ID))
}

// partNumber returns the partNumber query parameter: an integer 1..10000, else 400
// InvalidArgument.
func (c *call) partNumber() (int, error) {
	n, err := strconv.Atoi(c.query.Get("partNumber"))
	if err != nil || n < 1 || n > s3.MaxPartNumber {
		return 0, s3.Errorf(s3.InvalidArgument, "Part number must be an integer between 1 and %d, inclusive", s3.MaxPartNumber)
	}
	return n, nil
}

// uploadPart answers PUT ?partNumber=N&uploadId=U: the body is read as a PUT object's
// (Content-Length or 411, Content-MD5, x-amz-checksum-*, V4 payload verification,
// aws-chunked), every
// header check first. With x-amz-copy-source the part is copied instead.
func (c *call) uploadPart(uploadID string) {
	n, err := c.partNumber()
	if err != nil {
		c.fail(err)
		return
	}
	if c.header("Copy-Source") != "" {
		c.uploadPartCopy(uploadID, n)
		return
	}
	data, err := c.uploadHeaders()
	if err == nil {
		data.SSE.Customer, err = c.customerKey("")
	}
	if err != nil {
		c.fail(err)
		return
	}
	p, err := c.a.svc.PutPart(c.r.Context(), c.who, c.bucket, c.key, uploadID, n, data)
	if err != nil {
		c.fail(err)
		return
	}
	c.echoPartSSE(p, data.SSE.Customer)
	c.w.Header().Set("ETag", `"`+p.ETag+`"`)
	c.ok()
}

// completeUpload answers POST ?uploadId=U with a CompleteMultipartUpload body (at most
// maxXMLBody bytes): the service checks the parts and commits the object; the answer
// names it with its location and multipart ETag. The SSE-C headers, optional as at
// AWS, authenticate an SSE-C object's layout with the customer's key when given
// (s3.Service.CompleteUploadWithKey).
func (c *call) completeUpload(uploadID string) {
	ck, err := c.customerKey("")
	if err != nil {
		c.fail(err)
		return
	}
	body, err := c.readXMLBody()
	if err != nil {
		c.fail(err)
		return
	}
	parts, err := s3xml.ParseCompleteMultipartUpload(body)
	if err != nil {
		c.fail(err)
		return
	}
	m, err := c.a.svc.CompleteUploadWithKey(c.r.Context(), c.who, c.bucket, c.key, uploadID, parts, c.writeConditions(), ck)
	if err != nil {
		c.fail(err)
		return
	}
	c.setExpiration(m)
	c.echoSSE(m.SSE, ck) // else the upload's key MD5 (CompleteUpload)
	c.setVersionHeader(m)
	c.writeXML(s3xml.MarshalCompleteMultipartUpload(c.location(), c.bucket, c.key, m.ETag))
}

// location is the URL of the addressed object as the client reached it: the scheme of
// the connection, the Host header, and the path in the request's addressing style
// (/key on a bucket host, /bucket/key otherwise), URL-encoded.
func (c *call) location() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	path := "/" + c.key
	if c.hostBucket == "" {
		path = "/" + c.bucket + path
	}
	return scheme + "://" + c.r.Host + s3xml.URLEncode(path)
}

// abortUpload answers DELETE ?uploadId=U: 204, or 404 NoSuchUpload.
func (c *call) abortUpload(uploadID string) {
	if err := c.a.svc.AbortUpload(c.r.Context(), c.who, c.bucket, c.key, uploadID); err != nil {
		c.fail(err)
		return
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// nonNegativeParam returns the integer query parameter name (def when absent); a value
// that is not a non-negative integer is 400 InvalidArgument.
func (c *call) nonNegativeParam(name string, def int) (int, error) {
	v, ok := c.query[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 0 {
		return 0, s3.Errorf(s3.InvalidArgument, "Argument %s must be an integer between 0 and 2147483647", name)
	}
	return n, nil
}

// listParts answers GET ?uploadId=U: a page of at most max-parts (default and cap 1000)
// parts after part-number-marker. max-parts=0 gives an empty page, truncated when parts
// follow the marker.
func (c *call) listParts(uploadID string) {
	marker, err := c.nonNegativeParam("part-number-marker", 0)
	if err != nil {
		c.fail(err)
		return
	}
	maxParts, err := c.nonNegativeParam("max-parts", s3.MaxListParts)
	if err != nil {
		c.fail(err)
		return
	}
	maxParts = min(maxParts, s3.MaxListParts)
	u, parts, truncated, err := c.a.svc.ListParts(c.r.Context(), c.who, c.bucket, c.key, uploadID, marker, max(maxParts, 1))
	if err != nil {
		c.fail(err)
		return
	}
	if maxParts == 0 {
		truncated = truncated || len(parts) > 0
		parts = nil
	}
	c.writeXML(s3xml.MarshalListParts(s3xml.PartList{Bucket: c.bucket, Key: c.key, UploadID: uploadID,
		Initiator: u.Owner, Owner: u.Owner, PartNumberMarker: marker, MaxParts: maxParts, Truncated: truncated, Parts: xmlParts(parts)}))
}

// xmlParts returns the parts as a ListParts answer lists them.
func xmlParts(parts []s3.PartInfo) []s3xml.Part {
	out := make([]s3xml.Part, len(parts))
	for i, p := range parts {
		out[i] = s3xml.Part{Number: p.Number, LastModified: p.LastModified, ETag: p.ETag, Size: p.Extent.Size}
	}
	return out
}

// xmlUploads returns a page of uploads as a ListMultipartUploads answer lists it.
func xmlUploads(l *s3.UploadListing) *s3xml.UploadPage {
	page := &s3xml.UploadPage{Uploads: make([]s3xml.Upload, len(l.Uploads)), CommonPrefixes: l.CommonPrefixes,
		Truncated: l.Truncated, NextKeyMarker: l.NextKeyMarker, NextUploadIDMarker: l.NextUploadIDMarker}
	for i := range l.Uploads {
		u := &l.Uploads[i]
		page.Uploads[i] = s3xml.Upload{Key: u.Key, ID: u.ID, Owner: u.Owner, Initiated: u.Initiated}
	}
	return page
}

// listUploads answers GET Bucket ?uploads: the uploads in progress after key-marker
// (and upload-id-marker, which counts only with a key-marker), by key then upload id,
// with prefix, delimiter, max-uploads (default and cap 1000; 0 gives an empty page)
// and encoding-type=url.
func (c *call) listUploads() {
	q := c.query
	opts := s3.UploadListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker")}
	if opts.KeyMarker == "" {
		opts.UploadIDMarker = ""
	}
	n, err := c.nonNegativeParam("max-uploads", s3.MaxListUploads)
	if err != nil {
		c.fail(err)
		return
	}
	n = min(n, s3.MaxListUploads)
	opts.MaxUploads = max(n, 1)
	encURL, err := c.encodingURL()
	if err != nil {
		c.fail(err)
		return
	}
	l, err := c.a.svc.ListUploads(c.r.Context(), c.who, c.bucket, opts)
	if err != nil {
		c.fail(err)
		return
	}
	if n == 0 {
		l = &s3.UploadListing{Truncated: l.Truncated || len(l.Uploads)+len(l.CommonPrefixes) > 0,
			NextKeyMarker: opts.KeyMarker, NextUploadIDMarker: opts.UploadIDMarker}
	}
	c.writeXML(s3xml.MarshalListUploads(s3xml.UploadList{Bucket: c.bucket, Prefix: opts.Prefix, Delimiter: opts.Delimiter,
		KeyMarker: opts.KeyMarker, UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: n, EncodingURL: encURL, Listing: xmlUploads(l)}))
}
