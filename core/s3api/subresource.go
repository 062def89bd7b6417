package s3api

import (
	"context"
	"net/http"

	"github.com/cairnkv/cairn/core/httpx"
)

// docOps are the service calls behind one sub-resource document of a bucket or an
// object (?tagging, ?cors, ?lifecycle, ?encryption, ?object-lock, ?retention,
// ?legal-hold): serveDoc answers the methods from them.
type docOps struct {
	// get answers GET with the document (XML).
	get func(context.Context) ([]byte, error)
	// put reads the request's document and stores it.
	put func(context.Context) error
	// del removes the document (204); nil: DELETE is 405.
	del func(context.Context) error
	// putStatus is a successful PUT's status; 0 is 200.
	putStatus int
}

// serveDoc answers GET, PUT and (when ops has it) DELETE of a sub-resource document
// with ops; other methods are 405, failures S3 errors.
func (c *call) serveDoc(ops docOps) {
	ctx := c.r.Context()
	var err error
	switch {
	case c.r.Method == http.MethodGet:
		var doc []byte
		if doc, err = ops.get(ctx); err == nil {
			c.writeXML(doc)
			return
		}
	case c.r.Method == http.MethodPut:
		if err = ops.put(ctx); err == nil {
			status := ops.putStatus
			if status == 0 {
				status = http.StatusOK
			}
			_ = httpx.WriteFull(c.w, status, "", nil) // a failed write means the client left
			return
		}
	case c.r.Method == http.MethodDelete && ops.del != nil:
		if err = ops.del(ctx); err == nil {
			c.w.WriteHeader(http.StatusNoContent)
			return
		}
	default:
		c.methodNotAllowed()
		return
	}
	c.fail(err)
}
