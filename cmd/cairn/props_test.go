package main

// Item 7: bucket properties in every URL form: defaults, validation, error formats,
// round trip, reset.

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
)

// defaultPropsJSON is the exact GET body for a never-configured bucket of the default type.
func defaultPropsJSON(d dialect, bucket string) string {
	return `{"props":{"allow_mult":false,"basic_quorum":false,"big_vclock":50,` +
		`"chash_keyfun":{"mod":"` + d.name + `_core_util","fun":"chash_std_keyfun"},"dvv_enabled":false,"dw":"quorum",` +
		`"last_write_wins":false,"linkfun":{"mod":"` + d.name + `_kv_wm_link_walker","fun":"mapreduce_linkfun"},` +
		`"max_object_size":52428800,"max_siblings":100,` +
		`"n_val":3,"name":"` + bucket + `","notfound_ok":true,"old_vclock":86400,"postcommit":[],"pr":0,"precommit":[],` +
		`"pw":0,"r":"quorum","rw":"quorum","small_vclock":50,"w":"quorum","warn_object_size":5242880,"warn_siblings":25,` +
		`"write_once":false,"young_vclock":20}}`
}

// propsOf fetches a bucket's properties (path is its props address in any form).
func propsOf(t testing.TB, s *child, path string) map[string]any {
	t.Helper()
	r := s.get(t, path)
	expect(t, r, 200, nil)
	var m struct {
		Props map[string]any `json:"props"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil || m.Props == nil {
		t.Fatalf("props body: %v\n%s", err, r)
	}
	return m.Props
}

func TestBucketProps(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		jsonCT := hdr{"Content-Type", "application/json"}

		t.Run("defaults-every-form", func(t *testing.T) {
			t.Parallel()
			want := defaultPropsJSON(d, "fresh bucket")
			for _, p := range []string{"/store/fresh+bucket", "/riak/fresh%20bucket", "/store/fresh+bucket?props=true",
				"/riak/fresh+bucket?keys=false", "/buckets/fresh+bucket/props", "/buckets/fresh+bucket/props/"} {
				for _, m := range []string{"GET", "HEAD"} {
					r := s.do(t, m, p, nil, "")
					w := want
					if m == "HEAD" {
						w = ""
					}
					expect(t, r, 200, &w)
					expectHeader(t, r, "Content-Type", "application/json")
					expectHeader(t, r, "Vary", "Accept-Encoding")
					expectHeader(t, r, "Content-Length", itoa(len(want)))
				}
			}
			expectPage(t, s.get(t, "/buckets/x/props", "Accept", "text/html"), 406)
			// props=false without keys matches no route.
			expectPage(t, s.get(t, "/store/x?props=false"), 404)
		})

		t.Run("set-every-form", func(t *testing.T) {
			t.Parallel()
			for _, f := range forms {
				b := "set-" + f.name
				put := s.do(t, "PUT", f.props(b), jsonCT, `{"props":{"n_val":5,"allow_mult":"TRUE","r":"one","dw":0,"last_write_wins":0,"my_prop":{"x":[1,2]}}}`)
				expect(t, put, 204, ptr(""))
				expectHeader(t, put, "Content-Type", "application/json") // negotiated, as the reference writes it
				p := propsOf(t, s, f.props(b))
				for k, v := range map[string]any{"n_val": 5.0, "allow_mult": true, "r": "one", "dw": 0.0, "last_write_wins": false, "w": "quorum", "name": b} {
					if p[k] != v {
						t.Errorf("%s: %s = %#v, want %#v", f.name, k, p[k], v)
					}
				}
				if mp, _ := json.Marshal(p["my_prop"]); string(mp) != `{"x":[1,2]}` {
					t.Errorf("%s: unknown property not echoed: %s", f.name, mp)
				}
				// Old-form GET shows the same.
				r := s.get(t, f.props(b))
				expect(t, r, 200, nil)
				if !bytes.Contains(r.Body, []byte(`"n_val":5`)) {
					t.Errorf("%s: GET %s: %s", f.name, f.props(b), r.Body)
				}
				// Quorums are checked against the new n_val.
				expect(t, s.do(t, "PUT", f.obj(b, "k")+"?w=5", hdr{"Content-Type", "text/plain"}, "v"), 204, nil)
				expect(t, s.do(t, "PUT", f.obj(b, "k")+"?w=6", hdr{"Content-Type", "text/plain"}, "v"), 400, ptr("Specified w/dw/pw values invalid for bucket n value of 5\n"))
				// An empty change set is accepted.
				expect(t, s.do(t, "PUT", f.props(b), jsonCT, `{"props":{}}`), 204, nil)
			}
		})

		t.Run("validation", func(t *testing.T) {
			t.Parallel()
			for _, f := range forms {
				b := "val-" + f.name
				before := string(s.get(t, f.props(b)).Body)
				for _, c := range []struct {
					body string
					want map[string]string
				}{
					{`{"props":{"n_val":"three","allow_mult":"maybe"}}`, map[string]string{"n_val": "not_integer", "allow_mult": "not_boolean"}},
					{`{"props":{"n_val":0,"big_vclock":-1,"old_vclock":1.5,"small_vclock":"5"}}`,
						map[string]string{"n_val": "not_integer", "big_vclock": "not_integer", "old_vclock": "not_integer", "small_vclock": "not_integer"}},
					{`{"props":{"r":"default","w":0,"rw":"lots","dw":-1,"pr":"two","pw":true}}`,
						map[string]string{"r": "not_valid_quorum", "w": "not_valid_quorum", "rw": "not_valid_quorum", "dw": "not_valid_quorum", "pr": "not_valid_quorum", "pw": "not_valid_quorum"}},
					{`{"props":{"basic_quorum":[],"notfound_ok":null,"last_write_wins":"yes"}}`,
						map[string]string{"basic_quorum": "not_boolean", "notfound_ok": "not_boolean", "last_write_wins": "not_boolean"}},
					{`{"props":{"write_once":true}}`, map[string]string{"write_once": "cannot update write_once property"}},
					{`{"props":{"n_val":1000000000000,"young_vclock":"any","max_siblings":0}}`, map[string]string{
						"n_val": "out_of_range: n_val must be an integer from 1 to 64", "young_vclock": "not_integer", "max_siblings": "not_integer"}},
					{`{"props":{"n_val":2,"w":3}}`, map[string]string{"w": "not_valid_quorum: 3 is above n_val 2"}},
					{`{"props":{"last_write_wins":true,"dvv_enabled":true}}`, map[string]string{"dvv_enabled": "If last_write_wins is true, dvv_enabled must be false"}},
				} {
					r := s.do(t, "PUT", f.props(b), jsonCT, c.body)
					expect(t, r, 400, nil)
					expectHeader(t, r, "Content-Type", "application/json")
					var got map[string]string
					if err := json.Unmarshal(r.Body, &got); err != nil {
						t.Fatalf("%s: reasons not a JSON object of strings: %s", f.name, r.Body)
					}
					gb, _ := json.Marshal(got)
					wb, _ := json.Marshal(c.want)
					if string(gb) != string(wb) {
						t.Errorf("%s: %s → %s, want %s", f.name, c.body, gb, wb)
					}
				}
				// Nothing was changed by the refused updates.
				r := s.get(t, f.props(b))
				expect(t, r, 200, &before)

				// Not JSON → 415 page; not {"props":{...}} → 400 text.
				for _, ct := range []hdr{{"Content-Type", "text/plain"}, {"Content-Type", "application/x-www-form-urlencoded"}, nil} {
					expectPage(t, s.do(t, "PUT", f.props(b), ct, `{"props":{"n_val":1}}`), 415)
				}
				expect(t, s.do(t, "PUT", f.props(b), hdr{"Content-Type", "application/json; charset=utf-8"}, `{"props":{"n_val":2}}`), 204, nil)
				const shape = "bucket PUT must be a JSON object of the form:\n{\"props\":{...bucket properties...}}"
				for _, body := range []string{`[1]`, `{}`, `{"props":5}`, `{"props":null}`, `not json`, `{"n_val":3}`, ``} {
					expectText(t, s.do(t, "PUT", f.props(b), jsonCT, body), 400, shape)
				}
			}
		})

		t.Run("round-trip-and-reset", func(t *testing.T) {
			t.Parallel()
			b := "rt"
			expect(t, s.do(t, "PUT", "/buckets/rt/props", jsonCT, `{"props":{"allow_mult":true,"chash_keyfun":{"mod":"riak_core_util","fun":"chash_bucketonly_keyfun"},"postcommit":"none","young_vclock":25}}`), 204, nil)
			// Hooks must name functions that exist (the hooks tests cover WASM modules).
			r := s.do(t, "PUT", "/buckets/rt/props", jsonCT, `{"props":{"precommit":[{"mod":"m","fun":"f"}],"postcommit":[{"name":"Js.fun"}]}}`)
			expect(t, r, 400, nil)
			for _, want := range []string{`"precommit":"unknown_hook: m:f: no such module: \"m\""`, `"postcommit":"unknown_hook: Js.fun: jsvm: no such function: JavaScript postcommit hooks are not supported (\"Js.fun\")"`} {
				if !bytes.Contains(r.Body, []byte(want)) {
					t.Errorf("400 body lacks %s: %s", want, r.Body)
				}
			}
			for _, f := range forms {
				r := s.get(t, f.props(b))
				expect(t, r, 200, nil)
				before := string(r.Body)
				// The whole GET body goes back unchanged.
				expect(t, s.do(t, "PUT", f.props(b), jsonCT, before), 204, nil)
				expect(t, s.get(t, f.props(b)), 200, &before)
			}
			// Hooks come back as given.
			r = s.get(t, "/buckets/rt/props")
			for _, want := range []string{`"chash_keyfun":{"mod":"riak_core_util","fun":"chash_bucketonly_keyfun"}`, `"postcommit":[]`, `"young_vclock":25`, `"allow_mult":true`} {
				if !bytes.Contains(r.Body, []byte(want)) {
					t.Errorf("props lack %s: %s", want, r.Body)
				}
			}
			// DELETE resets (new form only; the old form has no DELETE).
			r = s.do(t, "DELETE", "/buckets/rt/props", nil, "")
			expect(t, r, 204, ptr(""))
			expectHeader(t, r, "Content-Type", "application/json")
			expect(t, s.get(t, "/buckets/rt/props"), 200, ptr(defaultPropsJSON(d, "rt")))
			expect(t, s.do(t, "DELETE", "/buckets/never-set/props", nil, ""), 204, nil)
			for _, p := range []string{"/store/rt", "/riak/rt"} {
				r := s.do(t, "DELETE", p, nil, "")
				expectPage(t, r, 405)
				expectHeader(t, r, "Allow", "HEAD, GET, PUT")
			}
			r = s.do(t, "POST", "/buckets/rt/props", jsonCT, `{"props":{}}`)
			expectPage(t, r, 405)
			expectHeader(t, r, "Allow", "HEAD, GET, PUT, DELETE")
		})

		t.Run("typed-unknown", func(t *testing.T) {
			t.Parallel()
			for _, m := range []string{"GET", "HEAD", "DELETE"} {
				expectPage(t, s.do(t, m, "/types/nosuchtype/buckets/b/props", nil, ""), 404)
			}
			expectPage(t, s.do(t, "PUT", "/types/nosuchtype/buckets/b/props", jsonCT, `{"props":{"n_val":1}}`), 404)
			expectPage(t, s.get(t, "/types/nosuchtype/props"), 404)
		})
	})
}

// TestPropsUpdateSeenDespiteConcurrentReads: once a props PUT has answered, every read
// sees the change, even when reads of the old properties ran at the same moment (they
// must not put the old values back into the server's cache).
func TestPropsUpdateSeenDespiteConcurrentReads(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const rounds, readers = 150, 6
	stale := 0
	for i := 0; i < rounds; i++ {
		path := "/buckets/cache-" + itoa(i) + "/props"
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < readers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.tryGet(t, path); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		r := s.do(t, "PUT", path, hdr{"Content-Type", "application/json"}, `{"props":{"n_val":1}}`)
		close(stop)
		wg.Wait()
		expect(t, r, 204, nil)
		if p := propsOf(t, s, path); p["n_val"] != 1.0 {
			stale++
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d props updates were not seen after they answered 204", stale, rounds)
	}
}
