package mapreduce

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
)

func TestParseJobErrors(t *testing.T) {
	t.Parallel()
	const inputs = "An error occurred parsing the \"inputs\" field.\n"
	const query = "An error occurred parsing the \"query\" field.\n"
	unrecognized := func(v string) string {
		return inputs + "Unrecognized format of \"inputs\" field:   " + v + "\n\n" + inputForms
	}
	tests := []struct {
		name, body, want string
		prefix           bool // want is a prefix of the message
	}{
		{"not json", `{"inputs":`, "The POST body was not valid JSON.\nThe error from the parser was:\n", true},
		{"empty body", ``, "The POST body was not valid JSON.\nThe error from the parser was:\n", true},
		{"trailing garbage", `{} x`, "The POST body was not valid JSON.\nThe error from the parser was:\n", true},
		{"not an object", `[1,2]`, "The POST body was not a JSON object.\n", false},
		{"a string", `"b"`, "The POST body was not a JSON object.\n", false},
		{"missing inputs", `{"query":[]}`, "The post body was missing the \"inputs\" or \"query\" field.\n", false},
		{"missing query", `{"inputs":"b"}`, "The post body was missing the \"inputs\" or \"query\" field.\n", false},
		{"empty key list", `{"inputs":[],"query":[]}`, inputs + "No inputs were given.\n", false},
		{"bad key entry", `{"inputs":[["b","k"],["b", 5]],"query":[]}`, unrecognized(`["b",5]`), false},
		{"key entry too long", `{"inputs":[["b","k","kd","t","x"]],"query":[]}`, unrecognized(`["b","k","kd","t","x"]`), false},
		{"typed entry type not a string", `{"inputs":[["b","k","kd",7]],"query":[]}`, unrecognized(`["b","k","kd",7]`), false},
		{"a number", `{"inputs":5,"query":[]}`, unrecognized(`5`), false},
		{"null inputs", `{"inputs":null,"query":[]}`, unrecognized(`null`), false},
		{"object of nothing", `{"inputs":{"bucket":"b"},"query":[]}`, unrecognized(`{"bucket":"b"}`), false},
		{"empty key filters", `{"inputs":{"bucket":"b","key_filters":[]},"query":[]}`, unrecognized(`{"bucket":"b","key_filters":[]}`), false},
		{"key filters not a list", `{"inputs":{"bucket":"b","key_filters":"x"},"query":[]}`, unrecognized(`{"bucket":"b","key_filters":"x"}`), false},
		{"bad key filter", `{"inputs":{"bucket":"b","key_filters":[["nope"]]},"query":[]}`, inputs, true},
		{"index bucket not a string", `{"inputs":{"bucket":5,"index":"f_bin","key":"v"},"query":[]}`, unrecognized(`{"bucket":5,"index":"f_bin","key":"v"}`), false},
		{"index unknown field", `{"inputs":{"bucket":"b","index":"foo","key":"v"},"query":[]}`, inputs + "Unknown field type for field: 'foo'.\n", false},
		{"index bad int", `{"inputs":{"bucket":"b","index":"age_int","start":"x","end":5},"query":[]}`, inputs + "Could not parse field 'age_int', value 'x'.\n", false},
		{"index bad term", `{"inputs":{"bucket":"b","index":"f_bin","key":[1]},"query":[]}`, inputs + "Invalid index query term for field 'f_bin': [1]\n", false},
		{"modfun input", `{"inputs":{"module":"m","function":"f","arg":1},"query":[]}`, inputs + "Erlang input functions", true},
		{"search input", `{"inputs":{"bucket":"b","query":"x"},"query":[]}`, inputs + "Search inputs are not supported", true},
		{"query not a list", `{"inputs":"b","query":{"map":{}}}`, query + "The value of the \"query\" field was not a list:\n   {\"map\":{}}\n", false},
		{"unknown phase", `{"inputs":"b","query":[{"mop":{}}]}`, query + "Unrecognized format of query phase:\n   {\"mop\":{}}\n\nValid formats are:\n   {\"map\":{...spec...}}\n   {\"reduce\":{...spec...}}\n   {\"link\":{...spec...}}\n", false},
		{"phase of two members", `{"inputs":"b","query":[{"map":{},"reduce":{}}]}`, query + "Unrecognized format of query phase:\n   {\"map\":{},\"reduce\":{}}\n", true},
		{"phase spec not an object", `{"inputs":"b","query":[{"map":1}]}`, query + "Unrecognized format of query phase:\n   {\"map\":1}\n", true},
		{"keep not a boolean", `{"inputs":"b","query":[{"map":{"language":"erlang","module":"m","function":"f","keep":"yes"}}]}`,
			query + "The \"keep\" field was not a boolean value in:\n   {\"map\":{\"language\":\"erlang\",\"module\":\"m\",\"function\":\"f\",\"keep\":\"yes\"}}\n", false},
		{"no language", `{"inputs":"b","query":[{"map":{"source":"function(v){return [v];}"}}]}`,
			query + "No \"language\" was specified for the phase:\n   {\"source\":\"function(v){return [v];}\"}\n", false},
		{"unknown language", `{"inputs":"b","query":[{"reduce":{"language":"python", "source":"x"}}]}`,
			query + "Unknown language \"python\" in phase:\n   {\"language\":\"python\",\"source\":\"x\"}\n", false},
		{"no js function", `{"inputs":"b","query":[{"map":{"language":"javascript"}}]}`,
			query + "No function specified in Javascript phase:\n   {\"language\":\"javascript\"}\n\nFunctions may be specified by:\n", true},
		{"js bucket without key", `{"inputs":"b","query":[{"map":{"language":"javascript","bucket":"fns"}}]}`,
			query + "Javascript phase was missing a \"key\" field to match the \"bucket\" field, pointing to the function to evaluate in:   {\"language\":\"javascript\",\"bucket\":\"fns\"}\n", false},
		{"no erlang function", `{"inputs":"b","query":[{"map":{"language":"erlang","module":"m"}}]}`,
			query + "No function specified in Erlang phase:\n   {\"language\":\"erlang\",\"module\":\"m\"}\n\nFunctions may be specified by:\n", true},
		{"erlang module not a string", `{"inputs":"b","query":[{"map":{"language":"erlang","module":1,"function":"f"}}]}`,
			query + "No function specified in Erlang phase:\n", true},
		{"no wasm function", `{"inputs":"b","query":[{"map":{"language":"wasm","module":"m"}}]}`,
			query + "No function specified in WebAssembly phase:\n   {\"language\":\"wasm\",\"module\":\"m\"}\n", true},
		{"link bucket not a string", `{"inputs":"b","query":[{"link":{"bucket":1}}]}`,
			query + "Invalid link step specification:\n   {\"bucket\":1}\n\n \"bucket\" and \"tag\" fields must have string values.\n", false},
		{"link tag null", `{"inputs":"b","query":[{"link":{"tag":null}}]}`,
			query + "Invalid link step specification:\n   {\"tag\":null}\n\n", true},
		{"second phase bad", `{"inputs":"b","query":[{"link":{}},{"map":{"language":"erlang"}}]}`,
			query + "No function specified in Erlang phase:\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJob([]byte(tc.body))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseJob(%s) = %v, want a *ParseError", tc.body, err)
			}
			if tc.prefix && !strings.HasPrefix(pe.Message, tc.want) || !tc.prefix && pe.Message != tc.want {
				t.Errorf("ParseJob(%s):\n got %q\nwant %q", tc.body, pe.Message, tc.want)
			}
		})
	}
}

func TestParseJobInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, inputs string
		want         Inputs
	}{
		{"bucket", `"b"`, Inputs{Kind: InputBucket, Type: core.DefaultType, Bucket: "b"}},
		{"typed bucket", `["t","b"]`, Inputs{Kind: InputBucket, Type: "t", Bucket: "b", Typed: true}},
		{"one key", `[["b","k"]]`, Inputs{Kind: InputKeys, Keys: []Input{{Type: core.DefaultType, Bucket: "b", Key: "k"}}}},
		{"keys with keydata", `[["b","k"],["b","k2",{"x":1}],["b","k3",null],["b","k4","kd","t"]]`, Inputs{Kind: InputKeys, Keys: []Input{
			{Type: core.DefaultType, Bucket: "b", Key: "k"},
			{Type: core.DefaultType, Bucket: "b", Key: "k2", KeyData: json.RawMessage(`{"x":1}`)},
			{Type: core.DefaultType, Bucket: "b", Key: "k3", KeyData: json.RawMessage(`null`)},
			{Type: "t", Bucket: "b", Key: "k4", KeyData: json.RawMessage(`"kd"`), Typed: true},
		}}},
		{"two-element key list is a key list", `[["b","k"],["b","k2"]]`, Inputs{Kind: InputKeys, Keys: []Input{
			{Type: core.DefaultType, Bucket: "b", Key: "k"}, {Type: core.DefaultType, Bucket: "b", Key: "k2"}}}},
		{"key filters", `{"bucket":"b","key_filters":[["starts_with","a"]]}`, Inputs{Kind: InputKeyFilter, Type: core.DefaultType, Bucket: "b"}},
		{"typed key filters", `{"bucket":["t","b"],"key_filters":[["starts_with","a"]]}`, Inputs{Kind: InputKeyFilter, Type: "t", Bucket: "b", Typed: true}},
		{"index exact", `{"bucket":"b","index":"f_bin","key":"v"}`, Inputs{Kind: InputIndex, Type: core.DefaultType, Bucket: "b"}},
		{"index range numbers", `{"bucket":["t","b"],"index":"Age_int","start":1,"end":"9"}`, Inputs{Kind: InputIndex, Type: "t", Bucket: "b", Typed: true}},
		{"index $bucket", `{"bucket":"b","index":"$bucket","key":null}`, Inputs{Kind: InputIndex, Type: core.DefaultType, Bucket: "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			job, err := ParseJob([]byte(`{"inputs":` + tc.inputs + `,"query":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			got := job.Inputs
			if (got.Kind == InputKeyFilter) != (got.Filter != nil) {
				t.Errorf("filter set = %v for kind %v", got.Filter != nil, got.Kind)
			}
			got.Filter = nil
			if got.Kind == InputIndex && got.Index.Field == "" {
				t.Errorf("no index query")
			}
			got.Index = tc.want.Index
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("inputs:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	job, err := ParseJob([]byte(`{"inputs":{"bucket":"b","index":"Age_int","start":1,"end":"09"},"query":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if q := job.Inputs.Index; q.Field != "age_int" || q.Start != "1" || q.End != "9" || !q.Range {
		t.Errorf("index query %+v", q)
	}
}

func TestParseJobQuery(t *testing.T) {
	t.Parallel()
	job, err := ParseJob([]byte(`{"inputs":"b","timeout":1500,"query":[
		{"link":{"bucket":"people","keep":true}},
		{"map":{"language":"javascript","source":"function(v){return [1];}","arg":{"a":1}}},
		{"map":{"language":"javascript","name":"Riak.mapValuesJson","keep":false}},
		{"map":{"language":"javascript","bucket":"fns","key":"f"}},
		{"reduce":{"language":"erlang","module":"riak_kv_mapreduce","function":"reduce_sum","arg":null,"keep":true,"keep":false}},
		{"map":{"language":"wasm","module":"wc","function":"wordcount"}},
		{"reduce":{"language":"erlang","source":"fun(V,_) -> V end."}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if job.Timeout != 1500*time.Millisecond {
		t.Errorf("timeout %v", job.Timeout)
	}
	q := job.Query
	if len(q) != 7 {
		t.Fatalf("%d phases", len(q))
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{q[0].Kind == Link && q[0].LinkBucket == "people" && q[0].LinkTag == "_" && q[0].Keep, "link"},
		{q[1].Kind == Map && q[1].HasSource && q[1].Source == "function(v){return [1];}" && string(q[1].Arg) == `{"a":1}` && !q[1].Keep, "js source"},
		{q[2].Name == "Riak.mapValuesJson" && !q[2].Keep && q[2].Arg == nil, "js name"},
		{q[3].SourceBucket == "fns" && q[3].SourceKey == "f", "js stored"},
		{q[4].Kind == Reduce && q[4].Module == "riak_kv_mapreduce" && q[4].Function == "reduce_sum" && q[4].Keep && string(q[4].Arg) == "null", "erlang (first keep wins)"},
		{q[5].Language == LangWASM && q[5].Module == "wc" && q[5].Function == "wordcount", "wasm"},
		{q[6].Language == LangErlang && q[6].HasSource && q[6].Keep, "erlang source, last phase kept"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.what, q)
		}
	}
	if got := job.Kept(); len(got) != 3 || got[0] != 0 || got[1] != 4 || got[2] != 6 {
		t.Errorf("kept %v", got)
	}
	for body, want := range map[string]time.Duration{
		`{"inputs":"b","query":[]}`:                         DefaultTimeout,
		`{"inputs":"b","query":[],"timeout":null}`:          DefaultTimeout,
		`{"inputs":"b","query":[],"timeout":1}`:             time.Millisecond,
		`{"inputs":"b","query":[],"timeout":1.2}`:           1200 * time.Microsecond,
		`{"inputs":"b","query":[],"timeout":3600000}`:       MaxTimeout,
		`{"inputs":"b","query":[],"timeout":3.6e6}`:         MaxTimeout,
		`{"timeout":250,"inputs":"b","query":[]}`:           250 * time.Millisecond,
		`{"inputs":"b","query":[],"timeout":10,"x":{}}`:     10 * time.Millisecond,
		`{"inputs":"b","query":[],"timeout":7,"timeout":0}`: 7 * time.Millisecond, // the first wins
	} {
		job, err := ParseJob([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if job.Timeout != want {
			t.Errorf("%s: timeout %v, want %v", body, job.Timeout, want)
		}
	}
}

// TestParseJobLimits is the attack of "timeout": -1 (and every other number of a job
// out of range): each is a 400 in the reference's message form, before anything is
// allocated for it.
func TestParseJobLimits(t *testing.T) {
	t.Parallel()
	const timeoutErr = "An error occurred parsing the \"timeout\" field.\nThe timeout must be a number of milliseconds from 1 to 3600000, not "
	keys := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`["b","k"],`, n), ",") + "]" }
	phases := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"link":{}},`, n), ",") + "]"
	}
	for _, tc := range []struct{ name, body, want string }{
		{"negative timeout", `{"inputs":"b","query":[],"timeout":-1}`, timeoutErr + "-1.\n"},
		{"zero timeout", `{"inputs":"b","query":[],"timeout":0}`, timeoutErr + "0.\n"},
		{"below a millisecond", `{"inputs":"b","query":[],"timeout":0.2}`, timeoutErr + "0.2.\n"},
		{"above the maximum", `{"inputs":"b","query":[],"timeout":3600001}`, timeoutErr + "3600001.\n"},
		{"huge", `{"inputs":"b","query":[],"timeout":1e300}`, timeoutErr + "1e300.\n"},
		{"a string", `{"inputs":"b","query":[],"timeout":"100"}`, timeoutErr + "\"100\".\n"},
		{"an object", `{"inputs":"b","query":[],"timeout":{"a": 1}}`, timeoutErr + "{\"a\":1}.\n"},
		{"too many inputs", `{"inputs":` + keys(MaxInputs+1) + `,"query":[]}`,
			"An error occurred parsing the \"inputs\" field.\nThe key list has 100001 inputs; at most 100000 are allowed.\n"},
		{"too many phases", `{"inputs":"b","query":` + phases(MaxPhases+1) + `}`,
			"An error occurred parsing the \"query\" field.\nThe query has 65 phases; at most 64 are allowed.\n"},
		{"too many fields", `{` + strings.Repeat(`"x":0,`, maxMembers) + `"inputs":"b","query":[]}`,
			"The POST body has more than 1000 fields.\n"},
		{"too many input fields", `{"inputs":{` + strings.Repeat(`"x":0,`, maxMembers) + `"bucket":"b"},"query":[]}`,
			"An error occurred parsing the \"inputs\" field.\nThe \"inputs\" object has more than 1000 fields.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJob([]byte(tc.body))
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Message != tc.want {
				t.Fatalf("err = %q\nwant   %q", err, tc.want)
			}
		})
	}
	// The limits themselves are accepted.
	for _, body := range []string{
		`{"inputs":` + keys(MaxInputs) + `,"query":[]}`,
		`{"inputs":"b","query":` + phases(MaxPhases) + `}`,
	} {
		if _, err := ParseJob([]byte(body)); err != nil {
			t.Fatalf("%.60s...: %v", body, err)
		}
	}
	// A key entry or a phase spec too large to look at is an unrecognised one.
	for _, body := range []string{
		`{"inputs":[["b","k"],[` + strings.Repeat(`1,`, 100) + `1]],"query":[]}`,
		`{"inputs":"b","query":[{"map":{` + strings.Repeat(`"x":0,`, maxMembers) + `"language":"erlang"}}]}`,
	} {
		if _, err := ParseJob([]byte(body)); err == nil {
			t.Fatalf("%.60s...: parsed", body)
		}
	}
}

func TestCountItems(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{
		`[]`: 0, ` [ ] `: 0, `{}`: 0, `[1]`: 1, `[[]]`: 1, `[{}]`: 1, `[1,2,3]`: 3, `["a,b","c]"]`: 2,
		`["\"",[1,2],{"a":[3,4]}]`: 3, `{"a":1,"b":[1,2]}`: 2, `{"a,":"}"}`: 1, `[[],[],[]]`: 3,
		`1`: -1, `"x"`: -1, `null`: -1, ``: -1,
	} {
		if got := countItems([]byte(raw)); got != want {
			t.Errorf("countItems(%s) = %d, want %d", raw, got, want)
		}
	}
}

func TestReduceBatch(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]int{
		``:                                 DefaultReduceBatch,
		`null`:                             DefaultReduceBatch,
		`5`:                                DefaultReduceBatch,
		`{"reduce_phase_batch_size":3}`:    3,
		`{"reduce_phase_batch_size":2.5}`:  3,
		`{"reduce_phase_batch_size":0}`:    1,
		`{"reduce_phase_batch_size":-4}`:   1,
		`{"reduce_phase_batch_size":"x"}`:  0,
		`{"reduce_phase_batch_size":null}`: 0,
		`{"reduce_phase_only_1":true}`:     0,
		`{"reduce_phase_only_1":false}`:    DefaultReduceBatch,
		`{"reduce_phase_only_1":"true"}`:   DefaultReduceBatch,
		`{"reduce_phase_batch_size":1e40}`: 0,
		`{"other":1,"reduce_phase_only_1":true,"reduce_phase_batch_size":4}`: 0,
	} {
		var raw json.RawMessage
		if arg != "" {
			raw = json.RawMessage(arg)
		}
		if got := reduceBatch(raw); got != want {
			t.Errorf("reduceBatch(%s) = %d, want %d", arg, got, want)
		}
	}
}

func TestInputJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in       Input
		want, nf string
	}{
		{Input{Type: "default", Bucket: "b", Key: "k"}, `["b","k"]`, `{"not_found":{"bucket":"b","key":"k","keydata":"undefined"}}`},
		{Input{Type: "default", Bucket: "b", Key: "k", KeyData: json.RawMessage(`null`)}, `["b","k"]`, `{"not_found":{"bucket":"b","key":"k","keydata":null}}`},
		{Input{Type: "default", Bucket: "b", Key: "k\"<", KeyData: json.RawMessage(`{"a":[1]}`)}, `["b","k\"<",{"a":[1]}]`, `{"not_found":{"bucket":"b","key":"k\"<","keydata":{"a":[1]}}}`},
		{Input{Type: "t", Bucket: "b", Key: "k", Typed: true}, `["b","k",null,"t"]`, `{"not_found":{"bucket_type":"t","bucket":"b","key":"k","keydata":"undefined"}}`},
		{Input{Type: "t", Bucket: "b", Key: "k", Typed: true, KeyData: json.RawMessage(`7`)}, `["b","k",7,"t"]`, `{"not_found":{"bucket_type":"t","bucket":"b","key":"k","keydata":7}}`},
	} {
		if got := string(tc.in.json()); got != tc.want {
			t.Errorf("%+v: json %s, want %s", tc.in, got, tc.want)
		}
		if got := string(notFoundJSON(tc.in)); got != tc.nf {
			t.Errorf("%+v: not found %s, want %s", tc.in, got, tc.nf)
		}
	}
}

// FuzzParseJob checks that any body either parses or gives a *ParseError with one of the
// reference's headlines, never a panic, and that a parsed job is self-consistent.
func FuzzParseJob(f *testing.F) {
	for _, s := range []string{
		`{"inputs":"b","query":[]}`,
		`{"inputs":["t","b"],"query":[{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_object_value"}}]}`,
		`{"inputs":[["b","k"],["b","k2","kd"],["b","k3",{"x":1},"t"]],"query":[{"map":{"language":"javascript","name":"Riak.mapValuesJson"}},{"reduce":{"language":"javascript","source":"function(v){return v;}","keep":true}}],"timeout":500}`,
		`{"inputs":{"bucket":"b","key_filters":[["tokenize","-",1],["string_to_int"],["less_than",50]]},"query":[{"link":{"bucket":"x","tag":"y"}}]}`,
		`{"inputs":{"bucket":["t","b"],"index":"age_int","start":1,"end":10},"query":[{"reduce":{"language":"erlang","module":"m","function":"f","arg":{"reduce_phase_batch_size":2}}}]}`,
		`{"inputs":{"bucket":"b","index":"$key","start":"a","end":"z"},"query":[{"map":{"language":"wasm","module":"w","function":"f"}}]}`,
		`{"inputs":[],"query":[]}`,
		`{"inputs":"b","query":[{"link":{"keep":"x"}}]}`,
		`{"inputs":"b","query":[],"timeout":-1}`,
		`{"inputs":"b","query":[],"timeout":3600000.5}`,
		`{"inputs":{"bucket":"b","key_filters":[["similar_to","abc",2]]},"query":[],"timeout":null}`,
		`[]`, `nope`, `{"inputs":{},"query":{}}`,
	} {
		f.Add([]byte(s))
	}
	headlines := []string{"The POST body was not valid JSON.\n", msgNotObject, msgMissingField, msgInputsError, msgQueryError,
		"An error occurred parsing the \"timeout\" field.\n", "The POST body has more than "}
	f.Fuzz(func(t *testing.T, body []byte) {
		job, err := ParseJob(body)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			ok := false
			for _, h := range headlines {
				ok = ok || strings.HasPrefix(pe.Message, h)
			}
			if !ok || !strings.HasSuffix(pe.Message, "\n") {
				t.Fatalf("unexpected message %q", pe.Message)
			}
			return
		}
		if job.Timeout < time.Millisecond || job.Timeout > MaxTimeout {
			t.Fatalf("timeout %v", job.Timeout)
		}
		if len(job.Query) > MaxPhases || len(job.Inputs.Keys) > MaxInputs {
			t.Fatalf("%d phases, %d inputs", len(job.Query), len(job.Inputs.Keys))
		}
		in := job.Inputs
		if in.Kind == InputKeys && len(in.Keys) == 0 {
			t.Fatal("an empty key list parsed")
		}
		if (in.Kind == InputKeyFilter) != (in.Filter != nil) {
			t.Fatal("filter and kind disagree")
		}
		for i, p := range job.Query {
			if i == len(job.Query)-1 && !strings.Contains(string(body), "keep") && !p.Keep {
				t.Fatal("the last phase is not kept by default")
			}
			switch p.Kind {
			case Link:
				if p.Language != "" {
					t.Fatal("a link phase with a language")
				}
			case Map, Reduce:
				switch p.Language {
				case LangErlang, LangWASM, LangJavaScript:
				default:
					t.Fatalf("phase %d: language %q", i, p.Language)
				}
			}
			for _, k := range in.Keys {
				if k.KeyData != nil && !json.Valid(k.KeyData) {
					t.Fatal("invalid key data")
				}
			}
		}
	})
}

// FuzzCountItems checks the scanner that sizes a job's arrays and objects before they
// are decoded against the JSON decoder's own count.
func FuzzCountItems(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a,b",[2,3],{"x":[4]}]`, `{"a":"}","b":{"c":1}}`, ` [ "\"" , "\\" ] `, `"s"`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := []byte(s)
		if !json.Valid(raw) {
			return
		}
		var es []json.RawMessage
		want := -1
		switch jsonKind(raw) {
		case '[':
			if err := json.Unmarshal(raw, &es); err != nil {
				t.Fatal(err)
			}
			want = len(es)
		case '{':
			// Members are counted with duplicates, which a map merges: count them apart.
			dec := json.NewDecoder(strings.NewReader(s))
			_, _ = dec.Token()
			want = 0
			for dec.More() {
				if _, err := dec.Token(); err != nil {
					t.Fatal(err)
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				want++
			}
		}
		if got := countItems(raw); got != want {
			t.Fatalf("countItems(%s) = %d, want %d", s, got, want)
		}
	})
}
