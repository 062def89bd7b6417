package httpx

import "net/http"

// Chain wraps h in the middlewares mws, the first one outermost: Chain(h, a, b) serves a
// request through a, then b, then h.
func Chain(h http.Handler, mws ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}
