package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// FuzzSource feeds client sources to FromSource and runs what compiles as a map and a
// reduce: nothing may panic or hang, and every failure is ErrNoFunction (at FromSource)
// or a *hooks.CallError (at the call).
func FuzzSource(f *testing.F) {
	for _, s := range []string{
		"function(v) { return [v.key]; }",
		"function(v, kd, arg) { return [kd, arg]; };",
		"(v) => [JSON.parse(v.values[0].data)]",
		"function(vs) { return [vs.length]; } // c",
		"function(v) { while (true) {} }",
		"function(v) { var a = []; while (true) a.push(new Array(1e6)); }",
		"function(v) { throw null; }",
		"function(v) { return {fail: 1}; }",
		"1 + 1",
		"function(",
		"}); (function() {",
		"\u2028function(v) { return ['\u2029']; }",
		`function(v) { return ['\ud800' + '\udfff'.slice(1)]; }`,
		"",
	} {
		f.Add(s, `{"a":1}`)
	}
	r := newRuntime(f, Config{MemoryLimit: 2 << 20, Timeout: 100 * time.Millisecond, PoolSize: 4, PoolWait: 5 * time.Second})
	in := hooks.MapInput{Object: object("b", "k", "application/json", `{"a":1}`)}
	f.Fuzz(func(t *testing.T, src, arg string) {
		var a json.RawMessage
		if json.Valid([]byte(arg)) {
			a = json.RawMessage(arg)
		}
		for _, p := range []hooks.Point{hooks.PointMap, hooks.PointReduce} {
			fn, err := r.FromSource(context.Background(), src, p)
			if err != nil {
				var ce *hooks.CallError
				if !errors.Is(err, hooks.ErrNoFunction) && !errors.As(err, &ce) {
					t.Fatalf("FromSource(%q): %v", src, err)
				}
				continue
			}
			var vals []json.RawMessage
			if p == hooks.PointMap {
				vals, err = fn.(hooks.Map).Map(context.Background(), hooks.MapInput{Object: in.Object, Arg: a})
			} else {
				vals, err = fn.(hooks.Reduce).Reduce(context.Background(), []json.RawMessage{json.RawMessage(`1`), a}, a)
			}
			var ce *hooks.CallError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("%q: %v", src, err)
			}
			for _, v := range vals {
				if !json.Valid(v) {
					t.Fatalf("%q: invalid JSON %q", src, v)
				}
			}
		}
	})
}
