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
