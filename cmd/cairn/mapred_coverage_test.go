package main

// End-to-end coverage of every key filter and every JavaScript built-in through
// POST /mapred, each against a golden result worked out by hand from the reference's
// semantics (kv-http-details §9.5 and §9.6).

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// kfKeys are the keys of the key-filter bucket, in byte order. They are chosen so that
// each filter keeps some and drops others: integers with a sign and leading zeros, a
// float, upper and lower case, percent and plus encodings, several tokens.
var kfKeys = []string{"-5", "007", "12", "3.5", "7", "USER-7", "a%20b", "a+b", "user-001-alpha", "user-042-beta", "zeta"}

// kfResult is the answer of a job listing the keys given, as [bucket, key] pairs
// sorted by key.
func kfResult(bucket string, keys ...string) string {
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{bucket, k}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// kfExcept returns the keys of kfKeys other than those given, in order.
func kfExcept(drop ...string) []string {
	var out []string
	for _, k := range kfKeys {
		if !slices.Contains(drop, k) {
			out = append(out, k)
		}
	}
	return out
}

func TestMapredEveryKeyFilter(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const bucket = "kfall"
	for _, k := range kfKeys {
		s.mustPut(t, "/buckets/"+bucket+"/keys/"+pathEscape(k), "v", "Content-Type", "text/plain")
	}
	// A key of another bucket, which the filters of "user" keys would pass: it must
	// never appear.
	s.mustPut(t, "/buckets/kfother/keys/user-001-alpha", "v")
	// reduce_identity lists the [bucket, key] of each input (in an order of its own),
	// reduce_sort puts them in key order.
	job := func(filters string) string {
		return mr(`{"bucket":"`+bucket+`","key_filters":`+filters+`}`,
			erl("reduce", "reduce_identity", `,"keep":false`), erl("reduce", "reduce_sort"))
	}
	for _, tc := range []struct {
		name, filters string
		want          []string
	}{
		// Transforms, each followed by a predicate. A key a transform cannot read is dropped.
		{"string_to_int", `[["string_to_int"],["less_than",10]]`, []string{"-5", "007", "7"}},
		{"string_to_int drops non-integers", `[["string_to_int"],["neq",0]]`, []string{"-5", "007", "12", "7"}},
		{"int_to_string", `[["string_to_int"],["int_to_string"],["eq","7"]]`, []string{"007", "7"}},
		{"int_to_string of a string", `[["int_to_string"],["eq","12"]]`, nil},
		{"string_to_float", `[["string_to_float"],["less_than",100]]`, []string{"3.5"}},
		{"string_to_float exact", `[["string_to_float"],["eq",3.5]]`, []string{"3.5"}},
		{"float_to_string", `[["string_to_float"],["float_to_string"],["eq","3.50000000000000000000e+00"]]`, []string{"3.5"}},
		{"float_to_string of a string", `[["float_to_string"],["eq","3.5"]]`, nil},
		{"to_upper", `[["to_upper"],["starts_with","USER-"]]`, []string{"USER-7", "user-001-alpha", "user-042-beta"}},
		{"to_upper eq", `[["to_upper"],["eq","ZETA"]]`, []string{"zeta"}},
		{"to_lower", `[["to_lower"],["eq","user-7"]]`, []string{"USER-7"}},
		{"tokenize", `[["tokenize","-",2],["eq","001"]]`, []string{"user-001-alpha"}},
		{"tokenize skips empty tokens", `[["tokenize","-",1],["eq","5"]]`, []string{"-5"}},
		{"tokenize several separators", `[["tokenize","-.",2],["eq","5"]]`, []string{"3.5"}},
		{"tokenize past the last token", `[["tokenize","-",3],["eq",""]]`, kfExcept("user-001-alpha", "user-042-beta")},
		{"tokenize string_to_int less_than", `[["tokenize","-",2],["string_to_int"],["less_than",50]]`, []string{"USER-7", "user-001-alpha", "user-042-beta"}},
		{"urldecode", `[["urldecode"],["eq","a b"]]`, []string{"a%20b", "a+b"}},
		// Comparisons: strings bytewise, and every string is above every number.
		{"greater_than", `[["greater_than","user"]]`, []string{"user-001-alpha", "user-042-beta", "zeta"}},
		{"greater_than a number", `[["greater_than",5]]`, kfKeys},
		{"less_than", `[["less_than","3.5"]]`, []string{"-5", "007", "12"}},
		{"less_than a number", `[["less_than",1000000]]`, nil},
		{"less_than integers", `[["string_to_int"],["less_than",12]]`, []string{"-5", "007", "7"}},
		{"greater_than_eq", `[["string_to_int"],["greater_than_eq",7]]`, []string{"007", "12", "7"}},
		{"greater_than_eq string", `[["greater_than_eq","user-042-beta"]]`, []string{"user-042-beta", "zeta"}},
		{"less_than_eq", `[["less_than_eq","3.5"]]`, []string{"-5", "007", "12", "3.5"}},
		{"between", `[["string_to_int"],["between",7,12]]`, []string{"007", "12", "7"}},
		{"between inclusive", `[["string_to_int"],["between",-5,12,true]]`, []string{"-5", "007", "12", "7"}},
		{"between exclusive", `[["string_to_int"],["between",-5,12,false]]`, []string{"007", "7"}},
		{"between strings exclusive", `[["between","a","user-042-beta",false]]`, []string{"a%20b", "a+b", "user-001-alpha"}},
		{"matches", `[["matches","^user-[0-9]+-"]]`, []string{"user-001-alpha", "user-042-beta"}},
		{"matches anywhere", `[["matches","[0-9]{3}"]]`, []string{"007", "user-001-alpha", "user-042-beta"}},
		{"eq", `[["eq","12"]]`, []string{"12"}},
		{"eq is type-exact", `[["eq",12]]`, nil},
		{"eq integer", `[["string_to_int"],["eq",7]]`, []string{"007", "7"}},
		{"neq", `[["neq","zeta"]]`, kfExcept("zeta")},
		{"neq integer", `[["string_to_int"],["neq",7]]`, []string{"-5", "12"}},
		{"set_member", `[["set_member","12","zeta","nope"]]`, []string{"12", "zeta"}},
		{"set_member stringified", `[["string_to_int"],["set_member",7,"12"]]`, []string{"007", "12", "7"}},
		{"similar_to", `[["similar_to","a b",1]]`, []string{"a+b"}},
		{"similar_to wider", `[["similar_to","a b",3]]`, []string{"-5", "007", "12", "3.5", "7", "a%20b", "a+b"}},
		{"similar_to float distance", `[["similar_to","USER-8",1.5]]`, []string{"USER-7"}},
		{"starts_with", `[["starts_with","user-"]]`, []string{"user-001-alpha", "user-042-beta"}},
		{"ends_with", `[["ends_with","a"]]`, []string{"user-001-alpha", "user-042-beta", "zeta"}},
		// Logical filters; a key a transform cannot read is dropped even inside them.
		{"and", `[["and",[["starts_with","user"]],[["ends_with","beta"]]]]`, []string{"user-042-beta"}},
		{"and three lists", `[["and",[["tokenize","-",1],["eq","user"]],[["matches","a$"]],[["not",[["ends_with","ta"]]]]]]`, []string{"user-001-alpha"}},
		{"and with a transform", `[["and",[["string_to_int"],["greater_than",0]],[["ends_with","7"]]]]`, []string{"007", "7"}},
		{"or", `[["or",[["eq","zeta"]],[["string_to_int"],["greater_than",10]]]]`, []string{"12", "zeta"}},
		{"or drops a key a transform cannot read", `[["or",[["string_to_int"],["greater_than",10]],[["eq","zeta"]]]]`, []string{"12"}},
		{"not", `[["not",[["starts_with","user"]]]]`, kfExcept("user-001-alpha", "user-042-beta")},
		{"not drops a key a transform cannot read", `[["not",[["string_to_int"],["less_than",10]]]]`, []string{"12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mapredOK(t, s, job(tc.filters), kfResult(bucket, tc.want...))
		})
	}
	// Invalid filters: 400 text naming the problem.
	const inputs = "An error occurred parsing the \"inputs\" field.\n"
	for _, tc := range []struct{ name, filters, want string }{
		{"unknown", `[["nope"]]`, inputs + "unknown key filter \"nope\" ({bad_filter,<<\"nope\">>})\n"},
		{"sounds_like", `[["sounds_like","x"]]`, inputs + "key filter \"sounds_like\" is not implemented\n"},
		{"unknown nested", `[["not",[["eq","x"],["bogus"]]]]`, inputs + "unknown key filter \"bogus\" ({bad_filter,<<\"bogus\">>})\n"},
	} {
		t.Run("invalid "+tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.mapred(t, job(tc.filters))
			expect(t, r, 400, &tc.want)
			expectHeader(t, r, "Content-Type", "text/plain")
		})
	}
}

func TestMapredEveryJSBuiltin(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	requireJS(t, s)
	const b = "jsall"
	for k, v := range map[string]string{
		"n3": `3`, "n10": `10`, "nm2": `-2`, "f75": `7.5`, "str": `"hi"`, "arr": `[1,2,3]`,
		"o1": `{"name":"ann","age":30,"team":"red"}`,
		"o2": `{"name":"bob","age":"25","team":"blue"}`,
		"o3": `{"name":"cy","age":25,"team":"red"}`,
	} {
		putJSON(t, s, "/buckets/"+b+"/keys/"+k, v)
	}
	s.mustPut(t, "/buckets/"+b+"/keys/text", "plain text", "Content-Type", "text/plain")
	keys := func(ks ...string) string {
		in := make([]string, len(ks))
		for i, k := range ks {
			in[i] = `["` + b + `","` + k + `"]`
		}
		return "[" + strings.Join(in, ",") + "]"
	}
	// X is replaced by Riak and by Store.
	named := func(kind, fun string, arg ...string) string {
		extra := ""
		if len(arg) > 0 {
			extra = `,"arg":` + arg[0]
		}
		return js(kind, `"name":"X.`+fun+`"`, extra)
	}
	mapJSON := named("map", "mapValuesJson")
	numbers := keys("n3", "n10", "nm2", "f75")
	notFound := func(k, kd string) string {
		return `{"not_found":{"bucket":"` + b + `","key":"` + k + `","keydata":` + kd + `}}`
	}
	o1 := `{"name":"ann","age":30,"team":"red"}`
	o2 := `{"name":"bob","age":"25","team":"blue"}`
	o3 := `{"name":"cy","age":25,"team":"red"}`
	for _, tc := range []struct{ name, body, want string }{
		{"getClassName", mr(keys("o1"), js("map", `"source":"function(v){ return [X.getClassName(v), X.getClassName(JSON.parse(v.values[0].data)), X.getClassName([]), X.getClassName('s'), X.getClassName(null), X.getClassName(Object.create(null))]; }"`)),
			`["Object","Object","Array","String",null,null]`},
		{"mapValues", mr(keys("n3", "text", "arr", "str"), named("map", "mapValues")), `["3","plain text","[1,2,3]","\"hi\""]`},
		{"mapValues not found", mr(`[["`+b+`","nope"],["`+b+`","n3"]]`, named("map", "mapValues")), `[` + notFound("nope", `"undefined"`) + `,"3"]`},
		{"mapValuesJson", mr(keys("n3", "o1", "arr", "str"), mapJSON), `[3,` + o1 + `,[1,2,3],"hi"]`},
		{"mapValuesJson not found", mr(`[["`+b+`","n3"],["`+b+`","nope"],["`+b+`","gone","kd"]]`, mapJSON),
			`[3,` + notFound("nope", `"undefined"`) + `,` + notFound("gone", `"kd"`) + `]`},
		{"mapByFields", mr(keys("o1", "o2", "o3"), named("map", "mapByFields", `{"team":"red"}`)), `[` + o1 + `,` + o3 + `]`},
		{"mapByFields loose equality", mr(keys("o1", "o2", "o3"), named("map", "mapByFields", `{"age":25}`)), `[` + o2 + `,` + o3 + `]`},
		{"mapByFields every field", mr(keys("o1", "o2", "o3"), named("map", "mapByFields", `{"team":"red","age":"30"}`)), `[` + o1 + `]`},
		{"mapByFields not found", mr(`[["`+b+`","o1"],["`+b+`","nope"]]`, named("map", "mapByFields", `{"team":"red"}`)), `[` + o1 + `,` + notFound("nope", `"undefined"`) + `]`},
		{"filterNotFound", mr(`[["`+b+`","n3"],["`+b+`","nope"],["`+b+`","n10"]]`, mapJSON, named("reduce", "filterNotFound")), `[3,10]`},
		{"reduceSum", mr(numbers, mapJSON, named("reduce", "reduceSum")), `[18.5]`},
		{"reduceSum skips not found", mr(`[["`+b+`","n3"],["`+b+`","nope"],["`+b+`","n10"]]`, mapJSON, named("reduce", "reduceSum")), `[13]`},
		{"reduceSum concatenates strings", mr(keys("str", "n3"), mapJSON, named("reduce", "reduceSum")), `["hi3"]`},
		{"reduceSum of nothing", mr(`[["`+b+`","nope"]]`, mapJSON, named("reduce", "reduceSum")), `[0]`},
		{"reduceMin", mr(numbers, mapJSON, named("reduce", "reduceMin")), `[-2]`},
		{"reduceMin of nothing", mr(numbers, js("map", `"source":"function(){ return []; }"`), named("reduce", "reduceMin")), `[]`},
		{"reduceMax", mr(numbers, mapJSON, named("reduce", "reduceMax")), `[10]`},
		{"reduceMax of nothing", mr(numbers, js("map", `"source":"function(){ return []; }"`), named("reduce", "reduceMax")), `[]`},
		{"reduceSort default string order", mr(numbers, mapJSON, named("reduce", "reduceSort")), `[-2,10,3,7.5]`},
		{"reduceSort comparator", mr(numbers, mapJSON, named("reduce", "reduceSort", `"function(a, b) { return b - a; }"`)), `[10,7.5,3,-2]`},
		{"reduceSort bad comparator", mr(numbers, mapJSON, named("reduce", "reduceSort", `"function(a, b) {"`)), `[-2,10,3,7.5]`},
		{"reduceNumericSort", mr(numbers, mapJSON, named("reduce", "reduceNumericSort")), `[-2,3,7.5,10]`},
		{"reduceLimit keeps n-1", mr(numbers, mapJSON, named("reduce", "reduceLimit", `3`)), `[3,10]`},
		{"reduceLimit 1", mr(numbers, mapJSON, named("reduce", "reduceLimit", `1`)), `[]`},
		{"reduceSlice", mr(numbers, mapJSON, named("reduce", "reduceSlice", `[1,3]`)), `[10,-2]`},
		{"reduceSlice to the end", mr(numbers, mapJSON, named("reduce", "reduceSlice", `[1,4]`)), `[10,-2,7.5]`},
		{"reduceSlice past the end", mr(numbers, mapJSON, named("reduce", "reduceSlice", `[1,5]`)), `[3,10,-2,7.5]`},
	} {
		for _, ns := range []string{"Riak", "Store"} {
			t.Run(tc.name+" "+ns, func(t *testing.T) {
				t.Parallel()
				mapredOK(t, s, strings.ReplaceAll(tc.body, "X.", ns+"."), tc.want)
			})
		}
	}
	// mapValuesJson throws on a value that is not JSON: a 500 naming the phase and input.
	t.Run("mapValuesJson not JSON", func(t *testing.T) {
		t.Parallel()
		r := s.mapred(t, mr(keys("text"), js("map", `"name":"Riak.mapValuesJson"`)))
		expect(t, r, 500, nil)
		var pe struct {
			Phase *int   `json:"phase"`
			Error string `json:"error"`
			Input string `json:"input"`
		}
		if err := json.Unmarshal(r.Body, &pe); err != nil || pe.Phase == nil || *pe.Phase != 0 || pe.Error == "" || pe.Input != `["`+b+`","text"]` {
			t.Errorf("mapValuesJson of text: %s", r)
		}
	})
}
