package s3api

import (
	"io"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// maxDeleteBody bounds the body of a multi-object delete (1000 keys of 1024 bytes fit).
const maxDeleteBody = 2 << 20

// deleteObjects answers POST Bucket ?delete: every object the Delete document names is
// deleted as DELETE Object would, and the answer reports each key as Deleted (left out
// in quiet mode) or as an Error with its code and message. The body must come with an
// integrity header (see deleteChecks), is at most maxDeleteBody bytes and names at most
// 1000 objects (else 400 MalformedXML). A missing bucket is 404 NoSuchBucket for the
// whole request; permission is checked per key (AccessDenied entries).
func (c *call) deleteObjects() {
	ctx := c.r.Context()
	if _, err := c.a.svc.Bucket(ctx, c.bucket); err != nil {
		c.fail(err)
		return
	}
	if err := c.checkPayload(); err != nil {
		c.fail(err)
		return
	}
	checks, err := c.deleteChecks()
	if err != nil {
		c.fail(err)
		return
	}
	httpx.LimitRequestBody(c.w, c.r, maxDeleteBody)
	body, err := io.ReadAll(c.checkedBody(checks, -1))
	if err != nil {
		c.fail(err)
		return
	}
	req, err := s3xml.ParseDelete(body)
	if err != nil {
		c.fail(err)
		return
	}
	outcomes := make([]s3xml.DeleteOutcome, 0, len(req.Objects))
	bypass := c.bypassGovernance()
	for _, o := range req.Objects {
		if err := ctx.Err(); err != nil {
			c.fail(err) // the client is gone; what was deleted stays deleted
			return
		}
		out := s3xml.DeleteOutcome{Key: o.Key, VersionID: o.VersionID}
		if res, err := c.a.svc.DeleteObjectVersionBypassing(ctx, c.who, c.bucket, o.Key, o.VersionID, bypass); err == nil {
			out.DeleteMarker = res.DeleteMarker
			if res.DeleteMarker {
				out.DeleteMarkerVersionID = res.VersionID
			}
		} else {
			e := s3.AsError(err)
			if e == nil {
				c.a.log.Error("s3: multi-object delete", "bucket", c.bucket, "key", o.Key,
					"request_id", httpx.RequestIDFrom(ctx), "err", err)
				e = &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."}
			}
			out.Code, out.Message = e.Code, e.Message
		}
		outcomes = append(outcomes, out)
	}
	c.writeXML(s3xml.MarshalDeleteResult(req.Quiet, outcomes))
}

// deleteChecks returns the integrity checks the body of a multi-object delete must
// pass (see bodyChecks): Content-MD5 and the flexible checksums, every one present
// being checked. With none of them the answer is 400 InvalidRequest "Missing required
// header for this request: Content-MD5".
func (c *call) deleteChecks() ([]*bodyCheck, error) {
	checks, err := c.bodyChecks(true)
	if err != nil {
		return nil, err
	}
	if len(checks) == 0 {
		return nil, s3.Errorf(s3.InvalidRequest, "Missing required header for this request: Content-MD5")
	}
	return checks, nil
}
