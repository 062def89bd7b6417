package kvapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/security"
)

// statusOf maps error codes to HTTP statuses for this interface.
var statusOf = map[string]int{
	core.EINVALID:      http.StatusBadRequest,
	core.ENOTFOUND:     http.StatusNotFound,
	core.EFORBIDDEN:    http.StatusForbidden,
	core.ECONFLICT:     http.StatusConflict,
	core.EPRECONDITION: http.StatusPreconditionFailed,
	core.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	core.EMEDIATYPE:    http.StatusUnsupportedMediaType,
	core.ENOTACCEPT:    http.StatusNotAcceptable,
	core.EUNAVAILABLE:  http.StatusServiceUnavailable,
	core.ENOSPACE:      http.StatusInsufficientStorage,
	core.EINTERNAL:     http.StatusInternalServerError,
}

// httpError is an answer the core error codes cannot name: a status of the HTTP layer
// (301, 401, 405, 426, 501), a text body at a status no code gives it, or extra headers
// (Allow, WWW-Authenticate, Location, a tombstone's clock). Handlers return it like any
// other error; writeError sends it as it is.
type httpError struct {
	status int
	// header holds (name, value) pairs set on the response before it is written; names
	// are canonical.
	header [][2]string
	// text is the text/plain body; "" sends the status page.
	text string
	// ctype, when set, is the body's content type instead of text/plain (a data type's
	// JSON not-found answer).
	ctype string
}

// Error implements the error interface.
func (e *httpError) Error() string {
	if e.text == "" {
		return "kvapi: " + strconv.Itoa(e.status) + " " + http.StatusText(e.status)
	}
	return "kvapi: " + strconv.Itoa(e.status) + ": " + e.text
}

// statusError answers status with the status page (text "") or a text/plain body, and
// the given (name, value) header pairs.
func statusError(status int, text string, header ...[2]string) error {
	return &httpError{status: status, text: text, header: header}
}

// jsonStatusError answers status with an application/json body.
func jsonStatusError(status int, body []byte) error {
	return &httpError{status: status, text: string(body), ctype: "application/json"}
}

// jobError marks an error of a MapReduce job (parse, start or run): writeError answers
// the job's errors with the reference's JSON error objects (mapredErrorBody).
type jobError struct{ err error }

func (e *jobError) Error() string { return e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

// reply is the answer writeError sends for an error.
type reply struct {
	status int
	// ctype and body are the body; body nil with ctype "" sends no body at all.
	ctype string
	body  []byte
	// header holds extra (name, value) pairs; closeConn closes the connection after
	// the answer (the rest of an unread body is still on the wire).
	header    [][2]string
	closeConn bool
	// none: nothing is sent (the client has gone).
	none bool
}

// writeError is the one place a KV error becomes a response: replyTo chooses the
// answer, writeError sends it. Handlers return their errors to the route adapter, which
// calls it; a handler that has begun its answer returns nil.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	rep := a.replyTo(r, err)
	if rep.none {
		return
	}
	h := w.Header()
	for _, kv := range rep.header {
		h[kv[0]] = []string{kv[1]}
	}
	if rep.closeConn {
		h.Set("Connection", "close")
	}
	if rep.status == http.StatusNotImplemented {
		a.logNotImplemented(r)
	}
	_ = httpx.WriteFull(w, rep.status, rep.ctype, rep.body) // a failed write means the client left
}

// maxLoggedQuery bounds the query a 501's log line repeats, so a client cannot make one
// request write a log line as long as its URL.
const maxLoggedQuery = 1024

// logNotImplemented records a request for something Cairn does not do (501), with the
// method, path and query that asked for it, so an operator sees which features clients
// expect. KV queries carry no credentials (HTTP Basic travels in a header).
func (a *API) logNotImplemented(r *http.Request) {
	q := r.URL.RawQuery
	if len(q) > maxLoggedQuery {
		q = q[:maxLoggedQuery] + "..."
	}
	a.log.Info("kv: not implemented", "method", r.Method, "path", r.URL.Path, "query", q,
		"request_id", httpx.RequestIDFrom(r.Context()))
}

// replyTo maps an error to its answer:
//   - an *httpError → its status, headers and text (or the status page);
//   - a request body over the limit → 413; too slow → 408; over the memory for bodies → 503;
//   - a listing's timeout → 200 {"error":"timeout"} (the reference's answer);
//   - a refused permission → 403 with Riak's text; a grant to an unknown user → 404, a
//     bad grant scope or too many grants → 400, each with the error's text;
//   - a MapReduce job that cannot be parsed → 400, a busy client → 503, as text; any
//     other error of a job (jobError) → the reference's JSON error object;
//   - a *core.Error with Reasons → its status and a JSON object of the reasons;
//   - a *core.Error with a Message → its status and the message as text/plain (the
//     reference's bodies are carried verbatim in Message);
//   - a *core.Error without a message → its status and the webmachine status page;
//   - anything else → logged with the request id, and a 500 page that names the id.
func (a *API) replyTo(r *http.Request, err error) reply {
	var (
		he     *httpError
		mbe    *http.MaxBytesError
		denied *security.DeniedError
		pe     *mapreduce.ParseError
		be     *mapreduce.BusyError
		je     *jobError
	)
	switch {
	case errors.As(err, &he):
		rep := textReply(he.status, he.text)
		if he.text == "" {
			rep = pageReply(he.status)
		} else if he.ctype != "" {
			rep.ctype = he.ctype
		}
		rep.header = he.header
		return rep
	case errors.As(err, &mbe):
		return textReply(http.StatusRequestEntityTooLarge, "Object exceeds the maximum size of "+strconv.FormatInt(mbe.Limit, 10)+" bytes\n")
	case httpx.IsBodyTimeout(err):
		rep := textReply(http.StatusRequestTimeout, "The request body was not received in time\n")
		rep.closeConn = true
		return rep
	case errors.Is(err, httpx.ErrBodyMemory):
		rep := pageReply(http.StatusServiceUnavailable)
		rep.closeConn = true
		return rep
	case errors.Is(err, errListingTimeout):
		// The reference answers a listing's timeout with 200 and an error object.
		return reply{status: http.StatusOK, ctype: "application/json", body: []byte(`{"error":"timeout"}`)}
	case errors.As(err, &denied):
		return textReply(http.StatusForbidden, denied.Error())
	case errors.Is(err, security.ErrUnknownUser):
		return textReply(http.StatusNotFound, err.Error()+"\n")
	case errors.Is(err, security.ErrInvalidScope), errors.Is(err, security.ErrTooManyGrants):
		return textReply(http.StatusBadRequest, err.Error()+"\n")
	case errors.As(err, &pe):
		return textReply(http.StatusBadRequest, pe.Message)
	case errors.As(err, &be):
		return textReply(http.StatusServiceUnavailable, be.Message+"\n")
	case errors.As(err, &je):
		status, body, ok := a.mapredErrorBody(r, je.err)
		if !ok {
			return reply{none: true}
		}
		return reply{status: status, ctype: "application/json", body: body}
	}
	e := core.AsError(err)
	if e == nil || e.Code == core.EINTERNAL && e.Message == "" {
		id := httpx.RequestIDFrom(r.Context())
		a.log.Error("kv: internal error", "method", r.Method, "path", r.URL.Path, "request_id", id, "err", err)
		return internalReply(id)
	}
	status := statusOf[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	switch {
	case len(e.Reasons) > 0:
		b, _ := json.Marshal(e.Reasons)
		return reply{status: status, ctype: "application/json", body: b}
	case e.Message != "":
		return textReply(status, e.Message)
	default:
		return pageReply(status)
	}
}

// textReply answers status with a text/plain body.
func textReply(status int, text string) reply {
	return reply{status: status, ctype: "text/plain", body: []byte(text)}
}

// pageReply answers status with the reference's HTML status page.
func pageReply(status int) reply {
	return reply{status: status, ctype: "text/html", body: []byte(statusPage(status))}
}

// internalReply is the 500 page naming the request id.
func internalReply(id string) reply {
	return reply{status: http.StatusInternalServerError, ctype: "text/html", body: []byte(internalPage("internal error; request id " + id))}
}

const serverSignature = "<ADDRESS>cairn web server</ADDRESS>"

// StatusPage returns the status, content type and body of a status page, for
// answers written outside a handler (the 503 of a connection over the server's limits).
func StatusPage(status int) (int, string, []byte) {
	return status, "text/html", []byte(statusPage(status))
}

func statusPage(status int) string {
	switch status {
	case http.StatusNotFound:
		return "<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD><BODY><H1>Not Found</H1>The requested document was not found on this server.<P><HR>" + serverSignature + "</BODY></HTML>"
	case http.StatusServiceUnavailable:
		return "<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1>The server is currently unable to handle the request due to a temporary overloading or maintenance of the server.<br><P><HR>" + serverSignature + "</body></html>"
	default:
		phrase := http.StatusText(status)
		return "<html><head><title>" + strconv.Itoa(status) + " " + phrase + "</title></head><body><h1>" + phrase + "</h1>" + phrase + "<p><hr><address>cairn web server</address></body></html>"
	}
}

func internalPage(reason string) string {
	return "<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1>The server encountered an error while processing this request:<br><pre>" + reason + "</pre><P><HR>" + serverSignature + "</body></html>"
}

// bodyless returns err as the same error without a message, so that writeError sends
// the status page (the reference's props and keylist resources have no 404 body).
func bodyless(err error) error {
	if e := core.AsError(err); e != nil && e.Message != "" && len(e.Reasons) == 0 {
		return &core.Error{Code: e.Code}
	}
	return err
}

// badRequest is 400 with msg as its text/plain body.
func badRequest(msg string) error { return &core.Error{Code: core.EINVALID, Message: msg} }

// Errors answered with the status page alone; they carry no message, so they are
// shared (nothing mutates a *core.Error after it is made).
var (
	errBadRequest    error = &core.Error{Code: core.EINVALID}
	errNotFound      error = &core.Error{Code: core.ENOTFOUND}
	errNotAcceptable error = &core.Error{Code: core.ENOTACCEPT}
	errMediaType     error = &core.Error{Code: core.EMEDIATYPE}
)

// WriteInternalError writes this interface's 500 page naming the request id; the
// server's panic recovery uses it so a crash answers in the KV error format.
func WriteInternalError(w http.ResponseWriter, r *http.Request, _ error) {
	rep := internalReply(httpx.RequestIDFrom(r.Context()))
	_ = httpx.WriteFull(w, rep.status, rep.ctype, rep.body) // a failed write means the client left
}
