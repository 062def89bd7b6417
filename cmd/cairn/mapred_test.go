package main

// End-to-end tests of MapReduce: POST /mapred against the real binary, with every input
// form, the native built-ins, JavaScript and WebAssembly phases, link phases, kept
// phases, chunked output and the three error classes.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var jsonCT = hdr{"Content-Type", "application/json"}

// mapred posts a job.
func (s *child) mapred(t testing.TB, body string) *resp {
	t.Helper()
	return s.do(t, http.MethodPost, "/mapred", jsonCT, body)
}

// mapredOK posts a job and requires 200 application/json with exactly want.
func mapredOK(t testing.TB, s *child, body, want string) {
	t.Helper()
	r := s.mapred(t, body)
	expect(t, r, 200, &want)
	expectHeader(t, r, "Content-Type", "application/json")
}

// mr builds a job body from inputs and phases.
func mr(inputs string, phases ...string) string {
	return `{"inputs":` + inputs + `,"query":[` + strings.Join(phases, ",") + `]}`
}

// erl is a phase of a riak_kv_mapreduce built-in; extra is more members (",\"arg\":...").
func erl(kind, fun string, extra ...string) string {
	return `{"` + kind + `":{"language":"erlang","module":"riak_kv_mapreduce","function":"` + fun + `"` + strings.Join(extra, "") + `}}`
}

// js is a JavaScript phase whose function is given by spec ("\"name\":\"Riak.x\"").
func js(kind, spec string, extra ...string) string {
	return `{"` + kind + `":{"language":"javascript",` + spec + strings.Join(extra, "") + `}}`
}

const mapValue = `{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_object_value"}}`

// putJSON stores a JSON value.
func putJSON(t testing.TB, s *child, path, value string, h ...string) {
	t.Helper()
	s.mustPut(t, path, value, append([]string{"Content-Type", "application/json"}, h...)...)
}

func TestMapredInputs(t *testing.T) {
	t.Parallel()
	s := startServerWithTypes(t, map[string]string{e2eType: e2eTypeProps})
	for i, k := range []string{"1-a", "12-b", "49-c", "50-d", "77-e", "x-f"} {
		putJSON(t, s, "/buckets/mri/keys/"+k, itoa(i+1), "X-Store-Index-Score_int", itoa(10*(i+1)), "X-Riak-Index-Tag_bin", "t"+itoa(i%2))
	}
	putJSON(t, s, "/types/"+e2eType+"/buckets/mri/keys/typed", "100", "X-Store-Index-Score_int", "5")
	putJSON(t, s, "/buckets/other/keys/o", "1000")
	sum := erl("reduce", "reduce_sum")
	toInt := erl("reduce", "reduce_string_to_integer")
	for _, tc := range []struct{ name, body, want string }{
		{"bucket", mr(`"mri"`, mapValue, toInt, sum), `[21]`},
		{"bucket values in key order", mr(`"mri"`, mapValue), `["1","2","3","4","5","6"]`},
		{"typed bucket", mr(`["`+e2eType+`","mri"]`, mapValue), `["100"]`},
		{"key list", mr(`[["mri","77-e"],["other","o"],["mri","1-a"]]`, mapValue), `["5","1000","1"]`},
		{"key list with key data", mr(`[["mri","nope","kd-1"],["mri","1-a",{"x":[1]}],["mri","gone",{"y":2}]]`,
			erl("map", "map_object_value", `,"arg":"include_keydata"`)), `["kd-1","1",{"y":2}]`},
		{"typed key list", mr(`[["mri","typed",null,"`+e2eType+`"],["mri","1-a"]]`, mapValue), `["100","1"]`},
		{"typed key list not found", mr(`[["mri","1-a","kd","`+e2eType+`"]]`, erl("map", "map_object_value", `,"arg":"include_notfound"`)),
			`[{"not_found":{"bucket_type":"` + e2eType + `","bucket":"mri","key":"1-a","keydata":"kd"}}]`},
		{"key filter tokenize string_to_int less_than", mr(`{"bucket":"mri","key_filters":[["tokenize","-",1],["string_to_int"],["less_than",50]]}`, mapValue),
			`["1","2","3"]`},
		{"key filter and", mr(`{"bucket":"mri","key_filters":[["and",[["starts_with","1"]],[["ends_with","b"]]]]}`, mapValue), `["2"]`},
		{"key filter or", mr(`{"bucket":"mri","key_filters":[["or",[["ends_with","a"]],[["ends_with","f"]]]]}`, mapValue), `["1","6"]`},
		{"key filter not", mr(`{"bucket":"mri","key_filters":[["not",[["matches","^[0-9]"]]]]}`, mapValue), `["6"]`},
		{"typed key filter", mr(`{"bucket":["`+e2eType+`","mri"],"key_filters":[["eq","typed"]]}`, mapValue), `["100"]`},
		{"2i exact", mr(`{"bucket":"mri","index":"tag_bin","key":"t1"}`, mapValue), `["2","4","6"]`},
		{"2i range numbers", mr(`{"bucket":"mri","index":"score_int","start":20,"end":40}`, mapValue), `["2","3","4"]`},
		{"2i range strings", mr(`{"bucket":"mri","index":"score_int","start":"50","end":"1000"}`, mapValue), `["5","6"]`},
		{"2i $key", mr(`{"bucket":"mri","index":"$key","start":"4","end":"6"}`, mapValue), `["3","4"]`},
		{"2i typed", mr(`{"bucket":["`+e2eType+`","mri"],"index":"score_int","key":5}`, mapValue), `["100"]`},
	} {
		t.Run(tc.name, func(t *testing.T) { mapredOK(t, s, tc.body, tc.want) })
	}
	// A bucket type that does not exist.
	r := s.mapred(t, mr(`["nosuchtype","mri"]`, mapValue))
	expect(t, r, 400, ptr("An error occurred parsing the \"inputs\" field.\nUnknown bucket type: nosuchtype\n"))
	// The trailing slash one client uses.
	r = s.do(t, http.MethodPost, "/mapred/", jsonCT, mr(`[["other","o"]]`, mapValue))
	expect(t, r, 200, ptr(`["1000"]`))
}

func TestMapredEmptyQuery(t *testing.T) {
	t.Parallel()
	s := startServerWithTypes(t, map[string]string{e2eType: e2eTypeProps})
	s.mustPut(t, "/buckets/mre/keys/k1", "v")
	s.mustPut(t, "/types/"+e2eType+"/buckets/mre/keys/k2", "v")
	mapredOK(t, s, mr(`[["b","k"],["b","k2","kd"],["b","k3",null],["b","k4","kd","t"],["b","k5",{"a":1}]]`),
		`[["b","k"],["b","k2","kd"],["b","k3"],["b","k4","kd","t"],["b","k5",{"a":1}]]`)
	mapredOK(t, s, mr(`"mre"`), `[["mre","k1"]]`)
	mapredOK(t, s, mr(`["`+e2eType+`","mre"]`), `[["mre","k2",null,"`+e2eType+`"]]`)
}

func TestMapredBuiltins(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		putJSON(t, s, "/buckets/mrb/keys/a", `3`)
		putJSON(t, s, "/buckets/mrb/keys/b", `4`)
		putJSON(t, s, "/buckets/mrb/keys/list", `[1,"x",{"y":2}]`)
		putJSON(t, s, "/buckets/mrb/keys/plist", `[["a",1],["b",2],["a",5]]`)
		putJSON(t, s, "/buckets/mrb/keys/mixed", `["b",3,[1],{"y":2},"a",1]`)
		s.mustPut(t, "/buckets/mrb/keys/text", "hello", "Content-Type", "text/plain", d.hdr+"Meta-Colour", "red")
		ab := `[["mrb","a"],["mrb","b"]]`
		for _, tc := range []struct{ name, body, want string }{
			{"map_object_value", mr(ab, mapValue), `["3","4"]`},
			{"map_object_value filter_notfound", mr(`[["mrb","a"],["mrb","nope"]]`, erl("map", "map_object_value", `,"arg":"filter_notfound"`)), `["3"]`},
			{"map_object_value include_notfound", mr(`[["mrb","nope"]]`, erl("map", "map_object_value", `,"arg":"include_notfound"`)),
				`[{"not_found":{"bucket":"mrb","key":"nope","keydata":"undefined"}}]`},
			{"map_object_value sub", mr(`[["mrb","nope"]]`, erl("map", "map_object_value", `,"arg":{"sub":["dflt"]}`)), `["dflt"]`},
			{"map_object_value_list", mr(`[["mrb","list"]]`, erl("map", "map_object_value_list")), `[1,"x",{"y":2}]`},
			{"map_identity", mr(`[["mrb","text"]]`, erl("map", "map_identity"), js("reduce", `"source":"function(v){ var o = v[0]; return [[o.bucket, o.key, o.values[0].data, o.values[0].metadata['`+d.hdr+`Meta']]]; }"`)), ""},
			{"reduce_sum", mr(ab, mapValue, erl("reduce", "reduce_string_to_integer"), erl("reduce", "reduce_sum")), `[7]`},
			{"reduce_count_inputs", mr(`[["mrb","a"],["mrb","b"],["mrb","nope"]]`, erl("map", "map_object_value", `,"arg":"filter_notfound"`), erl("reduce", "reduce_count_inputs")), `[2]`},
			{"reduce_set_union", mr(`[["mrb","list"],["mrb","list"]]`, erl("map", "map_object_value_list"), erl("reduce", "reduce_set_union")), `[1,"x",{"y":2}]`},
			{"reduce_sort", mr(`[["mrb","mixed"]]`, erl("map", "map_object_value_list"), erl("reduce", "reduce_sort")), `[1,3,{"y":2},[1],"a","b"]`},
			{"reduce_plist_sum", mr(`[["mrb","plist"]]`, erl("map", "map_object_value_list"), erl("reduce", "reduce_plist_sum")), `[["a",6],["b",2]]`},
			{"reduce_string_to_integer", mr(ab, mapValue, erl("reduce", "reduce_string_to_integer")), `[3,4]`},
			{"reduce_identity", mr(`[["mrb","a"],["mrb","b","kd"]]`, erl("reduce", "reduce_identity")), `[["mrb","b"],["mrb","a"]]`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				switch tc.name {
				case "map_identity":
					if !hasJS(t, s) {
						// Without JavaScript, look at the object JSON itself.
						r := s.mapred(t, mr(`[["mrb","text"]]`, erl("map", "map_identity")))
						expect(t, r, 200, nil)
						for _, want := range []string{`"bucket":"mrb"`, `"key":"text"`, `"data":"hello"`, `"` + d.hdr + `Meta":{"` + d.hdr + `Meta-Colour":"red"}`} {
							if !strings.Contains(string(r.Body), want) {
								t.Errorf("map_identity: no %s in %s", want, r.Body)
							}
						}
						return
					}
					tc.want = `[["mrb","text","hello",{"` + d.hdr + `Meta-Colour":"red"}]]`
				}
				mapredOK(t, s, tc.body, tc.want)
			})
		}
	})
}

// hasJS reports whether the server runs JavaScript phases.
func hasJS(t testing.TB, s *child) bool {
	t.Helper()
	r := s.mapred(t, mr(`[["x","y"]]`, js("map", `"source":"function(v){ return []; }"`)))
	return r.StatusCode == 200
}

func requireJS(t testing.TB, s *child) {
	t.Helper()
	if !hasJS(t, s) {
		t.Skip("this build runs no JavaScript phases")
	}
}

func TestMapredJavaScript(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	requireJS(t, s)
	putJSON(t, s, "/buckets/mrj/keys/a", `{"n":1,"colour":"red"}`)
	putJSON(t, s, "/buckets/mrj/keys/b", `{"n":2,"colour":"blue"}`)
	putJSON(t, s, "/buckets/mrj/keys/c", `{"n":3,"colour":"red"}`)
	s.mustPut(t, "/buckets/fns/keys/double", `function(v, kd, arg) { return [JSON.parse(v.values[0].data).n * arg]; }`,
		"Content-Type", "application/javascript")
	abc := `[["mrj","a"],["mrj","b"],["mrj","c"]]`
	for _, tc := range []struct{ name, body, want string }{
		{"source", mr(abc, js("map", `"source":"function(v, kd, arg) { return [v.key + ':' + kd + ':' + arg]; }"`)),
			`["a:undefined:none","b:undefined:none","c:undefined:none"]`},
		{"source with key data and arg", mr(`[["mrj","a","kd"]]`, js("map", `"source":"function(v, kd, arg) { return [[kd, arg]]; }"`, `,"arg":{"x":1}`)),
			`[["kd",{"x":1}]]`},
		{"Riak.mapValuesJson", mr(abc, js("map", `"name":"Riak.mapValuesJson"`)), `[{"n":1,"colour":"red"},{"n":2,"colour":"blue"},{"n":3,"colour":"red"}]`},
		{"Riak.mapByFields", mr(abc, js("map", `"name":"Riak.mapByFields"`, `,"arg":{"colour":"red"}`)), `[{"n":1,"colour":"red"},{"n":3,"colour":"red"}]`},
		{"reduce source", mr(abc, js("map", `"name":"Riak.mapValuesJson"`), js("reduce", `"source":"function(vs) { var n = 0; vs.forEach(function(v){ n += (typeof v === 'number') ? v : v.n; }); return [n]; }"`)), `[6]`},
		{"Riak.reduceSum", mr(abc, js("map", `"source":"function(v){ return [JSON.parse(v.values[0].data).n]; }"`), js("reduce", `"name":"Riak.reduceSum"`)), `[6]`},
		{"Riak.reduceNumericSort", mr(`[["mrj","c"],["mrj","a"],["mrj","b"]]`, js("map", `"source":"function(v){ return [JSON.parse(v.values[0].data).n * 10]; }"`), js("reduce", `"name":"Riak.reduceNumericSort"`)), `[10,20,30]`},
		{"Riak.reduceLimit keeps n-1", mr(abc, js("map", `"source":"function(v){ return [v.key]; }"`), js("reduce", `"name":"Riak.reduceLimit"`, `,"arg":2`)), `["a"]`},
		{"stored source", mr(abc, js("map", `"bucket":"fns","key":"double"`, `,"arg":10`)), `[10,20,30]`},
		{"not found", mr(`[["mrj","a"],["mrj","nope"],["mrj","gone","kd"]]`, js("map", `"name":"Riak.mapValuesJson"`)),
			`[{"n":1,"colour":"red"},{"not_found":{"bucket":"mrj","key":"nope","keydata":"undefined"}},{"not_found":{"bucket":"mrj","key":"gone","keydata":"kd"}}]`},
		{"filterNotFound", mr(`[["mrj","a"],["mrj","nope"]]`, js("map", `"name":"Riak.mapValuesJson"`), js("reduce", `"name":"Riak.filterNotFound"`)), `[{"n":1,"colour":"red"}]`},
		{"js map then erlang reduce", mr(abc, js("map", `"source":"function(v){ return [JSON.parse(v.values[0].data).n]; }"`), erl("reduce", "reduce_sum")), `[6]`},
	} {
		t.Run(tc.name, func(t *testing.T) { mapredOK(t, s, tc.body, tc.want) })
	}
	// A function that throws is a 500 naming the phase and the input.
	r := s.mapred(t, mr(`[["mrj","a"]]`, js("map", `"source":"function(v){ throw new Error('no way'); }"`)))
	expect(t, r, 500, nil)
	var pe struct {
		Phase *int   `json:"phase"`
		Error string `json:"error"`
		Input string `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &pe); err != nil || pe.Phase == nil || *pe.Phase != 0 || !strings.Contains(pe.Error, "no way") || pe.Input != `["mrj","a"]` {
		t.Errorf("throwing map: %s", r)
	}
	// Source that does not compile, a name that does not exist: 400 at setup.
	r = s.mapred(t, mr(abc, js("map", `"source":"function(v) {"`)))
	expect(t, r, 400, nil)
	if !strings.HasPrefix(string(r.Body), `{"phase":0,"error":`) {
		t.Errorf("bad source: %s", r)
	}
	r = s.mapred(t, mr(abc, js("map", `"name":"Riak.mapValuesJson"`), js("reduce", `"name":"Riak.noSuchFunction"`)))
	expect(t, r, 400, ptr(`{"phase":1,"error":"no JavaScript function named Riak.noSuchFunction"}`))
	r = s.mapred(t, mr(abc, js("map", `"bucket":"fns","key":"missing"`)))
	expect(t, r, 400, ptr(`{"phase":0,"error":"the object fns/missing that should hold the function's source was not found"}`))
}

func TestMapredWASM(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // WebAssembly modules compile slowly under -race in process
	putModule(t, s, "wordcount", exampleWASM(t, "go/wordcount-map"), 201)
	s.mustPut(t, "/buckets/docs/keys/d1", "The cat sat on the mat. The END.")
	s.mustPut(t, "/buckets/docs/keys/d2", "A dog and a cat.")
	wc := `{"map":{"language":"wasm","module":"wordcount","function":"wordcount","arg":{"min_length":3}}}`
	sumCounts := `{"reduce":{"language":"wasm","module":"wordcount","function":"sum_counts"}}`
	mapredOK(t, s, mr(`"docs"`, wc, sumCounts), `[{"and":1,"cat":2,"dog":1,"end":1,"mat":1,"sat":1,"the":3}]`)
	mapredOK(t, s, mr(`[["docs","d2"],["docs","missing"]]`, wc), `[{"and":1,"cat":1,"dog":1}]`)
	r := s.mapred(t, mr(`"docs"`, `{"map":{"language":"wasm","module":"wordcount","function":"nope"}}`))
	expect(t, r, 400, ptr(`{"phase":0,"error":"wordcount:nope is not a map function"}`))
	r = s.mapred(t, mr(`"docs"`, `{"map":{"language":"wasm","module":"nomodule","function":"f"}}`))
	expect(t, r, 400, ptr(`{"phase":0,"error":"no WebAssembly module named nomodule is registered"}`))
}

func TestMapredLinks(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.mustPut(t, "/buckets/people/keys/alice", "alice", "Link",
		`</buckets/people/keys/bob>; storetag="friend", </buckets/people/keys/carol>; riaktag="friend", </buckets/pets/keys/rex>; storetag="dog"`)
	s.mustPut(t, "/buckets/people/keys/bob", "bob", "Link", `</buckets/pets/keys/tom>; storetag="cat"`)
	s.mustPut(t, "/buckets/people/keys/carol", "carol")
	s.mustPut(t, "/buckets/pets/keys/rex", "rex")
	s.mustPut(t, "/buckets/pets/keys/tom", "tom")
	link := func(bucket, tag string, keep ...bool) string {
		k := ""
		if len(keep) > 0 {
			k = `,"keep":` + map[bool]string{true: "true", false: "false"}[keep[0]]
		}
		return `{"link":{"bucket":"` + bucket + `","tag":"` + tag + `"` + k + `}}`
	}
	alice := `[["people","alice"],["people","nobody"]]`
	mapredOK(t, s, mr(alice, link("_", "_")), `[["people","bob","friend"],["people","carol","friend"],["pets","rex","dog"]]`)
	mapredOK(t, s, mr(alice, link("pets", "_")), `[["pets","rex","dog"]]`)
	mapredOK(t, s, mr(alice, link("_", "friend"), mapValue), `["bob","carol"]`)
	mapredOK(t, s, mr(`[["people","alice"]]`, `{"link":{}}`, link("_", "_", true), mapValue), `[[["pets","tom","cat"]],["tom"]]`)
	mapredOK(t, s, mr(`"people"`, link("pets", "_"), erl("reduce", "reduce_count_inputs")), `[2]`)
	// The bucket's own linkfun is used: here a WebAssembly one (the host's test fixture),
	// whose links are always [["b","k","t"]], and then one that fails.
	putModule(t, s, "fx", fixtureWASM(t, "hooks.wasm"), 201)
	s.setProps(t, "custom", `{"linkfun":{"mod":"fx","fun":"links"}}`)
	s.mustPut(t, "/buckets/custom/keys/a", "a", "Link", `</buckets/people/keys/bob>; storetag="friend"`)
	mapredOK(t, s, mr(`[["custom","a"],["people","alice"]]`, link("_", "_")),
		`[["b","k","t"],["people","bob","friend"],["people","carol","friend"],["pets","rex","dog"]]`)
	s.setProps(t, "custom", `{"linkfun":{"mod":"fx","fun":"fail"}}`)
	r := s.mapred(t, mr(`[["custom","a"]]`, link("_", "_")))
	expect(t, r, 500, ptr(`{"phase":0,"error":"linkfun fx:fail: something broke","input":"[\"custom\",\"a\"]"}`))
}

func TestMapredKeep(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for i := 1; i <= 3; i++ {
		putJSON(t, s, "/buckets/mrk/keys/k"+itoa(i), itoa(i))
	}
	in := `"mrk"`
	toInt := erl("reduce", "reduce_string_to_integer")
	sum := erl("reduce", "reduce_sum")
	kept := func(phase string) string { return strings.Replace(phase, `"language"`, `"keep":true,"language"`, 1) }
	unkept := func(phase string) string { return strings.Replace(phase, `"language"`, `"keep":false,"language"`, 1) }
	for _, tc := range []struct{ name, body, want string }{
		{"last phase kept by default", mr(in, mapValue, toInt, sum), `[6]`},
		{"no phase kept", mr(in, mapValue, toInt, unkept(sum)), `[]`},
		{"one kept phase not last", mr(in, kept(mapValue), toInt, unkept(sum)), `["1","2","3"]`},
		{"two kept phases", mr(in, kept(mapValue), toInt, sum), `[["1","2","3"],[6]]`},
		{"three kept phases", mr(in, kept(mapValue), kept(toInt), sum), `[["1","2","3"],[1,2,3],[6]]`},
		{"a kept phase without output is left out", mr(in, kept(erl("map", "map_object_value", `,"arg":"filter_notfound"`)),
			kept(erl("reduce", "reduce_sort")), erl("reduce", "reduce_set_union")), `[["1","2","3"],["1","2","3"],["1","2","3"]]`},
		{"kept empty phase omitted", mr(`[["mrk","nope"]]`, kept(erl("map", "map_object_value", `,"arg":"filter_notfound"`)), toInt, sum), `[[0]]`},
	} {
		t.Run(tc.name, func(t *testing.T) { mapredOK(t, s, tc.body, tc.want) })
	}
}

// partRE matches one multipart part of a chunked MapReduce response.
var partRE = regexp.MustCompile(`^\r\n--([0-9A-Za-z]+)\r\nContent-Type: application/json\r\n\r\n(\{"phase":\d+,"data":\[.*\]\})$`)

func TestMapredChunked(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for i := 1; i <= 5; i++ {
		putJSON(t, s, "/buckets/mrc/keys/k"+itoa(i), itoa(i))
	}
	body := mr(`"mrc"`, strings.Replace(mapValue, `"language"`, `"keep":true,"language"`, 1),
		erl("reduce", "reduce_string_to_integer"), erl("reduce", "reduce_sum"))
	r := s.streamJob(t, body)
	if got := chunkedData(t, r); got != `0:"1" 0:"2" 0:"3" 0:"4" 0:"5" 2:15` {
		t.Errorf("data %s", got)
	}
	// Nothing kept: only the closing boundary.
	body = mr(`"mrc"`, strings.Replace(mapValue, `"language"`, `"keep":false,"language"`, 1))
	r = s.streamJob(t, body)
	b, _ := strings.CutPrefix(r.Header.Get("Content-Type"), "multipart/mixed;boundary=")
	if len(r.Chunks) != 1 || r.Chunks[0] != "\r\n--"+b+"--\r\n" {
		t.Errorf("no output: chunks %q", r.Chunks)
	}
	// An empty query streams its inputs as phase 0.
	body = mr(`[["mrc","k1"],["mrc","k2","kd"]]`)
	r = s.streamJob(t, body)
	if got := chunkedData(t, r); got != `0:["mrc","k1"] 0:["mrc","k2","kd"]` {
		t.Errorf("empty query: %s from chunks %q", got, r.Chunks)
	}
	// An error after the start is written raw and ends the stream.
	body = mr(`[["mrc","k1"]]`, erl("map", "map_object_value", `,"keep":true`), erl("reduce", "reduce_sum"))
	r = s.streamJob(t, body)
	if r.StatusCode != 200 || len(r.Chunks) < 1 {
		t.Fatalf("error after start: %d %q", r.StatusCode, r.Chunks)
	}
	last := r.Chunks[len(r.Chunks)-1]
	if !strings.HasPrefix(last, `{"phase":1,"error":"badarith`) || !strings.HasSuffix(last, `,"input":"[\"1\"]"}`) {
		t.Errorf("error chunk %q", last)
	}
}

// chunkedData checks that every chunk of a streamed MapReduce answer but the last is
// one part, and the last the closing boundary, and returns the parts' data as
// "phase:value" items joined by spaces.
func chunkedData(t testing.TB, r *streamResp) string {
	t.Helper()
	boundary, _ := strings.CutPrefix(r.Header.Get("Content-Type"), "multipart/mixed;boundary=")
	if r.StatusCode != 200 || len(r.Chunks) == 0 || r.Chunks[len(r.Chunks)-1] != "\r\n--"+boundary+"--\r\n" {
		t.Fatalf("status %d, Content-Type %q, chunks %q", r.StatusCode, r.Header.Get("Content-Type"), r.Chunks)
	}
	var items []string
	for _, c := range r.Chunks[:len(r.Chunks)-1] {
		m := partRE.FindStringSubmatch(c)
		if m == nil || m[1] != boundary {
			t.Fatalf("chunk is not one part: %q", c)
		}
		var part struct {
			Phase int               `json:"phase"`
			Data  []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(m[2]), &part); err != nil {
			t.Fatalf("chunk %q: %v", c, err)
		}
		for _, d := range part.Data {
			items = append(items, itoa(part.Phase)+":"+string(d))
		}
	}
	return strings.Join(items, " ")
}

// streamJob posts a job with chunked=true over a fresh connection and reads the
// response with its HTTP chunks kept apart.
func (s *child) streamJob(t testing.TB, body string) *streamResp {
	t.Helper()
	raw := rawExchange(t, s, "POST /mapred?chunked=true HTTP/1.1\r\nHost: "+s.Addr+
		"\r\nContent-Type: application/json\r\nContent-Length: "+itoa(len(body))+"\r\nConnection: close\r\n\r\n"+body)
	out, err := parseStreamResponse(raw, false)
	if err != nil {
		t.Fatalf("POST /mapred?chunked=true: %v\n%q", err, raw)
	}
	return out
}

func TestMapredErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	putJSON(t, s, "/buckets/mrx/keys/k", `1`)
	putJSON(t, s, "/buckets/mrx/keys/s", `"text"`)
	const inputs = "An error occurred parsing the \"inputs\" field.\n"
	const query = "An error occurred parsing the \"query\" field.\n"
	for _, tc := range []struct{ name, body, want string }{
		{"not an object", `["mrx"]`, "The POST body was not a JSON object.\n"},
		{"missing query", `{"inputs":"mrx"}`, "The post body was missing the \"inputs\" or \"query\" field.\n"},
		{"no inputs", mr(`[]`), inputs + "No inputs were given.\n"},
		{"bad key entry", mr(`[["mrx",1]]`), inputs + "Unrecognized format of \"inputs\" field:   [\"mrx\",1]\n\nValid formats are:\n"},
		{"bad key filter", mr(`{"bucket":"mrx","key_filters":[["nope"]]}`), inputs},
		{"query not a list", `{"inputs":"mrx","query":{}}`, query + "The value of the \"query\" field was not a list:\n   {}\n"},
		{"unknown phase", mr(`"mrx"`, `{"walk":{}}`), query + "Unrecognized format of query phase:\n   {\"walk\":{}}\n"},
		{"keep", mr(`"mrx"`, `{"link":{"keep":1}}`), query + "The \"keep\" field was not a boolean value in:\n   {\"link\":{\"keep\":1}}\n"},
		{"no language", mr(`"mrx"`, `{"map":{"name":"Riak.mapValues"}}`), query + "No \"language\" was specified for the phase:\n   {\"name\":\"Riak.mapValues\"}\n"},
		{"unknown language", mr(`"mrx"`, `{"map":{"language":"cobol"}}`), query + "Unknown language \"cobol\" in phase:\n   {\"language\":\"cobol\"}\n"},
		{"no js function", mr(`"mrx"`, `{"map":{"language":"javascript"}}`), query + "No function specified in Javascript phase:\n"},
		{"no erlang function", mr(`"mrx"`, `{"map":{"language":"erlang","function":"f"}}`), query + "No function specified in Erlang phase:\n"},
		{"bad link", mr(`"mrx"`, `{"link":{"bucket":["x"]}}`), query + "Invalid link step specification:\n   {\"bucket\":[\"x\"]}\n\n \"bucket\" and \"tag\" fields must have string values.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.mapred(t, tc.body)
			expect(t, r, 400, nil)
			expectHeader(t, r, "Content-Type", "text/plain")
			if !strings.HasPrefix(string(r.Body), tc.want) {
				t.Errorf("body %q, want it to start with %q", r.Body, tc.want)
			}
		})
	}
	r := s.mapred(t, `{"inputs":`)
	expect(t, r, 400, nil)
	if !strings.HasPrefix(string(r.Body), "The POST body was not valid JSON.\nThe error from the parser was:\n") {
		t.Errorf("invalid JSON: %q", r.Body)
	}
	usage := "This resource accepts POSTs with bodies containing JSON of the form:\n{\n \"inputs\":[...list of inputs...],\n \"query\":[...list of map/reduce phases...]\n}\n"
	expect(t, s.get(t, "/mapred"), 400, &usage)
	r = s.do(t, http.MethodPut, "/mapred", jsonCT, "{}")
	expect(t, r, 405, nil)
	expectHeader(t, r, "Allow", "GET, HEAD, POST")
	// The media type is checked after the body (webmachine's order); parameters are allowed.
	expect(t, s.do(t, http.MethodPost, "/mapred", hdr{"Content-Type", "text/plain"}, mr(`"mrx"`)), 415, nil)
	expect(t, s.do(t, http.MethodPost, "/mapred", nil, mr(`"mrx"`)), 415, nil)
	expect(t, s.do(t, http.MethodPost, "/mapred", hdr{"Content-Type", "text/plain"}, `nope`), 400, nil)
	expect(t, s.do(t, http.MethodPost, "/mapred", hdr{"Content-Type", "application/json; charset=utf-8"}, mr(`[["mrx","k"]]`)), 200, ptr(`[["mrx","k"]]`))
	expect(t, s.do(t, http.MethodPost, "/mapred", hdr{"Content-Type", "application/json", "Accept", "text/html"}, mr(`"mrx"`)), 406, nil)

	// Setup failures: 400 JSON naming the phase.
	r = s.mapred(t, mr(`"mrx"`, mapValue, erl("reduce", "no_such_function")))
	expect(t, r, 400, ptr(`{"phase":1,"error":"riak_kv_mapreduce:no_such_function is not a reduce function"}`))
	expectHeader(t, r, "Content-Type", "application/json")
	r = s.mapred(t, mr(`"mrx"`, `{"map":{"language":"erlang","module":"no_such_module","function":"f"}}`))
	expect(t, r, 400, ptr(`{"phase":0,"error":"unknown module no_such_module"}`))
	r = s.mapred(t, mr(`"mrx"`, `{"map":{"language":"erlang","source":"fun(_,_,_) -> [] end."}}`))
	expect(t, r, 400, ptr(`{"phase":0,"error":"Erlang functions given as source are not allowed; name a built-in function with \"module\" and \"function\""}`))

	// A function error: 500 with the phase, the error and the input.
	r = s.mapred(t, mr(`[["mrx","k"],["mrx","s"]]`, mapValue, erl("reduce", "reduce_string_to_integer")))
	expect(t, r, 500, nil)
	expectHeader(t, r, "Content-Type", "application/json")
	var pe struct {
		Phase *int   `json:"phase"`
		Error string `json:"error"`
		Input string `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &pe); err != nil || pe.Phase == nil || *pe.Phase != 1 || !strings.HasPrefix(pe.Error, "badarg") || pe.Input != `["1","\"text\""]` {
		t.Errorf("function error: %s", r)
	}
	r = s.mapred(t, mr(`[["mrx","nope"]]`, mapValue))
	expect(t, r, 500, nil)
	if !strings.HasPrefix(string(r.Body), `{"phase":0,"error":"function_clause`) || !strings.HasSuffix(string(r.Body), `"input":"[\"mrx\",\"nope\"]"}`) {
		t.Errorf("map_object_value without arg on a missing key: %s", r)
	}
}

// TestMapredTimeout runs jobs that never end: a WebAssembly map that spins and a
// JavaScript one that loops. Each ends at its job timeout with 503 {"error":"timeout"}
// (or, chunked, the same object after the headers), while the server keeps answering.
func TestMapredTimeout(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	putModule(t, s, "evil", exampleWASM(t, "c/malicious"), 201)
	s.mustPut(t, "/buckets/mrt/keys/k", "v")
	spin := `{"inputs":[["mrt","k"]],"timeout":300,"query":[{"map":{"language":"wasm","module":"evil","function":"spin"}}]}`
	jobs := []string{spin}
	if hasJS(t, s) {
		jobs = append(jobs, `{"inputs":[["mrt","k"]],"timeout":300,"query":[{"map":{"language":"javascript","source":"function(v){ while(true){} }"}}]}`)
	}
	var pings atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if r, err := s.tryGet(t, "/ping"); err == nil && r.StatusCode == 200 {
				pings.Add(1)
			}
		}
	}()
	for _, j := range jobs {
		start := time.Now()
		r := s.mapred(t, j)
		expect(t, r, 503, ptr(`{"error":"timeout"}`))
		expectHeader(t, r, "Content-Type", "application/json")
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("the job ended after %v", d)
		}
		sr := s.streamJob(t, j)
		if sr.StatusCode != 200 || len(sr.Chunks) != 1 || sr.Chunks[0] != `{"error":"timeout"}` {
			t.Errorf("chunked timeout: %d %q", sr.StatusCode, sr.Chunks)
		}
	}
	close(stop)
	wg.Wait()
	if pings.Load() == 0 {
		t.Error("the server answered no ping while the jobs ran")
	}
	// The server still runs jobs.
	mapredOK(t, s, mr(`[["mrt","k"]]`, mapValue), `["v"]`)
}

// TestMapredContained runs JavaScript map functions that loop forever and that allocate
// without end, several at once, on a server with a short per-call limit: each job fails
// with a 500 naming its phase, the server answers pings meanwhile, its memory stays
// within the VMs' caps plus a margin, and it runs jobs normally afterwards.
func TestMapredContained(t *testing.T) {
	t.Parallel()
	s := startProcess(t, "--js-timeout", "300ms") // its memory is measured
	requireJS(t, s)
	s.mustPut(t, "/buckets/mrs/keys/k", "v")
	pid := s.cmd.Process.Pid
	baseline := vmKB(t, pid, "VmRSS")
	jobs := map[string]string{
		"loop": mr(`[["mrs","k"]]`, js("map", `"source":"function(v){ while(true){} }"`)),
		"bomb": mr(`[["mrs","k"]]`, js("map", `"source":"function(v){ var a = []; while(true){ a.push(new Array(100000).fill(a.length)); } }"`)),
	}
	var pings atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if r, err := s.tryGet(t, "/ping"); err == nil && r.StatusCode == 200 {
				pings.Add(1)
			}
		}
	}()
	var jobsWG sync.WaitGroup
	for name, body := range jobs {
		for range 4 {
			jobsWG.Add(1)
			go func() {
				defer jobsWG.Done()
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/mapred", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				r, err := s.trySend(t, req)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if r.StatusCode != 500 || !strings.HasPrefix(string(r.Body), `{"phase":0,"error":`) {
					t.Errorf("%s: %s", name, r)
				}
			}()
		}
	}
	jobsWG.Wait()
	close(stop)
	wg.Wait()
	if pings.Load() == 0 {
		t.Error("the server answered no ping while the jobs ran")
	}
	if grew := vmKB(t, pid, "VmRSS") - baseline; grew > 512<<10 {
		t.Errorf("RSS grew by %d KiB", grew)
	}
	mapredOK(t, s, mr(`[["mrs","k"]]`, js("map", `"source":"function(v){ return [v.values[0].data]; }"`)), `["v"]`)
}
