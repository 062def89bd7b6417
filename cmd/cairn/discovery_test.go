package main

// Items 8 and 10: resource discovery (/), /ping, /stats, /metrics, X-Request-Id, unknown
// routes and methods.

import (
	"encoding/json"
	"html"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// resourceEntry is one (name, path) of the / listing.
type resourceEntry struct{ name, path string }

// parseListJSON reads the / JSON body, which has duplicate keys, in order.
func parseListJSON(t testing.TB, body []byte) []resourceEntry {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("/ JSON: not an object: %s", body)
	}
	var out []resourceEntry
	for dec.More() {
		k, err1 := dec.Token()
		v, err2 := dec.Token()
		ks, ok1 := k.(string)
		vs, ok2 := v.(string)
		if err1 != nil || err2 != nil || !ok1 || !ok2 {
			t.Fatalf("/ JSON: bad entry in %s", body)
		}
		out = append(out, resourceEntry{ks, vs})
	}
	return out
}

var (
	linkEntryRE = regexp.MustCompile(`^<([^>]+)>; rel="([^"]+)"$`)
	htmlEntryRE = regexp.MustCompile(`<li><a href="([^"]+)">([^<]+)</a></li>`)
)

func TestDiscovery(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		t.Run("list", func(t *testing.T) {
			t.Parallel()
			rj := s.get(t, "/", "Accept", "application/json")
			expect(t, rj, 200, nil)
			expectHeader(t, rj, "Content-Type", "application/json")
			expectHeader(t, rj, "Vary", "Accept")
			list := parseListJSON(t, rj.Body)

			// Sorted by name then path, de-duplicated, all in the server's dialect, and at
			// least the resources this release serves.
			if !sort.SliceIsSorted(list, func(i, j int) bool {
				return list[i].name < list[j].name || list[i].name == list[j].name && list[i].path < list[j].path
			}) {
				t.Errorf("/ listing not sorted: %v", list)
			}
			seen := map[resourceEntry]bool{}
			for _, e := range list {
				if seen[e] {
					t.Errorf("duplicate entry %v", e)
				}
				seen[e] = true
				if !strings.HasPrefix(e.name, d.name+"_") || !strings.HasPrefix(e.path, "/") {
					t.Errorf("entry %v not in dialect %s", e, d.name)
				}
				if strings.Contains(e.path, d.other().prefix) {
					t.Errorf("entry %v uses the other dialect's prefix", e)
				}
			}
			for _, e := range []resourceEntry{
				{d.name + "_kv_wm_object", "/buckets"}, {d.name + "_kv_wm_object", d.prefix}, {d.name + "_kv_wm_object", "/types"},
				{d.name + "_kv_wm_props", "/buckets"}, {d.name + "_kv_wm_ping", "/ping"}, {d.name + "_kv_wm_stats", "/stats"},
			} {
				if !seen[e] {
					t.Errorf("/ lacks %v: %v", e, list)
				}
			}

			// The Link header lists the same, joined by "," without a space, on JSON, HTML
			// and HEAD alike.
			var wantLink []string
			for _, e := range list {
				wantLink = append(wantLink, "<"+e.path+`>; rel="`+e.name+`"`)
			}
			rh := s.get(t, "/")
			expect(t, rh, 200, nil)
			expectHeader(t, rh, "Content-Type", "text/html")
			for _, r := range []*resp{rj, rh, s.do(t, "HEAD", "/", nil, ""), s.get(t, "/", "Accept", "text/*")} {
				expectHeader(t, r, "Link", strings.Join(wantLink, ","))
			}
			for _, e := range strings.Split(rh.Header.Get("Link"), ",") {
				if !linkEntryRE.MatchString(e) {
					t.Errorf("Link entry %q", e)
				}
			}
			// The HTML body lists the same, with /-prefixed hrefs.
			body := string(rh.Body)
			if !strings.HasPrefix(body, "<html><body><ul>") || !strings.HasSuffix(body, "</ul></body></html>") {
				t.Errorf("HTML listing %q", body)
			}
			var fromHTML []resourceEntry
			for _, m := range htmlEntryRE.FindAllStringSubmatch(body, -1) {
				fromHTML = append(fromHTML, resourceEntry{html.UnescapeString(m[2]), html.UnescapeString(m[1])})
			}
			if len(fromHTML) != len(list) {
				t.Fatalf("HTML lists %v, JSON %v", fromHTML, list)
			}
			for i := range list {
				if fromHTML[i] != list[i] {
					t.Errorf("HTML entry %d = %v, JSON %v", i, fromHTML[i], list[i])
				}
			}
			r := s.get(t, "/", "Accept", "image/png")
			expectPage(t, r, 406)
			expectHeader(t, r, "Vary", "Accept")
		})

		t.Run("ping", func(t *testing.T) {
			t.Parallel()
			for _, p := range []string{"/ping", "/ping/"} {
				r := s.get(t, p)
				expect(t, r, 200, ptr("OK"))
				expectHeader(t, r, "Content-Type", "text/html")
			}
			r := s.do(t, "HEAD", "/ping", nil, "")
			expect(t, r, 200, ptr(""))
			expectHeader(t, r, "Content-Length", "2")
		})

		t.Run("stats", func(t *testing.T) {
			t.Parallel()
			before := statsOf(t, s)
			s.mustPut(t, "/buckets/st/keys/k", "v")
			for i := 0; i < 3; i++ {
				expect(t, s.get(t, "/buckets/st/keys/k"), 200, nil)
			}
			r := s.get(t, "/stats")
			expectHeader(t, r, "Content-Type", "application/json")
			expectHeader(t, r, "Vary", "Accept, Accept-Encoding")
			after := statsOf(t, s)
			for _, k := range []string{"node_gets", "node_gets_total", "node_puts", "node_puts_total",
				"node_get_fsm_time_mean", "node_get_fsm_time_median", "node_get_fsm_time_95", "node_get_fsm_time_99", "node_get_fsm_time_100",
				"node_put_fsm_time_mean", "node_put_fsm_time_median", "node_put_fsm_time_95", "node_put_fsm_time_99", "node_put_fsm_time_100",
				"vnode_gets", "vnode_puts", "ring_num_partitions", "cpu_nprocs", "mem_total", "memory_total", "sys_logical_processors"} {
				if _, ok := after[k].(float64); !ok {
					t.Errorf("/stats %s = %#v, want a number", k, after[k])
				}
			}
			if after["nodename"] != "cairn@127.0.0.1" {
				t.Errorf("nodename %#v", after["nodename"])
			}
			for _, k := range []string{"_core_version", "_kv_version"} {
				if v, _ := after[d.name+k].(string); v != testVersion {
					t.Errorf("%s%s = %#v, want %q", d.name, k, after[d.name+k], testVersion)
				}
				if _, ok := after[d.other().name+k]; ok {
					t.Errorf("/stats has the other dialect's %s%s", d.other().name, k)
				}
			}
			num := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
			if num(after, "node_gets_total")-num(before, "node_gets_total") < 3 || num(after, "node_gets") < 3 {
				t.Errorf("node_gets did not count 3 fetches: before %v/%v after %v/%v",
					before["node_gets"], before["node_gets_total"], after["node_gets"], after["node_gets_total"])
			}
			if num(after, "node_puts_total")-num(before, "node_puts_total") < 1 || num(after, "node_puts") < 1 {
				t.Errorf("node_puts did not count a store")
			}
			if num(after, "node_get_fsm_time_100") <= 0 {
				t.Errorf("node_get_fsm_time_100 = %v after fetches", after["node_get_fsm_time_100"])
			}
			// text/plain: the same report, pretty-printed.
			r = s.get(t, "/stats", "Accept", "text/plain")
			expect(t, r, 200, nil)
			expectHeader(t, r, "Content-Type", "text/plain")
			var pretty map[string]any
			if err := json.Unmarshal(r.Body, &pretty); err != nil || !strings.Contains(string(r.Body), "\n    \"") {
				t.Errorf("text/plain stats not pretty JSON: %v", err)
			}
			if _, ok := pretty["node_gets"]; !ok {
				t.Errorf("pretty stats lack node_gets")
			}
			expectPage(t, s.get(t, "/stats", "Accept", "image/png"), 406)
		})

		t.Run("metrics", func(t *testing.T) {
			t.Parallel()
			s.get(t, "/ping")
			for _, m := range []string{"GET", "HEAD"} {
				r := s.do(t, m, "/metrics", nil, "")
				expect(t, r, 200, nil)
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
					t.Errorf("/metrics Content-Type %q", ct)
				}
				if m == "GET" && (!strings.Contains(string(r.Body), "# TYPE ") || !strings.Contains(string(r.Body), `route="`+d.name+`_kv_wm_ping"`) && !strings.Contains(string(r.Body), "kv_wm_ping")) {
					t.Errorf("/metrics body lacks the request metrics:\n%.2000s", r.Body)
				}
			}
		})

		t.Run("request-id", func(t *testing.T) {
			t.Parallel()
			for _, p := range []string{"/ping", "/buckets/x/keys/missing", "/no/such/route", "/buckets/x/props"} {
				r := s.get(t, p, "X-Request-Id", "e2e-request-42")
				expectHeader(t, r, "X-Request-Id", "e2e-request-42")
			}
			// An id that is not 1 to 128 printable characters is replaced.
			for _, bad := range []string{strings.Repeat("x", 1000), "tab\there"} {
				if got := s.get(t, "/ping", "X-Request-Id", bad).Header.Get("X-Request-Id"); got == bad || got == "" {
					t.Errorf("insane request id %.20q kept: %.20q", bad, got)
				}
			}
			a, b := s.get(t, "/ping").Header.Get("X-Request-Id"), s.get(t, "/ping").Header.Get("X-Request-Id")
			if a == "" || b == "" || a == b {
				t.Errorf("generated request ids %q, %q: want distinct, non-empty", a, b)
			}
		})

		t.Run("no-route", func(t *testing.T) {
			t.Parallel()
			for _, p := range []string{"/no/such/route", "/buckets/b", "/types/t", "/pingpong", "/buckets/b/nothing"} {
				expectPage(t, s.get(t, p), 404)
			}
		})

		t.Run("method-not-allowed", func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct{ method, path, allow string }{
				{"DELETE", "/ping", "HEAD, GET"},
				{"POST", "/stats", "HEAD, GET"},
				{"PUT", "/", "HEAD, GET"},
				{"POST", "/buckets/b/props", "HEAD, GET, PUT, DELETE"},
				{"DELETE", d.prefix + "/b", "HEAD, GET, PUT"},
				{"OPTIONS", "/buckets/b/keys/k", "HEAD, GET, POST, PUT, DELETE"},
			} {
				r := s.do(t, c.method, c.path, nil, "")
				expectPage(t, r, 405)
				expectHeader(t, r, "Allow", c.allow)
			}
			// A method webmachine does not know is 501, whatever the resource.
			for _, p := range []string{"/ping", "/buckets/b/keys/k", "/buckets/b/props"} {
				r := s.do(t, "PATCH", p, nil, "")
				expectPage(t, r, 501)
				expectHeader(t, r, "Allow", "")
			}
		})
	})
}
