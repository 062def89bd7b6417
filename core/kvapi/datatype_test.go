package kvapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/coretest"
)

// TestDatatypesHTTP drives /types/T/buckets/B/datatypes[/K] in both dialects: updates,
// fetches with and without context, returnbody, a keyless POST, removes with the
// context, Riak's precondition and parse errors, and the refusals between plain and
// datatype buckets.
func TestDatatypesHTTP(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"store", "riak"} {
		t.Run(dialect, func(t *testing.T) {
			cfg := coretest.Config(t)
			cfg.Dialect = dialect
			s := coretest.Start(t, cfg)
			s.CreateType("maps", `{"datatype":"map"}`)
			s.CreateType("sets", `{"datatype":"set"}`)
			s.CreateType("counters", `{"datatype":"counter"}`)
			s.CreateType("plain", "")
			jsonCT := coretest.Hdr{"Content-Type", "application/json"}
			post := func(path, body string, status int, want string) *coretest.Response {
				t.Helper()
				r := s.Do(t, http.MethodPost, path, jsonCT, body)
				if r.StatusCode != status || (want != "" && string(r.Body) != want) {
					t.Fatalf("POST %s %s:\n%s\nwant %d %q", path, body, r, status, want)
				}
				return r
			}
			get := func(path string, status int, want string) {
				t.Helper()
				r := s.Do(t, http.MethodGet, path, nil, "")
				if r.StatusCode != status || string(r.Body) != want {
					t.Fatalf("GET %s:\n%s\nwant %d %q", path, r, status, want)
				}
			}

			post("/types/counters/buckets/b/datatypes/c", `{"increment":5}`, http.StatusNoContent, "")
			post("/types/counters/buckets/b/datatypes/c", `"decrement"`, http.StatusNoContent, "")
			get("/types/counters/buckets/b/datatypes/c", http.StatusOK, `{"type":"counter","value":4}`)
			get("/types/counters/buckets/b/datatypes/none", http.StatusNotFound, `{"type":"counter","error":"notfound"}`)

			r := post("/types/sets/buckets/b/datatypes/s?returnbody=true", `{"add_all":["b","a"]}`, http.StatusOK, "")
			var got struct {
				Type    string
				Value   []string
				Context string
			}
			if err := json.Unmarshal(r.Body, &got); err != nil || got.Type != "set" || strings.Join(got.Value, ",") != "a,b" || got.Context == "" {
				t.Fatalf("returnbody: %s (%v)", r.Body, err)
			}
			post("/types/sets/buckets/b/datatypes/s", `{"remove":"a","context":"`+got.Context+`"}`, http.StatusNoContent, "")
			post("/types/sets/buckets/b/datatypes/s", `{"remove":"zz"}`, http.StatusPreconditionFailed,
				"Error:\n{precondition,{not_present,<<\"zz\">>}}\n")
			post("/types/sets/buckets/b/datatypes/s", `{"frob":1}`, http.StatusBadRequest,
				"Invalid operation on datatype 'set': {\"frob\":1}\n")
			post("/types/sets/buckets/b/datatypes/s", `{`, http.StatusBadRequest, "Couldn't decode JSON: unexpected EOF\n")
			get("/types/sets/buckets/b/datatypes/s?include_context=false", http.StatusOK, `{"type":"set","value":["b"]}`)

			post("/types/maps/buckets/b/datatypes/m",
				`{"update":{"name_register":{"assign":"Ann"},"likes_set":{"add":"tea"},"visits_counter":1,"vip_flag":"enable","addr_map":{"update":{"city_register":{"assign":"Oslo"}}}}}`,
				http.StatusNoContent, "")
			post("/types/maps/buckets/b/datatypes/m", `{"remove":["vip_flag"]}`, http.StatusNoContent, "")
			get("/types/maps/buckets/b/datatypes/m?include_context=false", http.StatusOK,
				`{"type":"map","value":{"addr_map":{"city_register":"Oslo"},"likes_set":["tea"],"name_register":"Ann","visits_counter":1}}`)
			post("/types/maps/buckets/b/datatypes/m", `{"update":{"x_hll":1}}`, http.StatusBadRequest, "Invalid map field name 'x_hll'\n")

			r = post("/types/maps/buckets/b/datatypes", `{"update":{"n_counter":2}}`, http.StatusNoContent, "")
			loc := r.Header.Get("Location")
			key := loc[strings.LastIndexByte(loc, '/')+1:]
			if !strings.Contains(loc, "/types/maps/buckets/b/") || key == "" {
				t.Fatalf("keyless POST Location %q", loc)
			}
			get("/types/maps/buckets/b/datatypes/"+key+"?include_context=false", http.StatusOK, `{"type":"map","value":{"n_counter":2}}`)

			post("/types/plain/buckets/b/datatypes/k", `1`, http.StatusBadRequest, "Bucket datatype 'undefined' is not a supported type.\n")
			if r := s.Do(t, http.MethodPut, "/types/maps/buckets/b/keys/k", coretest.Hdr{"Content-Type", "text/plain"}, "x"); r.StatusCode != http.StatusBadRequest {
				t.Errorf("plain write into a datatype bucket:\n%s", r)
			}
			get("/types/maps/buckets/b/datatypes/m?include_context=maybe", http.StatusBadRequest, "include_context query parameter must be true or false\n")
		})
	}
}
