package main

// 1.4-style counters: /buckets/B/counters/K (POST adds, GET reads), the redirect of
// /types/default/buckets/B/datatypes/K, and the typed data-type path on a plain type.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/coretest"
)

// postCounter POSTs a counter update the way curl -d does (form Content-Type).
func (s *child) postCounter(t testing.TB, path, body string, h ...string) *resp {
	t.Helper()
	if !coretest.HasHeader(h, "Content-Type") {
		h = append(h, "Content-Type", "application/x-www-form-urlencoded")
	}
	return s.do(t, http.MethodPost, path, h, body)
}

func expectCounter(t testing.TB, s *child, path string, want int64) {
	t.Helper()
	r := s.get(t, path)
	expect(t, r, http.StatusOK, ptr(strconv.FormatInt(want, 10)))
	expectHeader(t, r, "Content-Type", "text/plain")
}

func TestCounters(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		s.setProps(t, "c", `{"allow_mult":true}`)
		const k = "/buckets/c/counters/k"

		t.Run("increment and decrement", func(t *testing.T) {
			// The client test of the reference: +4, −2, then GET expects 2.
			r := s.postCounter(t, k, "4")
			expect(t, r, http.StatusNoContent, ptr(""))
			expectHeader(t, r, "Content-Type", "text/plain")
			expect(t, s.postCounter(t, k, "-2", "Content-Type", "text/plain"), http.StatusNoContent, ptr(""))
			expectCounter(t, s, k, 2)

			r = s.postCounter(t, k+"?returnvalue=true", " +10\n")
			expect(t, r, http.StatusOK, ptr("12"))
			expectHeader(t, r, "Content-Type", "text/plain")
			// Anything but exactly "true" is false.
			expect(t, s.postCounter(t, k+"?returnvalue=TRUE", "0"), http.StatusNoContent, ptr(""))
			expectCounter(t, s, k, 12)
			// Any Content-Type, or none, is accepted.
			req, err := http.NewRequest(http.MethodPost, s.URL+k, strings.NewReader("-12"))
			if err != nil {
				t.Fatal(err)
			}
			expect(t, s.send(t, req), http.StatusNoContent, ptr(""))
			expectCounter(t, s, k, 0)
		})

		t.Run("stored as an object", func(t *testing.T) {
			s.postCounter(t, "/buckets/c/counters/obj", "7")
			r := s.get(t, "/buckets/c/keys/obj")
			expect(t, r, http.StatusOK, nil)
			expectHeader(t, r, "Content-Type", "application/riak_counter")
			if r.Header.Get(d.hdr+"Vclock") == "" {
				t.Errorf("no %sVclock on the object fetch:\n%s", d.hdr, r)
			}
			var doc struct {
				PN map[string][2]int64 `json:"pncounter"`
			}
			if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.PN) != 1 {
				t.Fatalf("stored counter %q: %v", r.Body, err)
			}
			for actor, pn := range doc.PN {
				if actor == "" || pn != [2]int64{7, 0} {
					t.Errorf("stored state %q, want this node's [7,0]", r.Body)
				}
			}
			lr := s.get(t, "/buckets/c/keys?keys=true")
			if lr.StatusCode != http.StatusOK || !strings.HasPrefix(lr.Header.Get("Content-Type"), "application/json") {
				t.Skipf("key listing is not available (%d %s); the counter is fetchable through the object route",
					lr.StatusCode, lr.Header.Get("Content-Type"))
			}
			var keys struct{ Keys []string }
			if err := json.Unmarshal(lr.Body, &keys); err != nil {
				t.Fatalf("key listing %q: %v", lr.Body, err)
			}
			found := false
			for _, key := range keys.Keys {
				found = found || key == "obj"
			}
			if !found {
				t.Errorf("counter key not listed: %s", lr.Body)
			}
		})

		t.Run("allow_mult required", func(t *testing.T) {
			r := s.postCounter(t, "/buckets/plain/counters/k", "1")
			expect(t, r, http.StatusConflict, ptr("Counters require bucket property 'allow_mult=true'"))
			expectHeader(t, r, "Content-Type", "text/plain")
			expect(t, s.get(t, "/buckets/plain/keys/k"), http.StatusNotFound, nil)
			expect(t, s.get(t, "/buckets/plain/counters/k"), http.StatusNotFound, ptr("not found\n"))
		})

		t.Run("bad bodies", func(t *testing.T) {
			for _, body := range []string{"", "abc", "1.5", "1e3", "0x1", " ", "1 2"} {
				r := s.postCounter(t, "/buckets/c/counters/bad", body)
				expect(t, r, http.StatusBadRequest, nil)
				expectHeader(t, r, "Content-Type", "text/html")
				if !strings.Contains(string(r.Body), "<title>400 Bad Request</title>") {
					t.Errorf("body %q: want the 400 page, got\n%s", body, r)
				}
			}
			r := s.postCounter(t, "/buckets/c/counters/bad", "9223372036854775808")
			expect(t, r, http.StatusBadRequest, ptr("Counter increment out of range: 9223372036854775808 does not fit in a signed 64-bit integer\n"))
			expectHeader(t, r, "Content-Type", "text/plain")
			expect(t, s.get(t, "/buckets/c/counters/bad"), http.StatusNotFound, ptr("not found\n"))

			// A sum beyond int64 is refused and changes nothing.
			expect(t, s.postCounter(t, "/buckets/c/counters/big", "9223372036854775807"), http.StatusNoContent, nil)
			r = s.postCounter(t, "/buckets/c/counters/big", "1")
			expect(t, r, http.StatusBadRequest, ptr("Counter update out of range: 9223372036854775807 +1 does not fit in a signed 64-bit integer\n"))
			expectCounter(t, s, "/buckets/c/counters/big", 9223372036854775807)
			expect(t, s.postCounter(t, "/buckets/c/counters/big", "-9223372036854775807"), http.StatusNoContent, nil)
			expectCounter(t, s, "/buckets/c/counters/big", 0)
		})

		t.Run("parameters", func(t *testing.T) {
			nval := "Specified w/dw/pw values invalid for bucket n value of 3\n"
			expect(t, s.postCounter(t, k+"?w=4", "1"), http.StatusBadRequest, ptr(nval))
			expect(t, s.postCounter(t, k+"?dw=lots", "1"), http.StatusBadRequest,
				ptr("dw query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"))
			expect(t, s.get(t, k+"?r=4"), http.StatusBadRequest, ptr(nval))
			expect(t, s.get(t, k+"?notfound_ok=maybe"), http.StatusBadRequest, ptr("notfound_ok query parameter must be true or false\n"))
			// The body is checked before the parameters, as the reference does.
			expect(t, s.postCounter(t, k+"?dw=lots", "x"), http.StatusBadRequest, nil)
			expect(t, s.postCounter(t, k+"?w=all&dw=one&pw=1", "1"), http.StatusNoContent, nil)
			expect(t, s.get(t, k+"?r=quorum&pr=1"), http.StatusOK, nil)
		})

		t.Run("missing and deleted", func(t *testing.T) {
			r := s.get(t, "/buckets/c/counters/missing")
			expect(t, r, http.StatusNotFound, ptr("not found\n"))
			expectHeader(t, r, "Content-Type", "text/plain")
			s.postCounter(t, "/buckets/c/counters/del", "5")
			expect(t, s.do(t, http.MethodDelete, "/buckets/c/keys/del", nil, ""), http.StatusNoContent, nil)
			r = s.get(t, "/buckets/c/counters/del")
			expect(t, r, http.StatusNotFound, ptr("not found\n"))
			expectHeader(t, r, d.hdr+"Deleted", "")
			// An update after the delete starts from zero.
			expect(t, s.postCounter(t, "/buckets/c/counters/del?returnvalue=true", "1"), http.StatusOK, ptr("1"))
			expectCounter(t, s, "/buckets/c/counters/del", 1)
		})

		t.Run("siblings of other types", func(t *testing.T) {
			s.postCounter(t, "/buckets/c/counters/mixed", "3")
			s.mustPut(t, "/buckets/c/keys/mixed", "a text value")
			expectCounter(t, s, "/buckets/c/counters/mixed", 3)
			expect(t, s.postCounter(t, "/buckets/c/counters/mixed?returnvalue=true", "2"), http.StatusOK, ptr("5"))
			// The text value is kept next to the merged counter.
			r := s.get(t, "/buckets/c/keys/mixed", "Accept", "multipart/mixed")
			expect(t, r, http.StatusMultipleChoices, nil)
			parts := parseSiblings(t, r)
			if len(parts) != 2 {
				t.Fatalf("%d siblings, want the counter and the text value", len(parts))
			}
			// A value claiming to be a counter that is not one is reported, not guessed.
			s.mustPut(t, "/buckets/c/keys/mixed", "junk", "Content-Type", "application/riak_counter")
			r = s.get(t, "/buckets/c/counters/mixed")
			expect(t, r, http.StatusInternalServerError, nil)
			if !strings.HasPrefix(string(r.Body), "Error:\nsibling ") || !strings.Contains(string(r.Body), "is not a valid counter") {
				t.Errorf("corrupt counter: %s", r)
			}
		})

		t.Run("methods and negotiation", func(t *testing.T) {
			r := s.do(t, http.MethodPut, k, hdr{"Content-Type", "text/plain"}, "1")
			expect(t, r, http.StatusMethodNotAllowed, nil)
			expectHeader(t, r, "Allow", "GET, POST")
			expect(t, s.do(t, http.MethodHead, k, nil, ""), http.StatusMethodNotAllowed, nil)
			expect(t, s.get(t, k, "Accept", "application/json"), http.StatusNotAcceptable, nil)
			expect(t, s.get(t, k, "Accept", "application/json, */*;q=0.5"), http.StatusOK, nil)
		})

		t.Run("datatypes path", func(t *testing.T) {
			for _, m := range []string{http.MethodGet, http.MethodPost} {
				r := s.do(t, m, "/types/default/buckets/c/datatypes/k", hdr{"Content-Type", "application/json"}, "1")
				expect(t, r, http.StatusMovedPermanently, ptr("Counters in the default bucket-type should use the legacy URL\n"))
				expectHeader(t, r, "Location", "/buckets/c/counters/k")
			}
			r := s.get(t, "/types/default/buckets/a%20b/datatypes/x%2Fy")
			expect(t, r, http.StatusMovedPermanently, nil)
			expectHeader(t, r, "Location", "/buckets/a+b/counters/x%2Fy")
			r = s.get(t, "/types/"+e2eType+"/buckets/c/datatypes/k")
			expect(t, r, http.StatusBadRequest, ptr("Bucket datatype 'undefined' is not a supported type.\n"))
			expectHeader(t, r, "Content-Type", "text/plain")
			r = s.get(t, "/types/nosuch/buckets/c/datatypes/k")
			expect(t, r, http.StatusNotFound, ptr("Unknown bucket type: nosuch"))
			expectHeader(t, r, "Content-Type", "text/plain")
		})
	})
}

// TestCounterConcurrentClients has 32 clients add 1 fifty times each to one counter: no
// update may be lost.
func TestCounterConcurrentClients(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.setProps(t, "cc", `{"allow_mult":true}`)
	const clients, each = 32, 50
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				req, err := http.NewRequest(http.MethodPost, s.URL+"/buckets/cc/counters/k", strings.NewReader("1"))
				if err != nil {
					errs <- err.Error()
					return
				}
				r, err := s.trySend(t, req)
				if err != nil {
					errs <- err.Error()
					return
				}
				if r.StatusCode != http.StatusNoContent {
					errs <- r.String()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	expectCounter(t, s, "/buckets/cc/counters/k", clients*each)
	r := s.get(t, "/buckets/cc/keys/k")
	expect(t, r, http.StatusOK, nil) // one value: every update resolved the previous one
	expectHeader(t, r, "Content-Type", "application/riak_counter")
}
