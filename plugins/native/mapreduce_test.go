package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
)

// raws turns JSON texts into values.
func raws(vs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = json.RawMessage(v)
	}
	return out
}

// joined writes outputs as one JSON array text.
func joined(out []json.RawMessage) string {
	parts := make([]string, len(out))
	for i, o := range out {
		parts[i] = string(o)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func mrMap(t *testing.T, p *Provider, mod, fun string) hooks.Map {
	t.Helper()
	impl, err := p.Lookup(mod, fun, hooks.PointMap)
	if err != nil {
		t.Fatalf("Lookup(%s:%s): %v", mod, fun, err)
	}
	return impl.(hooks.Map)
}

func mrReduce(t testing.TB, p *Provider, mod, fun string) hooks.Reduce {
	t.Helper()
	impl, err := p.Lookup(mod, fun, hooks.PointReduce)
	if err != nil {
		t.Fatalf("Lookup(%s:%s): %v", mod, fun, err)
	}
	return impl.(hooks.Reduce)
}

func object(values ...string) *core.Object {
	o := &core.Object{Type: "default", Bucket: "b", Key: "k", VClock: []byte{1, 2}}
	for _, v := range values {
		o.Siblings = append(o.Siblings, core.Sibling{Value: []byte(v), ContentType: "text/plain", VTag: "v1",
			LastModified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)})
	}
	return o
}

func TestMapFunctions(t *testing.T) {
	t.Parallel()
	p := New()
	missing := &hooks.Place{Type: "default", Bucket: "b", Key: "gone"}
	typed := &hooks.Place{Type: "maps", Bucket: "b", Key: "gone"}
	tomb := object("")
	tomb.Siblings[0].Deleted = true
	tests := []struct {
		name string
		fun  string
		in   hooks.MapInput
		want string // the outputs as a JSON array; "" when an error is wanted
		err  string // a substring of the error
	}{
		{"value", "map_object_value", hooks.MapInput{Object: object("hello")}, `["hello"]`, ""},
		{"value is a string, not JSON", "map_object_value", hooks.MapInput{Object: object(`{"a":[1,2]}`)}, `["{\"a\":[1,2]}"]`, ""},
		{"value escapes as mochijson2", "map_object_value", hooks.MapInput{Object: object("h\u00e9\"\\/\b\f\n\r\t\x01\x7f\U0001F600")},
			`["h\u00e9\"\\/\b\f\n\r\t\u0001\u007f\ud83d\ude00"]`, ""},
		{"value not UTF-8", "map_object_value", hooks.MapInput{Object: object("a\xffb\xc3")}, `["a\ufffdb\ufffd"]`, ""},
		{"empty value", "map_object_value", hooks.MapInput{Object: object("")}, `[""]`, ""},
		{"siblings give the first", "map_object_value", hooks.MapInput{Object: object("one", "two")}, `["one"]`, ""},
		{"tombstone", "map_object_value", hooks.MapInput{Object: tomb}, `[""]`, ""},
		{"no siblings", "map_object_value", hooks.MapInput{Object: object()}, "", "function_clause"},
		{"arg ignored for objects", "map_object_value", hooks.MapInput{Object: object("x"), Arg: json.RawMessage(`"bogus"`)}, `["x"]`, ""},

		{"filter_notfound", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"filter_notfound"`)}, `[]`, ""},
		{"include_notfound", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"include_notfound"`)},
			`[{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}}]`, ""},
		{"include_notfound keydata", "map_object_value", hooks.MapInput{NotFound: missing, KeyData: json.RawMessage(`{"x" : [1, 2.50]}`), Arg: json.RawMessage(`"include_notfound"`)},
			`[{"not_found":{"bucket":"b","key":"gone","keydata":{"x":[1,2.5]}}}]`, ""},
		{"include_notfound typed", "map_object_value", hooks.MapInput{NotFound: typed, KeyData: json.RawMessage(`null`), Arg: json.RawMessage(`"include_notfound"`)},
			`[{"not_found":{"bucket_type":"maps","bucket":"b","key":"gone","keydata":null}}]`, ""},
		{"include_keydata", "map_object_value", hooks.MapInput{NotFound: missing, KeyData: json.RawMessage(`"kd"`), Arg: json.RawMessage(`"include_keydata"`)}, `["kd"]`, ""},
		{"include_keydata none", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"include_keydata"`)}, `["undefined"]`, ""},
		{"sub", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`{"sub":[1,"a",{"b":null}]}`)}, `[1,"a",{"b":null}]`, ""},
		{"sub empty", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`{"sub":[]}`)}, `[]`, ""},
		{"sub not a list", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`{"sub":1234}`)}, "", "must be a list, not 1234"},
		{"sub with another member", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`{"sub":[1],"x":1}`)}, "", "function_clause"},
		{"no arg", "map_object_value", hooks.MapInput{NotFound: missing}, "", "function_clause: missing object with the phase arg none"},
		{"other arg", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"other"`)}, "", `phase arg "other"`},
		{"null arg", "map_object_value", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`null`)}, "", "function_clause"},

		{"list", "map_object_value_list", hooks.MapInput{Object: object(`[1, "a", {"b" : [true, null]}, 2.50, "\u00e9"]`)}, `[1,"a",{"b":[true,null]},2.5,"\u00e9"]`, ""},
		{"list empty", "map_object_value_list", hooks.MapInput{Object: object(`[]`)}, `[]`, ""},
		{"list siblings give the first", "map_object_value_list", hooks.MapInput{Object: object(`[1]`, `[2]`)}, `[1]`, ""},
		{"list not a list", "map_object_value_list", hooks.MapInput{Object: object(`{"a":1}`)}, "", "is not a JSON list"},
		{"list not JSON", "map_object_value_list", hooks.MapInput{Object: object(`hello`)}, "", "is not a JSON list"},
		{"list null", "map_object_value_list", hooks.MapInput{Object: object(`null`)}, "", "is not a JSON list"},
		{"list filter_notfound", "map_object_value_list", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"filter_notfound"`)}, `[]`, ""},
		{"list include_notfound", "map_object_value_list", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`"include_notfound"`)},
			`[{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}}]`, ""},
		{"list sub", "map_object_value_list", hooks.MapInput{NotFound: missing, Arg: json.RawMessage(`{"sub":["x"]}`)}, `["x"]`, ""},
		{"list no arg", "map_object_value_list", hooks.MapInput{NotFound: missing}, "", "function_clause"},

		{"identity missing", "map_identity", hooks.MapInput{NotFound: missing, KeyData: json.RawMessage(`7`)},
			`[{"not_found":{"bucket":"b","key":"gone","keydata":7}}]`, ""},
	}
	for _, mod := range []string{ModMapReduce, ModMapReduceStore} {
		for _, tc := range tests {
			t.Run(mod+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				out, err := mrMap(t, p, mod, tc.fun).Map(context.Background(), tc.in)
				if tc.want == "" {
					var ce *hooks.CallError
					if !errors.As(err, &ce) || ce.Kind != hooks.Failed || ce.Module != mod || ce.Function != tc.fun {
						t.Fatalf("error %v (%T), want a Failed CallError of %s:%s", err, err, mod, tc.fun)
					}
					if !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("error %q, want it to contain %q", err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Map: %v", err)
				}
				if out == nil {
					t.Fatal("Map returned a nil list")
				}
				if got := joined(out); got != tc.want {
					t.Fatalf("Map = %s, want %s", got, tc.want)
				}
				for _, o := range out {
					if !json.Valid(o) {
						t.Fatalf("output %s is not JSON", o)
					}
				}
			})
		}
	}
}

func TestMapIdentity(t *testing.T) {
	t.Parallel()
	obj := object(`{"a":1}`)
	obj.Siblings[0].Meta = []core.MetaEntry{{Name: "Color", Value: "red"}}
	for _, dialect := range []string{"", "store", "riak", "RIAK"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			codec, err := hookjson.NewCodec(dialect)
			if err != nil {
				t.Fatal(err)
			}
			p := New(Options{Dialect: dialect})
			out, err := mrMap(t, p, ModMapReduce, "map_identity").Map(context.Background(), hooks.MapInput{Object: obj, Arg: json.RawMessage(`"x"`)})
			if err != nil {
				t.Fatal(err)
			}
			want := string(codec.AppendObject(nil, obj))
			if len(out) != 1 || string(out[0]) != want {
				t.Fatalf("map_identity = %s, want [%s]", joined(out), want)
			}
			prefix := "X-Store-"
			if strings.EqualFold(dialect, "riak") {
				prefix = "X-Riak-"
			}
			for _, part := range []string{`"bucket":"b"`, `"key":"k"`, `"` + prefix + `VTag":"v1"`, `"` + prefix + `Meta-Color":"red"`, `"data":"{\"a\":1}"`} {
				if !strings.Contains(want, part) {
					t.Errorf("map_identity = %s, want it to contain %s", want, part)
				}
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Error("New with an unknown dialect did not panic")
		}
	}()
	New(Options{Dialect: "klingon"})
}

func TestReduceFunctions(t *testing.T) {
	t.Parallel()
	p := New()
	nf := `{"not_found":{"bucket":"b","key":"k","keydata":"undefined"}}`
	tests := []struct {
		fun, in string // in: a JSON array of the values
		want    string // "" when an error is wanted
		err     string
	}{
		// reduce_identity
		{"reduce_identity", `[["b","k"],["b","k2","kd"],["b","k3",null,"t"],["b","k4",{"x":1},"default"],[["t","b"],"k5"],[1,2]]`,
			`[[1,2],[["t","b"],"k5"],["b","k4"],[["t","b"],"k3"],["b","k2"],["b","k"]]`, ""},
		{"reduce_identity", `[]`, `[]`, ""},
		{"reduce_identity", `[` + nf + `]`, "", `{unhandled_entry,{"not_found":`},
		{"reduce_identity", `["b"]`, "", `{unhandled_entry,"b"}`},
		{"reduce_identity", `[[1,2,3]]`, "", "{unhandled_entry,[1,2,3]}"},
		{"reduce_identity", `[["b","k",1,2]]`, "", "unhandled_entry"},
		// reduce_set_union
		{"reduce_set_union", `[1,1.0,"a","a",{"a":1,"b":2},{"b":2,"a":1},{ "a" : 1, "b" : 2 },"\u0041","A",[1],[1],1.00,null,null]`,
			`[1,1.0,"a",{"a":1,"b":2},{"b":2,"a":1},"A",[1],null]`, ""},
		{"reduce_set_union", `["foo","foo","bar","baz"]`, `["foo","bar","baz"]`, ""},
		{"reduce_set_union", `[]`, `[]`, ""},
		// reduce_sort: the reference's examples, then term order across types.
		{"reduce_sort", `[4,2,1,3,5]`, `[1,2,3,4,5]`, ""},
		{"reduce_sort", `["this","is","a","test"]`, `["a","is","test","this"]`, ""},
		{"reduce_sort", `["b",2,true,null,false,[1],[],{"a":1},{},1.5,1,"a",[0,5],-3,{"a":0,"b":1},{"b":0},[0],"",["a"],[[]]]`,
			`[-3,1,1.5,2,false,null,true,{},{"a":0,"b":1},{"a":1},{"b":0},[],[0],[0,5],[1],[[]],["a"],"","a","b"]`, ""},
		{"reduce_sort", `[1.0,1,2,1.0e0,0.5]`, `[0.5,1.0,1,1.0,2]`, ""},
		{"reduce_sort", `[100000000000000000000,1e20,99999999999999999999,-1e300,-99999999999999999999999]`,
			`[-1.0e+300,-99999999999999999999999,99999999999999999999,100000000000000000000,1.0e+20]`, ""},
		{"reduce_sort", `["\u00e9","z","é","Z","\u0000"]`, `["\u0000","Z","z","\u00e9","\u00e9"]`, ""},
		{"reduce_sort", `[]`, `[]`, ""},
		// reduce_sum
		{"reduce_sum", `[1,2,3,4]`, `[10]`, ""},
		{"reduce_sum", `[]`, `[0]`, ""},
		{"reduce_sum", `[1,2.5]`, `[3.5]`, ""},
		{"reduce_sum", `[1,2.0]`, `[3.0]`, ""},
		{"reduce_sum", `[0.1,0.2]`, `[0.30000000000000004]`, ""},
		{"reduce_sum", `[1,` + nf + `,2]`, `[3]`, ""},
		{"reduce_sum", `[9223372036854775807,1]`, `[9223372036854775808]`, ""},
		{"reduce_sum", `[-9223372036854775808,-1,9223372036854775809]`, `[0]`, ""},
		{"reduce_sum", `[1000000.0]`, `[1.0e+6]`, ""},
		{"reduce_sum", `[1e308,1e308]`, "", "badarith"},
		{"reduce_sum", `[1,"2"]`, "", `badarith: reduce_sum cannot add "2"`},
		{"reduce_sum", `[null]`, "", "badarith"},
		{"reduce_sum", `[{"not_found":1,"x":2}]`, "", "badarith"},
		// reduce_plist_sum: the reference's examples, then JSON forms.
		{"reduce_plist_sum", `[[["a",1]],[["a",2]],[["b",1]],[["b",4]]]`, `[["a",3],["b",5]]`, ""},
		{"reduce_plist_sum", `[["a",1],["a",2],["b",1],["b",4]]`, `[["a",3],["b",5]]`, ""},
		{"reduce_plist_sum", `[]`, `[]`, ""},
		{"reduce_plist_sum", `[{"a":1,"b":2},{"a":3},[{"b":0.5}]]`, `[["a",4],["b",2.5]]`, ""},
		{"reduce_plist_sum", `[[1,1],[1.0,1],[[1],2],[[1],3],[[[["x",1]]]]]`, `[[1,1],[1.0,1],[[1],5],["x",1]]`, ""},
		{"reduce_plist_sum", `[["a","x"]]`, "", "function_clause"},
		{"reduce_plist_sum", `["a"]`, "", "function_clause"},
		{"reduce_plist_sum", `[{"a":"x"}]`, "", `badarith: reduce_plist_sum cannot add "x"`},
		// reduce_count_inputs: the reference's examples, then mixed inputs.
		{"reduce_count_inputs", `[["b1","k1"]]`, `[1]`, ""},
		{"reduce_count_inputs", `[["b1","k1"],["b2","k2"]]`, `[2]`, ""},
		{"reduce_count_inputs", `[["b1","k1"],["b2","k2"],["b3","k3"],2,4]`, `[9]`, ""},
		{"reduce_count_inputs", `[]`, `[0]`, ""},
		{"reduce_count_inputs", `[1.5,"x",3,null,` + nf + `,-1]`, `[6]`, ""},
		{"reduce_count_inputs", `[9223372036854775807,1]`, `[9223372036854775808]`, ""},
		// reduce_string_to_integer
		{"reduce_string_to_integer", `["1","2","3"]`, `[1,2,3]`, ""},
		{"reduce_string_to_integer", `["1",2,"+3","-4","007",` + nf + `,"123456789012345678901234567890"]`, `[1,2,3,-4,7,123456789012345678901234567890]`, ""},
		{"reduce_string_to_integer", `[]`, `[]`, ""},
		{"reduce_string_to_integer", `["1.5"]`, "", `badarg: reduce_string_to_integer cannot read "1.5"`},
		{"reduce_string_to_integer", `[" 1"]`, "", "badarg"},
		{"reduce_string_to_integer", `[""]`, "", "badarg"},
		{"reduce_string_to_integer", `[1.5]`, "", "function_clause"},
		{"reduce_string_to_integer", `[["1"]]`, "", "function_clause"},
	}
	for _, tc := range tests {
		t.Run(tc.fun+tc.in, func(t *testing.T) {
			t.Parallel()
			var values []json.RawMessage
			if err := json.Unmarshal([]byte(tc.in), &values); err != nil {
				t.Fatal(err)
			}
			out, err := mrReduce(t, p, ModMapReduce, tc.fun).Reduce(context.Background(), values, nil)
			if tc.want == "" {
				var ce *hooks.CallError
				if !errors.As(err, &ce) || ce.Kind != hooks.Failed || ce.Module != ModMapReduce || ce.Function != tc.fun {
					t.Fatalf("error %v, want a Failed CallError of %s:%s", err, ModMapReduce, tc.fun)
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %q, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Reduce: %v", err)
			}
			if out == nil {
				t.Fatal("Reduce returned a nil list")
			}
			if got := joined(out); got != tc.want {
				t.Fatalf("Reduce = %s\nwant            %s", got, tc.want)
			}
		})
	}
}

func TestReduceInvalidJSON(t *testing.T) {
	t.Parallel()
	p := New()
	for _, fun := range []string{"reduce_identity", "reduce_set_union", "reduce_sort", "reduce_sum", "reduce_plist_sum", "reduce_string_to_integer"} {
		for _, bad := range []string{`{`, `[1,]`, `1 2`, ``, strings.Repeat("[", 2000) + strings.Repeat("]", 2000)} {
			_, err := mrReduce(t, p, ModMapReduceStore, fun).Reduce(context.Background(), raws(bad), nil)
			if err == nil || !strings.Contains(err.Error(), "badarg: invalid JSON") {
				t.Errorf("%s(%q) error %v, want invalid JSON", fun, bad, err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mrReduce(t, p, ModMapReduce, "reduce_sum").Reduce(ctx, raws("1"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Reduce with a cancelled context: %v", err)
	}
}

// TestReReduce checks that every reduce function is re-reducible: reducing in batches
// as the engine does (batch, then previous output ++ next batch), and reducing batches
// separately and then their outputs together, give what reducing everything at once
// gives (the same list; the same elements for the functions whose order is
// unspecified).
func TestReReduce(t *testing.T) {
	t.Parallel()
	p := New()
	nf := `{"not_found":{"bucket":"b","key":"k","keydata":"undefined"}}`
	var bkeys, strs, ints, mixed, pairs, numStrs []string
	for i := range 23 {
		bkeys = append(bkeys, fmt.Sprintf(`["b","k%d"]`, i), fmt.Sprintf(`["b","kd%d",{"n":%d}]`, i, i))
		strs = append(strs, fmt.Sprintf(`"s%d"`, i%7), fmt.Sprintf(`{"i":%d}`, i%3))
		ints = append(ints, fmt.Sprint(i*1000003), nf)
		mixed = append(mixed, fmt.Sprint(i%5), fmt.Sprintf(`"%c"`, 'a'+i%4), fmt.Sprintf("%d.5", i%3), fmt.Sprintf(`[%d]`, i%2), `null`, `{"a":1}`)
		pairs = append(pairs, fmt.Sprintf(`["k%d",%d]`, i%4, i), fmt.Sprintf(`[["j",%d],["k%d",1]]`, i, i%2))
		numStrs = append(numStrs, fmt.Sprintf(`"%d"`, i-10), nf)
	}
	floats := []string{"0.1", "0.2", "0.3", "1e17", "1", "-0.3", "2.5e-3"}
	tests := []struct {
		fun       string
		values    []string
		unordered bool
		prefixOK  bool // only the engine's pattern keeps it exact (float rounding)
	}{
		{"reduce_identity", bkeys, true, false},
		{"reduce_set_union", strs, true, false},
		{"reduce_sort", mixed, false, false},
		{"reduce_sum", ints, false, false},
		{"reduce_sum", floats, false, true},
		{"reduce_plist_sum", pairs, false, false},
		{"reduce_count_inputs", bkeys, false, false},
		{"reduce_count_inputs", strs, false, false},
		{"reduce_string_to_integer", numStrs, false, false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.fun, func(t *testing.T) {
			t.Parallel()
			r := mrReduce(t, p, ModMapReduce, tc.fun)
			values := raws(tc.values...)
			reduce := func(vs []json.RawMessage) []json.RawMessage {
				out, err := r.Reduce(ctx, slices.Clone(vs), nil)
				if err != nil {
					t.Fatalf("Reduce: %v", err)
				}
				return out
			}
			norm := func(out []json.RawMessage) string {
				s := make([]string, len(out))
				for i, o := range out {
					s[i] = string(o)
				}
				if tc.unordered {
					slices.Sort(s)
				}
				return strings.Join(s, ",")
			}
			want := norm(reduce(values))
			for _, size := range []int{1, 3, 7, 20} {
				var acc []json.RawMessage
				var separate []json.RawMessage
				for lo := 0; lo < len(values); lo += size {
					batch := values[lo:min(lo+size, len(values))]
					acc = reduce(append(slices.Clone(acc), batch...))
					separate = append(separate, reduce(batch)...)
				}
				if got := norm(acc); got != want {
					t.Errorf("batches of %d, engine pattern: %s, want %s", size, got, want)
				}
				if tc.prefixOK {
					continue
				}
				if got := norm(reduce(separate)); got != want {
					t.Errorf("batches of %d reduced apart then together: %s, want %s", size, got, want)
				}
			}
		})
	}
}

// TestMapReduceClientExample is one client's job: map_object_value with
// "filter_notfound" over present and missing keys, then reduce_count_inputs.
func TestMapReduceClientExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := hooks.NewRegistry(New(Options{Dialect: "riak"}))
	m, err := reg.Map(core.HookSpec{Mod: ModMapReduce, Fun: "map_object_value"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reg.Reduce(core.HookSpec{Mod: ModMapReduce, Fun: "reduce_count_inputs"})
	if err != nil {
		t.Fatal(err)
	}
	arg := json.RawMessage(`"filter_notfound"`)
	var mapped []json.RawMessage
	for i := range 5 {
		in := hooks.MapInput{Arg: arg}
		if i%2 == 0 {
			in.Object = object(fmt.Sprint(i * 10)) // values that look like integers
		} else {
			in.NotFound = &hooks.Place{Type: "default", Bucket: "b", Key: fmt.Sprint(i)}
		}
		out, err := m.Map(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		mapped = append(mapped, out...)
	}
	out, err := r.Reduce(ctx, mapped, nil)
	if err != nil || joined(out) != "[3]" {
		t.Fatalf("count = %s, %v; want [3]", joined(out), err)
	}
	// The other client: no arg, existing keys only.
	out, err = m.Map(ctx, hooks.MapInput{Object: object("v")})
	if err != nil || joined(out) != `["v"]` {
		t.Fatalf("map_object_value = %s, %v", joined(out), err)
	}
}

func TestMapReduceLookup(t *testing.T) {
	t.Parallel()
	p := New()
	maps := []string{"map_identity", "map_object_value", "map_object_value_list"}
	reduces := []string{"reduce_identity", "reduce_set_union", "reduce_sort", "reduce_sum", "reduce_plist_sum", "reduce_count_inputs", "reduce_string_to_integer"}
	for _, mod := range []string{ModMapReduce, ModMapReduceStore} {
		if !p.HasModule(mod) {
			t.Errorf("HasModule(%q) = false", mod)
		}
		for _, f := range maps {
			if _, err := p.Lookup(mod, f, hooks.PointMap); err != nil {
				t.Errorf("Lookup(%s:%s, map): %v", mod, f, err)
			}
			if _, err := p.Lookup(mod, f, hooks.PointReduce); !errors.Is(err, hooks.ErrNoFunction) {
				t.Errorf("Lookup(%s:%s, reduce) error %v, want ErrNoFunction", mod, f, err)
			}
		}
		for _, f := range reduces {
			if _, err := p.Lookup(mod, f, hooks.PointReduce); err != nil {
				t.Errorf("Lookup(%s:%s, reduce): %v", mod, f, err)
			}
			if _, err := p.Lookup(mod, f, hooks.PointMap); !errors.Is(err, hooks.ErrNoFunction) {
				t.Errorf("Lookup(%s:%s, map) error %v, want ErrNoFunction", mod, f, err)
			}
		}
		if _, err := p.Lookup(mod, "map_nope", hooks.PointMap); !errors.Is(err, hooks.ErrNoFunction) {
			t.Errorf("Lookup(%s:map_nope) error %v", mod, err)
		}
	}
	// The built-in table is shared by every Provider and stays untouched.
	if _, ok := modules[ModMapReduce]; ok {
		t.Error("New added to the shared module table")
	}
}

func TestErlangFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		want string
	}{
		// mochinum's own test vectors.
		{0.0, "0.0"}, {1.0, "1.0"}, {-1.0, "-1.0"}, {0.1, "0.1"}, {0.01, "0.01"}, {0.001, "0.001"},
		{1000000.0, "1.0e+6"}, {0.5, "0.5"}, {4503599627370496.0, "4503599627370496.0"},
		{math.SmallestNonzeroFloat64, "5.0e-324"}, {math.Float64frombits(0x000fffffffffffff), "2.225073858507201e-308"},
		{math.Float64frombits(0x0010000000000000), "2.2250738585072014e-308"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		// Around the switches between notations.
		{100000.0, "100000.0"}, {123456.0, "123456.0"}, {1234567.0, "1234567.0"}, {1.5e6, "1500000.0"}, {1.5e7, "1.5e+7"},
		{0.000001, "0.000001"}, {0.0000012, "0.0000012"}, {1e-7, "1.0e-7"}, {1.25e-7, "1.25e-7"},
		{123.456, "123.456"}, {-0.5, "-0.5"}, {1e21, "1.0e+21"}, {12.0, "12.0"}, {0.30000000000000004, "0.30000000000000004"},
		{math.Copysign(0, -1), "0.0"},
	}
	for _, tc := range tests {
		if got := string(appendErlangFloat(nil, tc.f)); got != tc.want {
			t.Errorf("appendErlangFloat(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func BenchmarkReduceCountInputs(b *testing.B) {
	values := raws("20")
	for range 20 {
		values = append(values, json.RawMessage(`["bucket","key"]`))
	}
	r := mrReduce(b, New(), ModMapReduce, "reduce_count_inputs")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Reduce(ctx, values, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzReduceFunctions feeds arbitrary JSON values to every reduce function: none may
// panic, every output must be JSON, and the canonical encoding must be stable.
func FuzzReduceFunctions(f *testing.F) {
	for _, s := range []string{
		`[1,2.5,"a",null,true,false,[1,[2]],{"a":{"b":[]}}]`,
		`[["b","k"],["b","k","kd"],["b","k",null,"t"]]`,
		`[["a",1],[["b",2.5]],{"c":3}]`,
		`["1","-2","+3",99999999999999999999999]`,
		`[1e308,1e308,-0.0,5e-324,"\u00e9\ud83d\ude00"]`,
		`[{"not_found":{"bucket":"b","key":"k","keydata":"undefined"}}]`,
	} {
		f.Add(s)
	}
	p := New()
	funs := []string{"reduce_identity", "reduce_set_union", "reduce_sort", "reduce_sum", "reduce_plist_sum", "reduce_count_inputs", "reduce_string_to_integer"}
	f.Fuzz(func(t *testing.T, in string) {
		var values []json.RawMessage
		if json.Unmarshal([]byte(in), &values) != nil {
			return
		}
		for _, fun := range funs {
			out, err := mrReduce(t, p, ModMapReduce, fun).Reduce(context.Background(), values, nil)
			if err != nil {
				continue
			}
			for _, o := range out {
				if !json.Valid(o) {
					t.Fatalf("%s(%s) output %q is not JSON", fun, in, o)
				}
				c, err := canonical(o)
				if err != nil || string(c) != string(o) {
					t.Fatalf("%s(%s) output %s is not canonical (%s, %v)", fun, in, o, c, err)
				}
			}
		}
	})
}
