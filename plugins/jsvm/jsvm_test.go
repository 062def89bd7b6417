package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestLimits runs memory bombs, infinite loops, a deep recursion and failing functions
// at the same time as ordinary calls: each ends with its typed error, the ordinary calls
// all succeed, and the VMs that ran out of memory or were interrupted are replaced. The
// memory cases run in a runtime with a long time limit, so that they end by running out
// of memory however slow the machine is; the loops in one with a short limit.
func TestLimits(t *testing.T) {
	t.Parallel()
	limit, mem := time.Second, int64(8<<20)
	if raceEnabled {
		limit = 10 * time.Second
	}
	fast := newRuntime(t, Config{MemoryLimit: mem, Timeout: limit, PoolSize: 6})
	roomy := newRuntime(t, Config{MemoryLimit: mem, Timeout: 10 * time.Minute, PoolSize: 6})
	ctx := context.Background()
	obj := hooks.MapInput{Object: object("b", "k", "application/json", `{"a":1}`)}

	var wg sync.WaitGroup
	stopGood := make(chan struct{})
	var goodCalls, goodFailures atomic.Int64
	for _, r := range []*Runtime{fast, roomy} {
		good := namedMap(t, r, "Riak.mapValuesJson")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stopGood:
					return
				case <-time.After(time.Millisecond):
				}
				got, err := good.Map(ctx, obj)
				if err != nil || joined(t, got) != `[{"a":1}]` {
					goodFailures.Add(1)
					t.Errorf("ordinary call during the limits test: %s, %v", joined(t, got), err)
				}
				goodCalls.Add(1)
			}
		}()
	}

	cases := []struct {
		r    *Runtime
		name string
		kind hooks.CallErrorKind
		want string
		src  string
	}{
		{roomy, "memory bomb", hooks.Crashed, "out of memory", `function(v) { var a = []; while (true) a.push(new Array(1e6)); }`},
		{roomy, "big string", hooks.Crashed, "out of memory", `function(v) { return ["x".repeat(2**28).length]; }`},
		{roomy, "deep recursion", hooks.Crashed, "stack overflow", `function(v) { function f(n) { return f(n + 1) + 1; } return [f(0)]; }`},
		{fast, "memory bomb caught", hooks.TimedOut, "time limit", `function(v) {
			var a = [];
			try { while (true) a.push(new Array(1e6)); } catch (e) { a = null; }
			while (true) {}
		}`},
		{fast, "infinite loop", hooks.TimedOut, "time limit of " + limit.String(), `function(v) { while (true) {} }`},
		{fast, "loop in catch", hooks.TimedOut, "time limit", `function(v) { for (;;) { try { while (true) {} } catch (e) {} } }`},
		{fast, "thrown error", hooks.Failed, "Error: boom", `function(v) { throw new Error("boom"); }`},
		{fast, "thrown string", hooks.Failed, "boom", `function(v) { throw "boom"; }`},
		{fast, "not a list", hooks.BadResult, "not a list: object {\"a\":1}", `function(v) { return {a: 1}; }`},
		{fast, "undefined", hooks.BadResult, "not a list: undefined undefined", `function(v) {}`},
		{fast, "not JSON", hooks.BadResult, "not JSON", `function(v) { return [1n]; }`},
	}
	var cwg sync.WaitGroup
	for _, c := range cases {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			_, err := sourceMap(t, c.r, c.src).Map(ctx, obj)
			callErr(t, err, c.kind, c.want)
		}()
	}
	cwg.Wait()
	close(stopGood)
	wg.Wait()
	if goodCalls.Load() == 0 || goodFailures.Load() != 0 {
		t.Errorf("ordinary calls: %d, failures %d", goodCalls.Load(), goodFailures.Load())
	}
	for _, r := range []*Runtime{fast, roomy} {
		st := r.Stats()
		if st.Recycled < 2 {
			t.Errorf("recycled %d VMs, want at least 2 (out of memory and interrupts)", st.Recycled)
		}
		if st.VMs > 6 {
			t.Errorf("%d VMs alive, above the pool size", st.VMs)
		}
	}
	if st := fast.Stats(); st.Failures["timed out"] != 3 || st.Failures["failed"] != 2 || st.Failures["bad result"] != 3 {
		t.Errorf("failure counts %v", st.Failures)
	}
	if st := roomy.Stats(); st.Failures["crashed"] != 3 {
		t.Errorf("failure counts %v", st.Failures)
	}

	// Below the limit, recursion works; the VM that overflowed its stack still works.
	got, err := sourceMap(t, roomy, `function(v) { function f(n) { return n == 0 ? 0 : f(n - 1) + 1; } return [f(500)]; }`).Map(ctx, obj)
	if err != nil || joined(t, got) != `[500]` {
		t.Errorf("recursion of depth 500: %s, %v", joined(t, got), err)
	}
}

// TestContextInterrupts checks that the caller's deadline and cancellation stop a call
// long before the runtime's own limit.
func TestContextInterrupts(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{Timeout: time.Minute})
	loop := sourceMap(t, r, `function(v) { while (true) {} }`)
	in := hooks.MapInput{Object: object("b", "k", "text/plain", "x")}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := loop.Map(ctx, in)
	callErr(t, err, hooks.TimedOut, "deadline exceeded")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("deadline: stopped after %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	_, err = loop.Map(ctx, in)
	callErr(t, err, hooks.TimedOut, "canceled")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel: stopped after %v", d)
	}

	// Already ended: no call at all.
	_, err = loop.Map(ctx, in)
	callErr(t, err, hooks.TimedOut, "canceled")
}

// TestPoolBound checks that no more VMs than the pool size run, that calls wait for a
// free VM, and that a wait past PoolWait fails with hooks.Unavailable.
func TestPoolBound(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{PoolSize: 2, PoolWait: 30 * time.Second})
	slow := sourceReduce(t, r, `function(vs) { var t = Date.now(); while (Date.now() - t < 150) {} return vs; }`)
	var wg sync.WaitGroup
	var maxVMs atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			if n := r.Stats().VMs; n > maxVMs.Load() {
				maxVMs.Store(n)
			}
		}
	}()
	start := time.Now()
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := slow.Reduce(context.Background(), []json.RawMessage{json.RawMessage(fmt.Sprint(i))}, nil)
			if err != nil || joined(t, got) != fmt.Sprintf("[%d]", i) {
				t.Errorf("call %d: %s, %v", i, joined(t, got), err)
			}
		}()
	}
	wg.Wait()
	close(done)
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("6 calls of 150 ms on 2 VMs took %v", d)
	}
	if m := maxVMs.Load(); m > 2 {
		t.Errorf("%d MapReduce VMs alive at once, pool size 2", m)
	}

	// A short wait fails cleanly.
	r2 := newRuntime(t, Config{PoolSize: 1, PoolWait: 20 * time.Millisecond})
	slow2 := sourceReduce(t, r2, `function(vs) { var t = Date.now(); while (Date.now() - t < 500) {} return vs; }`)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := slow2.Reduce(context.Background(), nil, nil)
			errs <- err
		}()
	}
	var unavailable int
	for range 2 {
		var ce *hooks.CallError
		if err := <-errs; errors.As(err, &ce) && ce.Kind == hooks.Unavailable {
			unavailable++
		} else if err != nil {
			t.Errorf("unexpected error %v", err)
		}
	}
	if unavailable != 1 {
		t.Errorf("%d calls found no VM, want 1", unavailable)
	}
}

// TestSourceCache checks that a source is compiled once, that compile errors say why,
// and the forms a source may take.
func TestSourceCache(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{CacheSize: 2, Timeout: time.Second})
	src := `function(v) { return [v.key]; }`
	in := hooks.MapInput{Object: object("b", "k", "text/plain", "x")}
	for range 3 {
		got, err := sourceMap(t, r, src).Map(context.Background(), in)
		if err != nil || joined(t, got) != `["k"]` {
			t.Fatalf("%s, %v", joined(t, got), err)
		}
	}
	if st := r.Stats(); st.CacheMisses != 1 || st.CacheHits != 2 {
		t.Errorf("cache: %d misses, %d hits", st.CacheMisses, st.CacheHits)
	}
	// Forms clients send: trailing semicolon, comments, named functions, arrows.
	for _, s := range []string{
		"function(v) { return [v.key]; };",
		"function(v) { return [v.key]; } // done",
		"\n  function named(v) {\n return [v.key];\n }\n",
		"(v) => [v.key]",
		"/* c */ function(v) { return [v.key]; } ;;",
	} {
		got, err := sourceMap(t, r, s).Map(context.Background(), in)
		if err != nil || joined(t, got) != `["k"]` {
			t.Errorf("%q: %s, %v", s, joined(t, got), err)
		}
	}
	// The cache is bounded: an evicted source compiles again.
	if st := r.Stats(); st.CacheMisses != 6 {
		t.Errorf("misses %d, want 6", st.CacheMisses)
	}
	for _, c := range []struct{ src, want string }{
		{"function(v) { return [v.key]; ", "does not compile: SyntaxError"},
		{"1 + 1", "evaluates to a number"},
		{`"function(v) {}"`, "evaluates to a string"},
		{"null", "evaluates to null"},
		{"function(v) {}; 7", "evaluates to a number"},
		{"", "does not compile"},
	} {
		_, err := r.FromSource(context.Background(), c.src, hooks.PointMap)
		if !errors.Is(err, hooks.ErrNoFunction) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FromSource(%q) = %v, want ErrNoFunction with %q", c.src, err, c.want)
		}
	}
	// A source whose evaluation runs forever is not cached as an answer.
	misses := r.Stats().CacheMisses
	for range 2 {
		_, err := r.FromSource(context.Background(), "(function() { while (true) {} })()", hooks.PointReduce)
		if !errors.Is(err, hooks.ErrNoFunction) || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("looping source: %v", err)
		}
	}
	if n := r.Stats().CacheMisses - misses; n != 2 {
		t.Errorf("looping source: %d misses, want 2", n)
	}
	if _, err := r.FromSource(context.Background(), "function(o) { return o; }", hooks.PointPrecommit); !errors.Is(err, hooks.ErrNoFunction) {
		t.Errorf("anonymous precommit: %v", err)
	}
}

// TestLookup checks named functions: built-ins, the source directory, names that do
// not resolve, and the points JavaScript does not serve.
func TestLookup(t *testing.T) {
	t.Parallel()
	dir := sourceDir(t, map[string]string{
		"a.js":      `var MyApp = { byKey: function(v) { return [v.key]; }, notFn: 3 }; function topLevel(vs) { return [vs.length]; }`,
		"b.js":      `Riak.extra = function(v) { return ["extra"]; }; var fromA = typeof MyApp;`,
		"notjs.txt": `this is not JavaScript`,
	})
	r := newRuntime(t, Config{SourceDir: dir})
	in := hooks.MapInput{Object: object("b", "k", "text/plain", "x")}
	got, err := namedMap(t, r, "MyApp.byKey").Map(context.Background(), in)
	if err != nil || joined(t, got) != `["k"]` {
		t.Errorf("MyApp.byKey: %s, %v", joined(t, got), err)
	}
	got, err = namedReduce(t, r, "topLevel").Reduce(context.Background(), rawList(t, `[1,2,3]`), nil)
	if err != nil || joined(t, got) != `[3]` {
		t.Errorf("topLevel: %s, %v", joined(t, got), err)
	}
	got, err = namedMap(t, r, "Store.extra").Map(context.Background(), in)
	if err != nil || joined(t, got) != `["extra"]` {
		t.Errorf("Store.extra: %s, %v", joined(t, got), err)
	}
	for _, c := range []struct {
		mod, name string
		p         hooks.Point
		want      error
	}{
		{"", "MyApp.nope", hooks.PointMap, hooks.ErrNoFunction},
		{"", "MyApp.notFn", hooks.PointMap, hooks.ErrNoFunction},
		{"", "Riak.mapValuesJson.x", hooks.PointMap, hooks.ErrNoFunction},
		{"", "nothing", hooks.PointReduce, hooks.ErrNoFunction},
		{"", "Riak.mapValues()", hooks.PointMap, hooks.ErrNoFunction},
		{"", "", hooks.PointMap, hooks.ErrNoFunction},
		{"", "Riak.mapValues", hooks.PointPostcommit, hooks.ErrNoFunction},
		{"", "Riak.mapValues", hooks.PointKeyFun, hooks.ErrNoFunction},
		{"", "Riak.mapValues", hooks.PointLinkFun, hooks.ErrNoFunction},
		{"riak_kv_mapreduce", "map_identity", hooks.PointMap, hooks.ErrNoModule},
	} {
		if _, err := r.Lookup(c.mod, c.name, c.p); !errors.Is(err, c.want) {
			t.Errorf("Lookup(%q, %q, %v) = %v, want %v", c.mod, c.name, c.p, err, c.want)
		}
	}
	if r.HasModule("anything") || r.Kind() != hooks.KindJavaScript {
		t.Error("HasModule or Kind")
	}

	// Globals a job defines do not become names: names resolve as in a fresh VM.
	if _, err := sourceMap(t, r, `function(v) { globalThis.Sneaky = function() { return []; }; return []; }`).Map(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup("", "Sneaky", hooks.PointMap); !errors.Is(err, hooks.ErrNoFunction) {
		t.Errorf("a job's global became a name: %v", err)
	}

	// Through a registry, as bucket properties and phases name them.
	reg := hooks.NewRegistry(r)
	if err := reg.Validate(core.HookSpec{Name: "Riak.mapValuesJson"}, hooks.PointMap); err != nil {
		t.Errorf("registry: %v", err)
	}
	if err := reg.Validate(core.HookSpec{Name: "MyApp.byKey"}, hooks.PointPostcommit); err == nil {
		t.Error("registry accepted a JavaScript postcommit hook")
	}
	if _, err := reg.FromSource(context.Background(), hooks.KindJavaScript, "function(v) { return [1]; }", hooks.PointMap); err != nil {
		t.Errorf("registry FromSource: %v", err)
	}
}

// TestSourceDirErrors checks that a source directory that cannot load stops New.
func TestSourceDirErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ code, want string }{
		{`function broken( {`, "bad.js: SyntaxError"},
		{`throw new Error("no")`, "bad.js: Error: no"},
		{`while (true) {}`, "bad.js: InternalError: interrupted"},
	} {
		_, err := New(Config{SourceDir: sourceDir(t, map[string]string{"bad.js": c.code}), InitTimeout: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.code, err, c.want)
		}
	}
	if _, err := New(Config{SourceDir: "/nonexistent/dir"}); err == nil {
		t.Error("a missing source dir was accepted")
	}
	if _, err := New(Config{Dialect: "nope"}); err == nil {
		t.Error("an unknown dialect was accepted")
	}
	if _, err := New(Config{MemoryLimit: 1000}); err == nil {
		t.Error("a tiny memory limit was accepted")
	}
}

// TestPrecommit checks the precommit contract: the object in, and accept, replace,
// "fail", {"fail": reason}, a bad answer, an exception and a loop out.
func TestPrecommit(t *testing.T) {
	t.Parallel()
	dir := sourceDir(t, map[string]string{"hooks.js": `
var Hooks = {
  accept: function(o) { return o; },
  rewrite: function(o) {
    var v = o.values[0];
    v.data = v.data.toUpperCase();
    v.metadata["content-type"] = "text/x-upper";
    v.metadata["X-Riak-Meta"]["X-Riak-Meta-By"] = "hook";
    v.metadata.index = {"len_int": v.data.length};
    return o;
  },
  failPlain: function(o) { return "fail"; },
  failReason: function(o) { return {fail: "not on " + o.key}; },
  failObject: function(o) { return {fail: {code: 7}}; },
  failEmpty: function(o) { return {fail: ""}; },
  bad: function(o) { return 42; },
  noValues: function(o) { return {bucket: "b"}; },
  badObject: function(o) { o.values[0].metadata["X-Riak-Last-Modified"] = "yesterday"; return o; },
  throws: function(o) { return o.nope.nope; },
  loop: function(o) { while (true) {} },
  deleted: function(o) { return o.values[0].metadata["X-Riak-Deleted"] === "true" ? {fail: "no deletes"} : o; },
};`})
	r := newRuntime(t, Config{SourceDir: dir, Dialect: "riak", HookTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	pre := func(name string) hooks.Precommit {
		f, err := r.Lookup("", name, hooks.PointPrecommit)
		if err != nil {
			t.Fatal(err)
		}
		return f.(hooks.Precommit)
	}
	obj := object("b", "k", "text/plain", "hello")

	v, err := pre("Hooks.accept").Precommit(ctx, hooks.OpPut, obj)
	if err != nil || v.Reject || v.Replace != nil {
		t.Errorf("accept: %+v, %v", v, err)
	}
	v, err = pre("Hooks.rewrite").Precommit(ctx, hooks.OpPut, obj)
	if err != nil || v.Reject || v.Replace == nil {
		t.Fatalf("rewrite: %+v, %v", v, err)
	}
	s := v.Replace.Siblings[0]
	if string(s.Value) != "HELLO" || s.ContentType != "text/x-upper" || len(s.Indexes) != 1 || s.Indexes[0].Value != "5" ||
		!hasMeta(s.Meta, "By", "hook") || !hasMeta(s.Meta, "Color", "blue") {
		t.Errorf("rewrite: %+v", s)
	}
	for _, c := range []struct{ name, reason string }{
		{"Hooks.failPlain", ""}, {"Hooks.failReason", "not on k"}, {"Hooks.failObject", `object {"code":7}`},
		{"Hooks.failEmpty", "rejected by Hooks.failEmpty"},
	} {
		v, err := pre(c.name).Precommit(ctx, hooks.OpPut, obj)
		if err != nil || !v.Reject || v.Reason != c.reason {
			t.Errorf("%s: %+v, %v; want reason %q", c.name, v, err, c.reason)
		}
	}
	_, err = pre("Hooks.bad").Precommit(ctx, hooks.OpPut, obj)
	callErr(t, err, hooks.BadResult, "number 42")
	_, err = pre("Hooks.noValues").Precommit(ctx, hooks.OpPut, obj)
	callErr(t, err, hooks.BadResult, `no "values"`)
	_, err = pre("Hooks.badObject").Precommit(ctx, hooks.OpPut, obj)
	callErr(t, err, hooks.BadResult, "the returned object")
	_, err = pre("Hooks.throws").Precommit(ctx, hooks.OpPut, obj)
	callErr(t, err, hooks.Failed, "TypeError")
	start := time.Now()
	_, err = pre("Hooks.loop").Precommit(ctx, hooks.OpPut, obj)
	callErr(t, err, hooks.TimedOut, "300ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("loop stopped after %v", d)
	}

	// Deletes see the tombstone; a returned object means accept.
	tomb := object("b", "k", "text/plain", "")
	tomb.Siblings[0].Deleted = true
	v, err = pre("Hooks.deleted").Precommit(ctx, hooks.OpDelete, tomb)
	if err != nil || !v.Reject || v.Reason != "no deletes" {
		t.Errorf("delete: %+v, %v", v, err)
	}
	v, err = pre("Hooks.rewrite").Precommit(ctx, hooks.OpDelete, tomb)
	if err != nil || v.Reject || v.Replace != nil {
		t.Errorf("rewrite on delete: %+v, %v", v, err)
	}

	// The hook pool is not the MapReduce pool: a hook runs while MapReduce VMs are busy.
	r2 := newRuntime(t, Config{SourceDir: dir, PoolSize: 1, PoolWait: 10 * time.Millisecond})
	busy := sourceReduce(t, r2, `function(vs) { var t = Date.now(); while (Date.now() - t < 400) {} return vs; }`)
	started := make(chan struct{})
	go func() {
		close(started)
		_, _ = busy.Reduce(context.Background(), nil, nil)
	}()
	<-started
	time.Sleep(50 * time.Millisecond)
	f, err := r2.Lookup("", "Hooks.accept", hooks.PointPrecommit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.(hooks.Precommit).Precommit(ctx, hooks.OpPut, obj); err != nil {
		t.Errorf("precommit while MapReduce VMs are busy: %v", err)
	}
}

func hasMeta(meta []core.MetaEntry, name, value string) bool {
	for _, m := range meta {
		if strings.EqualFold(m.Name, name) && m.Value == value {
			return true
		}
	}
	return false
}

// TestSandbox checks what a VM does not offer and that one job cannot change the
// built-ins or the way values cross for the next.
func TestSandbox(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	r := newRuntime(t, Config{PoolSize: 1, Logger: logs.logger()})
	ctx := context.Background()
	in := hooks.MapInput{Object: object("b", "k", "application/json", `{"a":1}`)}
	got, err := sourceMap(t, r, `function(v) {
		return [typeof require, typeof std, typeof os, typeof setTimeout, typeof print, typeof console,
			typeof fetch, typeof XMLHttpRequest, typeof process, typeof scriptArgs];
	}`).Map(ctx, in)
	if err != nil || joined(t, got) != `["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]` {
		t.Errorf("globals: %s, %v", joined(t, got), err)
	}
	_, err = sourceMap(t, r, `function(v) { var ia = new Int32Array(new SharedArrayBuffer(4)); Atomics.wait(ia, 0, 0); return []; }`).Map(ctx, in)
	callErr(t, err, hooks.Failed, "cannot block")
	got, err = sourceMap(t, r, `function(v) {
		var state = "pending";
		import("os").then(function() { state = "loaded"; }, function() { state = "refused"; });
		return [state];
	}`).Map(ctx, in)
	if err != nil || joined(t, got) != `["pending"]` {
		t.Errorf("import: %s, %v", joined(t, got), err)
	}

	// A job that vandalises the globals and the intrinsics.
	_, err = sourceMap(t, r, `function(v) {
		try { Riak.mapValuesJson = function() { return ["vandal"]; }; } catch (e) {}
		try { Riak = null; } catch (e) {}
		try { Store = null; } catch (e) {}
		JSON.parse = function() { return "vandal"; };
		JSON.stringify = function() { return "vandal"; };
		Array.isArray = function() { return false; };
		Array.prototype.sort = function() { return ["vandal"]; };
		Array.prototype.slice = function() { return ["vandal"]; };
		Array.prototype.push = function() { return 0; };
		Array.prototype.map = function() { return ["vandal"]; };
		String.prototype.split = function() { return ["vandal"]; };
		String.prototype.slice = function() { return "vandal"; };
		return [];
	}`).Map(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err = namedMap(t, r, "Riak.mapValuesJson").Map(ctx, in)
	if err != nil || joined(t, got) != `[{"a":1}]` {
		t.Errorf("mapValuesJson after vandalism: %s, %v", joined(t, got), err)
	}
	for _, c := range []struct{ name, values, arg, want string }{
		{"Store.reduceSort", `[3,1,2]`, `"function(a,b){return a-b}"`, `[1,2,3]`},
		{"Riak.reduceNumericSort", `[3,1,2]`, ``, `[1,2,3]`},
		{"Riak.reduceLimit", `[3,1,2]`, `3`, `[3,1]`},
		{"Riak.reduceSlice", `[3,1,2]`, `[1,2]`, `[1]`},
		{"Riak.filterNotFound", `[3,{"not_found":1},2]`, ``, `[3,2]`},
	} {
		got, err := namedReduce(t, r, c.name).Reduce(ctx, rawList(t, c.values), json.RawMessage(c.arg))
		if err != nil || joined(t, got) != c.want {
			t.Errorf("%s after vandalism: %s, %v", c.name, joined(t, got), err)
		}
	}
	_, err = sourceMap(t, r, `function(v) { return {not: "a list"}; }`).Map(ctx, in)
	callErr(t, err, hooks.BadResult, `not a list: object {"not":"a list"}`)
	if r.Stats().VMs != 1 {
		t.Errorf("the vandal and the next calls should share the one VM")
	}

	// ejsLog goes to the log, never to a file, and is rate limited.
	_, err = sourceMap(t, r, `function(v) { ejsLog("/tmp/cairn-ejslog-test.log", "hello " + v.key); ejsLog("f", {x: 1}); return []; }`).Map(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, `msg=ejsLog file=/tmp/cairn-ejslog-test.log msg="hello k"`) || !strings.Contains(l, `msg="{\"x\":1}"`) {
		t.Errorf("log: %s", l)
	}
	_, err = sourceMap(t, r, `function(v) { for (var i = 0; i < 300; i++) ejsLog("f", "spam " + i); return []; }`).Map(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Stats().LogDropped; d < 100 {
		t.Errorf("dropped %d log lines, want at least 100", d)
	}
}

// TestClose checks that calls after Close fail cleanly and that Close interrupts a
// running call.
func TestClose(t *testing.T) {
	t.Parallel()
	r, err := New(Config{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	loop := sourceMap(t, r, `function(v) { while (true) {} }`)
	in := hooks.MapInput{Object: object("b", "k", "text/plain", "x")}
	errc := make(chan error, 1)
	go func() {
		_, err := loop.Map(context.Background(), in)
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		callErr(t, err, hooks.Unavailable, "closed")
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the running call")
	}
	if st := r.Stats(); st.VMs != 0 {
		t.Errorf("%d VMs alive after Close", st.VMs)
	}
	_, err = loop.Map(context.Background(), in)
	callErr(t, err, hooks.Unavailable, "closed")
	if _, err := r.Lookup("", "Riak.mapValues", hooks.PointMap); err == nil {
		t.Error("Lookup after Close")
	}
}

// TestNativeWork checks calls that spend their time in the engine's native operations,
// where it seldom checks for interrupts: a loop of long operations stops within one of
// them after its deadline, and array methods refuse the walks that would take hours.
func TestNativeWork(t *testing.T) {
	t.Parallel()
	if !contextOK {
		t.Fatal("the quickjs VM has no cContext field where expected: poke is disabled")
	}
	// The race detector slows the engine's native operations about 50 times.
	slow, loopArray := time.Duration(1), "1e6"
	if raceEnabled {
		slow, loopArray = 20, "1e4"
	}
	r := newRuntime(t, Config{Timeout: 200 * time.Millisecond * slow, PoolSize: 2})
	in := hooks.MapInput{Object: object("b", "k", "text/plain", "x")}

	start := time.Now()
	_, err := sourceMap(t, r, `function(v) { var a = []; while (true) a.pus % (new Array(`+loopArray+`)); }`).Map(context.Background(), in)
	callErr(t, err, hooks.TimedOut, "time limit")
	if d := time.Since(start); d > 2*time.Second*slow {
		t.Errorf("a loop of joins stopped after %v", d)
	}

	// Array methods refuse to walk enormous sparse arrays and array-likes, which would
	// take hours; ordinary arrays, strings and typed arrays work as usual.
	for _, c := range []struct{ expr, want string }{
		{`Array.prototype.indexOf.call({length: 2**53 - 1}, 1)`, "RangeError: Array.prototype.indexOf"},
		{`Array.prototype.join.call({length: 2**53 - 1}, "")`, "RangeError: Array.prototype.join"},
		{`new Array(2**32 - 1).sort()`, "RangeError: Array.prototype.sort"},
		{`String(new Array(2**32 - 1))`, "RangeError: Array.prototype.join"},
		{`new Array(2**32 - 1).every(function() { return true; })`, "RangeError: Array.prototype.every"},
		{`Array.prototype.copyWithin.call({length: 2**40}, 0, 1)`, "RangeError: Array.prototype.copyWithin"},
	} {
		_, err := sourceMap(t, r, `function(v) { return [`+c.expr+`]; }`).Map(context.Background(), in)
		callErr(t, err, hooks.Failed, c.want)
	}
	got, err := sourceMap(t, r, `function(v) {
		var a = [3, 1, 2], s = new Array(100); s[50] = 1;
		return [a.indexOf(2), a.join("-"), a.slice().sort().join(), String(a), s.indexOf(1),
			Array.prototype.indexOf.call("abc", "c"), Array.prototype.join.call(new Uint8Array([1, 2])),
			[].indexOf.name, [].indexOf.length, [].splice.length, a.map(function(x) { return x * 2; }).join()];
	}`).Map(context.Background(), in)
	if want := `[2,"3-1-2","1,2,3","3,1,2",50,2,"1,2","indexOf",1,2,"6,2,4"]`; err != nil || joined(t, got) != want {
		t.Errorf("ordinary arrays: %s, %v; want %s", joined(t, got), err, want)
	}
}
