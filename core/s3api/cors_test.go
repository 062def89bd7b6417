package s3api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

// corsConfig is a CORS configuration of two rules: the first lets
// http://app.example and any https subdomain of example.com GET and PUT with
// x-amz-* and content-type headers (exposing ETag, cached 300 s); the second lets any
// origin HEAD and GET.
const corsConfig = `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
 <CORSRule><ID>app</ID><AllowedOrigin>http://app.example</AllowedOrigin><AllowedOrigin>https://*.example.com</AllowedOrigin>
  <AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>
  <AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>Content-Type</AllowedHeader>
  <ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>300</MaxAgeSeconds></CORSRule>
 <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod><AllowedMethod>GET</AllowedMethod></CORSRule>
</CORSConfiguration>`

// TestBucketCORSHTTP: PUT/GET/DELETE ?cors store, answer and remove the rules; GET
// without rules is 404 NoSuchCORSConfiguration; bad configurations answer AWS's codes
// and change nothing; only the owner may read or change them; other methods are 405.
func TestBucketCORSHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("web", e.alice)
	get := mpReq{method: "GET", path: "/web", query: "cors", as: e.alice}
	e.mustErr(404, s3.NoSuchCORSConfiguration, get)
	put := mpReq{method: "PUT", path: "/web", query: "cors", as: e.alice, body: corsConfig}
	e.must(200, put)
	body := e.must(200, get).body
	for _, want := range []string{"<ID>app</ID>", "<AllowedOrigin>https://*.example.com</AllowedOrigin>", "<AllowedMethod>PUT</AllowedMethod>",
		"<AllowedHeader>x-amz-*</AllowedHeader>", "<ExposeHeader>ETag</ExposeHeader>", "<MaxAgeSeconds>300</MaxAgeSeconds>"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET ?cors lacks %s:\n%s", want, body)
		}
	}
	rule := func(inner string) string {
		return "<CORSConfiguration><CORSRule>" + inner + "</CORSRule></CORSConfiguration>"
	}
	for _, c := range []struct {
		name, body string
		code       s3.Code
	}{
		{"not XML", "cors", s3.MalformedXML},
		{"other root", "<Tagging/>", s3.MalformedXML},
		{"no rules", "<CORSConfiguration/>", s3.MalformedXML},
		{"no origin", rule("<AllowedMethod>GET</AllowedMethod>"), s3.MalformedXML},
		{"no method", rule("<AllowedOrigin>*</AllowedOrigin>"), s3.MalformedXML},
		{"bad max age", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>x</MaxAgeSeconds>"), s3.MalformedXML},
		{"PATCH", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"), s3.InvalidRequest},
		{"lower-case get", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>"), s3.InvalidRequest},
		{"two origin stars", rule("<AllowedOrigin>http://*.*.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), s3.InvalidRequest},
		{"two header stars", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*-*</AllowedHeader>"), s3.InvalidRequest},
		{"101 rules", "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", 101) + "</CORSConfiguration>", s3.InvalidRequest},
		{"too long", "<CORSConfiguration>" + strings.Repeat(" ", 64<<10) + "</CORSConfiguration>", "MaxMessageLengthExceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := put
			q.body = c.body
			e.mustErr(400, c.code, q)
		})
	}
	if e.must(200, get).body != body {
		t.Error("a refused PUT ?cors changed the rules")
	}
	for _, q := range []mpReq{get, put, {method: "DELETE", path: "/web", query: "cors", as: e.bob}} {
		q.as = e.bob
		e.mustErr(403, s3.AccessDenied, q)
	}
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "POST", path: "/web", query: "cors", as: e.alice})
	e.must(204, mpReq{method: "DELETE", path: "/web", query: "cors", as: e.alice})
	e.must(204, mpReq{method: "DELETE", path: "/web", query: "cors", as: e.alice})
	e.mustErr(404, s3.NoSuchCORSConfiguration, get)
	e.mustErr(404, s3.NoSuchBucket, mpReq{method: "GET", path: "/nobucket", query: "cors", as: e.alice})
}

// TestCORSPreflight: an unsigned OPTIONS on a bucket or object URL (path- and
// host-style) is answered from the first rule that allows the origin, the method and
// every requested header, with that rule's Access-Control-* headers; no match, or no
// rules, is 403 AccessForbidden; no Origin or no method is 400; a missing bucket 404.
func TestCORSPreflight(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("web", e.alice)
	e.bucket("plain", e.alice)
	e.must(200, mpReq{method: "PUT", path: "/web", query: "cors", as: e.alice, body: corsConfig})
	type want struct {
		origin, methods, headers, maxAge, expose, creds string
	}
	appRule := want{"https://a.example.com", "GET, PUT", "", "300", "ETag", "true"}
	tests := []struct {
		name, path, host, origin, method, headers string
		status                                    int
		code                                      s3.Code
		want                                      want
	}{
		{name: "app origin PUT", path: "/web/k", origin: "http://app.example", method: "PUT", headers: "Content-Type, X-Amz-Date",
			status: 200, want: want{"http://app.example", "GET, PUT", "content-type, x-amz-date", "300", "ETag", "true"}},
		{name: "wildcard origin", path: "/web/dir/k", origin: "https://a.example.com", method: "GET", status: 200, want: appRule},
		{name: "host style", path: "/k", host: "web.s3.localhost", origin: "https://a.example.com", method: "GET", status: 200, want: appRule},
		{name: "bucket URL", path: "/web", origin: "https://a.example.com", method: "PUT", status: 200, want: appRule},
		{name: "second rule", path: "/web/k", origin: "http://other.example", method: "HEAD", status: 200,
			want: want{origin: "*", methods: "HEAD, GET"}},
		{name: "header not allowed", path: "/web/k", origin: "http://app.example", method: "PUT", headers: "authorization",
			status: 403, code: s3.AccessForbidden},
		{name: "method not allowed", path: "/web/k", origin: "http://other.example", method: "PUT", status: 403, code: s3.AccessForbidden},
		{name: "origin case matters", path: "/web/k", origin: "HTTP://APP.EXAMPLE", method: "PUT", status: 403, code: s3.AccessForbidden},
		{name: "no rules", path: "/plain/k", origin: "http://app.example", method: "GET", status: 403, code: s3.AccessForbidden},
		{name: "no origin", path: "/web/k", method: "GET", status: 400, code: s3.BadRequest},
		{name: "no method", path: "/web/k", origin: "http://app.example", status: 400, code: s3.BadRequest},
		{name: "bad method", path: "/web/k", origin: "http://app.example", method: "PATCH", status: 400, code: s3.BadRequest},
		{name: "no bucket", path: "/nobucket/k", origin: "http://app.example", method: "GET", status: 404, code: s3.NoSuchBucket},
		{name: "100 headers", path: "/web/k", origin: "http://other.example", method: "HEAD", headers: manyNames(maxPreflightHeaders),
			status: 403, code: s3.AccessForbidden}, // matched, and no rule allows them
		{name: "101 headers", path: "/web/k", origin: "http://other.example", method: "HEAD", headers: manyNames(maxPreflightHeaders + 1),
			status: 400, code: s3.BadRequest}, // refused before the rules are read
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			for k, v := range map[string]string{"Origin": tt.origin, "Access-Control-Request-Method": tt.method,
				"Access-Control-Request-Headers": tt.headers, "Host": tt.host} {
				if v != "" {
					h[k] = v
				}
			}
			q := mpReq{method: http.MethodOptions, path: tt.path, header: h}
			if tt.code != "" {
				e.mustErr(tt.status, tt.code, q)
				return
			}
			r := e.must(tt.status, q)
			got := want{r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Access-Control-Allow-Methods"),
				r.header.Get("Access-Control-Allow-Headers"), r.header.Get("Access-Control-Max-Age"),
				r.header.Get("Access-Control-Expose-Headers"), r.header.Get("Access-Control-Allow-Credentials")}
			if got != tt.want {
				t.Errorf("headers %+v, want %+v", got, tt.want)
			}
			if !strings.Contains(r.header.Get("Vary"), "Origin") {
				t.Errorf("Vary %q", r.header.Get("Vary"))
			}
		})
	}
}

// TestCORSActualRequests: a request carrying an Origin that a rule allows with its
// method gets the rule's Access-Control-* headers, also on an error answer; one that
// no rule allows gets Vary alone; one without Origin, and one to a bucket without
// rules, get none.
func TestCORSActualRequests(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("web", e.alice)
	e.bucket("plain", e.alice)
	e.must(200, mpReq{method: "PUT", path: "/web", query: "cors", as: e.alice, body: corsConfig})
	e.put("/web/k", "data", e.alice)
	e.put("/plain/k", "data", e.alice)
	tests := []struct {
		name, method, path, origin string
		as                         *s3.User
		status                     int
		allow                      string
	}{
		{"GET allowed", "GET", "/web/k", "https://a.example.com", e.alice, 200, "https://a.example.com"},
		{"anonymous GET refused, still CORS", "GET", "/web/k", "https://a.example.com", nil, 403, "https://a.example.com"},
		{"missing key", "GET", "/web/none", "http://x.example", e.alice, 404, "*"},
		{"PUT from any origin", "PUT", "/web/k2", "http://x.example", e.alice, 200, ""},
		{"no origin", "GET", "/web/k", "", e.alice, 200, ""},
		{"no rules", "GET", "/plain/k", "https://a.example.com", e.alice, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.origin != "" {
				h["Origin"] = tt.origin
			}
			r := e.must(tt.status, mpReq{method: tt.method, path: tt.path, header: h, as: tt.as, body: "x"})
			if got := r.header.Get("Access-Control-Allow-Origin"); got != tt.allow {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.allow)
			}
			if tt.allow != "" && r.header.Get("Access-Control-Allow-Methods") == "" {
				t.Errorf("headers %v", r.header)
			}
			if vary := r.header.Get("Vary") != ""; vary != (tt.origin != "" && tt.path != "/plain/k") {
				t.Errorf("Vary %q", r.header.Get("Vary"))
			}
		})
	}
}

// manyNames returns an Access-Control-Request-Headers value of n names.
func manyNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("x-h%d", i)
	}
	return strings.Join(names, ",")
}
