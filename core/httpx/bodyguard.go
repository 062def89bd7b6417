package httpx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// BodyLimits bounds how request bodies are received (see GuardBody).
type BodyLimits struct {
	// ReadTimeout is the longest a request body may keep the server waiting for its
	// next bytes, and the grace period before MinRate applies. 0: no deadline.
	ReadTimeout time.Duration
	// MinRate is the slowest a body may arrive, in bytes per second on average, once the
	// grace period is spent; only the time the server spends waiting for bytes counts.
	// 0: no minimum. It applies only with a ReadTimeout.
	MinRate int64
	// Memory, when set, bounds the bytes of the bodies that ReadBody holds at once.
	Memory *BodyMemory
}

// GuardBody is a middleware that enforces lim on every request body:
//
//   - Before each read of the body it sets the connection's read deadline (through
//     http.ResponseController) to the earlier of now + ReadTimeout and the moment the
//     body would fall under MinRate: a body of n bytes may keep the server waiting
//     ReadTimeout + n/MinRate in all. A read past the deadline fails with a
//     *BodyTimeoutError (see IsBodyTimeout); the handler answers, and must close the
//     connection (Connection: close), since the rest of the body is still on the wire.
//     A 5 GiB upload at a steady rate is never cut off: its deadline moves with it.
//     A deadline already set is left as it is when the new one would be later by at
//     most 1/64 of ReadTimeout (rearm): a read may be cut off that much early, never late.
//   - ReadBody charges the buffers it grows to lim.Memory, and the charge is returned
//     when the request ends.
//
// Writers without deadline support (httptest's recorder) get no deadlines. Requests
// without a body are left alone: net/http is already watching their connection.
func GuardBody(lim BodyLimits) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if lim.ReadTimeout <= 0 && lim.Memory == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			g := &guardedBody{body: r.Body, lim: &lim, mem: lim.Memory}
			if lim.ReadTimeout > 0 {
				g.rc = *http.NewResponseController(w) // a copy in g: one allocation less
				// Bounds what net/http reads of a body the handler leaves unread: it
				// discards up to 256 KiB of it after the handler returns.
				g.armed = time.Now().Add(lim.ReadTimeout)
				g.deadlines = g.rc.SetReadDeadline(g.armed) == nil
			}
			defer g.release()
			r.Body = g
			next.ServeHTTP(w, r)
		})
	}
}

// guardedBody is a request body read under GuardBody's limits. Like the body it wraps,
// it is read by one goroutine at a time.
type guardedBody struct {
	body io.ReadCloser
	lim  *BodyLimits
	// rc sets the connection's read deadline when deadlines is set (false when the
	// writer cannot).
	rc        http.ResponseController
	deadlines bool
	// armed is the read deadline last set.
	armed time.Time
	// received counts the bytes read; waited is the time spent inside the body's Read.
	received int64
	waited   time.Duration
	// err is the body's first error (io.EOF included): afterwards the deadline is left
	// alone, because net/http's own background read may be using the connection.
	err error
	// mem is the budget ReadBody charges; held is what this request holds of it.
	mem  *BodyMemory
	held int64
}

// Read reads from the body under a deadline computed from what has arrived so far.
func (g *guardedBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if dl := g.deadline(time.Now()); g.deadlines && rearm(g.armed, dl, g.lim.ReadTimeout) {
		g.armed = dl
		if g.rc.SetReadDeadline(dl) != nil {
			g.deadlines = false
		}
	}
	start := time.Now()
	n, err := g.body.Read(p)
	g.waited += time.Since(start)
	g.received += int64(n)
	if err != nil {
		if g.deadlines && errors.Is(err, os.ErrDeadlineExceeded) {
			err = &BodyTimeoutError{Received: g.received, Waited: g.waited, Err: err}
		}
		g.err = err
	}
	return n, err
}

// rearm reports whether a read whose deadline is dl must set it, armed being the
// deadline already set: when dl is earlier, or later by more than rearmSlack of the
// timeout. Leaving a slightly earlier deadline armed is stricter, never laxer, and
// spares the timer update of a read that follows the previous one closely (the one
// read of a small body comes microseconds after GuardBody armed the deadline).
func rearm(armed, dl time.Time, timeout time.Duration) bool {
	return dl.Before(armed) || dl.Sub(armed) > timeout/rearmSlack
}

// rearmSlack is the fraction of ReadTimeout by which an armed deadline may be earlier
// than the computed one (30 s: 0.47 s).
const rearmSlack = 64

// maxRateAllowance caps the wait a large body earns at MinRate (n/MinRate), so the
// arithmetic cannot overflow; it is far beyond any real transfer.
const maxRateAllowance = 1000 * time.Hour

// deadline is the read deadline of the next read at now: ReadTimeout from now, or
// earlier when the body has used the wait its size allows (ReadTimeout + n/MinRate).
func (g *guardedBody) deadline(now time.Time) time.Time {
	dl := now.Add(g.lim.ReadTimeout)
	if g.lim.MinRate <= 0 {
		return dl
	}
	earned := maxRateAllowance
	if secs := float64(g.received) / float64(g.lim.MinRate); secs < maxRateAllowance.Seconds() {
		earned = time.Duration(secs * float64(time.Second))
	}
	left := g.lim.ReadTimeout + earned - g.waited
	if rate := now.Add(max(left, 0)); rate.Before(dl) {
		return rate
	}
	return dl
}

// Close closes the wrapped body.
func (g *guardedBody) Close() error { return g.body.Close() }

// alloc returns a buffer of size bytes charged to the memory budget; ErrBodyMemory
// when the budget cannot cover it.
func (g *guardedBody) alloc(size int) ([]byte, error) {
	if g != nil && g.mem != nil {
		if !g.mem.take(int64(size)) {
			return nil, ErrBodyMemory
		}
		g.held += int64(size)
	}
	return make([]byte, size), nil
}

// release returns the request's charge to the memory budget.
func (g *guardedBody) release() {
	if g.mem != nil && g.held > 0 {
		g.mem.give(g.held)
		g.held = 0
	}
}

// BodyTimeoutError is the error of a read of a request body that did not arrive within
// GuardBody's limits.
type BodyTimeoutError struct {
	// Received is how many bytes of the body had arrived; Waited is how long the server
	// had waited for them.
	Received int64
	Waited   time.Duration
	// Err is the connection's deadline error.
	Err error
}

func (e *BodyTimeoutError) Error() string {
	return fmt.Sprintf("httpx: request body too slow: %d bytes in %v: %v", e.Received, e.Waited.Round(time.Millisecond), e.Err)
}

// Unwrap returns the connection's deadline error.
func (e *BodyTimeoutError) Unwrap() error { return e.Err }

// IsBodyTimeout reports whether err comes from a request body that did not arrive
// within GuardBody's limits.
func IsBodyTimeout(err error) bool {
	var e *BodyTimeoutError
	return errors.As(err, &e)
}

// ErrBodyMemory is ReadBody's error when the request bodies held at once would go over
// their memory budget (BodyLimits.Memory).
var ErrBodyMemory = errors.New("httpx: the memory for request bodies is in use")

// BodyMemory is a budget of bytes of request bodies held in memory at once, shared by
// the requests of an interface. It is safe for concurrent use.
type BodyMemory struct {
	limit int64
	used  atomic.Int64
}

// NewBodyMemory returns a budget of limit bytes (limit <= 0: unlimited, only counted).
func NewBodyMemory(limit int64) *BodyMemory {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	return &BodyMemory{limit: limit}
}

// Used returns the bytes currently charged.
func (m *BodyMemory) Used() int64 { return m.used.Load() }

func (m *BodyMemory) take(n int64) bool {
	for {
		u := m.used.Load()
		if n > m.limit-u {
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (m *BodyMemory) give(n int64) { m.used.Add(-n) }

// ReadBody's buffers: the first is at most firstBodyChunk bytes (exactly the declared
// length when that is smaller), then each is twice the one before, up to maxBodyChunk.
const (
	firstBodyChunk = 32 << 10
	maxBodyChunk   = 1 << 20
)

// ReadBody reads the whole body of r, refusing more than limit bytes with an
// *http.MaxBytesError (see IsTooLarge) — before reading when Content-Length already
// says so. The declared length caps the memory but reserves none: the body is read into
// buffers allocated as bytes arrive (a client pays with bytes for the memory it takes),
// then joined into one slice. Under GuardBody with a Memory budget the buffers are
// charged to the budget until the request ends, and ReadBody fails with ErrBodyMemory
// when the budget is spent. Read errors (IsBodyTimeout, a short body's
// io.ErrUnexpectedEOF) are returned as they are.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return []byte{}, nil
	}
	g, _ := r.Body.(*guardedBody)
	LimitRequestBody(w, r, limit)
	ceiling := r.ContentLength // the most bytes to expect (one more than limit when unknown,
	if ceiling < 0 {           // so that the limit reader reports an excess)
		ceiling = limit
		if limit < math.MaxInt64 {
			ceiling++
		}
	}
	return readInChunks(r.Body, ceiling, r.ContentLength >= 0, g)
}

// readInChunks reads body, at most ceiling bytes, into buffers allocated (and charged to
// g's budget) as the previous fills, then joins them. With exact set, the body must be
// ceiling bytes long.
func readInChunks(body io.Reader, ceiling int64, exact bool, g *guardedBody) ([]byte, error) {
	var chunks [][]byte
	var total int64
	size := min(ceiling, firstBodyChunk)
	for {
		buf, err := g.alloc(int(size))
		if err != nil {
			return nil, err
		}
		n, err := io.ReadFull(body, buf)
		chunks = append(chunks, buf[:n])
		total += int64(n)
		switch {
		case err == nil && total == ceiling && exact:
			return join(chunks, total), nil
		case err == nil:
			size = min(2*size, maxBodyChunk, ceiling-total)
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if exact {
				return nil, io.ErrUnexpectedEOF
			}
			return join(chunks, total), nil
		default:
			return nil, err
		}
	}
}

// join returns the chunks' bytes in one slice (the only chunk itself when there is one).
// The joined copy is not charged: the chunks it replaces are, until the request ends.
func join(chunks [][]byte, total int64) []byte {
	if len(chunks) == 1 {
		return chunks[0]
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out
}
