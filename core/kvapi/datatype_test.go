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

			post("/types/counters/buckets/b/datatypes/c?returnbody=TRUE", `1`, http.StatusOK, `{"type":"counter","value":5}`)
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

// TestDatatypeTTLHTTP: the TTL header (either dialect's name) on a datatype POST sets
// the key's expiry, answered on GET and returnbody in the server's dialect; a bad TTL
// gets the plain PUT's 400 and writes nothing; the bucket's ttl applies without the
// header; an expired key reads 404 and the next update starts from an empty value.
func TestDatatypeTTLHTTP(t *testing.T) {
	t.Parallel()
	for _, d := range []struct{ dialect, header, other string }{
		{"store", "X-Store-Ttl", "X-Riak-Ttl"},
		{"riak", "X-Riak-Ttl", "X-Store-Ttl"},
	} {
		t.Run(d.dialect, func(t *testing.T) {
			t.Parallel()
			cfg := coretest.Config(t)
			cfg.Dialect = d.dialect
			s := coretest.Start(t, cfg)
			s.CreateType("counters", `{"datatype":"counter"}`)
			s.CreateType("ttlsets", `{"datatype":"set","ttl":1}`)
			do := func(method, path, body string, status int, h ...string) *coretest.Response {
				t.Helper()
				r := s.Do(t, method, path, append(coretest.Hdr{"Content-Type", "application/json"}, h...), body)
				if r.StatusCode != status {
					t.Fatalf("%s %s %s: want %d, got\n%s", method, path, body, status, r)
				}
				return r
			}
			const c = "/types/counters/buckets/b/datatypes/"
			do("POST", c+"short", `5`, http.StatusNoContent, d.other, "1") // the other dialect's name is accepted
			r := do("POST", c+"long?returnbody=true", `1`, http.StatusOK, d.header, "3600")
			if r.Header.Get(d.header) != "3600" || r.Header.Get(d.other) != "" {
				t.Fatalf("returnbody's TTL header:\n%s", r)
			}
			if r = do("GET", c+"long", "", http.StatusOK); r.Header.Get(d.header) != "3600" {
				t.Fatalf("GET's TTL header:\n%s", r)
			}
			do("POST", c+"none", `1`, http.StatusNoContent)
			if r = do("GET", c+"none", "", http.StatusOK); r.Header.Get(d.header)+r.Header.Get(d.other) != "" {
				t.Fatalf("a key without TTL answered one:\n%s", r)
			}
			r = do("POST", "/types/counters/buckets/b/datatypes", `1`, http.StatusNoContent, d.header, "60")
			if r = do("GET", r.Header.Get("Location"), "", http.StatusOK); r.Header.Get(d.header) != "60" {
				t.Fatalf("a keyless POST's TTL:\n%s", r)
			}
			for _, bad := range []string{"-1", "1.5", "x", "315360001"} {
				plain := s.Do(t, http.MethodPut, "/types/default/buckets/b/keys/k", coretest.Hdr{"Content-Type", "text/plain", d.header, bad}, "v")
				r := do("POST", c+"bad", `1`, http.StatusBadRequest, d.header, bad)
				if string(r.Body) != string(plain.Body) || !strings.HasPrefix(string(r.Body), "Invalid TTL") {
					t.Fatalf("TTL %q: %q, want the plain PUT's %q", bad, r.Body, plain.Body)
				}
			}
			do("GET", c+"bad", "", http.StatusNotFound)

			do("POST", "/types/ttlsets/buckets/b/datatypes/s", `{"add":"a"}`, http.StatusNoContent)
			if r = do("GET", "/types/ttlsets/buckets/b/datatypes/s", "", http.StatusOK); r.Header.Get(d.header) != "1" {
				t.Fatalf("the bucket's ttl:\n%s", r)
			}
			coretest.WaitFor(t, "short and s to expire", func() bool {
				return s.Do(t, "GET", c+"short", nil, "").StatusCode == http.StatusNotFound &&
					s.Do(t, "GET", "/types/ttlsets/buckets/b/datatypes/s", nil, "").StatusCode == http.StatusNotFound
			})
			want := `{"type":"counter","error":"notfound"}`
			if r = do("GET", c+"short", "", http.StatusNotFound); string(r.Body) != want {
				t.Fatalf("expired counter: %q, want %q", r.Body, want)
			}
			do("POST", c+"short", `2`, http.StatusNoContent)
			if r = do("GET", c+"short?include_context=false", "", http.StatusOK); string(r.Body) != `{"type":"counter","value":2}` {
				t.Fatalf("update of an expired counter: %s", r.Body)
			}
			do("POST", "/types/ttlsets/buckets/b/datatypes/s", `{"add":"b"}`, http.StatusNoContent)
			if r = do("GET", "/types/ttlsets/buckets/b/datatypes/s?include_context=false", "", http.StatusOK); string(r.Body) != `{"type":"set","value":["b"]}` {
				t.Fatalf("update of an expired set: %s", r.Body)
			}
		})
	}
}
