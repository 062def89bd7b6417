package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dtHooks is a --js-source-dir file of JavaScript functions over data-type views: the
// user metadata object is found by its suffix, so they serve either dialect.
const dtHooks = `
var DT = {
  meta: function(md) { return Object.keys(md).filter(function(k) { return /-Meta$/.test(k); })[0]; },
  // guard accepts the view of a set unless it holds "forbidden", and fails on anything
  // that is not such a view.
  guard: function(o) {
    var v = o.values[0], md = v.metadata, meta = DT.meta(md);
    var d = JSON.parse(v.data);
    if (md["content-type"] !== "application/json" || md[meta][meta + "-Datatype"] !== "set" || d.type !== "set") {
      return {fail: "not a set view: " + JSON.stringify(v)};
    }
    if (d.value.indexOf("forbidden") >= 0) return {fail: "no forbidden elements in " + o.key};
    return o;
  },
  change: function(o) { o.values[0].data = JSON.stringify({type: "set", value: ["changed"]}); return o; },
  // view maps an object to [key, content type, user metadata, parsed value].
  view: function(o) {
    var v = o.values[0], md = v.metadata;
    return [[o.key, md["content-type"], md[DT.meta(md)], JSON.parse(v.data)]];
  }
};
`

// TestDatatypeExtensions: every extension runtime sees a data type's JSON view, never
// its stored binary. Precommit hooks in WebAssembly, JavaScript and a process plugin
// accept (the update is stored), reject (403, nothing stored) or try to change the
// view (500 naming the hook, nothing stored); a plugin postcommit logs the view's
// content type and size; MapReduce map functions of every language (JavaScript by name
// and built-in, the erlang built-ins, WebAssembly, a process plugin) map the view.
func TestDatatypeExtensions(t *testing.T) {
	t.Parallel()
	jsDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(jsDir, "dt.js"), []byte(dtHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins := pluginsDir(t)
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			dir, work := t.TempDir(), t.TempDir()
			createType(t, dir, "sets", `{"props":{"datatype":"set"}}`)
			s := startServerOpts(t, serverOpts{
				process: true, // WebAssembly modules compile slowly under -race in process; plugins get its environment
				dataDir: dir,
				args:    []string{"--dialect", d.name, "--plugins-dir", plugins, "--js-source-dir", jsDir},
				env:     []string{"CHANGELOG_PATH=" + filepath.Join(work, "changelog.jsonl"), "QUOTA_FILE=" + filepath.Join(work, "quota.json")},
			})
			putModule(t, s, "fx", fixtureWASM(t, "hooks.wasm"), 201)
			putModule(t, s, "wc", exampleWASM(t, "go/wordcount-map"), 201)
			bucket := func(b, props string) string {
				t.Helper()
				expect(t, s.do(t, "PUT", "/types/sets/buckets/"+b+"/props", jsonCT, `{"props":`+props+`}`), 204, nil)
				return "/types/sets/buckets/" + b + "/datatypes/k"
			}
			post := func(path, body string, status int, want *string) {
				t.Helper()
				expect(t, s.do(t, "POST", path, jsonCT, body), status, want)
			}
			const view = `{"type":"set","value":["a"]}`
			changed := func(hook, what string) *string {
				return ptr("precommit hook " + hook + " " + what + " of the set it was given: " +
					"a precommit hook may accept or reject a data type update, not change it\n")
			}

			for _, tc := range []struct {
				name, hooks string
				body        string
				status      int
				want        *string
			}{
				{"wasm accept", `[{"mod":"fx","fun":"accept"}]`, `{"add":"a"}`, 204, nil},
				{"wasm reject", `[{"mod":"fx","fun":"reject"}]`, `{"add":"a"}`, 403, ptr("rejected: no writes here")},
				{"wasm change", `[{"mod":"fx","fun":"replace"}]`, `{"add":"a"}`, 500, changed("fx:replace", "changed the value")},
				{"js accept", `[{"name":"DT.guard"}]`, `{"add":"a"}`, 204, nil},
				{"js reject", `[{"name":"DT.guard"}]`, `{"add":"forbidden"}`, 403, ptr("no forbidden elements in k")},
				{"js change", `[{"name":"DT.guard"},{"name":"DT.change"}]`, `{"add":"a"}`, 500, changed("DT.change", "changed the value")},
				{"plugin change", `[{"mod":"points","fun":"stamp"}]`, `{"add":"a"}`, 500, changed("points:stamp", "changed the metadata")},
			} {
				path := bucket(strings.ReplaceAll(tc.name, " ", "-"), `{"precommit":`+tc.hooks+`}`)
				post(path, tc.body, tc.status, tc.want)
				if tc.status == 204 {
					expect(t, s.get(t, path+"?include_context=false"), 200, ptr(view))
				} else {
					expect(t, s.get(t, path), 404, nil)
				}
			}

			// A postcommit process plugin logs what it saw: the view's content type and size.
			post(bucket("logged", `{"postcommit":[{"mod":"plugin:changelog","fun":"append"}]}`), `{"add":"a"}`, 204, nil)
			waitFor(t, 10*time.Second, "the change log line", func() bool {
				b, _ := os.ReadFile(filepath.Join(work, "changelog.jsonl"))
				return strings.Contains(string(b), `"content_type":"application/json","size":`+itoa(len(view)))
			})

			// MapReduce over a datatype bucket, in every language.
			post("/types/sets/buckets/mr/datatypes/a", `{"add_all":["banana","apple"]}`, 204, nil)
			post("/types/sets/buckets/mr/datatypes/b", `{"add":"cherry"}`, 204, nil)
			a := `[["mr","a",null,"sets"]]`
			meta := `{"` + d.hdr + `Meta-Datatype":"set"}`
			mapredOK(t, s, mr(`["sets","mr"]`, js("map", `"name":"DT.view"`), js("reduce", `"name":"Riak.reduceSort"`)),
				`[["a","application/json",`+meta+`,{"type":"set","value":["apple","banana"]}],["b","application/json",`+meta+`,{"type":"set","value":["cherry"]}]]`)
			mapredOK(t, s, mr(a, js("map", `"name":"Riak.mapValuesJson"`)), `[{"type":"set","value":["apple","banana"]}]`)
			mapredOK(t, s, mr(a, mapValue), `["{\"type\":\"set\",\"value\":[\"apple\",\"banana\"]}"]`)
			want := map[string]float64{"apple": 1, "banana": 1, "cherry": 1, "set": 2, "type": 2, "value": 2}
			for _, mod := range []string{`"language":"wasm","module":"wc"`, `"language":"erlang","module":"plugin:wordcount"`} {
				r := s.mapred(t, mr(`["sets","mr"]`, `{"map":{`+mod+`,"function":"wordcount"}}`, `{"reduce":{`+mod+`,"function":"sum_counts"}}`))
				var got []map[string]float64
				if r.StatusCode != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || len(got) != 1 || !maps.Equal(got[0], want) {
					t.Errorf("wordcount by %s over the views:\n%s\nwant [%v]", mod, r, want)
				}
			}
		})
	}
}
