// Package s3api serves Cairn's object-storage interface: S3's REST API over core/s3,
// with host-style ({bucket}.{data host}) and path-style addressing, signature V2 and V4
// authentication, XML bodies and errors, and the Riak CS-style user administration API
// under /riak-cs/. Handlers parse, call the service, and write; every error goes
// through writeError.
package s3api

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
)

// Config configures the object-storage interface.
type Config struct {
	// DataHost is the host name buckets are sub-domains of (default "s3.localhost").
	DataHost string
	// Dialect "store" (default) writes x-obj-* header names, "riak" the x-amz-* names
	// real S3 clients read, for requests that give no hint of their own (see
	// namesFor). Requests may use either.
	Dialect string
	// Logger receives internal errors (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock for signature checks (default time.Now).
	Now func() time.Time
}

// API is the object-storage interface.
type API struct {
	svc *s3.Service
	cfg Config
	log *slog.Logger
	// dataHost is cfg.DataHost in lower case; hostSuffix is "." + dataHost.
	dataHost, hostSuffix string
	// def is the names written for requests that give no hint (Config.Dialect).
	def *vendorNames
}

// vendorNames are the vendor-specific names a response is written with.
type vendorNames struct {
	// prefix is the lower-case vendor prefix: "x-amz-" or "x-obj-".
	prefix string
	// requestID and id2 are the request-id headers' names.
	requestID, id2 string
}

// The two name sets.
var (
	amzNames = &vendorNames{prefix: "x-amz-", requestID: "X-Amz-Request-Id", id2: "X-Amz-Id-2"}
	objNames = &vendorNames{prefix: "x-obj-", requestID: "X-Obj-Request-Id", id2: "X-Obj-Id-2"}
)

// namesFor returns the names a request is answered in, from the hints its client gives
// (docs/s3.md, "Header names"), in this order:
//
//  1. any x-amz-* header, or a signature V4 (Authorization AWS4-HMAC-SHA256, or the
//     presigned X-Amz-Algorithm / X-Amz-Credential query): x-amz-*;
//  2. any x-obj-* header: x-obj-* (the spec's own clients sign with V2 and send these);
//  3. a signature V2 (Authorization "AWS key:sig", or the AWSAccessKeyId query): x-amz-*;
//  4. otherwise the configured dialect.
func (a *API) namesFor(r *http.Request, q url.Values) *vendorNames {
	if strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") ||
		q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") {
		return amzNames
	}
	obj := false
	for name := range r.Header {
		switch {
		case hasPrefixFold(name, "x-amz-"):
			return amzNames
		case hasPrefixFold(name, "x-obj-"):
			obj = true
		}
	}
	switch {
	case obj:
		return objNames
	case strings.HasPrefix(r.Header.Get("Authorization"), "AWS ") || q.Has("AWSAccessKeyId"):
		return amzNames
	}
	return a.def
}

// setIDs sets the request-id and id-2 headers in h to id.
func (n *vendorNames) setIDs(h http.Header, id string) {
	h[n.requestID] = []string{id}
	h[n.id2] = []string{id}
}

// hasPrefixFold reports whether s begins with prefix, ignoring ASCII case; prefix is
// lower-case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// New returns the object-storage interface over svc.
func New(svc *s3.Service, cfg Config) *API {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DataHost == "" {
		cfg.DataHost = "s3.localhost"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &API{svc: svc, cfg: cfg, log: cfg.Logger, dataHost: strings.ToLower(cfg.DataHost)}
	a.hostSuffix = "." + a.dataHost
	a.def = objNames
	if cfg.Dialect == "riak" {
		a.def = amzNames
	}
	return a
}

// Handler returns the interface as an http.Handler.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serve) }

// call is one request in progress: where it points, who makes it, and its writer.
type call struct {
	a *API
	w http.ResponseWriter
	r *http.Request
	// names are the vendor names the response is written in, chosen once when the
	// request arrives (namesFor).
	names *vendorNames
	// bucket and key are the addressed bucket ("" for the service) and object key.
	bucket, key string
	// hostBucket is the bucket named by the Host header ("" in path style).
	hostBucket string
	// resource is the path reported in error bodies: /bucket/key.
	resource string
	// query is the parsed query string.
	query url.Values
	// who is the requester; user is its record (nil when anonymous).
	who  s3.Requester
	user *s3.User
	auth authResult
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	httpx.RestoreExpect(r)                   // the Expect headers the listener set aside, for the signature
	q, err := url.ParseQuery(r.URL.RawQuery) // on error, q holds what parsed: hints still count
	c := &call{a: a, w: w, r: r, names: a.namesFor(r, q)}
	c.names.setIDs(w.Header(), httpx.RequestIDFrom(r.Context()))
	if err != nil {
		c.resource = r.URL.Path
		c.fail(s3.Errorf(s3.InvalidArgument, "The query string is malformed"))
		return
	}
	c.query = q
	c.hostBucket, c.bucket, c.key = a.resolve(r.Host, r.URL.Path)
	c.resource = "/" + c.bucket
	if c.key != "" {
		c.resource += "/" + c.key
	}
	if c.hostBucket == "" && (c.bucket == "riak-cs" || c.bucket == "store-cs") {
		httpx.SetRoute(w, "s3_admin")
		c.resource = r.URL.Path
		if err := c.authenticate(); err != nil {
			c.fail(err)
			return
		}
		c.serveAdmin()
		return
	}
	if c.bucket != "" {
		if r.Method == http.MethodOptions {
			httpx.SetRoute(w, c.routeName())
			c.preflight() // browsers send it unsigned: the CORS rules answer it
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			c.addCORSHeaders(origin)
		}
	}
	if err := c.authenticate(); err != nil {
		c.fail(err)
		return
	}
	httpx.SetRoute(w, c.routeName())
	if err := c.checkExpectedOwners(); err != nil {
		c.fail(err)
		return
	}
	switch {
	case c.bucket == "":
		c.serveService()
	case c.key == "":
		c.serveBucket()
	default:
		c.serveObject()
	}
}

// resolve splits a request into the host-style bucket (if any), the bucket and the key.
// The bucket comes from the Host header when it is {bucket}.{data host} (port
// ignored), otherwise from the first path segment (path style).
func (a *API) resolve(host, path string) (hostBucket, bucket, key string) {
	hostBucket = a.HostBucket(host)
	if hostBucket != "" {
		return hostBucket, hostBucket, strings.TrimPrefix(path, "/")
	}
	p := strings.TrimPrefix(path, "/")
	bucket, key, _ = strings.Cut(p, "/")
	return "", bucket, key
}

// HostBucket returns the bucket a Host header names in host-style addressing, or "".
func (a *API) HostBucket(host string) string {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") {
		return ""
	}
	if len(host) > len(a.hostSuffix) && strings.HasSuffix(host, a.hostSuffix) {
		return host[:len(host)-len(a.hostSuffix)]
	}
	return ""
}

// fail writes err as the response (with the delete-marker headers of a MarkerError).
func (c *call) fail(err error) {
	c.setMarkerHeaders(err)
	c.a.writeError(c.w, c.r, c.resource, err)
}

// has reports whether the query names the sub-resource.
func (c *call) has(sub string) bool {
	_, ok := c.query[sub]
	return ok
}

// header returns a request header under its x-amz- name or, failing that, its x-obj-
// name (name is the part after the prefix).
func (c *call) header(name string) string {
	if v := c.r.Header.Get("X-Amz-" + name); v != "" {
		return v
	}
	return c.r.Header.Get("X-Obj-" + name)
}

// notImplemented answers 501 NotImplemented.
func (c *call) notImplemented(what string) {
	c.fail(s3.Errorf(s3.NotImplemented, "A header or query you provided requested a function that is not implemented: %s", what))
}

// methodNotAllowed answers 405.
func (c *call) methodNotAllowed() {
	c.fail(s3.Errorf(s3.MethodNotAllowed, "The specified method is not allowed against this resource."))
}

// writeXML writes a 200 XML body.
func (c *call) writeXML(body []byte) {
	_ = httpx.WriteFull(c.w, http.StatusOK, "application/xml", body) // a failed write means the client left
}

// ok writes an empty 200.
func (c *call) ok() { _ = httpx.WriteFull(c.w, http.StatusOK, "", nil) }

// routeName names the request's resource for metrics and the access log: the service,
// a bucket or an object, with the ?acl sub-resource apart.
func (c *call) routeName() string {
	name := "s3_object"
	switch {
	case c.bucket == "":
		return "s3_service"
	case c.key == "":
		name = "s3_bucket"
	}
	if c.has("acl") {
		name += "_acl"
	}
	return name
}

// subResources are the query parameters that select a sub-resource rather than the
// bucket or object itself.
var subResources = []string{"acl", "location", "versioning", "uploads", "uploadId", "partNumber", "policy", "policyStatus",
	"delete", "versionId", "logging", "notification", "requestPayment", "torrent", "website", "lifecycle",
	"cors", "tagging", "restore", "versions", "object-lock", "retention", "legal-hold", "encryption"}

// hasSubResource reports whether the query names a sub-resource.
func (c *call) hasSubResource() bool {
	for _, s := range subResources {
		if c.has(s) {
			return true
		}
	}
	return false
}
