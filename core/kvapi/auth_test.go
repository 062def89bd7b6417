package kvapi

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/security"
	"github.com/cairnkv/cairn/core/storage"
)

// testUsers is a security.Users over a map: key id → secret; keys starting with
// "disabled" are disabled.
type testUsers map[string]string

func (u testUsers) User(_ context.Context, keyID string) (string, bool, bool, error) {
	secret, ok := u[keyID]
	return secret, !strings.HasPrefix(keyID, "disabled"), ok, nil
}

// authAPI is a KV interface with access control over a fresh store, and the same
// interface without it (plain).
type authAPI struct {
	h, plain http.Handler
	guard    *security.Guard
	users    testUsers
}

func newAuthAPI(t testing.TB, allowInsecure bool) *authAPI {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	svc, err := kv.New(db, kv.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	users := testUsers{"nobody": "nobody-secret", "disabled-user": "disabled-secret"}
	guard := security.NewGuard(users, security.NewStore(db), func(id, secret string) bool {
		return id == "ADMIN" && secret == "admin-secret"
	})
	cfg := Config{Dialect: wire.DialectRiak, Logger: log, Stats: func(string) map[string]any { return map[string]any{} },
		MapReduce:  mapreduce.New(svc, nil, mapreduce.Config{Logger: log}),
		AdminCheck: func(id, secret string) bool { return id == "ADMIN" && secret == "admin-secret" },
		Guard:      guard, RequireAuth: true, AllowInsecure: allowInsecure}
	plain := cfg
	plain.RequireAuth = false
	return &authAPI{h: New(svc, cfg).Handler(), plain: New(svc, plain).Handler(), guard: guard, users: users}
}

// do sends a request as user (no credentials when user is "") and returns the recorded
// answer.
func (a *authAPI) do(method, path, ctype, body, user, secret string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	if user != "" {
		r.SetBasicAuth(user, secret)
	}
	w := httptest.NewRecorder()
	a.h.ServeHTTP(w, r)
	return w
}

// routeCase is one request and the permissions it needs, in the order they are checked.
type routeCase struct {
	method, path, ctype, body string
	needs                     []need
}

func bucketNeed(p security.Permission, typ, bucket string) need {
	return need{p, security.BucketScope(typ, bucket)}
}

func typeNeed(p security.Permission, typ string) need { return need{p, security.TypeScope(typ)} }

// routeTable is every KV route under access control and what it needs.
var routeTable = []routeCase{
	// Objects, new and old URL forms, default and typed.
	{"GET", "/buckets/b/keys/k", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"HEAD", "/buckets/b/keys/k", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"PUT", "/buckets/b/keys/k", "text/plain", "v", []need{bucketNeed(security.Put, "default", "b")}},
	{"POST", "/buckets/b/keys/k", "text/plain", "v", []need{bucketNeed(security.Put, "default", "b")}},
	{"DELETE", "/buckets/b/keys/k", "", "", []need{bucketNeed(security.Delete, "default", "b")}},
	{"POST", "/buckets/b/keys", "text/plain", "v", []need{bucketNeed(security.Put, "default", "b")}},
	{"GET", "/types/t/buckets/b/keys/k", "", "", []need{bucketNeed(security.Get, "t", "b")}},
	{"PUT", "/types/t/buckets/b/keys/k", "text/plain", "v", []need{bucketNeed(security.Put, "t", "b")}},
	{"DELETE", "/types/t/buckets/b/keys/k", "", "", []need{bucketNeed(security.Delete, "t", "b")}},
	{"POST", "/types/t/buckets/b/keys", "text/plain", "v", []need{bucketNeed(security.Put, "t", "b")}},
	{"GET", "/riak/b/k", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"PUT", "/riak/b/k", "text/plain", "v", []need{bucketNeed(security.Put, "default", "b")}},
	{"DELETE", "/riak/b/k", "", "", []need{bucketNeed(security.Delete, "default", "b")}},
	{"POST", "/riak/b", "text/plain", "v", []need{bucketNeed(security.Put, "default", "b")}},
	{"GET", "/store/b/k", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	// Bucket properties.
	{"GET", "/buckets/b/props", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"PUT", "/buckets/b/props", "application/json", `{"props":{"n_val":3}}`, []need{bucketNeed(security.SetProps, "default", "b")}},
	{"DELETE", "/buckets/b/props", "", "", []need{bucketNeed(security.SetProps, "default", "b")}},
	{"GET", "/types/t/buckets/b/props", "", "", []need{bucketNeed(security.Get, "t", "b")}},
	{"PUT", "/types/t/buckets/b/props", "application/json", `{"props":{"n_val":3}}`, []need{bucketNeed(security.SetProps, "t", "b")}},
	{"GET", "/riak/b", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"PUT", "/riak/b", "application/json", `{"props":{"n_val":3}}`, []need{bucketNeed(security.SetProps, "default", "b")}},
	// Bucket-type properties: reading them needs get on the type, changing them admin.
	{"GET", "/types/default/props", "", "", []need{typeNeed(security.Get, "default")}},
	{"PUT", "/types/default/props", "application/json", `{"props":{"n_val":3}}`, []need{typeNeed(security.Admin, "default")}},
	{"PUT", "/types/t/props", "application/json", `{"props":{"n_val":3}}`, []need{typeNeed(security.Admin, "t")}},
	// Listings.
	{"GET", "/buckets/b/keys?keys=true", "", "", []need{bucketNeed(security.ListKeys, "default", "b")}},
	{"GET", "/types/t/buckets/b/keys?keys=stream", "", "", []need{bucketNeed(security.ListKeys, "t", "b")}},
	{"GET", "/riak/b?keys=true", "", "", []need{bucketNeed(security.ListKeys, "default", "b")}},
	{"GET", "/buckets?buckets=true", "", "", []need{typeNeed(security.ListBuckets, "default")}},
	{"GET", "/types/t/buckets?buckets=true", "", "", []need{typeNeed(security.ListBuckets, "t")}},
	{"GET", "/riak?buckets=true", "", "", []need{typeNeed(security.ListBuckets, "default")}},
	// Secondary indexes.
	{"GET", "/buckets/b/index/f_bin/v", "", "", []need{bucketNeed(security.Index, "default", "b")}},
	{"GET", "/types/t/buckets/b/index/f_int/1/9", "", "", []need{bucketNeed(security.Index, "t", "b")}},
	// Counters and data types: reading needs get, changing put.
	{"GET", "/buckets/b/counters/c", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"POST", "/buckets/b/counters/c", "", "1", []need{bucketNeed(security.Put, "default", "b")}},
	{"GET", "/types/t/buckets/b/datatypes/k", "", "", []need{bucketNeed(security.Get, "t", "b")}},
	{"POST", "/types/t/buckets/b/datatypes/k", "application/json", `{"increment":1}`, []need{bucketNeed(security.Put, "t", "b")}},
	{"POST", "/types/t/buckets/b/datatypes", "application/json", `{"increment":1}`, []need{bucketNeed(security.Put, "t", "b")}},
	// Preflists and link walking (which also checks get on every bucket it reads).
	{"GET", "/buckets/b/keys/k/preflist", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"GET", "/buckets/b/keys/k/_,_,1", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	{"GET", "/riak/b/k/_,_,1", "", "", []need{bucketNeed(security.Get, "default", "b")}},
	// MapReduce: Riak's permissions for the inputs, then get on a stored JavaScript source.
	{"POST", "/mapred", "application/json", `{"inputs":"b","query":[]}`,
		[]need{bucketNeed(security.ListKeys, "default", "b"), bucketNeed(security.MapReduce, "default", "b")}},
	{"POST", "/mapred", "application/json", `{"inputs":["t","b"],"query":[]}`,
		[]need{bucketNeed(security.ListKeys, "t", "b"), bucketNeed(security.MapReduce, "t", "b")}},
	{"POST", "/mapred", "application/json", `{"inputs":{"bucket":"b","key_filters":[["eq","k"]]},"query":[]}`,
		[]need{bucketNeed(security.ListKeys, "default", "b"), bucketNeed(security.MapReduce, "default", "b")}},
	{"POST", "/mapred", "application/json", `{"inputs":{"bucket":"b","index":"f_bin","key":"v"},"query":[]}`,
		[]need{bucketNeed(security.Index, "default", "b"), bucketNeed(security.MapReduce, "default", "b")}},
	{"POST", "/mapred", "application/json", `{"inputs":[["b1","k"],["b2","k"],["b1","k2"],["b3","k",null,"t"]],"query":[]}`,
		[]need{bucketNeed(security.MapReduce, "default", "b1"), bucketNeed(security.MapReduce, "default", "b2"),
			bucketNeed(security.MapReduce, "t", "b3")}},
	{"POST", "/mapred", "application/json", `{"inputs":[["b","k"]],"query":[{"map":{"language":"javascript","bucket":"fns","key":"f"}}]}`,
		[]need{bucketNeed(security.MapReduce, "default", "b"), bucketNeed(security.Get, "default", "fns")}},
}

// TestRoutePermissions is the permission table, checked by behaviour: for every route,
// a user without grants is refused with Riak's text naming the first permission needed;
// each needed permission, granted on exactly its scope, opens it; and every other
// permission, granted on any, does not.
func TestRoutePermissions(t *testing.T) {
	a := newAuthAPI(t, true)
	ctx := context.Background()
	for i, rc := range routeTable {
		name := rc.method + " " + rc.path
		if strings.HasPrefix(rc.path, "/mapred") {
			name += " " + rc.body
		}
		user := "user" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		a.users[user] = user + "-secret"
		t.Run(name, func(t *testing.T) {
			var all security.Permission
			for _, n := range rc.needs {
				all |= n.perm
			}
			// Everything but the permissions the route needs, on any: still refused.
			if _, err := a.guard.Grant(ctx, user, security.AnyScope(), security.AllPermissions&^all); err != nil {
				t.Fatal(err)
			}
			for _, n := range rc.needs {
				w := a.do(rc.method, rc.path, rc.ctype, rc.body, user, user+"-secret")
				want := (&security.DeniedError{User: user, Permission: n.perm, Scope: n.sc}).Error()
				if w.Code != http.StatusForbidden || (rc.method != "HEAD" && w.Body.String() != want) {
					t.Fatalf("without %s on %s: %d %q, want 403 %q", n.perm, n.sc, w.Code, w.Body.String(), want)
				}
				if _, err := a.guard.Grant(ctx, user, n.sc, n.perm); err != nil {
					t.Fatal(err)
				}
			}
			w := a.do(rc.method, rc.path, rc.ctype, rc.body, user, user+"-secret")
			if w.Code == http.StatusForbidden || w.Code == http.StatusUnauthorized || w.Code == http.StatusUpgradeRequired {
				t.Fatalf("with %s: %d %q", all, w.Code, w.Body.String())
			}
			// The admin credential needs no grant.
			if w := a.do(rc.method, rc.path, rc.ctype, rc.body, "ADMIN", "admin-secret"); w.Code == http.StatusForbidden ||
				w.Code == http.StatusUnauthorized {
				t.Fatalf("the admin credential: %d %q", w.Code, w.Body.String())
			}
		})
	}
}

// TestAuthentication checks the answers before any permission: open resources, missing
// or bad credentials, disabled users, and plain HTTP.
func TestAuthentication(t *testing.T) {
	a := newAuthAPI(t, true)
	for _, tc := range []struct {
		name, method, path, user, secret string
		want                             int
	}{
		{"ping is open", "GET", "/ping", "", "", 200},
		{"stats are open", "GET", "/stats", "", "", 200},
		{"the resource list is open", "GET", "/", "", "", 200},
		{"open with bad credentials", "GET", "/ping", "nobody", "wrong", 200},
		{"no credentials", "GET", "/buckets/b/keys/k", "", "", 401},
		{"wrong secret", "GET", "/buckets/b/keys/k", "nobody", "wrong", 401},
		{"unknown user", "GET", "/buckets/b/keys/k", "stranger", "x", 401},
		{"disabled user", "GET", "/buckets/b/keys/k", "disabled-user", "disabled-secret", 401},
		{"no grants", "GET", "/buckets/b/keys/k", "nobody", "nobody-secret", 403},
		{"mapred needs a user", "POST", "/mapred", "", "", 401},
		{"walk needs a user", "GET", "/buckets/b/keys/k/_,_,1", "", "", 401},
		{"unknown path", "GET", "/nowhere", "", "", 404},
		{"unknown method before auth", "PATCH", "/buckets/b/keys/k", "", "", 501},
		{"admin credential", "GET", "/buckets/b/keys/k", "ADMIN", "admin-secret", 404},
		{"grants need the admin credential", "GET", "/admin/grants/nobody", "nobody", "nobody-secret", 403},
		{"grants for the admin", "GET", "/admin/grants/nobody", "ADMIN", "admin-secret", 200},
	} {
		w := a.do(tc.method, tc.path, "", "", tc.user, tc.secret)
		if w.Code != tc.want {
			t.Errorf("%s: %s %s = %d %q, want %d", tc.name, tc.method, tc.path, w.Code, w.Body.String(), tc.want)
		}
		if w.Code == 401 && w.Header().Get("WWW-Authenticate") != `Basic realm="Riak"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, w.Header().Get("WWW-Authenticate"))
		}
	}

	insecure := newAuthAPI(t, false)
	w := insecure.do("GET", "/buckets/b/keys/k", "", "", "ADMIN", "admin-secret")
	const msg = "Security is enabled and Riak does not accept credentials over HTTP. Try HTTPS instead."
	if w.Code != http.StatusUpgradeRequired || w.Body.String() != msg {
		t.Errorf("plain HTTP: %d %q, want 426 %q", w.Code, w.Body.String(), msg)
	}
	if w := insecure.do("GET", "/ping", "", "", "", ""); w.Code != 200 {
		t.Errorf("plain HTTP /ping: %d", w.Code)
	}
}

// TestAuthOverTLS checks that a request over TLS is served without the insecure
// allowance.
func TestAuthOverTLS(t *testing.T) {
	a := newAuthAPI(t, false)
	srv := httptest.NewTLSServer(a.h)
	defer srv.Close()
	cl := srv.Client()
	cl.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS12
	for _, tc := range []struct {
		user, secret string
		want         int
	}{
		{"ADMIN", "admin-secret", 404},
		{"nobody", "nobody-secret", 403},
		{"nobody", "wrong", 401},
		{"", "", 401},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/buckets/b/keys/k", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.secret)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("over TLS as %q: %d, want %d", tc.user, resp.StatusCode, tc.want)
		}
	}
}

// TestAuthorizeSetsClient checks that an authenticated request carries its key id as
// the client identity (per-client limits count by it) and its principal.
func TestAuthorizeSetsClient(t *testing.T) {
	a := newAuthAPI(t, true)
	api := &API{cfg: Config{Guard: a.guard, RequireAuth: true, AllowInsecure: true}, log: slog.New(slog.DiscardHandler)}
	r := httptest.NewRequest("GET", "/buckets/b/keys/k", nil)
	r = r.WithContext(core.WithClient(r.Context(), "192.0.2.1")) // set earlier, by IP
	r.SetBasicAuth("ADMIN", "admin-secret")
	r2, err := api.authorize(r, objectGuard, loc{typ: "default", bucket: "b", key: "k"})
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if got := core.ClientFrom(r2.Context()); got != "ADMIN" {
		t.Errorf("client identity %q, want the key id", got)
	}
	if p := principalFrom(r2.Context()); p == nil || !p.Admin {
		t.Errorf("principal %+v", p)
	}
}

// TestLinkWalkChecksEveryBucket: a walk that follows a link into a bucket the user may
// not read is refused as a whole, naming that bucket.
func TestLinkWalkChecksEveryBucket(t *testing.T) {
	a := newAuthAPI(t, true)
	ctx := context.Background()
	a.users["walker"] = "walker-secret"
	if _, err := a.guard.Grant(ctx, "walker", security.BucketScope("default", "open"), security.Get|security.Put); err != nil {
		t.Fatal(err)
	}
	put := func(path, link string) {
		t.Helper()
		r := httptest.NewRequest("PUT", path, strings.NewReader("v"))
		r.Header.Set("Content-Type", "text/plain")
		if link != "" {
			r.Header.Set("Link", link)
		}
		r.SetBasicAuth("ADMIN", "admin-secret")
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, r)
		if w.Code/100 != 2 {
			t.Fatalf("PUT %s: %d %s", path, w.Code, w.Body.String())
		}
	}
	put("/buckets/secret/keys/s", "")
	put("/buckets/open/keys/o2", "")
	put("/buckets/open/keys/o", `</buckets/open/keys/o2>; riaktag="x", </buckets/secret/keys/s>; riaktag="y"`)
	if w := a.do("GET", "/buckets/open/keys/o/open,_,1", "", "", "walker", "walker-secret"); w.Code != 200 {
		t.Fatalf("walk within open: %d %s", w.Code, w.Body.String())
	}
	w := a.do("GET", "/buckets/open/keys/o/_,_,1", "", "", "walker", "walker-secret")
	want := `Permission denied: User 'walker' does not have 'riak_kv.get' on {<<"default">>,<<"secret">>}`
	if w.Code != 403 || w.Body.String() != want {
		t.Fatalf("walk into secret: %d %q, want 403 %q", w.Code, w.Body.String(), want)
	}
	// MapReduce: the second link phase reads the objects the first led to, secret/s
	// among them, and fails the job with 403.
	if _, err := a.guard.Grant(ctx, "walker", security.BucketScope("default", "open"), security.MapReduce); err != nil {
		t.Fatal(err)
	}
	job := `{"inputs":[["open","o"]],"query":[{"link":{"bucket":"_"}},{"link":{"bucket":"_"}}]}`
	w = a.do("POST", "/mapred", "application/json", job, "walker", "walker-secret")
	wantMR := `Permission denied: User 'walker' does not have 'riak_kv.mapreduce' on {<<"default">>,<<"secret">>}`
	if w.Code != 403 || w.Body.String() != wantMR {
		t.Fatalf("mapred link into secret: %d %q, want 403 %q", w.Code, w.Body.String(), wantMR)
	}
	// Streamed, the refusal ends the body as the job's JSON error.
	if w := a.do("POST", "/mapred?chunked=true", "application/json", job, "walker", "walker-secret"); !strings.Contains(w.Body.String(),
		`{"error":"Permission denied: User 'walker' does not have 'riak_kv.mapreduce' on {<<\"default\">>,<<\"secret\">>}"}`) {
		t.Fatalf("chunked mapred link into secret: %d %q", w.Code, w.Body.String())
	}
}

// TestUnguardedMethodNeedsAdmin: a method a guard does not name (a resource registered
// without a guard names none) needs the admin permission on any, so a forgotten guard
// closes a route to users instead of opening it.
func TestUnguardedMethodNeedsAdmin(t *testing.T) {
	l := loc{typ: "default", bucket: "b"}
	for _, g := range []guard{{}, objectGuard, bucketsGuard} {
		if p, sc := g.need("PATCH", l); p != security.Admin || !sc.Any {
			t.Errorf("%+v.need(PATCH) = %s on %s, want admin on any", g, p, sc)
		}
	}
	if p, sc := bucketsGuard.need("GET", l); p != security.ListBuckets || sc != security.TypeScope("default") {
		t.Errorf("bucketsGuard.need(GET) = %s on %s", p, sc)
	}
}

// BenchmarkAuthGet measures what access control adds to a GET of a small object: the
// same request as the admin credential, as a user with a grant on the bucket, and
// without access control.
func BenchmarkAuthGet(b *testing.B) {
	a := newAuthAPI(b, true)
	ctx := context.Background()
	a.users["bench"] = "bench-secret"
	if _, err := a.guard.Grant(ctx, "bench", security.BucketScope("default", "b"), security.Get); err != nil {
		b.Fatal(err)
	}
	if w := a.do("PUT", "/buckets/b/keys/k", "text/plain", "value", "ADMIN", "admin-secret"); w.Code != 204 {
		b.Fatal(w.Code)
	}
	for _, c := range []struct {
		name, user, secret string
		h                  http.Handler
	}{
		{"off", "", "", a.plain},
		{"user", "bench", "bench-secret", a.h},
		{"admin", "ADMIN", "admin-secret", a.h},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/buckets/b/keys/k", nil)
			if c.user != "" {
				r.SetBasicAuth(c.user, c.secret)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
