package httpx

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"
)

// Route labels used when a request has no route name.
const (
	// RouteUnmatched labels requests that matched no mux route (404, 405 from mux).
	RouteUnmatched = "unmatched"
	// RouteUnnamed labels requests that matched a route without a name.
	RouteUnnamed = "unnamed"
)

// HTTPObserver records finished requests; *stats.Registry implements it.
type HTTPObserver interface {
	// ObserveHTTP records one request of interface api to the named route with method,
	// the status code sent and the time taken.
	ObserveHTTP(api, route, method string, code int, d time.Duration)
}

// Metrics is a middleware that reports every request to obs (the server's
// *stats.Registry) with the interface label api ("kv" or "s3"), the mux route name, the
// method, the status code and the duration. The route name comes from RouteName, which
// must be installed on the router with Router.Use; when Metrics itself runs inside the
// router it reads the current route directly. Requests without a route are counted as
// RouteUnmatched, so paths never become labels.
func Metrics(obs HTTPObserver, api string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := WrapResponseWriter(w)
			rw.startTiming()
			returned := false
			defer func() {
				route := rw.route
				if route == "" {
					route = routeName(r)
				}
				obs.ObserveHTTP(api, route, r.Method, finalStatus(rw, returned), rw.duration())
			}()
			next.ServeHTTP(rw, r)
			returned = true
		})
	}
}

// RouteName is a mux middleware (install it with Router.Use) that records the matched
// route's name on the request's ResponseWriter for Metrics and AccessLog.
func RouteName(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetRoute(w, routeName(r))
		next.ServeHTTP(w, r)
	})
}

// routeName returns the name of the mux route r matched, RouteUnnamed for a route without
// one, RouteUnmatched outside a match.
func routeName(r *http.Request) string {
	cr := mux.CurrentRoute(r)
	if cr == nil {
		return RouteUnmatched
	}
	if name := cr.GetName(); name != "" {
		return name
	}
	return RouteUnnamed
}
