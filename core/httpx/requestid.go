package httpx

import (
	"context"
	"math/rand/v2"
	"net/http"
)

// RequestIDHeader is the request and response header carrying the request id.
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDLen is the longest request id taken from a client.
const MaxRequestIDLen = 128

// ridKey is the context key of the request state.
type ridKey struct{}

// ridState is allocated once per request by RequestID. It is the request's new context
// (extending the old one with the id, which saves the separate node of
// context.WithValue), and holds the backing array of the response header value and the
// shared ResponseWriter, all in one allocation.
type ridState struct {
	context.Context
	id  string
	hdr [1]string
	rw  ResponseWriter
}

// Value returns the state itself for ridKey and asks the parent context otherwise.
func (s *ridState) Value(key any) any {
	if key == (ridKey{}) {
		return s
	}
	return s.Context.Value(key)
}

// String describes the context, as the standard library's contexts do.
func (s *ridState) String() string {
	return "httpx.RequestID(" + s.id + ")"
}

// RequestID is a middleware that gives every request an id: the client's X-Request-Id
// when it is sane (1 to MaxRequestIDLen printable ASCII characters), otherwise a new
// random one (13 characters of lower-case base32). The id is put in the request's
// context (see RequestIDFrom) and echoed in the X-Request-Id response header.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := &ridState{Context: r.Context()}
		if v := r.Header[RequestIDHeader]; len(v) > 0 && saneRequestID(v[0]) {
			s.id = v[0]
		} else {
			s.id = newRequestID()
		}
		s.hdr[0] = s.id
		w.Header()[RequestIDHeader] = s.hdr[:]
		if rw, ok := w.(*ResponseWriter); ok {
			next.ServeHTTP(rw, r.WithContext(s))
			return
		}
		s.rw.w = w
		next.ServeHTTP(&s.rw, r.WithContext(s))
	})
}

// RequestIDFrom returns the request id that RequestID put in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	if s, ok := ctx.Value(ridKey{}).(*ridState); ok {
		return s.id
	}
	return ""
}

// saneRequestID reports whether a client's id may be used: 1 to MaxRequestIDLen
// characters, all printable ASCII (space to tilde).
func saneRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// idAlphabet is lower-case base32 without padding (RFC 4648 letters, digits 2-7).
const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// NewRequestID returns a new request id, as RequestID makes for a request without
// one (for answers written outside a request, such as a refused connection's).
func NewRequestID() string { return newRequestID() }

// newRequestID returns 64 random bits as 13 base32 characters. math/rand/v2's global
// generator is per-thread and lock-free; ids need to be unique, not unguessable.
func newRequestID() string {
	x := rand.Uint64()
	var b [13]byte
	for i := range b {
		b[i] = idAlphabet[x&31]
		x >>= 5
	}
	return string(b[:])
}
