package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// jsHooks is a --js-source-dir file of precommit hooks written for either dialect: the
// metadata names are found by their suffix.
const jsHooks = `
var Hooks = {
  accept: function(o) { return o; },
  upper: function(o) {
    var v = o.values[0];
    var meta = Object.keys(v.metadata).filter(function(k) { return /-Meta$/.test(k); })[0];
    v.data = v.data.toUpperCase();
    v.metadata["content-type"] = "text/x-upper";
    v.metadata[meta][meta + "-By"] = "hook";
    v.metadata.index = {"len_int": v.data.length};
    return o;
  },
  reject: function(o) { return {fail: "no writes to " + o.key}; },
  failPlain: function(o) { return "fail"; },
  noDeletes: function(o) {
    var deleted = Object.keys(o.values[0].metadata).some(function(k) { return /-Deleted$/.test(k); });
    return deleted ? {fail: "keep " + o.key} : o;
  },
  throws: function(o) { return o.no.such.member; },
  loop: function(o) { while (true) {} },
  bomb: function(o) { var a = []; while (true) a.push(new ArrayBuffer(1 << 20)); },
};
`

// TestJSPrecommit runs JavaScript precommit hooks from --js-source-dir end to end: accept,
// rewrite, reject (403 with the reason), "fail", a hook that throws, loops or fills its
// memory (500 naming the hook, nothing stored, other requests served meanwhile), deletes,
// and props naming functions that do not exist (400 unknown_hook).
func TestJSPrecommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hooks.js"), []byte(jsHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	forEachDialect(t, []string{"--js-source-dir", dir, "--js-hook-timeout", "1s", "--js-memory-mb", "8"}, func(t *testing.T, s *child, d dialect) {
		text := hdr{"Content-Type", "text/plain"}

		s.setProps(t, "acc", `{"precommit":[{"name":"Hooks.accept"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/acc/keys/k", text, "hello"), 204, nil)
		r := s.get(t, "/buckets/acc/keys/k")
		expect(t, r, 200, ptr("hello"))
		expectHeader(t, r, "Content-Type", "text/plain")

		// Rewrite: the hook's value, content type, metadata and index are stored.
		s.setProps(t, "up", `{"precommit":[{"name":"Hooks.accept"},{"name":"Hooks.upper"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/up/keys/k", append(text, d.hdr+"Meta-Color", "blue"), "hello"), 204, nil)
		r = s.get(t, "/buckets/up/keys/k")
		expect(t, r, 200, ptr("HELLO"))
		expectHeader(t, r, "Content-Type", "text/x-upper")
		expectHeader(t, r, d.hdr+"Meta-Color", "blue")
		expectHeader(t, r, d.hdr+"Meta-By", "hook")
		r = s.get(t, "/buckets/up/index/len_int/5")
		expect(t, r, 200, ptr(`{"keys":["k"]}`))

		// Reject: 403 with the reason, or the default reason for "fail"; nothing stored.
		s.setProps(t, "rej", `{"precommit":[{"name":"Hooks.reject"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/rej/keys/k1", text, "v"), 403, ptr("no writes to k1"))
		expect(t, s.get(t, "/buckets/rej/keys/k1"), 404, nil)
		s.setProps(t, "fail", `{"precommit":[{"name":"Hooks.failPlain"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/fail/keys/k", text, "v"), 403, ptr("PUT aborted by pre-commit hook."))

		// Deletes run the hook on the tombstone.
		s.mustPut(t, "/buckets/del/keys/k", "v", "Content-Type", "text/plain")
		s.setProps(t, "del", `{"precommit":[{"name":"Hooks.noDeletes"}]}`)
		expect(t, s.do(t, "DELETE", "/buckets/del/keys/k", nil, ""), 403, ptr("keep k"))
		expect(t, s.get(t, "/buckets/del/keys/k"), 200, ptr("v"))
		expect(t, s.do(t, "PUT", "/buckets/del/keys/k", text, "v2"), 204, nil)

		// Failures: 500 naming the hook; nothing stored; the server keeps serving while a
		// hook loops.
		s.mustPut(t, "/buckets/other/keys/k", "v", "Content-Type", "text/plain")
		for _, c := range []struct{ fun, want string }{
			{"throws", "precommit hook Hooks.throws failed: TypeError"},
			{"loop", "precommit hook Hooks.loop timed out"},
			{"bomb", "precommit hook Hooks.bomb crashed: out of memory"},
		} {
			b := "bad-" + strings.ToLower(c.fun)
			s.setProps(t, b, `{"precommit":[{"name":"Hooks.`+c.fun+`"}]}`)
			var wg sync.WaitGroup
			wg.Add(1)
			var slowest time.Duration
			go func() {
				defer wg.Done()
				for range 5 {
					start := time.Now()
					expect(t, s.get(t, "/buckets/other/keys/k"), 200, ptr("v"))
					slowest = max(slowest, time.Since(start))
					time.Sleep(50 * time.Millisecond)
				}
			}()
			start := time.Now()
			r := s.do(t, "PUT", "/buckets/"+b+"/keys/k", text, "v")
			took := time.Since(start)
			wg.Wait()
			expect(t, r, 500, nil)
			if !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%s: 500 body %q, want %q", c.fun, r.Body, c.want)
			}
			if took > 10*time.Second || slowest > 2*time.Second {
				t.Errorf("%s: the write took %v, the slowest read meanwhile %v", c.fun, took, slowest)
			}
			expect(t, s.get(t, "/buckets/"+b+"/keys/k"), 404, nil)
		}
		expect(t, s.get(t, "/ping"), 200, nil)

		// Props naming a function that does not exist, or a JavaScript postcommit hook,
		// are refused when set.
		jsonCT := hdr{"Content-Type", "application/json"}
		for _, props := range []string{
			`{"props":{"precommit":[{"name":"Hooks.nope"}]}}`,
			`{"props":{"precommit":[{"name":"NoSuch.thing"}]}}`,
			`{"props":{"precommit":[{"name":"not a name()"}]}}`,
			`{"props":{"postcommit":[{"name":"Hooks.accept"}]}}`,
		} {
			r := s.do(t, "PUT", "/buckets/acc/props", jsonCT, props)
			expect(t, r, 400, nil)
			if !strings.Contains(string(r.Body), "unknown_hook") {
				t.Errorf("%s: 400 body %s", props, r.Body)
			}
		}
		// The built-ins are functions too (this one answers a list, not an object).
		s.setProps(t, "builtin", `{"precommit":[{"name":"Riak.mapValues"}]}`)
		r = s.do(t, "PUT", "/buckets/builtin/keys/k", text, "v")
		expect(t, r, 500, nil)
		if !strings.Contains(string(r.Body), "precommit hook Riak.mapValues bad result") {
			t.Errorf("built-in as precommit: %s", r.Body)
		}

		st := statsOf(t, s)
		if st["js_calls_total"].(float64) < 10 || st["js_failures_total"].(float64) < 4 || st["js_vms_recycled_total"].(float64) < 2 {
			t.Errorf("stats: js_calls_total=%v js_failures_total=%v js_vms_recycled_total=%v",
				st["js_calls_total"], st["js_failures_total"], st["js_vms_recycled_total"])
		}
	})
}

// TestJSSourceDirErrors checks that a JavaScript source directory that does not load
// stops the server at start with the file named, and that bad JavaScript settings are
// refused.
func TestJSSourceDirErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.js"), []byte("function ( {"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--js-source-dir", dir}, 1, "broken.js: SyntaxError"},
		{[]string{"--js-source-dir", filepath.Join(dir, "missing")}, 1, "javascript runtime"},
		{[]string{"--js-memory-mb", "5000"}, 2, "js-memory-mb"},
		{[]string{"--js-timeout", "-1s"}, 2, "js-timeout"},
		{[]string{"--js-hook-timeout", "soon"}, 2, "js-hook-timeout"},
	} {
		args := append([]string{"--kv-listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, c.args...)
		code, _, errOut := runCairn(t, serverOpts{args: args})
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("cairn %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
