package s3api

import (
	"errors"
	"net/http"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// Bucket versioning: PUT/GET ?versioning, GET ?versions, and the version ids of
// object requests (docs/s3.md, "Versioning").

// versionID returns the request's ?versionId ("" when it has none); a value that is
// neither "null" nor an id Cairn gives is 400 InvalidArgument.
func (c *call) versionID() (string, error) {
	v, ok := c.query["versionId"]
	if !ok {
		return "", nil
	}
	if err := s3.CheckVersionID(v[0]); err != nil {
		return "", err
	}
	return v[0], nil
}

// setVersionHeader sets x-amz-version-id to the id of version m when the bucket keeps
// versions ("null" for its null version); a bucket never versioned gets none, as
// from AWS.
func (c *call) setVersionHeader(m *s3.Manifest) {
	id := m.VersionID
	if id == "" {
		b, err := c.bucketOf(m)
		if err != nil || b.Versioning == "" {
			return
		}
		id = s3.NullVersionID
	}
	c.w.Header()[c.names.prefix+"version-id"] = []string{id}
}

// bucketOf returns the record of the bucket of m, a manifest the service returned: the
// one it read or committed m with (s3.Manifest.Bucket), else (a manifest without one)
// the bucket as it is now.
func (c *call) bucketOf(m *s3.Manifest) (*s3.Bucket, error) {
	if b := m.Bucket(); b != nil {
		return b, nil
	}
	return c.a.svc.Bucket(c.r.Context(), c.bucket)
}

// setMarkerHeaders sets, for an error that met a delete marker, x-amz-delete-marker:
// true and the marker's version id (and Last-Modified for a 405, as AWS).
func (c *call) setMarkerHeaders(err error) {
	var me *s3.MarkerError
	if !errors.As(err, &me) {
		return
	}
	h := c.w.Header()
	h[c.names.prefix+"delete-marker"] = []string{"true"}
	h[c.names.prefix+"version-id"] = []string{me.VersionID}
	if me.Err.Code == s3.MethodNotAllowed {
		h.Set("Last-Modified", me.LastModified.Format(http.TimeFormat))
	}
}

// getBucketVersioning answers GET ?versioning.
func (c *call) getBucketVersioning() {
	status, err := c.a.svc.BucketVersioning(c.r.Context(), c.who, c.bucket)
	if err != nil {
		c.fail(err)
		return
	}
	c.writeXML(s3xml.MarshalVersioningConfiguration(status))
}

// putBucketVersioning answers PUT ?versioning: Status Enabled or Suspended (else 400
// IllegalVersioningConfigurationException). MfaDelete Enabled is 501 NotImplemented
// (Cairn has no MFA devices); Disabled or absent is accepted.
func (c *call) putBucketVersioning() {
	body, err := c.readXMLBody()
	if err != nil {
		c.fail(err)
		return
	}
	status, mfa, err := s3xml.ParseVersioningConfiguration(body)
	if err != nil {
		c.fail(err)
		return
	}
	switch mfa {
	case "", "Disabled":
	case "Enabled":
		c.notImplemented("MfaDelete (Cairn has no MFA devices)")
		return
	default:
		c.fail(s3.Errorf(s3.IllegalVersioningConfiguration, "The versioning configuration specified in the request is invalid: MfaDelete must be Enabled or Disabled."))
		return
	}
	if err := c.a.svc.SetBucketVersioning(c.r.Context(), c.who, c.bucket, status); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

// listVersions answers GET ?versions (ListObjectVersions).
func (c *call) listVersions() {
	q := c.query
	opts := s3.VersionListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), KeyMarker: q.Get("key-marker"),
		VersionIDMarker: q.Get("version-id-marker")}
	var encURL bool
	var err error
	if opts.MaxKeys, encURL, err = c.listParams(); err != nil {
		c.fail(err)
		return
	}
	l, err := c.a.svc.ListObjectVersions(c.r.Context(), c.who, c.bucket, opts)
	if err != nil {
		c.fail(err)
		return
	}
	c.writeXML(s3xml.MarshalListVersions(s3xml.ListVersions{Bucket: c.bucket, Prefix: opts.Prefix, KeyMarker: opts.KeyMarker,
		VersionIDMarker: opts.VersionIDMarker, Delimiter: opts.Delimiter, MaxKeys: opts.MaxKeys, EncodingURL: encURL, Listing: l}))
}

// deleteObject answers DELETE of an object, with or without ?versionId: 204 with
// x-amz-version-id (the version removed, or the delete marker made) and
// x-amz-delete-marker when that is a delete marker. Other sub-resources are 405.
func (c *call) deleteObject() {
	if !c.onlySubResource("versionId") {
		c.methodNotAllowed()
		return
	}
	id, err := c.versionID()
	if err != nil {
		c.fail(err)
		return
	}
	res, err := c.a.svc.DeleteObjectVersionBypassing(c.r.Context(), c.who, c.bucket, c.key, id, c.bypassGovernance())
	if err != nil {
		c.fail(err)
		return
	}
	h := c.w.Header()
	if res.VersionID != "" {
		h[c.names.prefix+"version-id"] = []string{res.VersionID}
	}
	if res.DeleteMarker {
		h[c.names.prefix+"delete-marker"] = []string{"true"}
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// onlySubResource reports whether sub is the request's only sub-resource.
func (c *call) onlySubResource(sub string) bool {
	for _, s := range subResources {
		if s != sub && c.has(s) {
			return false
		}
	}
	return true
}
