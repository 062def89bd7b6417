package httpx

import (
	"io"
	"net/http"
	"time"
)

// ResponseWriter wraps an http.ResponseWriter and records the status code and the number
// of body bytes written, and the mux route name for the request (see RouteName). It
// implements http.Flusher and io.ReaderFrom whatever it wraps, and Unwrap for
// http.ResponseController (deadlines, Hijack, full-duplex). Like the writer it wraps, it
// must not be used after the handler returns, nor from two goroutines at once.
type ResponseWriter struct {
	w      http.ResponseWriter
	status int
	bytes  int64
	route  string
	// start and elapsed are monotonic times since epoch, set by the first timing
	// middleware and the first to finish, so AccessLog and Metrics share two clock reads.
	start, elapsed time.Duration
	timed          bool
}

// WrapResponseWriter returns w itself when it is already a *ResponseWriter, and a new
// *ResponseWriter around w otherwise.
func WrapResponseWriter(w http.ResponseWriter) *ResponseWriter {
	if rw, ok := w.(*ResponseWriter); ok {
		return rw
	}
	return &ResponseWriter{w: w}
}

// Header returns the header map of the wrapped writer.
func (rw *ResponseWriter) Header() http.Header { return rw.w.Header() }

// WriteHeader sends the status line and headers. Informational codes (1xx other than 101)
// are passed on without being recorded, since the final status follows them.
func (rw *ResponseWriter) WriteHeader(code int) {
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		rw.w.WriteHeader(code)
		return
	}
	if rw.status == 0 {
		rw.status = code
	}
	rw.w.WriteHeader(code)
}

// Write writes body bytes, sending a 200 header first if none was sent.
func (rw *ResponseWriter) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	n, err := rw.w.Write(p)
	rw.bytes += int64(n)
	return n, err
}

// ReadFrom copies src into the body, using the wrapped writer's ReadFrom (sendfile for
// files on a plain net/http connection) when it has one.
func (rw *ResponseWriter) ReadFrom(src io.Reader) (int64, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := rw.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(writerOnly{rw.w}, src)
	}
	rw.bytes += n
	return n, err
}

// writerOnly hides every method but Write, so io.Copy does not loop back into ReadFrom.
type writerOnly struct{ io.Writer }

// FlushError sends buffered data to the client and reports whether that was possible;
// http.ResponseController.Flush calls it.
func (rw *ResponseWriter) FlushError() error {
	err := http.NewResponseController(rw.w).Flush()
	if err == nil && rw.status == 0 {
		rw.status = http.StatusOK
	}
	return err
}

// Flush implements http.Flusher: it sends buffered data to the client, if the wrapped
// writer can flush.
func (rw *ResponseWriter) Flush() { _ = rw.FlushError() }

// Unwrap returns the wrapped writer, for http.ResponseController.
func (rw *ResponseWriter) Unwrap() http.ResponseWriter { return rw.w }

// Status returns the status code sent, or 0 when no header has been sent yet (net/http
// sends 200 for a handler that returns without writing).
func (rw *ResponseWriter) Status() int { return rw.status }

// Written reports whether the status line and headers have been sent, after which the
// status can no longer change.
func (rw *ResponseWriter) Written() bool { return rw.status != 0 }

// BytesWritten returns the number of body bytes written so far.
func (rw *ResponseWriter) BytesWritten() int64 { return rw.bytes }

// Route returns the mux route name recorded by RouteName, or "" if none was.
func (rw *ResponseWriter) Route() string { return rw.route }

// epoch anchors request timing: time.Since(epoch) reads only the monotonic clock, about
// half the cost of time.Now.
var epoch = time.Now()

// startTiming starts timing the request unless a middleware further out already did.
func (rw *ResponseWriter) startTiming() {
	if !rw.timed {
		rw.timed = true
		rw.start = time.Since(epoch)
	}
}

// duration returns the time since startTiming, measured once by the first middleware
// that asks (the innermost), so the others report the same figure.
func (rw *ResponseWriter) duration() time.Duration {
	if rw.elapsed == 0 {
		rw.elapsed = max(time.Since(epoch)-rw.start, 1)
	}
	return rw.elapsed
}

// unwrapper is a writer that wraps another.
type unwrapper interface {
	Unwrap() http.ResponseWriter // the wrapped writer
}

// SetRoute records name as the route of the request that w answers, on every
// *ResponseWriter in w's wrapping chain, for Metrics and AccessLog. Routers that
// dispatch without mux (a fast path in front of it) call it instead of RouteName.
func SetRoute(w http.ResponseWriter, name string) {
	for w != nil {
		if rw, ok := w.(*ResponseWriter); ok {
			rw.route = name
		}
		u, ok := w.(unwrapper)
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// innermost returns the writer at the bottom of w's wrapping chain.
func innermost(w http.ResponseWriter) http.ResponseWriter {
	for i := 0; i < 64; i++ { // bounded, in case a wrapper unwraps to itself
		u, ok := w.(unwrapper)
		if !ok {
			return w
		}
		next := u.Unwrap()
		if next == nil {
			return w
		}
		w = next
	}
	return w
}

// finalStatus is the status to log and count for a request that returned (or panicked
// through, when returned is false) with rw: what was sent, else what net/http sends.
func finalStatus(rw *ResponseWriter, returned bool) int {
	switch {
	case rw.status != 0:
		return rw.status
	case returned:
		return http.StatusOK
	default:
		return http.StatusInternalServerError
	}
}
