package main

// Key and bucket listing (details §6) on every URL form and both dialects.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// listedKeys decodes a {"keys":[...]} body (with or without props) into sorted keys.
func listedKeys(t testing.TB, body []byte) (keys []string, props map[string]any) {
	t.Helper()
	var v struct {
		Keys  []string       `json:"keys"`
		Props map[string]any `json:"props"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("listing body %q: %v", body, err)
	}
	slices.Sort(v.Keys)
	return v.Keys, v.Props
}

// streamedNames checks a streamed listing's chunks — each one whole JSON object, the
// last {"<field>":[]} — and returns the names in order of arrival, plus the first
// chunk when first is set (the old API's props chunk).
func streamedNames(t testing.TB, r *streamResp, field string, first bool) (names []string, head map[string]any) {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("stream: status %d: %s", r.StatusCode, r.Body)
	}
	if r.Chunks == nil {
		t.Fatalf("stream: not chunked: %v", r.Header)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("stream Content-Type %q", ct)
	}
	chunks := r.Chunks
	if first {
		if len(chunks) == 0 {
			t.Fatal("stream: no chunks")
		}
		if err := json.Unmarshal([]byte(chunks[0]), &head); err != nil {
			t.Fatalf("first chunk %q: %v", chunks[0], err)
		}
		chunks = chunks[1:]
	}
	if len(chunks) == 0 || chunks[len(chunks)-1] != `{"`+field+`":[]}` {
		t.Fatalf("stream does not end with an empty %s chunk: %q", field, r.Chunks)
	}
	for _, c := range chunks {
		var v map[string][]string
		if err := json.Unmarshal([]byte(c), &v); err != nil {
			t.Fatalf("chunk %q is not one JSON object: %v", c, err)
		}
		if len(v) != 1 {
			t.Fatalf("chunk %q: want only %q", c, field)
		}
		names = append(names, v[field]...)
	}
	return names, head
}

func TestListKeys(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{"lt": ""}, "--dialect", d.name, "--delete-reap-delay", "1s")
			keys := []string{"a", "b b", "c/d", "é", "z+plus", "key%percent"}
			for _, k := range keys {
				s.mustPut(t, "/buckets/lk/keys/"+pathEscape(k), "v")
				s.mustPut(t, "/types/lt/buckets/lk/keys/"+pathEscape(k), "v")
			}
			s.mustPut(t, "/buckets/other/keys/x", "v")
			want := slices.Sorted(slices.Values(keys))

			for _, path := range []string{"/buckets/lk/keys?keys=true", d.prefix + "/lk?keys=true&props=false",
				"/types/lt/buckets/lk/keys?keys=true", "/store/lk?keys=true&props=false", "/riak/lk?keys=true&props=false"} {
				r := s.get(t, path)
				expect(t, r, 200, nil)
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q", path, ct)
				}
				got, props := listedKeys(t, r.Body)
				if !slices.Equal(got, want) || props != nil {
					t.Errorf("%s: keys %q props %v, want %q and no props", path, got, props, want)
				}
			}

			// The old form carries the props unless props=false.
			got, props := listedKeys(t, s.get(t, d.prefix+"/lk?keys=true").Body)
			if !slices.Equal(got, want) || props["name"] != "lk" || props["n_val"] != 3.0 {
				t.Errorf("old form with props: keys %q props %v", got, props)
			}

			// Streams: one whole JSON object per chunk, a final empty batch.
			for _, path := range []string{"/buckets/lk/keys?keys=stream", "/types/lt/buckets/lk/keys?keys=stream"} {
				names, _ := streamedNames(t, s.stream(t, "GET", path, nil), "keys", false)
				slices.Sort(names)
				if !slices.Equal(names, want) {
					t.Errorf("%s: %q", path, names)
				}
			}
			names, head := streamedNames(t, s.stream(t, "GET", d.prefix+"/lk?keys=stream", nil), "keys", true)
			if slices.Sort(names); !slices.Equal(names, want) {
				t.Errorf("old stream: %q", names)
			}
			if p, _ := head["props"].(map[string]any); p == nil || p["name"] != "lk" {
				t.Errorf("old stream first chunk %v, want the props", head)
			}
			_, head = streamedNames(t, s.stream(t, "GET", d.prefix+"/lk?keys=stream&props=false", nil), "keys", true)
			if len(head) != 0 {
				t.Errorf("old stream with props=false: first chunk %v, want {}", head)
			}

			// Without keys the new form answers {}; the old form's props=false without keys
			// matches no route.
			expectBody(t, s.get(t, "/buckets/lk/keys"), 200, "{}")
			expectBody(t, s.get(t, "/buckets/lk/keys?keys=false"), 200, "{}")
			expect(t, s.get(t, d.prefix+"/lk?props=false"), 404, nil)

			// An empty bucket lists nothing.
			expectBody(t, s.get(t, "/buckets/empty/keys?keys=true"), 200, `{"keys":[]}`)
			if names, _ := streamedNames(t, s.stream(t, "GET", "/buckets/empty/keys?keys=stream", nil), "keys", false); len(names) != 0 {
				t.Errorf("empty stream: %q", names)
			}

			// A deleted key is listed while its tombstone is visible, then not.
			expect(t, s.do(t, "DELETE", "/buckets/lk/keys/a", nil, ""), 204, nil)
			if got, _ := listedKeys(t, s.get(t, "/buckets/lk/keys?keys=true").Body); !slices.Contains(got, "a") {
				t.Errorf("tombstone not listed inside the reap delay: %q", got)
			}
			waitFor(t, 10*time.Second, "the tombstone to leave the listing", func() bool {
				got, _ := listedKeys(t, s.get(t, "/buckets/lk/keys?keys=true").Body)
				return !slices.Contains(got, "a") && len(got) == len(keys)-1
			})

			// Errors.
			expectBody(t, s.get(t, "/buckets/lk/keys?keys=true&timeout=soon"), 400, "Bad timeout value \"soon\"\n")
			r := s.get(t, "/types/nosuch/buckets/lk/keys?keys=true")
			expect(t, r, 404, nil)
			if !strings.Contains(r.Header.Get("Content-Type"), "text/html") {
				t.Errorf("unknown type: %s", r)
			}
			expect(t, s.get(t, "/buckets/lk/keys?keys=true", "Accept", "text/plain"), 406, nil)
			r = s.do(t, "DELETE", "/buckets/lk/keys", nil, "")
			expect(t, r, 405, nil)
			if r.Header.Get("Allow") != "HEAD, GET" {
				t.Errorf("405 Allow %q", r.Header.Get("Allow"))
			}
			h := s.do(t, "HEAD", "/buckets/lk/keys?keys=true", nil, "")
			expect(t, h, 200, nil)
		})
	}
}

// pathEscape escapes a path segment for the server, which (as the reference does) reads
// '+' as a space.
func pathEscape(s string) string { return strings.ReplaceAll(url.PathEscape(s), "+", "%2B") }

// expectBody is expect with a literal body.
func expectBody(t testing.TB, r *resp, status int, body string) {
	t.Helper()
	expect(t, r, status, &body)
}

func TestListKeysManyBatches(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const n = 2500
	var wantKeys []string
	putMany(t, s, "many", n, func(i int) string {
		k := "key-" + itoa(100000+i)
		return k
	})
	for i := 0; i < n; i++ {
		wantKeys = append(wantKeys, "key-"+itoa(100000+i))
	}
	r := s.stream(t, "GET", "/buckets/many/keys?keys=stream", nil)
	names, _ := streamedNames(t, r, "keys", false)
	if !slices.Equal(names, wantKeys) {
		t.Fatalf("stream of %d keys: got %d", n, len(names))
	}
	// 1000 keys per chunk, then the last partial batch and the empty end.
	if len(r.Chunks) != 4 {
		t.Errorf("%d chunks, want 4 (1000, 1000, 500, end)", len(r.Chunks))
	}
	got, _ := listedKeys(t, s.get(t, "/buckets/many/keys?keys=true").Body)
	if !slices.Equal(got, wantKeys) {
		t.Fatalf("keys=true of %d keys: got %d", n, len(got))
	}
}

// putMany stores n objects in bucket from 16 goroutines.
func putMany(t *testing.T, s *child, bucket string, n int, key func(int) string) {
	t.Helper()
	errs := make(chan error, 16)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		go func() {
			for i := range next {
				req, _ := http.NewRequest(http.MethodPut, s.URL+"/buckets/"+bucket+"/keys/"+pathEscape(key(i)), strings.NewReader("v"))
				req.Header.Set("Content-Type", "text/plain")
				r, err := s.trySend(t, req)
				if err == nil && r.StatusCode != 204 {
					err = &httpStatusError{r.StatusCode}
				}
				if err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < 16; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

type httpStatusError struct{ status int }

func (e *httpStatusError) Error() string { return "status " + itoa(e.status) }

func TestListBuckets(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{"bt": ""}, "--dialect", d.name, "--delete-reap-delay", "1s")
			buckets := []string{"alpha", "beta", "gamma delta", "z/slash"}
			for _, b := range buckets {
				for _, k := range []string{"k1", "k2", "k3"} {
					s.mustPut(t, "/buckets/"+pathEscape(b)+"/keys/"+k, "v")
				}
			}
			s.mustPut(t, "/types/bt/buckets/typed-only/keys/k", "v")
			// Setting props does not make a bucket exist.
			s.setProps(t, "props-only", `{"n_val":2}`)

			decode := func(body []byte) []string {
				var v struct {
					Buckets []string `json:"buckets"`
				}
				if err := json.Unmarshal(body, &v); err != nil {
					t.Fatalf("%q: %v", body, err)
				}
				return v.Buckets
			}
			for _, path := range []string{"/buckets?buckets=true", d.prefix + "?buckets=true", "/riak?buckets=true", "/store?buckets=true"} {
				if got := decode(s.get(t, path).Body); !slices.Equal(got, buckets) {
					t.Errorf("%s: %q, want %q", path, got, buckets)
				}
			}
			if got := decode(s.get(t, "/types/bt/buckets?buckets=true").Body); !slices.Equal(got, []string{"typed-only"}) {
				t.Errorf("typed: %q", got)
			}
			for _, path := range []string{"/buckets?buckets=stream", d.prefix + "?buckets=stream"} {
				names, _ := streamedNames(t, s.stream(t, "GET", path, nil), "buckets", false)
				if !slices.Equal(names, buckets) {
					t.Errorf("%s: %q", path, names)
				}
			}
			expectBody(t, s.get(t, "/buckets"), 200, `{"buckets":[]}`)

			// A bucket whose keys are all deleted disappears once its tombstones are reaped.
			for _, k := range []string{"k1", "k2", "k3"} {
				expect(t, s.do(t, "DELETE", "/buckets/beta/keys/"+k, nil, ""), 204, nil)
			}
			if got := decode(s.get(t, "/buckets?buckets=true").Body); !slices.Contains(got, "beta") {
				t.Errorf("bucket of tombstones not listed inside the reap delay: %q", got)
			}
			waitFor(t, 10*time.Second, "beta to leave the bucket list", func() bool {
				return !slices.Contains(decode(s.get(t, "/buckets?buckets=true").Body), "beta")
			})

			expect(t, s.get(t, "/types/nosuch/buckets?buckets=true"), 404, nil)
			expectBody(t, s.get(t, "/buckets?buckets=true&timeout=x"), 400, "Bad timeout value \"x\"\n")
		})
	}
}
