package main

// A server started without --dialect answers each KV request in the names its client
// speaks: riak names on /riak/... URLs and for requests carrying X-Riak-* headers, store
// names on /store/... URLs, for X-Store-* headers, and for requests with no hint (the
// default dialect). Links in the answer (Link, Location, sibling and link-walk parts)
// follow the same choice.

import (
	"regexp"
	"strings"
	"testing"
)

// kvNamesClean checks that a response carries no header of the dialect it must not use.
func kvNamesClean(t *testing.T, r *resp, d dialect) {
	t.Helper()
	for name := range r.Header {
		if strings.HasPrefix(name, d.other().hdr) {
			t.Errorf("%s %s: header %s in a %s answer\n%s", r.Request.Method, r.Request.URL.Path, name, d.name, r)
		}
	}
}

func TestKVNamesFollowTheRequest(t *testing.T) {
	t.Parallel()
	s := startServer(t) // no --dialect: store for requests with no hint
	links := `</buckets/names/keys/b>; riaktag="next", </buckets/pets/keys/rex>; storetag="pet"`
	s.mustPut(t, "/buckets/names/keys/a", "A", "Link", links, "X-Riak-Meta-Colour", "blue", "X-Riak-Meta-Empty", "")
	s.mustPut(t, "/buckets/names/keys/b", "B")
	s.mustPut(t, "/buckets/pets/keys/rex", "R")

	for _, tc := range []struct {
		name, path string
		h          []string
		d          dialect
		link       string
	}{
		{"riak URL", "/riak/names/a", nil, dRiak,
			`</riak/names/b>; riaktag="next", </riak/pets/rex>; riaktag="pet", </riak/names>; rel="up"`},
		{"store URL", "/store/names/a", nil, dStore,
			`</store/names/b>; storetag="next", </store/pets/rex>; storetag="pet", </store/names>; rel="up"`},
		{"no hint", "/buckets/names/keys/a", nil, dStore,
			`</buckets/names/keys/b>; storetag="next", </buckets/pets/keys/rex>; storetag="pet", </buckets/names>; rel="up"`},
		{"X-Riak header", "/buckets/names/keys/a", []string{"X-Riak-ClientId", "client-1"}, dRiak,
			`</buckets/names/keys/b>; riaktag="next", </buckets/pets/keys/rex>; riaktag="pet", </buckets/names>; rel="up"`},
		{"URL beats header", "/store/names/a", []string{"X-Riak-ClientId", "client-1"}, dStore,
			`</store/names/b>; storetag="next", </store/pets/rex>; storetag="pet", </store/names>; rel="up"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.get(t, tc.path, tc.h...)
			expect(t, r, 200, ptr("A"))
			vclockOf(t, r, tc.d)
			expectHeader(t, r, "Link", tc.link)
			expectHeader(t, r, tc.d.hdr+"Meta-Colour", "blue")
			if vs, ok := r.Header[tc.d.hdr+"Meta-Empty"]; !ok || len(vs) != 1 || vs[0] != "" {
				t.Errorf("%sMeta-Empty: %q (present %v), want one empty value\n%s", tc.d.hdr, vs, ok, r)
			}
			kvNamesClean(t, r, tc.d)
		})
	}

	t.Run("Location", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			h    []string
			d    dialect
			want string
		}{
			{"/riak/names", nil, dRiak, `^/riak/names/[0-9A-Za-z]{27}$`},
			{"/store/names", nil, dStore, `^/store/names/[0-9A-Za-z]{27}$`},
			{"/buckets/names/keys", []string{"X-Riak-Meta-M", "1"}, dRiak, `^/buckets/names/keys/[0-9A-Za-z]{27}$`},
		} {
			h := hdr{"Content-Type", "text/plain"}
			h = append(h, tc.h...)
			r := s.do(t, "POST", tc.path+"?returnbody=true", h, "posted")
			expect(t, r, 201, ptr("posted"))
			if loc := r.Header.Get("Location"); !regexp.MustCompile(tc.want).MatchString(loc) {
				t.Errorf("POST %s: Location %q, want %s", tc.path, loc, tc.want)
			}
			vclockOf(t, r, tc.d)
			kvNamesClean(t, r, tc.d)
		}
	})

	t.Run("siblings", func(t *testing.T) {
		s.setProps(t, "sibs", `{"allow_mult":true}`)
		s.mustPut(t, "/buckets/sibs/keys/k", "one", "Link", `</buckets/names/keys/a>; storetag="t"`, "X-Store-Meta-Who", "first")
		s.mustPut(t, "/buckets/sibs/keys/k", "two")
		for _, tc := range []struct {
			path string
			d    dialect
			link string
		}{
			{"/riak/sibs/k", dRiak, `</riak/sibs>; rel="up", </riak/names/a>; riaktag="t"`},
			{"/buckets/sibs/keys/k", dStore, `</buckets/sibs>; rel="up", </buckets/names/keys/a>; storetag="t"`},
		} {
			r := s.get(t, tc.path, "Accept", "multipart/mixed")
			expect(t, r, 300, nil)
			vclockOf(t, r, tc.d)
			kvNamesClean(t, r, tc.d)
			found := false
			for _, p := range parseSiblings(t, r) {
				for name := range p.headers {
					if strings.HasPrefix(name, tc.d.other().hdr) {
						t.Errorf("%s: sibling part header %s in a %s answer", tc.path, name, tc.d.name)
					}
				}
				if p.body == "one" {
					found = true
					if p.headers["Link"] != tc.link || p.headers[tc.d.hdr+"Meta-Who"] != "first" {
						t.Errorf("%s: sibling part Link %q %sMeta-Who %q, want %q and first", tc.path, p.headers["Link"],
							tc.d.hdr, p.headers[tc.d.hdr+"Meta-Who"], tc.link)
					}
				}
			}
			if !found {
				t.Errorf("%s: no sibling \"one\"\n%s", tc.path, r)
			}
		}
	})

	t.Run("link walk", func(t *testing.T) {
		for _, tc := range []struct {
			path, loc string
			h         []string
			d         dialect
		}{
			{"/riak/names/a/_,next,1", "/riak/names/b", nil, dRiak},
			{"/store/names/a/_,next,1", "/store/names/b", nil, dStore},
			{"/buckets/names/keys/a/_,next,1", "/buckets/names/keys/b", nil, dStore},
			{"/buckets/names/keys/a/_,next,1", "/buckets/names/keys/b", []string{"X-Riak-ClientId", "c"}, dRiak},
		} {
			w := parseWalk(t, s.get(t, tc.path, tc.h...))
			if len(w.steps) != 1 || len(w.steps[0]) != 1 {
				t.Fatalf("%s: %s", tc.path, w.places(t))
			}
			b := w.steps[0][0]
			if b.get("Location") != tc.loc || b.get(tc.d.hdr+"Vclock") == "" || b.get(tc.d.other().hdr+"Vclock") != "" {
				t.Errorf("%s: part headers %v, want Location %s and %sVclock", tc.path, b.hdr, tc.loc, tc.d.hdr)
			}
		}
	})

	t.Run("tombstone", func(t *testing.T) {
		s.mustPut(t, "/buckets/gone/keys/k", "x")
		expect(t, s.do(t, "DELETE", "/buckets/gone/keys/k", nil, ""), 204, nil)
		r := s.get(t, "/riak/gone/k") // within the reap delay: the tombstone is visible
		expect(t, r, 404, nil)
		expectHeader(t, r, "X-Riak-Deleted", "true")
		vclockOf(t, r, dRiak)
		kvNamesClean(t, r, dRiak)
	})

	t.Run("discovery", func(t *testing.T) {
		for _, tc := range []struct {
			h    []string
			want string
		}{
			{nil, `</store>; rel="store_kv_wm_object"`},
			{[]string{"X-Riak-ClientId", "c"}, `</riak>; rel="riak_kv_wm_object"`},
		} {
			r := s.get(t, "/", append([]string{"Accept", "application/json"}, tc.h...)...)
			expect(t, r, 200, nil)
			if l := r.Header.Get("Link"); !strings.Contains(l, tc.want) {
				t.Errorf("GET / %v: Link %q lacks %s", tc.h, l, tc.want)
			}
		}
	})
}

// TestKVNamesProduct: under access control, the product named in the 401 challenge and
// the 426 refusal follows the request's names too (Riak's own for riak requests).
func TestKVNamesProduct(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--kv-auth", "--kv-auth-allow-insecure")
	for _, tc := range []struct {
		path  string
		h     []string
		realm string
	}{
		{"/riak/b/k", nil, `Basic realm="Riak"`},
		{"/buckets/b/keys/k", []string{"X-Riak-ClientId", "c"}, `Basic realm="Riak"`},
		{"/store/b/k", nil, `Basic realm="Cairn"`},
		{"/buckets/b/keys/k", nil, `Basic realm="Cairn"`},
	} {
		r := s.get(t, tc.path, tc.h...)
		expect(t, r, 401, nil)
		expectHeader(t, r, "WWW-Authenticate", tc.realm)
	}
	plain := startServer(t, "--kv-auth")
	r := plain.get(t, "/riak/b/k")
	expect(t, r, 426, nil)
	if !strings.Contains(string(r.Body), "Security is enabled and Riak does not accept credentials over HTTP") {
		t.Errorf("426 body %q names another product", r.Body)
	}
}
