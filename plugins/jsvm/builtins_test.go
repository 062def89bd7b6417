package jsvm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestBuiltinReduce checks the reduce-shaped built-ins against the reference's
// documented behaviour, quirks included, under both names (Riak.* and Store.*).
func TestBuiltinReduce(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{})
	ctx := context.Background()
	for _, c := range []struct {
		name, values, arg, want string
	}{
		{"reduceSum", `[1,2,3]`, ``, `[6]`},
		{"reduceSum", `[]`, ``, `[0]`},
		{"reduceSum", `[1.5,2]`, ``, `[3.5]`},
		{"reduceSum", `["a","b"]`, ``, `["ab"]`},                    // + concatenates strings
		{"reduceSum", `[1,"2",3]`, ``, `["123"]`},                   // from the first string on
		{"reduceSum", `[1,{"not_found":{"key":"k"}},2]`, ``, `[3]`}, // not_found dropped
		{"reduceSum", `[{"not_found":{}}]`, ``, `[0]`},
		{"reduceMin", `[3,1,2]`, ``, `[1]`},
		{"reduceMin", `[]`, ``, `[]`},
		{"reduceMin", `["b","a"]`, ``, `["a"]`},
		{"reduceMax", `[3,1,2]`, ``, `[3]`},
		{"reduceMax", `[]`, ``, `[]`},
		{"reduceSort", `["b","c","a"]`, ``, `["a","b","c"]`},
		{"reduceSort", `[10,9,1]`, ``, `[1,10,9]`}, // default order compares as strings
		{"reduceSort", `[10,9,1]`, `"function(a,b){return a-b}"`, `[1,9,10]`},
		{"reduceSort", `[10,9,1]`, `"function(a, b) { return b - a; }"`, `[10,9,1]`},
		{"reduceSort", `[10,9,1]`, `"(a, b) => a - b"`, `[1,9,10]`},
		{"reduceSort", `[10,9,1]`, `"not a comparator ("`, `[1,10,9]`},     // eval fails: default
		{"reduceSort", `[10,9,1]`, `"none"`, `[1,10,9]`},                   // ReferenceError: default
		{"reduceSort", `[10,9,1]`, `{"cmp":1}`, `[1,10,9]`},                // not source: default
		{"reduceSort", `[10,9,1]`, `"function(a,b){throw 1}"`, `[1,10,9]`}, // throws: default
		{"reduceSort", `[10,9,1]`, `"42"`, `[1,10,9]`},                     // not a function: default
		{"reduceNumericSort", `[10,9,1,-5]`, ``, `[-5,1,9,10]`},
		{"reduceLimit", `[1,2,3,4]`, `2`, `[1]`}, // n - 1 items
		{"reduceLimit", `[1,2,3,4]`, `3`, `[1,2]`},
		{"reduceLimit", `[1]`, `2`, `[1]`},
		{"reduceLimit", `[1,2,3]`, `0`, `[1,2]`}, // slice(0, -1)
		{"reduceLimit", `[1,2,3]`, ``, `[]`},     // "none" - 1 is NaN
		{"reduceSlice", `[1,2,3,4]`, `[1,3]`, `[2,3]`},
		{"reduceSlice", `[1,2,3]`, `[1,3]`, `[2,3]`},   // end == length: sliced
		{"reduceSlice", `[1,2,3]`, `[1,4]`, `[1,2,3]`}, // end > length: all, unchanged
		{"reduceSlice", `[1,2,3]`, `[0,0]`, `[]`},
		{"filterNotFound", `[1,{"not_found":{"bucket":"b"}},{"a":1},null,"x"]`, ``, `[1,{"a":1},null,"x"]`},
		{"filterNotFound", `[{"not_found":null},{"not_found":false}]`, ``, `[]`},
	} {
		for _, ns := range []string{"Riak.", "Store."} {
			got, err := namedReduce(t, r, ns+c.name).Reduce(ctx, rawList(t, c.values), json.RawMessage(c.arg))
			if err != nil {
				t.Errorf("%s%s(%s, %s): %v", ns, c.name, c.values, c.arg, err)
				continue
			}
			if s := joined(t, got); s != c.want {
				t.Errorf("%s%s(%s, %s) = %s, want %s", ns, c.name, c.values, c.arg, s, c.want)
			}
		}
	}
}

// TestBuiltinMap checks the map-shaped built-ins on stored objects and missing inputs.
func TestBuiltinMap(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{Dialect: "riak"})
	ctx := context.Background()
	notFound := hooks.MapInput{NotFound: &hooks.Place{Type: core.DefaultType, Bucket: "b", Key: "gone"}}
	typedNotFound := hooks.MapInput{NotFound: &hooks.Place{Type: "t", Bucket: "b", Key: "gone"}, KeyData: json.RawMessage(`{"kd":1}`)}
	jsonObj := hooks.MapInput{Object: object("b", "k", "application/json", `{"a":1,"b":"x","n":[1,2]}`)}
	for _, c := range []struct {
		name string
		in   hooks.MapInput
		arg  string
		want string
	}{
		{"mapValues", jsonObj, ``, `["{\"a\":1,\"b\":\"x\",\"n\":[1,2]}"]`},
		{"mapValues", hooks.MapInput{Object: object("b", "k", "text/plain", "plain text")}, ``, `["plain text"]`},
		{"mapValues", notFound, ``, `[{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}}]`},
		{"mapValues", typedNotFound, ``, `[{"not_found":{"bucket":"b","key":"gone","keydata":{"kd":1},"bucket_type":"t"}}]`},
		{"mapValuesJson", jsonObj, ``, `[{"a":1,"b":"x","n":[1,2]}]`},
		{"mapValuesJson", notFound, ``, `[{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}}]`},
		{"mapByFields", jsonObj, `{"a":1}`, `[{"a":1,"b":"x","n":[1,2]}]`},
		{"mapByFields", jsonObj, `{"a":"1","b":"x"}`, `[{"a":1,"b":"x","n":[1,2]}]`}, // loose ==
		{"mapByFields", jsonObj, `{"n":"1,2"}`, `[{"a":1,"b":"x","n":[1,2]}]`},       // [1,2] == "1,2"
		{"mapByFields", jsonObj, `{"a":2}`, `[]`},
		{"mapByFields", jsonObj, `{"missing":null}`, `[{"a":1,"b":"x","n":[1,2]}]`}, // undefined == null
		{"mapByFields", jsonObj, `{}`, `[{"a":1,"b":"x","n":[1,2]}]`},
		{"mapByFields", notFound, `{"a":1}`, `[]`},
	} {
		in := c.in
		if c.arg != "" {
			in.Arg = json.RawMessage(c.arg)
		}
		for _, ns := range []string{"Riak.", "Store."} {
			got, err := namedMap(t, r, ns+c.name).Map(ctx, in)
			if err != nil {
				t.Errorf("%s%s(%s): %v", ns, c.name, c.arg, err)
				continue
			}
			if s := joined(t, got); s != c.want {
				t.Errorf("%s%s(%s) = %s, want %s", ns, c.name, c.arg, s, c.want)
			}
		}
	}

	// mapValuesJson throws on a value that is not JSON (and so on an empty tombstone).
	_, err := namedMap(t, r, "Riak.mapValuesJson").Map(ctx, hooks.MapInput{Object: object("b", "k", "text/plain", "not json")})
	callErr(t, err, hooks.Failed, "SyntaxError")
	tomb := object("b", "k", "text/plain", "")
	tomb.Siblings[0].Deleted = true
	_, err = namedMap(t, r, "Riak.mapValuesJson").Map(ctx, hooks.MapInput{Object: tomb})
	callErr(t, err, hooks.Failed, "SyntaxError")
	got, err := namedMap(t, r, "Riak.mapValues").Map(ctx, hooks.MapInput{Object: tomb})
	if err != nil || joined(t, got) != `[""]` {
		t.Errorf("mapValues of a tombstone = %s, %v", joined(t, got), err)
	}
}

// TestBuiltinQuirks checks what cannot be reached through stored objects: array data,
// getClassName, and that mapByFields/mapValues ignore other members.
func TestBuiltinQuirks(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Config{})
	ctx := context.Background()
	for _, c := range []struct{ src, want string }{
		{`function(v) { return Riak.mapValues({values: [{data: [1, 2]}]}); }`, `[1,2]`},
		{`function(v) { return Riak.mapValues({values: [{data: "s"}, {data: "t"}]}); }`, `["s"]`},
		{`function(v) { return Riak.mapValuesJson({values: [{data: ["1", "[2]"]}]}); }`, `[1,[2]]`},
		{`function(v) { return Riak.mapValues({not_found: {key: "k"}, values: 1}); }`, `[{"not_found":{"key":"k"},"values":1}]`},
		{`function(v) {
			function Foo() {}
			class Bar {}
			return [Riak.getClassName([]), Riak.getClassName({}), Riak.getClassName("s"),
				Riak.getClassName(new Foo()), Riak.getClassName(new Bar()), Riak.getClassName(1),
				Riak.getClassName(null) === undefined, Riak.getClassName(0) === undefined,
				Riak.getClassName(Object.create(null)) === undefined];
		}`, `["Array","Object","String","Foo","Bar","Number",true,true,true]`},
		{`function(v) { return [Store === Riak, typeof ejsLog, typeof JSON.parse]; }`, `[true,"function","function"]`},
	} {
		got, err := sourceMap(t, r, c.src).Map(ctx, hooks.MapInput{Object: object("b", "k", "text/plain", "x")})
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if s := joined(t, got); s != c.want {
			t.Errorf("%s = %s, want %s", c.src, s, c.want)
		}
	}
}

// TestValueShape checks the object, keyData and arg a map function sees.
func TestValueShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, dialect := range []string{"riak", "store"} {
		r := newRuntime(t, Config{Dialect: dialect})
		m := sourceMap(t, r, `function(v, kd, arg) { return [v, kd, arg]; }`)
		obj := object("b", "k", "application/json", `{"a":1}`)
		obj.Siblings[0].Links = []core.Link{{Bucket: "b2", Key: "k2", Tag: "t"}}
		got, err := m.Map(ctx, hooks.MapInput{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		p := "X-Store-"
		if dialect == "riak" {
			p = "X-Riak-"
		}
		want := `[{"bucket_type":"default","bucket":"b","key":"k","vclock":"Y2xvY2s=","values":[{"metadata":{"content-type":"application/json","` +
			p + `VTag":"vt1","` + p + `Last-Modified":"Mon, 06 May 2024 07:08:09 GMT","` + p + `Meta":{"` + p + `Meta-Color":"blue"},` +
			`"index":{"age_int":42},"Links":[["b2","k2","t"]]},"data":"{\"a\":1}"}]},"undefined","none"]`
		if s := joined(t, got); s != want {
			t.Errorf("%s: value, keyData, arg =\n%s\nwant\n%s", dialect, s, want)
		}
		got, err = m.Map(ctx, hooks.MapInput{Object: obj, KeyData: json.RawMessage(`{"x":[1]}`), Arg: json.RawMessage(`null`)})
		if err != nil {
			t.Fatal(err)
		}
		if s := joined(t, got); !strings.HasSuffix(s, `,{"x":[1]},null]`) {
			t.Errorf("%s: with keyData and a null arg: %s", dialect, s)
		}
	}
}
