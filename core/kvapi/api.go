// Package kvapi serves Cairn's key-value HTTP interface: the old (/store, /riak) and new
// (/buckets, /types/T/buckets) URL forms over core/kv. Handlers parse a request into core
// types, call the service, and write the answer; a handler returns its errors, and the
// route adapter hands them to writeError, the one place an error becomes a response.
package kvapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/modules"
	"github.com/cairnkv/cairn/core/security"
)

// Config configures the KV interface.
type Config struct {
	// Dialect chooses the names the server writes (paths, headers, link tags, resource
	// names) for requests that give no hint of their own (see wire.RequestDialect).
	// Requests may use either dialect.
	Dialect wire.Dialect
	// Version is the server version reported by /stats.
	Version string
	// Stats, if set, is served at /stats (the reference's flat JSON report).
	Stats func(prefix string) map[string]any
	// Metrics, if set, is served at /metrics (Prometheus exposition).
	Metrics http.Handler
	// Logger receives internal errors (default slog.Default()).
	Logger *slog.Logger
	// Modules, if set, is served under /admin/modules for holders of the admin
	// credential, which AdminCheck verifies (key id and secret).
	Modules    *modules.Service
	AdminCheck func(keyID, secret string) bool
	// MapReduce, if set, runs the jobs POSTed to /mapred (without it /mapred is 404).
	MapReduce *mapreduce.Service
	// Guard, if set, manages the users' grants under /admin/grants for holders of the
	// admin credential, and authenticates the callers of RequireAuth.
	Guard *security.Guard
	// RequireAuth turns access control on (see auth.go; it needs Guard): every request
	// but /ping, /stats, /metrics and / needs a user's credentials and the permission
	// its route names.
	RequireAuth bool
	// Cluster, if set (cluster mode), serves the node's cluster status at /cluster.
	Cluster ClusterStatusFunc
	// Membership, if set (cluster mode with an embedded NATS server), serves the
	// admin routes that list, retire and forget the cluster's servers.
	Membership ClusterMembership
	// AllowInsecure lets RequireAuth accept credentials over plain HTTP; without it a
	// request that is not over TLS is refused with 426.
	AllowInsecure bool
}

// API is the KV interface.
type API struct {
	kv  *kv.Service
	cfg Config
	d   wire.Dialect
	log *slog.Logger

	// resources lists (name, path) of every route without a guard whose first segment is
	// literal, for the / listing, in each dialect (index dialectIndex).
	resources [2][]resourceLink

	// hot is the first route registered (the new API's object route): Handler serves it
	// without going through mux.
	hot *hotRoute
}

// hotRoute is a route served in front of mux: the router would pick it anyway (no
// earlier route matches its paths), but mux's dispatch copies the request twice to
// attach its variables and route, which the template-based handlers never read.
type hotRoute struct {
	name   string
	tmpl   *template
	handle http.HandlerFunc
}

type resourceLink struct{ name, path string }

// New returns the KV interface over svc. RequireAuth without a Guard is a programming
// error: New panics.
func New(svc *kv.Service, cfg Config) *API {
	if cfg.RequireAuth && cfg.Guard == nil {
		panic("kvapi: RequireAuth needs a Guard")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &API{kv: svc, cfg: cfg, d: cfg.Dialect, log: cfg.Logger}
}

// loc is the place a request addresses.
type loc struct {
	api    wire.API
	typ    string
	bucket string
	key    string
	// rest is a route's rest capture ({walk*}, {query*}), still percent-encoded.
	rest string
	// d is the dialect the answer is written in, chosen once per request from its
	// hints (wire.RequestDialect).
	d wire.Dialect
}

// dialects are the two dialects, indexed by dialectIndex.
var dialects = [2]wire.Dialect{wire.DialectStore, wire.DialectRiak}

// dialectIndex returns d's index in dialects.
func dialectIndex(d wire.Dialect) int {
	if d == wire.DialectRiak {
		return 1
	}
	return 0
}

// resource is one webmachine-style resource: the methods it allows, in the order the
// Allow header lists them.
type resource struct {
	name    string
	methods []string
	// handle serves a request: it writes a success itself and returns any error for
	// writeError; once it has begun its answer it returns nil.
	handle func(w http.ResponseWriter, r *http.Request, l loc) error
	// guard is what the resource's requests need under access control (auth.go).
	guard guard
}

// Handler returns the routed handler with path normalisation in front, and the
// client's identity (withClient) in every request's context.
func (a *API) Handler() http.Handler {
	r := mux.NewRouter().UseEncodedPath().SkipClean(true)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.writeError(w, r, errNotFound)
	})
	r.MethodNotAllowedHandler = r.NotFoundHandler
	r.Use(httpx.RouteName)
	a.routes(r)
	hot := a.hot
	return withClient(normalizePath(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if hot.tmpl.match(req.URL.EscapedPath(), nil) {
			httpx.SetRoute(w, hot.name)
			hot.handle(w, req)
			return
		}
		r.ServeHTTP(w, req)
	})))
}

func (a *API) routes(r *mux.Router) {
	object := a.objectResource()
	create := a.createResource()
	props := a.propsResource(false)
	propsNew := a.propsResource(true)
	oldPrefix := "/{prefix:store|riak}"

	// mux tries routes in order and each try is a regexp match, so the hot object route
	// of the new API comes first. No earlier route can match its paths, so the reference's
	// route order is kept wherever two patterns overlap (the old API's /{bucket} routes,
	// which are told apart by method and query guards).
	a.route(r, object, wire.APIBuckets, "/buckets/{bucket}/keys/{key}", false)

	// Old API (/store or /riak), in the reference's route order.
	a.route(r, a.bucketsResource(), wire.APIOld, oldPrefix, false)
	a.route(r, create, wire.APIOld, oldPrefix+"/{bucket}", true).MatcherFunc(isPost)
	a.route(r, props, wire.APIOld, oldPrefix+"/{bucket}", true).MatcherFunc(wantsOldProps)
	a.route(r, a.keysResource(), wire.APIOld, oldPrefix+"/{bucket}", true).MatcherFunc(wantsOldKeys)
	a.route(r, object, wire.APIOld, oldPrefix+"/{bucket}/{key}", false)
	a.route(r, a.walkResource(), wire.APIOld, oldPrefix+"/{bucket}/{key}/{walk*}", false)

	// 1.4-style counters (default type only) and the typed data-type path.
	a.route(r, a.counterResource(), wire.APIBuckets, "/buckets/{bucket}/counters/{key}", false)
	a.route(r, a.datatypeResource(), wire.APITyped, "/types/{type}/buckets/{bucket}/datatypes/{key}", false)
	a.route(r, a.datatypeResource(), wire.APITyped, "/types/{type}/buckets/{bucket}/datatypes", false)

	// New API, default type and typed.
	for _, p := range []struct {
		prefix string
		api    wire.API
	}{{"", wire.APIBuckets}, {"/types/{type}", wire.APITyped}} {
		a.route(r, a.bucketsResource(), p.api, p.prefix+"/buckets", false)
		a.route(r, propsNew, p.api, p.prefix+"/buckets/{bucket}/props", false)
		a.route(r, create, p.api, p.prefix+"/buckets/{bucket}/keys", true).MatcherFunc(isPost)
		a.route(r, a.keysResource(), p.api, p.prefix+"/buckets/{bucket}/keys", false)
		if p.api == wire.APITyped {
			a.route(r, object, p.api, p.prefix+"/buckets/{bucket}/keys/{key}", false)
		}
		a.route(r, a.preflistResource(), p.api, p.prefix+"/buckets/{bucket}/keys/{key}/preflist", false)
		a.route(r, a.walkResource(), p.api, p.prefix+"/buckets/{bucket}/keys/{key}/{walk*}", false)
		a.route(r, a.indexResource(), p.api, p.prefix+"/buckets/{bucket}/index/{query*}", false)
	}
	a.route(r, a.typePropsResource(), wire.APITyped, "/types/{type}/props", false)

	if a.cfg.Modules != nil {
		// The module name travels as the key slot of the location.
		a.route(r, a.moduleListResource(), 0, "/admin/modules", true)
		a.route(r, a.moduleResource(), 0, "/admin/modules/{key}", true)
	}
	if a.cfg.Guard != nil {
		// So does the user's key id.
		a.route(r, a.grantsResource(), 0, "/admin/grants/{key}", true)
	}
	a.route(r, a.mapredResource(), 0, "/mapred", false)
	a.route(r, a.statsResource(), 0, "/stats", false)
	if a.cfg.Cluster != nil {
		a.route(r, a.clusterResource(), 0, "/cluster", true) // left out of the / listing
	}
	if a.cfg.Membership != nil {
		// The server's name travels as the key slot of the location.
		a.route(r, a.clusterMembersResource(), 0, "/admin/cluster/members", true)
		a.route(r, a.clusterRetireResource(), 0, "/admin/cluster/retire/{key}", true)
		a.route(r, a.clusterForgetResource(), 0, "/admin/cluster/forget/{key}", true)
	}
	a.route(r, a.pingResource(), 0, "/ping", false)
	if a.cfg.Metrics != nil {
		r.Handle("/metrics", buffered(a.cfg.Metrics)).Name("metrics")
	}
	a.route(r, a.listResource(), 0, "/", true)
}

// route registers res at path. guarded routes are left out of the / listing, as the
// reference's urlmap does.
func (a *API) route(r *mux.Router, res resource, api wire.API, path string, guarded bool) *mux.Route {
	if !guarded {
		first := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]
		for i, d := range dialects {
			if first != "" && !strings.Contains(first, "{") {
				a.resources[i] = append(a.resources[i], resourceLink{d.Resource(res.name), "/" + first})
			} else if strings.HasPrefix(first, "{prefix") {
				a.resources[i] = append(a.resources[i], resourceLink{d.Resource(res.name), d.Prefix()})
			}
		}
	}
	allow := strings.Join(res.methods, ", ")
	tmpl := parseTemplate(path)
	h := func(w http.ResponseWriter, req *http.Request) {
		if !allowed(knownMethods, req.Method) {
			a.writeError(w, req, statusError(http.StatusNotImplemented, ""))
			return
		}
		if !allowed(res.methods, req.Method) {
			a.writeError(w, req, statusError(http.StatusMethodNotAllowed, "", [2]string{"Allow", allow}))
			return
		}
		l := loc{api: api, typ: core.DefaultType, d: wire.RequestDialect(req.URL.EscapedPath(), req.Header, a.d)}
		var caps [maxCaptures]string
		tmpl.match(req.URL.EscapedPath(), &caps)
		for i, name := range tmpl.slot {
			switch name {
			case "type":
				l.typ = wire.Unquote(caps[i])
			case "bucket":
				l.bucket = wire.Unquote(caps[i])
			case "key":
				l.key = wire.Unquote(caps[i])
			default:
				if tmpl.segs[len(tmpl.segs)-1].rest && i == len(tmpl.slot)-1 {
					l.rest = caps[i]
				}
			}
		}
		if a.cfg.RequireAuth && !res.guard.open {
			authed, err := a.authorize(req, res.guard, l)
			if err != nil {
				a.writeError(w, req, err)
				return
			}
			req = authed
		}
		if err := res.handle(w, req, l); err != nil {
			a.writeError(w, req, err)
		}
	}
	if a.hot == nil {
		a.hot = &hotRoute{name: res.name, tmpl: tmpl, handle: h}
	}
	return r.NewRoute().MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool {
		return tmpl.match(req.URL.EscapedPath(), nil)
	}).HandlerFunc(h).Name(res.name)
}

// knownMethods are the methods webmachine knows; any other is 501 Not Implemented,
// before the resource's own list is consulted (405).
var knownMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "CONNECT", "OPTIONS"}

func allowed(methods []string, m string) bool {
	for _, x := range methods {
		if x == m {
			return true
		}
	}
	return false
}

func isPost(r *http.Request, _ *mux.RouteMatch) bool { return r.Method == http.MethodPost }

// wantsOldProps is the guard of the old-API props route: props not false and no key
// listing asked for.
func wantsOldProps(r *http.Request, _ *mux.RouteMatch) bool {
	q := r.URL.Query()
	k := q.Get("keys")
	return q.Get("props") != "false" && k != "true" && k != "stream"
}

// wantsOldKeys is the guard of the old-API key-listing route: keys=true or keys=stream.
func wantsOldKeys(r *http.Request, _ *mux.RouteMatch) bool {
	k := r.URL.Query().Get("keys")
	return k == "true" || k == "stream"
}

// normalizePath drops empty path segments (so /buckets/b/keys/ ≡ /buckets/b/keys), as
// webmachine's tokenizer does, keeping percent-encoding intact for the router.
func normalizePath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if strings.Contains(p, "//") || (len(p) > 1 && strings.HasSuffix(p, "/")) {
			parts := strings.Split(p, "/")
			kept := parts[:0]
			for _, s := range parts {
				if s != "" {
					kept = append(kept, s)
				}
			}
			clean := "/" + strings.Join(kept, "/")
			u := *r.URL
			u.RawPath = clean
			if dec, err := url.PathUnescape(clean); err == nil {
				u.Path = dec
			}
			r2 := r.Clone(r.Context())
			r2.URL = &u
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// resourceList returns the / listing in dialect d: sorted and de-duplicated.
func (a *API) resourceList(d wire.Dialect) []resourceLink {
	seen := map[resourceLink]bool{}
	var out []resourceLink
	for _, l := range a.resources[dialectIndex(d)] {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].path < out[j].path
	})
	return out
}
