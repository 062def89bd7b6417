package kvapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
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

// writeError is the one place a KV error becomes a response:
//   - a *core.Error with Reasons → its status and a JSON object of the reasons;
//   - a *core.Error with a Message → its status and the message as text/plain (the
//     reference's bodies are carried verbatim in Message);
//   - a *core.Error without a message → its status and the webmachine status page;
//   - a request body over the limit → 413; too slow → 408; over the memory for bodies → 503;
//   - a listing's timeout → 200 {"error":"timeout"} (the reference's answer);
//   - anything else → logged with the request id, and a 500 page that names the id.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeText(w, http.StatusRequestEntityTooLarge, "Object exceeds the maximum size of "+strconv.FormatInt(mbe.Limit, 10)+" bytes\n")
		return
	}
	if httpx.IsBodyTimeout(err) || errors.Is(err, httpx.ErrBodyMemory) {
		writeBodyError(w, r, err)
		return
	}
	if errors.Is(err, errListingTimeout) {
		// The reference answers a listing's timeout with 200 and an error object.
		_ = httpx.WriteFull(w, http.StatusOK, "application/json", []byte(`{"error":"timeout"}`))
		return
	}
	e := core.AsError(err)
	if e == nil || e.Code == core.EINTERNAL && e.Message == "" {
		id := httpx.RequestIDFrom(r.Context())
		a.log.Error("kv: internal error", "method", r.Method, "path", r.URL.Path, "request_id", id, "err", err)
		writeHTML(w, http.StatusInternalServerError, internalPage("internal error; request id "+id))
		return
	}
	status := statusOf[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	switch {
	case len(e.Reasons) > 0:
		b, _ := json.Marshal(e.Reasons)
		_ = httpx.WriteFull(w, status, "application/json", b) // a failed write means the client left
	case e.Message != "":
		writeText(w, status, e.Message)
	default:
		writeStatusPage(w, r, status)
	}
}

// writeBodyError answers a request whose body could not be received: too slow (408,
// text) or over the memory for bodies (503, the status page). The rest of the body is
// still on the wire, so the connection is closed after the answer.
func writeBodyError(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Connection", "close")
	if httpx.IsBodyTimeout(err) {
		writeText(w, http.StatusRequestTimeout, "The request body was not received in time\n")
		return
	}
	writeStatusPage(w, r, http.StatusServiceUnavailable)
}

// writeText and writeHTML send a complete body; a failed write means the client has gone
// and there is no one left to tell.
func writeText(w http.ResponseWriter, status int, body string) {
	_ = httpx.WriteFull(w, status, "text/plain", []byte(body))
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	_ = httpx.WriteFull(w, status, "text/html", []byte(body))
}

const serverSignature = "<ADDRESS>cairn web server</ADDRESS>"

// writeStatusPage writes the reference system's HTML page for a status whose resource
// wrote no body.
func writeStatusPage(w http.ResponseWriter, r *http.Request, status int) {
	writeHTML(w, status, statusPage(status))
}

// StatusPage returns the status, content type and body writeStatusPage sends, for
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

func badRequest(msg string) error { return &core.Error{Code: core.EINVALID, Message: msg} }

// WriteInternalError writes this interface's 500 page naming the request id; the
// server's panic recovery uses it so a crash answers in the KV error format.
func WriteInternalError(w http.ResponseWriter, r *http.Request, _ error) {
	writeHTML(w, http.StatusInternalServerError, internalPage("internal error; request id "+httpx.RequestIDFrom(r.Context())))
}
