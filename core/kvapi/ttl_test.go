package kvapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/coretest"
)

// keysOf decodes a {"keys":[...]} answer, sorted.
func keysOf(t *testing.T, r *coretest.Response) []string {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("want 200, got\n%s", r)
	}
	var v struct{ Keys []string }
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("%v in\n%s", err, r)
	}
	slices.Sort(v.Keys)
	return v.Keys
}

// TestObjectTTL drives object expiry over HTTP in both dialects: the TTL header sets
// it and comes back (in the request's dialect) on GET and HEAD, a bad TTL is a 400, the
// bucket's ttl property applies to objects without the header, and once expired the
// object is gone from GET, key listings and 2i queries, and reaped (/stats).
func TestObjectTTL(t *testing.T) {
	t.Parallel()
	s := coretest.Start(t, coretest.Config(t))
	for _, d := range []struct{ name, prefix, header, other string }{
		{"riak", "/riak", "X-Riak-Ttl", "X-Store-Ttl"},
		{"store", "/store", "X-Store-Ttl", "X-Riak-Ttl"},
	} {
		t.Run(d.name, func(t *testing.T) {
			bucket := "ttl-" + d.name
			obj := d.prefix + "/" + bucket + "/"
			idx := d.header[:len(d.header)-3] + "Index-F_bin"
			s.MustPut(t, obj+"short", "a", d.header, "1", idx, "x")
			s.MustPut(t, obj+"long", "b", d.header, "3600", idx, "x")
			s.MustPut(t, obj+"none", "c", idx, "x")
			for _, m := range []string{http.MethodGet, http.MethodHead} {
				r := s.Do(t, m, obj+"long", nil, "")
				if r.StatusCode != http.StatusOK || r.Header.Get(d.header) != "3600" || r.Header.Get(d.other) != "" {
					t.Fatalf("%s long: want 200 with %s: 3600, got\n%s", m, d.header, r)
				}
			}
			if r := s.Do(t, http.MethodGet, obj+"none", nil, ""); r.Header.Get(d.header) != "" {
				t.Fatalf("object without TTL answered one:\n%s", r)
			}
			for _, bad := range []string{"-1", "1.5", "x", "315360001"} {
				r := s.Do(t, http.MethodPut, obj+"bad", coretest.Hdr{"Content-Type", "text/plain", d.header, bad}, "v")
				if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(r.Body), "Invalid TTL") {
					t.Fatalf("TTL %q: want 400 Invalid TTL, got\n%s", bad, r)
				}
			}
			listing := "/types/default/buckets/" + bucket + "/keys?keys=true"
			query := "/types/default/buckets/" + bucket + "/index/f_bin/x"
			if got := keysOf(t, s.Do(t, http.MethodGet, listing, nil, "")); !slices.Equal(got, []string{"long", "none", "short"}) {
				t.Fatalf("keys before expiry: %v", got)
			}
			coretest.WaitFor(t, "short to expire", func() bool {
				return s.Do(t, http.MethodGet, obj+"short", nil, "").StatusCode == http.StatusNotFound
			})
			want := []string{"long", "none"}
			if got := keysOf(t, s.Do(t, http.MethodGet, listing, nil, "")); !slices.Equal(got, want) {
				t.Errorf("keys after expiry: %v, want %v", got, want)
			}
			if got := keysOf(t, s.Do(t, http.MethodGet, query, nil, "")); !slices.Equal(got, want) {
				t.Errorf("2i after expiry: %v, want %v", got, want)
			}
			// A write over the expired key starts a new object.
			s.MustPut(t, obj+"short", "again")
			if r := s.Do(t, http.MethodGet, obj+"short", nil, ""); r.StatusCode != http.StatusOK || string(r.Body) != "again" {
				t.Fatalf("rewrite of an expired key:\n%s", r)
			}
		})
	}
	t.Run("bucket property", func(t *testing.T) {
		r := s.Do(t, http.MethodPut, "/buckets/bt/props", coretest.Hdr{"Content-Type", "application/json"}, `{"props":{"ttl":-1}}`)
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("ttl -1: want 400, got\n%s", r)
		}
		s.SetProps(t, "bt", `{"ttl":1}`)
		if r := s.Do(t, http.MethodGet, "/buckets/bt/props", nil, ""); !strings.Contains(string(r.Body), `"ttl":1`) {
			t.Fatalf("props lack ttl:\n%s", r)
		}
		s.MustPut(t, "/buckets/bt/keys/k", "v")
		s.MustPut(t, "/buckets/bt/keys/kept", "v", "X-Riak-TTL", "0")
		if r := s.Do(t, http.MethodGet, "/buckets/bt/keys/k", nil, ""); r.StatusCode != http.StatusOK || r.Header.Get("X-Store-Ttl") != "1" {
			t.Fatalf("the bucket's ttl (store dialect by default):\n%s", r)
		}
		coretest.WaitFor(t, "the bucket's ttl to expire k", func() bool {
			return s.Do(t, http.MethodGet, "/buckets/bt/keys/k", nil, "").StatusCode == http.StatusNotFound
		})
		if r := s.Do(t, http.MethodGet, "/buckets/bt/keys/kept", nil, ""); r.StatusCode != http.StatusOK ||
			r.Header.Get("X-Riak-Ttl")+r.Header.Get("X-Store-Ttl") != "" {
			t.Fatalf("TTL 0 over the bucket's ttl:\n%s", r)
		}
	})
	coretest.WaitFor(t, "the reaper to count reaped objects in /stats, with its backlog", func() bool {
		var st map[string]any
		r := s.Do(t, http.MethodGet, "/stats", nil, "")
		if err := json.Unmarshal(r.Body, &st); err != nil {
			t.Fatalf("%v in\n%s", err, r)
		}
		n, _ := st["expired_reaped_total"].(float64)
		one, _ := st["expired_reaped_one"].(float64)
		if lag, ok := st["expired_backlog_seconds"].(float64); !ok || lag < 0 {
			t.Fatalf("expired_backlog_seconds missing or negative in /stats: %v", st["expired_backlog_seconds"])
		}
		return n >= 1 && one >= 1
	})
}
