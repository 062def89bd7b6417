package s3api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// errDiskFull is the answer to a write refused because the data directory's disk is
// full (core.ENOSPACE): AWS's "reduce your request rate" (503 SlowDown), which S3
// clients retry with backoff, and writes resume on their own once space is freed.
var errDiskFull = &s3.Error{Code: s3types.SlowDown,
	Message: "Please reduce your request rate. The server's disk is full: writes are refused until space is freed; reads still work."}

// writeError is the one place an error becomes an S3 response: an *s3.Error becomes its
// status and the XML error body (no body for HEAD, 304 or 412-less statuses that
// forbid one); a body over its limit becomes 400 MaxMessageLengthExceeded; a body too
// slow, 400 RequestTimeout (and the connection is closed); a write refused because the
// disk is full, 503 SlowDown; a store that cannot answer (core.EUNAVAILABLE), 503
// ServiceUnavailable; anything else is logged with the request id and answered
// 500 InternalError.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, resource string, err error) {
	e := s3.AsError(err)
	switch {
	case e != nil:
	case httpx.IsTooLarge(err):
		e = &s3.Error{Code: s3types.MaxMessageLengthExceeded, Message: "Your request was too big."}
	case core.ErrorCode(err) == core.ENOSPACE:
		a.log.Warn("s3: write refused: the disk is full", "method", r.Method, "path", r.URL.Path,
			"request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		e = errDiskFull
	case core.ErrorCode(err) == core.EUNAVAILABLE:
		// A cluster node whose replicas did not answer (or answered too late): the
		// write may or may not have been applied; S3 clients retry 503s.
		a.log.Warn("s3: unavailable", "method", r.Method, "path", r.URL.Path,
			"request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		e = &s3.Error{Code: s3.ServiceUnavailable, Message: "Please try again. " + strings.TrimSpace(core.ErrorMessage(err))}
	case httpx.IsBodyTimeout(err):
		// AWS's answer (400, not 408); the rest of the body is still on the wire.
		w.Header().Set("Connection", "close")
		e = &s3.Error{Code: s3types.RequestTimeout, Message: "Your socket connection to the server was not read from or written to within the timeout period."}
	default:
		a.log.Error("s3: internal error", "method", r.Method, "path", r.URL.Path,
			"request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		e = &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."}
	}
	status := e.Code.Status() // the one table of codes and statuses (s3types)
	id := a.setIDHeaders(w, r)
	if e.Code == s3.NotModified {
		w.WriteHeader(status) // 304 has no body
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	var extra [][2]string
	var se *sig.SignatureError
	if errors.As(err, &se) {
		// AWS's debugging elements: what the server signed (never the secret).
		extra = append(extra, [2]string{"AWSAccessKeyId", se.AccessKeyID}, [2]string{"StringToSign", se.StringToSign},
			[2]string{"SignatureProvided", se.SignatureProvided})
		if se.CanonicalRequest != "" {
			extra = append(extra, [2]string{"CanonicalRequest", se.CanonicalRequest})
		}
	}
	if e.Code == s3.NotImplemented {
		a.log.Info("s3: not implemented", "method", r.Method, "path", r.URL.Path, "query", loggableQuery(r.URL.RawQuery),
			"request_id", id, "what", e.Message)
	}
	body := s3xml.MarshalError(string(e.Code), e.Message, resource, id, id, extra...)
	_ = httpx.WriteFull(w, status, "application/xml", body) // a failed write means the client left
}

// credentialParams are the query parameters of presigned URLs that carry a credential
// (lower case): a log shows their names, never their values, since a presigned URL is
// usable by whoever reads it until it expires.
var credentialParams = map[string]bool{"x-amz-signature": true, "x-amz-credential": true,
	"x-amz-security-token": true, "signature": true, "awsaccesskeyid": true}

// loggableQuery returns a raw query for a log line, the values of credential-bearing
// parameters replaced by "REDACTED" (an unparsable query is logged as "(malformed)").
func loggableQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "(malformed)"
	}
	for k := range q {
		if credentialParams[strings.ToLower(k)] {
			q[k] = []string{"REDACTED"}
		}
	}
	return q.Encode()
}

// setIDHeaders makes sure the response carries the request-id and id-2 headers, with
// the request's id (an error body's RequestId and HostId repeat it), and returns the id.
// serve sets them when the request arrives, in the request's names; an answer written
// outside it (the recovery middleware's, after a panic) chooses the names here.
func (a *API) setIDHeaders(w http.ResponseWriter, r *http.Request) string {
	id := httpx.RequestIDFrom(r.Context())
	h := w.Header()
	if h[amzNames.requestID] == nil && h[objNames.requestID] == nil {
		a.namesFor(r, r.URL.Query()).setIDs(h, id)
	}
	return id
}

// BusyResponse returns the complete answer to a connection refused because the server
// is at its connection limits (httpx.ConnLimits.NewRefusal): 503 SlowDown, under a new
// request id carried by the request-id and id-2 headers (in the configured dialect's
// names: the request is never read) and the body's RequestId and HostId.
func (a *API) BusyResponse() []byte {
	id := httpx.NewRequestID()
	body := s3xml.MarshalError(string(s3types.SlowDown), "Please reduce your request rate.", "", id, id)
	return httpx.RefusalResponse(s3types.SlowDown.Status(), "application/xml", body,
		[2]string{a.def.requestID, id}, [2]string{a.def.id2, id})
}

// WriteInternalError answers 500 InternalError (the recovery middleware's answer to a
// panic); the request id in the body lets an operator find the logged panic.
func (a *API) WriteInternalError(w http.ResponseWriter, r *http.Request, _ error) {
	a.writeError(w, r, r.URL.Path, &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."})
}
