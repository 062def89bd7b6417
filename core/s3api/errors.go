package s3api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// statusOf maps S3 error codes to HTTP statuses (../shared/spec/s3-details.md §3).
var statusOf = map[s3.Code]int{
	s3.AccessDenied:              http.StatusForbidden,
	s3.SignatureDoesNotMatch:     http.StatusForbidden,
	s3.InvalidAccessKeyID:        http.StatusForbidden,
	s3.RequestTimeTooSkewed:      http.StatusForbidden,
	s3.BadDigest:                 http.StatusBadRequest,
	s3.BucketAlreadyExists:       http.StatusConflict,
	s3.BucketNotEmpty:            http.StatusConflict,
	s3.MultipartUploadRemaining:  http.StatusConflict,
	s3.UserAlreadyExists:         http.StatusConflict,
	s3.EntityTooLarge:            http.StatusBadRequest,
	s3.IncompleteBody:            http.StatusBadRequest,
	s3.InternalError:             http.StatusInternalServerError,
	s3.InvalidArgument:           http.StatusBadRequest,
	s3.InvalidBucketName:         http.StatusBadRequest,
	s3.InvalidDigest:             http.StatusBadRequest,
	s3.InvalidRequest:            http.StatusBadRequest,
	s3.InvalidUserField:          http.StatusBadRequest,
	s3.KeyTooLong:                http.StatusBadRequest,
	s3.MalformedACLError:         http.StatusBadRequest,
	s3.MalformedXML:              http.StatusBadRequest,
	s3.MalformedPolicy:           http.StatusBadRequest,
	s3.MetadataTooLarge:          http.StatusBadRequest,
	s3.TooManyBuckets:            http.StatusBadRequest,
	s3.UnresolvableGrantByEmail:  http.StatusBadRequest,
	s3.XAmzContentSHA256Mismatch: http.StatusBadRequest,
	s3.NoSuchBucket:              http.StatusNotFound,
	s3.NoSuchKey:                 http.StatusNotFound,
	s3.NoSuchBucketPolicy:        http.StatusNotFound,
	s3.NoSuchUser:                http.StatusNotFound,
	s3.NoSuchUpload:              http.StatusNotFound,
	s3.InvalidPart:               http.StatusBadRequest,
	s3.InvalidPartOrder:          http.StatusBadRequest,
	s3.EntityTooSmall:            http.StatusBadRequest,
	s3.MissingContentLength:      http.StatusLengthRequired,
	s3.MethodNotAllowed:          http.StatusMethodNotAllowed,
	s3.PreconditionFailed:        http.StatusPreconditionFailed,
	s3.NotModified:               http.StatusNotModified,
	s3.InvalidRange:              http.StatusRequestedRangeNotSatisfiable,
	s3.NotImplemented:            http.StatusNotImplemented,
	s3.ServiceUnavailable:        http.StatusServiceUnavailable,
}

// Codes the signature package may return under names core/s3 does not declare.
const (
	codeMissingSecurityHeader  s3.Code = "MissingSecurityHeader"
	codeAuthHeaderMalformed    s3.Code = "AuthorizationHeaderMalformed"
	codeAuthQueryParamsError   s3.Code = "AuthorizationQueryParametersError"
	codeRequestTimeout         s3.Code = "RequestTimeout"
	codeMaxMessageLengthExceed s3.Code = "MaxMessageLengthExceeded"
	// codeSlowDown answers writes refused because the disk is full: AWS's "reduce your
	// request rate" (503), which S3 clients retry with backoff, and writes resume on
	// their own once space is freed.
	codeSlowDown s3.Code = "SlowDown"
)

// errDiskFull is the answer to a write refused because the data directory's disk is
// full (core.ENOSPACE).
var errDiskFull = &s3.Error{Code: codeSlowDown,
	Message: "Please reduce your request rate. The server's disk is full: writes are refused until space is freed; reads still work."}

func init() {
	statusOf[codeMissingSecurityHeader] = http.StatusBadRequest
	statusOf[codeAuthHeaderMalformed] = http.StatusBadRequest
	statusOf[codeAuthQueryParamsError] = http.StatusBadRequest
	statusOf[codeRequestTimeout] = http.StatusBadRequest
	statusOf[codeMaxMessageLengthExceed] = http.StatusBadRequest
	statusOf[codeSlowDown] = http.StatusServiceUnavailable
}

// StatusOf returns the HTTP status of an S3 error code (500 for codes it does not know).
func StatusOf(c s3.Code) int {
	if st, ok := statusOf[c]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// writeError is the one place an error becomes an S3 response: an *s3.Error becomes its
// status and the XML error body (no body for HEAD, 304 or 412-less statuses that
// forbid one); a body over its limit becomes 400 MaxMessageLengthExceeded; a body too
// slow, 400 RequestTimeout (and the connection is closed); a write refused because the
// disk is full, 503 SlowDown; anything else is logged with the request id and answered
// 500 InternalError.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, resource string, err error) {
	e := s3.AsError(err)
	switch {
	case e != nil:
	case httpx.IsTooLarge(err):
		e = &s3.Error{Code: codeMaxMessageLengthExceed, Message: "Your request was too big."}
	case core.ErrorCode(err) == core.ENOSPACE:
		a.log.Warn("s3: write refused: the disk is full", "method", r.Method, "path", r.URL.Path,
			"request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		e = errDiskFull
	case httpx.IsBodyTimeout(err):
		// AWS's answer (400, not 408); the rest of the body is still on the wire.
		w.Header().Set("Connection", "close")
		e = &s3.Error{Code: codeRequestTimeout, Message: "Your socket connection to the server was not read from or written to within the timeout period."}
	default:
		a.log.Error("s3: internal error", "method", r.Method, "path", r.URL.Path,
			"request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		e = &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."}
	}
	status := StatusOf(e.Code)
	id := a.setIDHeaders(w, r)
	if e.Code == s3.NotModified {
		w.WriteHeader(http.StatusNotModified)
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
	body := s3xml.MarshalError(string(codeSlowDown), "Please reduce your request rate.", "", id, id)
	return httpx.RefusalResponse(http.StatusServiceUnavailable, "application/xml", body,
		[2]string{a.def.requestID, id}, [2]string{a.def.id2, id})
}

// WriteInternalError answers 500 InternalError (the recovery middleware's answer to a
// panic); the request id in the body lets an operator find the logged panic.
func (a *API) WriteInternalError(w http.ResponseWriter, r *http.Request, _ error) {
	a.writeError(w, r, r.URL.Path, &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."})
}
