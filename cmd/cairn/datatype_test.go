package main

// End-to-end tests of the data types (/types/T/buckets/B/datatypes/K) on the real
// process: bucket types made by `cairn bucket-type create`, both dialects, concurrent
// clients over HTTP. docs/kv-datatypes.md and core/kvapi's TestDatatypesHTTP cover the
// operations one by one.

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDatatypesConcurrentHTTP: 16 clients × 20 updates of one map key over HTTP, in each
// dialect, end with every update merged (no lost update) in one stored datatype value.
func TestDatatypesConcurrentHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{"maps": `{"props":{"datatype":"map"}}`}, "--dialect", d.name)
			const clients, each = 16, 20
			var wg sync.WaitGroup
			names := make([]string, clients)
			for c := range names {
				names[c] = `"c` + strconv.Itoa(c) + `"`
				wg.Add(1)
				go func(name string) {
					defer wg.Done()
					body := `{"update":{"hits_counter":1,"who_set":{"add":` + name + `}}}`
					for i := 0; i < each; i++ {
						r := s.do(t, http.MethodPost, "/types/maps/buckets/b/datatypes/k", hdr{"Content-Type", "application/json"}, body)
						if r.StatusCode != http.StatusNoContent {
							t.Errorf("update: %s", r)
							return
						}
					}
				}(names[c])
			}
			wg.Wait()
			sort.Strings(names)
			want := `{"type":"map","value":{"hits_counter":` + strconv.Itoa(clients*each) +
				`,"who_set":[` + strings.Join(names, ",") + `]}}`
			expect(t, s.get(t, "/types/maps/buckets/b/datatypes/k?include_context=false"), http.StatusOK, &want)
			r := s.get(t, "/types/maps/buckets/b/keys/k")
			if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/riak_map" {
				t.Errorf("the stored object is not one datatype sibling: %s", r)
			}
		})
	}
}

// TestDatatypesTTLHTTP: a datatype POST with the dialect's TTL header expires the key
// (GET answers the header, then 404 once it expired, and the next POST starts from an
// empty value); a bucket type's ttl applies without the header; a bad TTL is the plain
// PUT's 400 and writes nothing.
func TestDatatypesTTLHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{
				"counters": `{"props":{"datatype":"counter"}}`,
				"ttlmaps":  `{"props":{"datatype":"map","ttl":1}}`,
			}, "--dialect", d.name)
			ct := hdr{"Content-Type", "application/json"}
			ttl := d.hdr + "TTL"
			const c = "/types/counters/buckets/b/datatypes/"
			expect(t, s.do(t, "POST", c+"short", append(ct, ttl, "1"), `5`), http.StatusNoContent, nil)
			expect(t, s.do(t, "POST", c+"long", append(ct, ttl, "3600"), `5`), http.StatusNoContent, nil)
			r := s.get(t, c+"long?include_context=false")
			expect(t, r, http.StatusOK, ptr(`{"type":"counter","value":5}`))
			expectHeader(t, r, ttl, "3600")
			r = s.do(t, "POST", c+"bad", append(ct, ttl, "soon"), `1`)
			expect(t, r, http.StatusBadRequest, ptr(`Invalid TTL "soon": must be whole seconds from 0 to 315360000.`+"\n"))
			expect(t, s.get(t, c+"bad"), http.StatusNotFound, nil)

			const m = "/types/ttlmaps/buckets/b/datatypes/m"
			expect(t, s.do(t, "POST", m, ct, `{"update":{"n_counter":1}}`), http.StatusNoContent, nil)
			expectHeader(t, s.get(t, m), ttl, "1")
			waitFor(t, 10*time.Second, "short and m to expire", func() bool {
				return s.get(t, c+"short").StatusCode == http.StatusNotFound && s.get(t, m).StatusCode == http.StatusNotFound
			})
			expect(t, s.get(t, m), http.StatusNotFound, ptr(`{"type":"map","error":"notfound"}`))
			expect(t, s.do(t, "POST", c+"short", ct, `2`), http.StatusNoContent, nil)
			expect(t, s.get(t, c+"short?include_context=false"), http.StatusOK, ptr(`{"type":"counter","value":2}`))
			expect(t, s.do(t, "POST", m, ct, `{"update":{"f_flag":"enable"}}`), http.StatusNoContent, nil)
			expect(t, s.get(t, m+"?include_context=false"), http.StatusOK, ptr(`{"type":"map","value":{"f_flag":true}}`))
		})
	}
}
