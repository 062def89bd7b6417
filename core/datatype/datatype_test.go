package datatype

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// run parses and applies each body in turn to an empty value of kind k, by actor "a".
func run(t *testing.T, k Kind, bodies ...string) Data {
	t.Helper()
	v := New(k)
	for i, b := range bodies {
		op, err := ParseOp(k, []byte(b))
		if err != nil {
			t.Fatalf("parse %s: %v", b, err)
		}
		if v, err = Apply(v, op, Writer{Actor: "a", Micros: int64(i)}); err != nil {
			t.Fatalf("apply %s: %v", b, err)
		}
	}
	return v
}

// jsonOf renders a value as the HTTP layer would.
func jsonOf(t *testing.T, v Data) string {
	t.Helper()
	b, err := json.Marshal(v.Value())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValues(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		ops  []string
		want string
	}{
		{"counter number", Counter, []string{`5`, `-2`}, `3`},
		{"counter words", Counter, []string{`"increment"`, `"increment"`, `"decrement"`}, `1`},
		{"counter objects", Counter, []string{`{"increment":10}`, `{"decrement":4}`}, `6`},
		{"empty counter", Counter, nil, `0`},
		{"set add", Set, []string{`{"add":"b"}`, `{"add_all":["c","a"]}`}, `["a","b","c"]`},
		{"set remove", Set, []string{`{"add_all":["a","b"]}`, `{"remove":"a"}`}, `["b"]`},
		{"set remove_all", Set, []string{`{"add_all":["a","b","c"]}`, `{"remove_all":["a","c"],"add":"d"}`}, `["b","d"]`},
		{"empty set", Set, nil, `[]`},
		{"gset", GSet, []string{`{"add":"z"}`, `{"add_all":["y","z"]}`}, `["y","z"]`},
		{"hll", HLL, []string{`{"add_all":["a","b","c","a"]}`}, `3`},
		{"map fields", Map, []string{
			`{"update":{"n_counter":3,"s_set":{"add":"x"},"r_register":{"assign":"v"},"f_flag":"enable"}}`,
		}, `{"f_flag":true,"n_counter":3,"r_register":"v","s_set":["x"]}`},
		{"map nested", Map, []string{
			`{"update":{"m_map":{"update":{"c_counter":"increment","in_map":{"update":{"f_flag":"enable"}}}}}}`,
		}, `{"m_map":{"c_counter":1,"in_map":{"f_flag":true}}}`},
		{"map remove", Map, []string{
			`{"update":{"a_counter":1,"b_counter":2}}`, `{"remove":["a_counter"]}`,
		}, `{"b_counter":2}`},
		{"same name two types", Map, []string{
			`{"update":{"a_counter":1,"a_set":{"add":"x"}}}`,
		}, `{"a_counter":1,"a_set":["x"]}`},
		{"flag disable stays", Map, []string{
			`{"update":{"f_flag":"enable"}}`, `{"update":{"f_flag":"disable"}}`,
		}, `{"f_flag":false}`},
		{"register last wins", Map, []string{
			`{"update":{"r_register":{"assign":"one"}}}`, `{"update":{"r_register":{"assign":"two"}}}`,
		}, `{"r_register":"two"}`},
		{"underscored name", Map, []string{`{"update":{"first_name_register":{"assign":"x"}}}`}, `{"first_name_register":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonOf(t, run(t, tt.kind, tt.ops...)); got != tt.want {
				t.Errorf("value %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		kind Kind
		body string
		want string
	}{
		{Counter, `{"increment":"x"}`, "Invalid operation on datatype 'counter': {\"increment\":\"x\"}\n"},
		{Counter, `1.5`, "Invalid operation on datatype 'counter': 1.5\n"},
		{Counter, `99999999999999999999`, "Invalid operation on datatype 'counter': 99999999999999999999\n"},
		{Counter, `{"decrement":-9223372036854775808}`, "Invalid operation on datatype 'counter': {\"decrement\":-9223372036854775808}\n"},
		{Counter, `{`, "Couldn't decode JSON: unexpected EOF\n"},
		{Counter, `1 2`, "Couldn't decode JSON: trailing data after the operation\n"},
		{Set, `{"add":1}`, "Invalid operation on datatype 'set': {\"add\":1}\n"},
		{Set, `{"frob":"x"}`, "Invalid operation on datatype 'set': {\"frob\":\"x\"}\n"},
		{Set, `{}`, "Invalid operation on datatype 'set': {}\n"},
		{Set, `{"add":"x","context":"%%%"}`, "Invalid context: not base64\n"},
		{GSet, `{"remove":"x"}`, "Invalid operation on datatype 'gset': {\"remove\":\"x\"}\n"},
		{HLL, `["x"]`, "Invalid operation on datatype 'hll': [\"x\"]\n"},
		{Map, `{"update":{"x_thing":1}}`, "Invalid map field name 'x_thing'\n"},
		{Map, `{"update":{"nounderscore":1}}`, "Invalid map field name 'nounderscore'\n"},
		{Map, `{"remove":["a_hll"]}`, "Invalid map field name 'a_hll'\n"},
		{Map, `{"update":{"f_flag":"on"}}`, "Invalid operation on datatype 'flag': \"on\"\n"},
		{Map, `{"update":{"r_register":"v"}}`, "Invalid operation on datatype 'register': \"v\"\n"},
		{Map, `{"update":{"m_map":{"update":{"s_set":{"add":"x","context":"AQA="}}}}}`, "Invalid operation on datatype 'set': {\"add\":\"x\",\"context\":\"AQA=\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := ParseOp(tt.kind, []byte(tt.body))
			var oe *OpError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v, want an OpError", err)
			}
			if oe.Msg != tt.want {
				t.Errorf("message %q, want %q", oe.Msg, tt.want)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	deep := `"enable"`
	for i := 0; i < MaxDepth+1; i++ {
		deep = `{"update":{"m_map":` + deep + `}}`
	}
	deep = `{"update":{"f_flag":"enable","m_map":` + deep + `}}`
	if _, err := ParseOp(Map, []byte(deep)); err == nil {
		t.Error("a map nested past MaxDepth parsed")
	}
	var many bytes.Buffer
	many.WriteString(`{"add_all":[`)
	for i := 0; i <= MaxOpElements; i++ {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`"x"`)
	}
	many.WriteString(`]}`)
	if _, err := ParseOp(Set, many.Bytes()); err == nil {
		t.Error("an operation with too many elements parsed")
	}
	long := `{"add":"` + string(bytes.Repeat([]byte("x"), MaxElementLen+1)) + `"}`
	if _, err := ParseOp(GSet, []byte(long)); err == nil {
		t.Error("an element longer than MaxElementLen parsed")
	}
}

func TestCounterRange(t *testing.T) {
	tests := []struct {
		name string
		ops  []string
		ok   bool
	}{
		{"max", []string{`9223372036854775807`}, true},
		{"past max", []string{`9223372036854775807`, `1`}, false},
		{"min", []string{`-9223372036854775808`}, true},
		{"past min", []string{`-9223372036854775808`, `"decrement"`}, false},
		{"back and forth", []string{`9223372036854775807`, `-9223372036854775808`, `9223372036854775807`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := New(Counter)
			var err error
			for _, b := range tt.ops {
				op, perr := ParseOp(Counter, []byte(b))
				if perr != nil {
					t.Fatal(perr)
				}
				var nv Data
				if nv, err = Apply(v, op, Writer{Actor: "a"}); err != nil {
					break
				}
				v = nv
			}
			if (err == nil) != tt.ok {
				t.Fatalf("error %v, want ok=%v", err, tt.ok)
			}
			var oe *OpError
			if err != nil && !errors.As(err, &oe) {
				t.Errorf("error %T, want *OpError", err)
			}
		})
	}
}

func TestPreconditions(t *testing.T) {
	set := run(t, Set, `{"add":"a"}`)
	m := run(t, Map, `{"update":{"c_counter":1}}`)
	ctxOf := func(v Data) string { return `"context":"` + EncodeContext(v) + `"` }
	tests := []struct {
		name string
		base Data
		body string
		want string // "" for success
	}{
		{"set remove absent", set, `{"remove":"b"}`, "Error:\n{precondition,{not_present,<<\"b\">>}}\n"},
		{"set remove absent with context", set, `{"remove":"b",` + ctxOf(set) + `}`, "Error:\n{precondition,{not_present,<<\"b\">>}}\n"},
		{"set remove unseen by empty context", set, `{"remove":"a",` + ctxOf(New(Set)) + `}`, "Error:\n{precondition,{not_present,<<\"a\">>}}\n"},
		{"set remove with context", set, `{"remove":"a",` + ctxOf(set) + `}`, ""},
		{"set remove without context", set, `{"remove":"a"}`, ""},
		{"binary element", set, `{"remove":"\u0001"}`, "Error:\n{precondition,{not_present,<<1>>}}\n"},
		{"map remove absent", m, `{"remove":["x_set"]}`, "Error:\n{precondition,{not_present,{<<\"x\">>,riak_dt_orswot}}}\n"},
		{"map remove counter", m, `{"remove":["c_counter"],` + ctxOf(m) + `}`, ""},
		{"map remove other type", m, `{"remove":["c_flag"]}`, "Error:\n{precondition,{not_present,{<<\"c\">>,riak_dt_od_flag}}}\n"},
		{"nested set remove absent", run(t, Map, `{"update":{"s_set":{"add":"a"}}}`),
			`{"update":{"s_set":{"remove":"z"}}}`, "Error:\n{precondition,{not_present,<<\"z\">>}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := ParseOp(tt.base.Kind(), []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			before := Marshal(tt.base)
			_, err = Apply(tt.base, op, Writer{Actor: "b"})
			if !bytes.Equal(before, Marshal(tt.base)) {
				t.Error("Apply changed its receiver")
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var pe *PreconditionError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a PreconditionError", err)
			}
			if pe.Body() != tt.want {
				t.Errorf("body %q, want %q", pe.Body(), tt.want)
			}
		})
	}
}

// TestAddWins: an add concurrent with a remove survives; a remove of what was seen wins
// over what was seen.
func TestAddWins(t *testing.T) {
	base := run(t, Set, `{"add":"x"}`)
	rm := applyBody(t, base, "r1", `{"remove":"x"}`)
	add := applyBody(t, base, "r2", `{"add":"x"}`)
	got := mustMerge(t, rm, add)
	if s := jsonOf(t, got); s != `["x"]` {
		t.Errorf("concurrent add and remove: %s, want [\"x\"]", s)
	}
	if s := jsonOf(t, mustMerge(t, rm, base)); s != `[]` {
		t.Errorf("remove merged with what it saw: %s, want []", s)
	}
}

// TestMapResetRemove: a field removed concurrently with an update keeps only the update's
// effects (riak_dt_map's reset-remove); a field removed with nothing concurrent is gone.
func TestMapResetRemove(t *testing.T) {
	tests := []struct {
		name, base, update, want string
	}{
		{"set", `{"update":{"s_set":{"add_all":["a","b"]}}}`, `{"update":{"s_set":{"add":"c"}}}`, `{"s_set":["c"]}`},
		{"flag", `{"update":{"f_flag":"enable"}}`, `{"update":{"f_flag":"disable"}}`, `{"f_flag":false}`},
		{"register", `{"update":{"r_register":{"assign":"old"}}}`, `{"update":{"r_register":{"assign":"new"}}}`, `{"r_register":"new"}`},
		{"nested map", `{"update":{"m_map":{"update":{"a_counter":1}}}}`, `{"update":{"m_map":{"update":{"b_counter":1}}}}`, `{"m_map":{"b_counter":1}}`},
		{"counter of another actor", `{"update":{"c_counter":5}}`, `{"update":{"c_counter":1}}`, `{"c_counter":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := run(t, Map, tt.base)
			field := ""
			for k := range base.Value().(map[string]any) {
				field = k
			}
			rm := applyBody(t, base, "r1", `{"remove":["`+field+`"]}`)
			up := applyBody(t, base, "r2", tt.update)
			if got := jsonOf(t, mustMerge(t, rm, up)); got != tt.want {
				t.Errorf("merged %s, want %s", got, tt.want)
			}
			if got := jsonOf(t, mustMerge(t, rm, base)); got != `{}` {
				t.Errorf("remove merged with what it saw: %s, want {}", got)
			}
		})
	}
}

// TestDeferredRemove: a remove whose context has seen adds this replica has not removes
// them when they arrive, and only them.
func TestDeferredRemove(t *testing.T) {
	for _, k := range []Kind{Set, Map} {
		t.Run(k.String(), func(t *testing.T) {
			add, other := `{"add":"x"}`, `{"add":"y"}`
			rmBody := `{"remove":"x","context":"%s"}`
			if k == Map {
				add, other = `{"update":{"x_flag":"enable"}}`, `{"update":{"y_flag":"enable"}}`
				rmBody = `{"remove":["x_flag"],"context":"%s"}`
			}
			seen := applyBody(t, New(k), "r1", add)
			later := applyBody(t, seen, "r1", other) // not seen by the context
			lagging := applyBody(t, New(k), "r3", other)
			rm := applyBody(t, lagging, "r3", sprintf(rmBody, EncodeContext(seen)))
			got := mustMerge(t, rm, later)
			want := jsonOf(t, applyBody(t, later, "r1", sprintf(rmBody, EncodeContext(seen))))
			if merged := jsonOf(t, mustMerge(t, got, lagging)); merged != want {
				t.Errorf("deferred remove: %s, want %s", merged, want)
			}
		})
	}
}

func TestHLLEstimate(t *testing.T) {
	for _, n := range []int{0, 1, 100, 10000, 200000} {
		h := New(HLL).(*hll)
		for i := 0; i < n; i++ {
			h.add("element-" + itoa(i))
		}
		got := float64(h.Value().(uint64))
		if diff := got - float64(n); diff > 0.03*float64(n)+1 || -diff > 0.03*float64(n)+1 {
			t.Errorf("estimate of %d distinct: %.0f", n, got)
		}
		back, err := Unmarshal(Marshal(h))
		if err != nil || !reflect.DeepEqual(back.Value(), h.Value()) {
			t.Errorf("round trip of %d: %v", n, err)
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	good := Marshal(run(t, Map, `{"update":{"s_set":{"add":"x"},"c_counter":1}}`))
	tests := map[string][]byte{
		"empty":           nil,
		"version":         append([]byte{2}, good[1:]...),
		"kind":            {1, 99},
		"truncated":       good[:len(good)-1],
		"trailing":        append(append([]byte{}, good...), 0),
		"huge count":      {1, byte(Set), 0xff, 0xff, 0xff, 0xff, 0x0f},
		"overlong varint": {1, byte(Counter), 0x80, 0x00},
	}
	for name, b := range tests {
		if _, err := Unmarshal(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v, want ErrMalformed", name, err)
		}
	}
}

func TestBucketKind(t *testing.T) {
	for _, s := range []string{"counter", "set", "map", "hll", "gset"} {
		if k, ok := BucketKind(s); !ok || k.String() != s {
			t.Errorf("BucketKind(%q) = %v, %v", s, k, ok)
		}
	}
	for _, s := range []string{"", "flag", "register", "Map", "lww"} {
		if _, ok := BucketKind(s); ok {
			t.Errorf("BucketKind(%q) accepted", s)
		}
	}
}

// applyBody parses body for v's kind and applies it by actor.
func applyBody(t *testing.T, v Data, actor, body string) Data {
	t.Helper()
	op, err := ParseOp(v.Kind(), []byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	out, err := Apply(v, op, Writer{Actor: actor, Micros: 1})
	if err != nil {
		t.Fatalf("apply %s: %v", body, err)
	}
	return out
}

func mustMerge(t *testing.T, a, b Data) Data {
	t.Helper()
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseOpTokenBound: a body of many tiny values is refused before it is decoded,
// and an invalid operation's echo in the error is bounded.
func TestParseOpTokenBound(t *testing.T) {
	body := "[" + strings.Repeat("0,", maxOpTokens) + "0]"
	_, err := ParseOp(Set, []byte(body))
	var oe *OpError
	if !errors.As(err, &oe) || !strings.Contains(oe.Msg, "at most") {
		t.Fatalf("a body of %d tokens: %v", maxOpTokens+2, err)
	}
	big := `{"nonsense":"` + strings.Repeat("x", 10000) + `"}`
	_, err = ParseOp(Counter, []byte(big))
	if !errors.As(err, &oe) || len(oe.Msg) > maxEchoed+200 {
		t.Fatalf("an invalid operation's error is %d bytes: %v", len(oe.Msg), err)
	}
}
