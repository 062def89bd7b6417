package httpx

import (
	"errors"
	"net/http"
)

// LimitBody is a middleware that caps request bodies at limit bytes with
// http.MaxBytesReader: reading past the cap fails with an *http.MaxBytesError (test with
// IsTooLarge) and the server closes the connection after the response. Handlers choose
// the response (KV and S3 answer differently). limit <= 0 means no limit. It replaces
// r.Body in place, as MaxBytesReader's documentation does.
func LimitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if limit <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			LimitRequestBody(w, r, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// LimitRequestBody caps r.Body at limit bytes, as LimitBody does, for handlers whose
// limit depends on the route. It does nothing when limit <= 0 or the request has no body.
func LimitRequestBody(w http.ResponseWriter, r *http.Request, limit int64) {
	if limit <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	// MaxBytesReader tells the server to close the connection through the writer's
	// unexported hook, which only net/http's own writer has: give it the bottom one.
	r.Body = http.MaxBytesReader(innermost(w), r.Body, limit)
}

// IsTooLarge reports whether err comes from reading past a body limit set by LimitBody,
// LimitRequestBody or http.MaxBytesReader.
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
