package main

// Bucket types: created out of band with `cairn bucket-type create` (server stopped), then
// served under /types/T/...: type and bucket properties, typed defaults (allow_mult and
// dvv_enabled true), separate namespaces, typed Location and Link paths.

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBucketTypes(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{
				"maps":    `{"props":{"n_val":2}}`,
				"plain":   "",
				"my type": `{"last_write_wins":true,"dvv_enabled":false}`,
			}, "--dialect", d.name)
			jsonCT := hdr{"Content-Type", "application/json"}

			t.Run("type-props", func(t *testing.T) {
				p := propsOf(t, s, "/types/plain/props")
				for k, v := range map[string]any{"allow_mult": true, "dvv_enabled": true, "active": true, "claimant": "cairn@127.0.0.1", "n_val": 3.0} {
					if p[k] != v {
						t.Errorf("/types/plain/props %s = %#v, want %#v", k, p[k], v)
					}
				}
				if _, ok := p["name"]; ok {
					t.Errorf("type props carry a bucket name: %v", p)
				}
				if m := p["chash_keyfun"].(map[string]any)["mod"]; m != d.name+"_core_util" {
					t.Errorf("chash_keyfun mod %v", m)
				}
				// Bucket props inherit the type's.
				bp := propsOf(t, s, "/types/maps/buckets/b/props")
				for k, v := range map[string]any{"n_val": 2.0, "allow_mult": true, "dvv_enabled": true, "name": "b", "active": true} {
					if bp[k] != v {
						t.Errorf("/types/maps/buckets/b/props %s = %#v, want %#v", k, bp[k], v)
					}
				}
				// The type name is percent-decoded.
				if p := propsOf(t, s, "/types/my+type/buckets/b/props"); p["last_write_wins"] != true {
					t.Errorf("my type: last_write_wins = %v", p["last_write_wins"])
				}

				// PUT /types/T/props changes the type, and so its buckets.
				expect(t, s.do(t, "PUT", "/types/plain/props", jsonCT, `{"props":{"n_val":4}}`), 204, nil)
				if p := propsOf(t, s, "/types/plain/buckets/x/props"); p["n_val"] != 4.0 {
					t.Errorf("type change not seen by its buckets: n_val %v", p["n_val"])
				}
				r := s.do(t, "PUT", "/types/plain/props", jsonCT, `{"props":{"n_val":"x"}}`)
				expect(t, r, 400, ptr(`{"n_val":"not_integer"}`))
				expectText(t, s.do(t, "PUT", "/types/plain/props", jsonCT, `[]`), 400,
					"bucket type PUT must be a JSON object of the form:\n{\"props\":{...bucket properties...}}")
				expectPage(t, s.do(t, "PUT", "/types/plain/props", hdr{"Content-Type", "text/plain"}, `{"props":{}}`), 415)
				r = s.do(t, "DELETE", "/types/plain/props", nil, "")
				expectPage(t, r, 405)
				expectHeader(t, r, "Allow", "HEAD, GET, PUT")

				// Bucket props in a type: set, reset to the type's.
				expect(t, s.do(t, "PUT", "/types/maps/buckets/r/props", jsonCT, `{"props":{"n_val":1,"allow_mult":false}}`), 204, nil)
				if p := propsOf(t, s, "/types/maps/buckets/r/props"); p["n_val"] != 1.0 || p["allow_mult"] != false {
					t.Errorf("typed bucket props not set: %v", p)
				}
				expect(t, s.do(t, "DELETE", "/types/maps/buckets/r/props", nil, ""), 204, nil)
				if p := propsOf(t, s, "/types/maps/buckets/r/props"); p["n_val"] != 2.0 || p["allow_mult"] != true {
					t.Errorf("typed bucket props not reset to the type's: %v", p)
				}
			})

			t.Run("objects", func(t *testing.T) {
				// Quorums against the type's n_val.
				expect(t, s.do(t, "PUT", "/types/maps/buckets/b/keys/k?w=3", hdr{"Content-Type", "text/plain"}, "v"), 400,
					ptr("Specified w/dw/pw values invalid for bucket n value of 2\n"))
				// Separate namespaces: same bucket and key in three types.
				s.mustPut(t, "/buckets/b/keys/k", "default")
				s.mustPut(t, "/types/default/buckets/b/keys/same", "default via /types/default")
				s.mustPut(t, "/types/maps/buckets/b/keys/k", "maps", "Link", "</types/maps/buckets/b/keys/other>; "+d.other().tag+`="t"`)
				s.mustPut(t, "/types/plain/buckets/b/keys/k", "plain")
				expect(t, s.get(t, "/buckets/b/keys/k"), 200, ptr("default"))
				expect(t, s.get(t, "/buckets/b/keys/same"), 200, ptr("default via /types/default"))
				r := s.get(t, "/types/maps/buckets/b/keys/k")
				expect(t, r, 200, ptr("maps"))
				expectHeader(t, r, "Link", "</types/maps/buckets/b/keys/other>; "+d.tag+`="t", </types/maps/buckets/b>; rel="up"`)
				expect(t, s.get(t, "/types/plain/buckets/b/keys/k"), 200, ptr("plain"))

				// Keyless store: a typed Location.
				r = s.do(t, "POST", "/types/my+type/buckets/b/keys", hdr{"Content-Type", "text/plain"}, "posted")
				expect(t, r, 201, nil)
				loc := r.Header.Get("Location")
				if !strings.HasPrefix(loc, "/types/my+type/buckets/b/keys/") || len(loc) != len("/types/my+type/buckets/b/keys/")+27 {
					t.Fatalf("typed Location %q", loc)
				}
				expect(t, s.get(t, loc), 200, ptr("posted"))

				// Custom types keep concurrent writes (allow_mult) and, with dotted version
				// vectors, a write with the clock read replaces exactly what it read.
				s.mustPut(t, "/types/plain/buckets/b/keys/sib", "a")
				s.mustPut(t, "/types/plain/buckets/b/keys/sib", "b")
				r = s.get(t, "/types/plain/buckets/b/keys/sib", "Accept", "multipart/mixed")
				expect(t, r, 300, nil)
				parts := parseSiblings(t, r)
				if len(parts) != 2 || parts[0].headers["Link"] != `</types/plain/buckets/b>; rel="up"` {
					t.Fatalf("typed siblings: %v", parts)
				}
				clock := vclockOf(t, r, d)
				s.mustPut(t, "/types/plain/buckets/b/keys/sib", "c") // concurrent with the resolution below
				s.mustPut(t, "/types/plain/buckets/b/keys/sib", "a+b", d.hdr+"Vclock", clock)
				r = s.get(t, "/types/plain/buckets/b/keys/sib", "Accept", "multipart/mixed")
				expect(t, r, 300, nil)
				var bodies []string
				for _, p := range parseSiblings(t, r) {
					bodies = append(bodies, p.body)
				}
				if strings.Join(bodies, ",") != "c,a+b" {
					t.Errorf("after resolving a and b concurrently with c: %v, want [c a+b]", bodies)
				}

				// last_write_wins in "my type".
				s.mustPut(t, "/types/my+type/buckets/b/keys/lww", "1")
				s.mustPut(t, "/types/my+type/buckets/b/keys/lww", "2")
				expect(t, s.get(t, "/types/my%20type/buckets/b/keys/lww"), 200, ptr("2"))
			})

			t.Run("cli-while-running", func(t *testing.T) {
				code, _, errOut := runCairn(t, serverOpts{args: []string{"bucket-type", "create", "late", "--data-dir", s.DataDir}})
				want := "cairn: data directory " + s.DataDir + " is in use by a running server; stop it first\n"
				if code != 1 || errOut != want {
					t.Errorf("bucket-type create on a running server's data dir: exit %d, stderr %q; want 1, %q", code, errOut, want)
				}
			})
		})
	}
}

// TestBucketTypeCommand checks `cairn bucket-type create/show` on a stopped data dir.
func TestBucketTypeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	createType(t, dir, "sets", `{"n_val":1,"allow_mult":true}`)
	code, out, errOut := runCairn(t, serverOpts{args: []string{"bucket-type", "show", "sets", "--data-dir", dir}})
	var shown struct {
		Props map[string]any `json:"props"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Props["n_val"] != 1.0 || shown.Props["dvv_enabled"] != true {
		t.Fatalf("bucket-type show: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bucket-type", "create", "bad", `{"n_val":"x"}`, "--data-dir", dir}, 1, `"n_val":"not_integer"`},
		{[]string{"bucket-type", "create", "default", "--data-dir", dir}, 1, "default"},
		{[]string{"bucket-type", "create", "broken", `{not json`, "--data-dir", dir}, 2, "JSON"},
		{[]string{"bucket-type", "show", "nosuchtype", "--data-dir", dir}, 1, "Unknown bucket type: nosuchtype"},
		{[]string{"bucket-type"}, 2, "usage"},
	} {
		code, out, errOut := runCairn(t, serverOpts{args: c.args})
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("cairn %v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	// A refused type is not left behind.
	code, _, _ = runCairn(t, serverOpts{args: []string{"bucket-type", "show", "bad", "--data-dir", dir}})
	if code != 1 {
		t.Errorf("the refused type \"bad\" exists")
	}
	// The server serves the type.
	s := startServerOpts(t, serverOpts{dataDir: dir})
	if p := propsOf(t, s, "/types/sets/buckets/x/props"); p["n_val"] != 1.0 {
		t.Errorf("served type props: %v", p)
	}
	s.Stop()
}
