package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// Fake extension functions: each kind adapts a Go function to its core/hooks interface.
type (
	fakeMap    func(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error)
	fakeReduce func(ctx context.Context, vals []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error)
	fakeLink   func(ctx context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error)
)

func (f fakeMap) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	return f(ctx, in)
}
func (f fakeReduce) Reduce(ctx context.Context, vals []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	return f(ctx, vals, arg)
}
func (f fakeLink) Links(ctx context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
	return f(ctx, obj, bucket, tag)
}

// fakeProvider serves funcs ("mod:fun" → fakeMap, fakeReduce or fakeLink) as a runtime
// of its kind.
type fakeProvider struct {
	kind  string
	funcs map[string]any
}

func (p *fakeProvider) Kind() string { return p.kind }
func (p *fakeProvider) HasModule(mod string) bool {
	for k := range p.funcs {
		if strings.HasPrefix(k, mod+":") {
			return true
		}
	}
	return false
}
func (p *fakeProvider) Lookup(mod, fun string, pt hooks.Point) (any, error) {
	f, ok := p.funcs[mod+":"+fun]
	if !ok {
		return nil, fmt.Errorf("fake: %w: %s:%s", hooks.ErrNoFunction, mod, fun)
	}
	return f, nil
}

// fakeJS is a JavaScript runtime: named functions, and "sources" whose text is a key of
// funcs; a source starting with "bad" does not compile.
type fakeJS struct {
	funcs map[string]any
}

func (p *fakeJS) Kind() string            { return hooks.KindJavaScript }
func (p *fakeJS) HasModule(_ string) bool { return false }
func (p *fakeJS) Lookup(_, name string, _ hooks.Point) (any, error) {
	f, ok := p.funcs[name]
	if !ok {
		return nil, fmt.Errorf("js: %w: %s", hooks.ErrNoFunction, name)
	}
	return f, nil
}
func (p *fakeJS) FromSource(_ context.Context, src string, _ hooks.Point) (any, error) {
	if strings.HasPrefix(src, "bad") {
		return nil, fmt.Errorf("%w: SyntaxError: unexpected token", hooks.ErrNoFunction)
	}
	return p.Lookup("", src, 0)
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func str2json(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

// valueOf is an object's first live value, or "" for a tombstone.
func valueOf(o *core.Object) string {
	v, _ := liveValue(o)
	return v
}

// testFuncs are the fake functions every test environment has.
func testFuncs(rec *recorder) map[string]any {
	return map[string]any{
		// value: the object's value as a string; a missing object gives {"missing":K}.
		"t:value": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			if in.Object == nil {
				return []json.RawMessage{raw(`{"missing":` + string(str2json(in.NotFound.Key)) + `}`)}, nil
			}
			return []json.RawMessage{str2json(valueOf(in.Object))}, nil
		}),
		// number: the object's value read as JSON.
		"t:number": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			if in.Object == nil {
				return nil, nil
			}
			return []json.RawMessage{raw(valueOf(in.Object))}, nil
		}),
		// echo: [key, keydata|"none", arg|"none"].
		"t:echo": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			key := ""
			if in.Object != nil {
				key = in.Object.Key
			} else {
				key = "nf:" + in.NotFound.Type + "/" + in.NotFound.Bucket + "/" + in.NotFound.Key
			}
			kd, arg := json.RawMessage(`"none"`), json.RawMessage(`"none"`)
			if in.KeyData != nil {
				kd = in.KeyData
			}
			if in.Arg != nil {
				arg = in.Arg
			}
			return []json.RawMessage{raw(`[` + string(str2json(key)) + `,` + string(kd) + `,` + string(arg) + `]`)}, nil
		}),
		// bkey: [[bucket, key]], for chaining map phases.
		"t:bkey": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			if in.Object == nil {
				return nil, nil
			}
			return []json.RawMessage{raw(`[` + string(str2json(valueOf(in.Object))) + `,"k1"]`)}, nil
		}),
		// slow: the key, after a random pause, so that workers finish out of order.
		"t:slow": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return []json.RawMessage{str2json(in.Object.Key)}, nil
		}),
		// failarg: fails on the object whose key is the phase's argument.
		"t:failarg": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			if in.Object == nil {
				return nil, nil
			}
			if string(str2json(in.Object.Key)) == string(in.Arg) {
				return nil, &hooks.CallError{Kind: hooks.Failed, Module: "t", Function: "failarg", Err: errors.New("boom on " + in.Object.Key)}
			}
			return []json.RawMessage{str2json(valueOf(in.Object))}, nil
		}),
		// self: [[bucket, key, keydata]] of the input (found or not), for chaining map phases.
		"t:self": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			b, k := "", ""
			if in.Object != nil {
				b, k = in.Object.Bucket, in.Object.Key
			} else {
				b, k = in.NotFound.Bucket, in.NotFound.Key
			}
			kd := json.RawMessage("null")
			if in.KeyData != nil {
				kd = in.KeyData
			}
			return []json.RawMessage{raw(`[` + string(str2json(b)) + `,` + string(str2json(k)) + `,` + string(kd) + `]`)}, nil
		}),
		// mixed: like self, but the object whose key is the argument gives a number (not
		// an input of a map phase).
		"t:mixed": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			if in.Object != nil && string(str2json(in.Object.Key)) == string(in.Arg) {
				return []json.RawMessage{raw(`42`)}, nil
			}
			return []json.RawMessage{raw(`[` + string(str2json(in.Object.Bucket)) + `,` + string(str2json(in.Object.Key)) + `]`)}, nil
		}),
		"t:fail": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			return nil, &hooks.CallError{Kind: hooks.Failed, Module: "t", Function: "fail", Err: errors.New("boom")}
		}),
		"t:badjson": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			return []json.RawMessage{raw(`{not json`)}, nil
		}),
		"t:panic": fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			panic("oops")
		}),
		// block: waits for the job to end.
		"t:block": fakeMap(func(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			rec.started()
			<-ctx.Done()
			return nil, &hooks.CallError{Kind: hooks.TimedOut, Err: ctx.Err()}
		}),
		// sum: the sum of the numbers.
		"t:sum": fakeReduce(func(_ context.Context, vals []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
			var n float64
			for _, v := range vals {
				var f float64
				if err := json.Unmarshal(v, &f); err == nil {
					n += f
				}
			}
			return []json.RawMessage{raw(strconv.FormatFloat(n, 'f', -1, 64))}, nil
		}),
		// collect: records the number of values of each call and returns them unchanged.
		"t:collect": fakeReduce(func(_ context.Context, vals []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
			rec.call(len(vals))
			return vals, nil
		}),
		// none: returns nothing.
		"t:none": fakeReduce(func(_ context.Context, vals []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
			return []json.RawMessage{}, nil
		}),
		"t:rfail": fakeReduce(func(_ context.Context, vals []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
			return nil, errors.New("cannot reduce")
		}),
		// links: every link of the object, tag upper-cased (a custom linkfun).
		"t:links": fakeLink(func(_ context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
			var out []core.Link
			for _, l := range obj.MatchingLinks("_", "_") {
				out = append(out, core.Link{Bucket: l.Bucket, Key: l.Key, Tag: strings.ToUpper(l.Tag)})
			}
			return out, nil
		}),
		"t:linkfail": fakeLink(func(_ context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
			return nil, errors.New("no links today")
		}),
	}
}

// recorder records what fake functions saw.
type recorder struct {
	mu    sync.Mutex
	calls []int
	start chan struct{}
}

func (r *recorder) call(n int) {
	r.mu.Lock()
	r.calls = append(r.calls, n)
	r.mu.Unlock()
}

func (r *recorder) started() {
	select {
	case r.start <- struct{}{}:
	default:
	}
}

func (r *recorder) reset() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

type env struct {
	kv  *kv.Service
	mr  *Service
	rec *recorder
	// streamers are the streaming functions of the registry.
	streamers []*fakeStreamer
}

// newEnv returns a store with the bucket type "t" and a MapReduce service whose
// registry has the fake functions (and the fake JavaScript runtime unless noJS). Every
// map function "t:F" has a streaming twin "s:F" (see fakeStreamer).
func newEnv(t testing.TB, cfg Config, noJS bool) *env {
	t.Helper()
	return newEnvWith(t, cfg, noJS, nil)
}

// newEnvWith is newEnv with more functions: extra ("mod:fun" → implementation) adds
// to the fake runtime's functions, and "js:Name" entries to the JavaScript runtime's.
func newEnvWith(t testing.TB, cfg Config, noJS bool, extra map[string]any) *env {
	t.Helper()
	rec := &recorder{start: make(chan struct{}, 1)}
	funcs := testFuncs(rec)
	for k, f := range funcs {
		if m, ok := f.(fakeMap); ok && strings.HasPrefix(k, "t:") {
			funcs["s:"+k[2:]] = newStreamer(m, streamOpts{})
		}
	}
	jsFuncs := map[string]any{"Fake.value": funcs["t:value"], "Fake.sum": funcs["t:sum"], "fake-source": funcs["t:value"]}
	for k, f := range extra {
		if name, ok := strings.CutPrefix(k, "js:"); ok {
			jsFuncs[name] = f
		} else {
			funcs[k] = f
		}
	}
	var streamers []*fakeStreamer
	for _, f := range funcs {
		if fs, ok := f.(*fakeStreamer); ok {
			streamers = append(streamers, fs)
		}
	}
	for _, f := range jsFuncs {
		if fs, ok := f.(*fakeStreamer); ok {
			streamers = append(streamers, fs)
		}
	}
	providers := []hooks.Provider{&fakeProvider{kind: hooks.KindNative, funcs: funcs}}
	if !noJS {
		providers = append(providers, &fakeJS{funcs: jsFuncs})
	}
	reg := hooks.NewRegistry(providers...)
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := kv.New(db, kv.Config{Hooks: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Close()
		db.Close()
	})
	if err := svc.CreateType(context.Background(), "t", nil); err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	mr := New(svc, reg, cfg)
	for _, fs := range streamers {
		fs.onRecv = func() {
			if len(mr.calls) == 0 {
				fs.fault("Recv while the phase holds no call slot")
			}
		}
	}
	return &env{kv: svc, mr: mr, rec: rec, streamers: streamers}
}

func (e *env) put(t testing.TB, typ, bucket, key, value string, links ...core.Link) {
	t.Helper()
	_, err := e.kv.Put(context.Background(), &kv.PutRequest{Type: typ, Bucket: bucket, Key: key,
		Value: core.Sibling{Value: []byte(value), ContentType: "text/plain", Links: links,
			Indexes: []core.IndexEntry{{Field: "v_bin", Value: value}}}})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

// run runs a job and returns its whole-body result.
func (e *env) run(t testing.TB, body string) (string, error) {
	t.Helper()
	return e.runCtx(context.Background(), t, body)
}

func (e *env) runCtx(ctx context.Context, t testing.TB, body string) (string, error) {
	t.Helper()
	job, err := ParseJob([]byte(body))
	if err != nil {
		t.Fatalf("ParseJob(%s): %v", body, err)
	}
	ex, err := e.mr.Start(ctx, job)
	if err != nil {
		return "", err
	}
	defer ex.Close()
	c := NewCollector(job, e.mr.MaxResultBytes())
	if err := ex.Run(c.Add); err != nil {
		return "", err
	}
	return string(c.Body()), nil
}

func (e *env) mustRun(t testing.TB, body, want string) {
	t.Helper()
	got, err := e.run(t, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", body, got, want)
	}
}

func mapPhase(fun string, extra ...string) string {
	return `{"map":{"language":"erlang","module":"t","function":"` + fun + `"` + strings.Join(extra, "") + `}}`
}

func reducePhase(fun string, extra ...string) string {
	return `{"reduce":{"language":"erlang","module":"t","function":"` + fun + `"` + strings.Join(extra, "") + `}}`
}

func job(inputs string, phases ...string) string {
	return `{"inputs":` + inputs + `,"query":[` + strings.Join(phases, ",") + `]}`
}

func TestRunInputs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	for _, k := range []string{"a1", "a2", "b1", "b2", "c"} {
		e.put(t, "default", "b", k, "v-"+k)
	}
	e.put(t, "t", "b", "typed", "v-typed")
	e.put(t, "default", "other", "x", "v-x")
	for _, tc := range []struct{ name, body, want string }{
		{"bucket", job(`"b"`, mapPhase("value")), `["v-a1","v-a2","v-b1","v-b2","v-c"]`},
		{"typed bucket", job(`["t","b"]`, mapPhase("value")), `["v-typed"]`},
		{"empty bucket", job(`"nothing"`, mapPhase("value")), `[]`},
		{"key list", job(`[["b","c"],["b","a1"],["other","x"],["b","nope"]]`, mapPhase("value")), `["v-c","v-a1","v-x",{"missing":"nope"}]`},
		{"key data", job(`[["b","c",{"n":1}],["b","a1"],["b","gone","kd"],["b","typed",null,"t"]]`, mapPhase("echo", `,"arg":[1]`)),
			`[["c",{"n":1},[1]],["a1","none",[1]],["nf:default/b/gone","kd",[1]],["typed",null,[1]]]`},
		{"key filter", job(`{"bucket":"b","key_filters":[["starts_with","a"]]}`, mapPhase("value")), `["v-a1","v-a2"]`},
		{"key filter or", job(`{"bucket":"b","key_filters":[["or",[["ends_with","1"]],[["eq","c"]]]]}`, mapPhase("value")), `["v-a1","v-b1","v-c"]`},
		{"typed key filter", job(`{"bucket":["t","b"],"key_filters":[["starts_with","ty"]]}`, mapPhase("value")), `["v-typed"]`},
		{"index exact", job(`{"bucket":"b","index":"v_bin","key":"v-b2"}`, mapPhase("value")), `["v-b2"]`},
		{"index range", job(`{"bucket":"b","index":"v_bin","start":"v-a2","end":"v-b2"}`, mapPhase("value")), `["v-a2","v-b1","v-b2"]`},
		{"index $key", job(`{"bucket":"b","index":"$key","start":"b","end":"bz"}`, mapPhase("value")), `["v-b1","v-b2"]`},
		{"index $bucket", job(`{"bucket":"other","index":"$bucket","key":"other"}`, mapPhase("value")), `["v-x"]`},
		{"typed index", job(`{"bucket":["t","b"],"index":"v_bin","key":"v-typed"}`, mapPhase("value")), `["v-typed"]`},
		{"empty query", job(`[["b","k"],["b","k2","kd"],["b","k3",null],["b","k4","kd","t"],["b","k5",null,"default"]]`),
			`[["b","k"],["b","k2","kd"],["b","k3"],["b","k4","kd","t"],["b","k5",null,"default"]]`},
		{"empty query over a typed bucket", job(`["t","b"]`), `[["b","typed",null,"t"]]`},
		{"empty query over a bucket", job(`"other"`), `[["other","x"]]`},
	} {
		t.Run(tc.name, func(t *testing.T) { e.mustRun(t, tc.body, tc.want) })
	}
	_, err := e.run(t, job(`["nosuchtype","b"]`, mapPhase("value")))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Message != msgInputsError+"Unknown bucket type: nosuchtype\n" {
		t.Errorf("unknown type: %v", err)
	}
	// A key list naming an unknown type reads as not found.
	e.mustRun(t, job(`[["b","k","kd","nosuchtype"]]`, mapPhase("echo")), `[["nf:nosuchtype/b/k","kd","none"]]`)
}

func TestRunJavaScriptNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	e.put(t, "default", "b", "k", "v")
	js := `{"map":{"language":"javascript","name":"Fake.value"}}`
	e.mustRun(t, job(`[["b","k"],["b","gone"],["b","gone2",{"x":1}],["b","gone3","kd","t"]]`, js),
		`["v",{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}},{"not_found":{"bucket":"b","key":"gone2","keydata":{"x":1}}},`+
			`{"not_found":{"bucket_type":"t","bucket":"b","key":"gone3","keydata":"kd"}}]`)
	// Erlang functions are called for missing objects.
	e.mustRun(t, job(`[["b","gone"]]`, mapPhase("value")), `[{"missing":"gone"}]`)
	// A tombstone is passed as an object.
	if _, err := e.kv.Delete(context.Background(), "default", "b", "k", kv.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.mustRun(t, job(`[["b","k"]]`, js), `[""]`)
}

func TestRunPhasesAndKeep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	for i := 1; i <= 3; i++ {
		e.put(t, "default", "n", "k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	e.put(t, "default", "ptr", "p", "n")
	in := `"n"`
	for _, tc := range []struct{ name, body, want string }{
		{"map reduce", job(in, mapPhase("number"), reducePhase("sum")), `[6]`},
		{"keep both", job(in, mapPhase("number", `,"keep":true`), reducePhase("sum")), `[[1,2,3],[6]]`},
		{"keep none", job(in, mapPhase("number"), reducePhase("sum", `,"keep":false`)), `[]`},
		{"keep first only", job(in, mapPhase("number", `,"keep":true`), reducePhase("sum", `,"keep":false`)), `[1,2,3]`},
		{"kept phase without output omitted", job(in, mapPhase("number", `,"keep":true`), reducePhase("none", `,"keep":true`), reducePhase("sum")),
			`[[1,2,3],[0]]`},
		{"reduce first", job(`[["n","k1"],["n","k2","kd"]]`, reducePhase("collect")), `[["n","k1"],["n","k2","kd"]]`},
		{"two reduces", job(in, mapPhase("number"), reducePhase("sum"), reducePhase("sum")), `[6]`},
		{"map after map", job(`[["ptr","p"]]`, mapPhase("bkey"), mapPhase("value")), `["1"]`},
		{"reduce over nothing", job(`"empty"`, mapPhase("number"), reducePhase("sum")), `[0]`},
		{"js by name", job(in, mapPhase("number"), `{"reduce":{"language":"javascript","name":"Fake.sum"}}`), `[6]`},
		{"js source", job(`[["n","k2"]]`, `{"map":{"language":"javascript","source":"fake-source"}}`), `["2"]`},
	} {
		t.Run(tc.name, func(t *testing.T) { e.mustRun(t, tc.body, tc.want) })
	}
	// The map then the reduce phase's batches stream in phase order.
	var got []string
	jb, _ := ParseJob([]byte(job(in, mapPhase("number", `,"keep":true`), reducePhase("sum"))))
	ex, err := e.mr.Start(context.Background(), jb)
	if err != nil {
		t.Fatal(err)
	}
	err = ex.Run(func(phase int, vals []json.RawMessage) error {
		got = append(got, string(AppendPhaseData(nil, phase, vals)))
		return nil
	})
	ex.Close()
	if err != nil || strings.Join(got, "") != `{"phase":0,"data":[1,2,3]}{"phase":1,"data":[6]}` &&
		strings.Join(got, "") != `{"phase":0,"data":[1]}{"phase":0,"data":[2,3]}{"phase":1,"data":[6]}` &&
		strings.Join(got, "") != `{"phase":0,"data":[1,2]}{"phase":0,"data":[3]}{"phase":1,"data":[6]}` &&
		!strings.HasSuffix(strings.Join(got, ""), `{"phase":1,"data":[6]}`) {
		t.Errorf("streamed %v, %v", got, err)
	}
}

func TestRunReduceBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	var keys []string
	for i := range 45 {
		keys = append(keys, `["b","k`+strconv.Itoa(i)+`"]`)
	}
	in := "[" + strings.Join(keys, ",") + "]"
	for _, tc := range []struct {
		name, arg string
		calls     []int
	}{
		{"default 20", ``, []int{20, 40, 45}},
		{"batch size 10", `,"arg":{"reduce_phase_batch_size":10}`, []int{10, 20, 30, 40, 45}},
		{"batch size 15 (exact)", `,"arg":{"reduce_phase_batch_size":15}`, []int{15, 30, 45}},
		{"only once", `,"arg":{"reduce_phase_only_1":true}`, []int{45}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.run(t, job(in, reducePhase("collect", tc.arg)))
			if err != nil {
				t.Fatal(err)
			}
			if calls := e.rec.reset(); !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %v, want %v", calls, tc.calls)
			}
			var vals []json.RawMessage
			if err := json.Unmarshal([]byte(out), &vals); err != nil || len(vals) != 45 || string(vals[44]) != `["b","k44"]` {
				t.Errorf("output %s", out)
			}
		})
	}
	e.mustRun(t, job(`"empty"`, reducePhase("collect")), `[]`)
	if calls := e.rec.reset(); !slices.Equal(calls, []int{0}) {
		t.Errorf("a reduce over nothing: calls %v, want [0]", calls)
	}
}

func TestRunLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	e.put(t, "default", "people", "alice", "a",
		core.Link{Bucket: "people", Key: "bob", Tag: "friend"}, core.Link{Bucket: "people", Key: "carol", Tag: "friend"},
		core.Link{Bucket: "pets", Key: "rex", Tag: "dog"})
	e.put(t, "default", "people", "bob", "b", core.Link{Bucket: "pets", Key: "tom", Tag: "cat"})
	e.put(t, "default", "people", "carol", "c")
	e.put(t, "default", "pets", "rex", "woof")
	e.put(t, "default", "pets", "tom", "meow")
	link := func(bucket, tag string, keep bool) string {
		return `{"link":{"bucket":"` + bucket + `","tag":"` + tag + `","keep":` + strconv.FormatBool(keep) + `}}`
	}
	start := `[["people","alice"],["people","nobody"]]`
	for _, tc := range []struct{ name, body, want string }{
		{"any", job(start, link("_", "_", true)), `[["people","bob","friend"],["people","carol","friend"],["pets","rex","dog"]]`},
		{"by bucket", job(start, link("pets", "_", true)), `[["pets","rex","dog"]]`},
		{"by tag", job(start, link("_", "friend", true)), `[["people","bob","friend"],["people","carol","friend"]]`},
		{"then map", job(start, link("_", "friend", false), mapPhase("echo")), `[["bob","friend","none"],["carol","friend","none"]]`},
		{"two steps", job(`[["people","alice"]]`, link("people", "_", false), link("_", "_", false), mapPhase("value")), `["meow"]`},
		{"kept steps", job(`[["people","alice"]]`, link("people", "_", true), link("_", "_", true), mapPhase("value")),
			`[[["people","bob","friend"],["people","carol","friend"]],[["pets","tom","cat"]],["meow"]]`},
		{"link to missing", job(`[["people","bob"]]`, link("_", "_", false), link("_", "_", false)), `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) { e.mustRun(t, tc.body, tc.want) })
	}
	// A bucket's own linkfun is used.
	if err := e.kv.SetProps(context.Background(), "default", "people", map[string]json.RawMessage{
		"linkfun": raw(`{"mod":"t","fun":"links"}`)}); err != nil {
		t.Fatal(err)
	}
	e.mustRun(t, job(`[["people","alice"]]`, link("_", "_", true)), `[["people","bob","FRIEND"],["people","carol","FRIEND"],["pets","rex","DOG"]]`)
	if err := e.kv.SetProps(context.Background(), "default", "people", map[string]json.RawMessage{
		"linkfun": raw(`{"mod":"t","fun":"linkfail"}`)}); err != nil {
		t.Fatal(err)
	}
	_, err := e.run(t, job(`[["people","alice"]]`, link("_", "_", true)))
	var pe *PhaseError
	if !errors.As(err, &pe) || pe.Phase != 0 || !strings.Contains(pe.Message, "no links today") || pe.Input != `["people","alice"]` {
		t.Errorf("failing linkfun: %#v", err)
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}, false)
	e.put(t, "default", "b", "k", "1")
	e.put(t, "default", "fns", "src", "fake-source")
	e.put(t, "default", "fns", "bad", "bad source")
	for _, tc := range []struct {
		name, body string
		phase      int
		msg, input string
	}{
		{"later map fails", job(`[["b","k"]]`, mapPhase("echo"), mapPhase("fail")), 1, "boom", `["k","none","none"]`},
		{"map fails on the input", job(`[["b","k","kd"]]`, mapPhase("fail")), 0, "boom", `["b","k","kd"]`},
		{"reduce fails", job(`[["b","k"]]`, mapPhase("number"), reducePhase("rfail")), 1, "cannot reduce", `[1]`},
		{"panic", job(`[["b","k"]]`, mapPhase("panic")), 0, "crashed: panic: oops", `["b","k"]`},
		{"not JSON", job(`[["b","k"]]`, mapPhase("badjson")), 0, "bad result: the function returned a value that is not JSON", `["b","k"]`},
		{"bad map input", job(`[["b","k"]]`, mapPhase("number"), mapPhase("value")), 1, "a map phase's inputs must be [bucket, key] or [bucket, key, keydata] lists", `1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.run(t, tc.body)
			var pe *PhaseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *PhaseError", err)
			}
			if pe.Phase != tc.phase || pe.Message != tc.msg || pe.Input != tc.input {
				t.Errorf("got %#v, want phase %d %q input %q", pe, tc.phase, tc.msg, tc.input)
			}
		})
	}
	for _, tc := range []struct {
		name, body string
		phase      int
		msg        string
	}{
		{"unknown module", job(`"b"`, mapPhase("value"), `{"map":{"language":"erlang","module":"nope","function":"f"}}`), 1, "unknown module nope"},
		{"unknown function", job(`"b"`, mapPhase("nope")), 0, "t:nope is not a map function"},
		{"map as reduce", job(`"b"`, reducePhase("value")), 0, "t:value is not a reduce function"},
		{"erlang source", job(`"b"`, `{"map":{"language":"erlang","source":"fun(_,_,_) -> [] end."}}`), 0,
			`Erlang functions given as source are not allowed; name a built-in function with "module" and "function"`},
		{"no wasm module", job(`"b"`, `{"map":{"language":"wasm","module":"w","function":"f"}}`), 0, "no WebAssembly module named w is registered"},
		{"unknown js name", job(`"b"`, `{"map":{"language":"javascript","name":"Riak.nope"}}`), 0, "no JavaScript function named Riak.nope"},
		{"js does not compile", job(`"b"`, `{"map":{"language":"javascript","source":"bad function("}}`), 0, "no such function: SyntaxError: unexpected token"},
		{"stored js missing", job(`"b"`, `{"map":{"language":"javascript","bucket":"fns","key":"nope"}}`), 0,
			"the object fns/nope that should hold the function's source was not found"},
		{"stored js bad", job(`"b"`, `{"map":{"language":"javascript","bucket":"fns","key":"bad"}}`), 0, "no such function: SyntaxError: unexpected token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.run(t, tc.body)
			var se *SetupError
			if !errors.As(err, &se) || se.Phase != tc.phase || se.Message != tc.msg {
				t.Errorf("got %#v, want phase %d %q", err, tc.phase, tc.msg)
			}
		})
	}
	// The stored source works when present.
	e.mustRun(t, job(`[["b","k"]]`, `{"map":{"language":"javascript","bucket":"fns","key":"src"}}`), `["1"]`)

	noJS := newEnv(t, Config{}, true)
	for _, spec := range []string{`"source":"function(v){return [v];}"`, `"name":"Riak.mapValues"`} {
		_, err := noJS.run(t, job(`"b"`, `{"map":{"language":"javascript",`+spec+`}}`))
		var se *SetupError
		if !errors.As(err, &se) || se.Message != "JavaScript functions are not available on this server" {
			t.Errorf("%s without JavaScript: %v", spec, err)
		}
	}
}

func TestRunLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxResultBytes: 100}, false)
	var keys []string
	for i := range 30 {
		keys = append(keys, `["b","k`+strconv.Itoa(i)+`"]`)
	}
	in := "[" + strings.Join(keys, ",") + "]"
	_, err := e.run(t, job(in, mapPhase("echo")))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != 100 {
		t.Errorf("big result: %v", err)
	}
	_, err = e.run(t, job(in, reducePhase("collect", `,"arg":{"reduce_phase_only_1":true}`)))
	var pe *PhaseError
	if !errors.As(err, &pe) || pe.Phase != 0 || pe.Message != "the reduce phase's inputs exceed 100 bytes" {
		t.Errorf("big reduce: %v", err)
	}
}

// goroutines waits for the number of goroutines to fall back to at most n.
func goroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunEnds checks that a timeout, a cancelled caller and a failing phase stop every
// goroutine of a job over a large bucket, and free its slot. It does not run in
// parallel, so that it can count goroutines.
func TestRunEnds(t *testing.T) {
	e := newEnv(t, Config{MaxJobs: 1, Workers: 4}, false)
	for i := range 3000 {
		e.put(t, "default", "big", fmt.Sprintf("k%05d", i), strconv.Itoa(i))
	}
	base := runtime.NumGoroutine()

	start := time.Now()
	_, err := e.run(t, `{"inputs":"big","timeout":100,"query":[`+mapPhase("block")+`,`+reducePhase("sum")+`]}`)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	goroutines(t, base)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.runCtx(ctx, t, job(`"big"`, mapPhase("block"), reducePhase("sum")))
		done <- err
	}()
	<-e.rec.start
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	goroutines(t, base)

	_, err = e.run(t, job(`"big"`, mapPhase("number"), mapPhase("fail", `,"keep":true`), reducePhase("sum")))
	var pe *PhaseError
	if !errors.As(err, &pe) {
		t.Fatalf("failing phase: %v", err)
	}
	goroutines(t, base)

	// The one job slot is free again, and a whole bucket streams through.
	e.mustRun(t, job(`"big"`, mapPhase("number"), reducePhase("sum")), `[4498500]`)

	// A job waiting for a slot times out.
	jb, _ := ParseJob([]byte(job(`"big"`, mapPhase("block"))))
	first, err := e.mr.Start(context.Background(), jb)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.run(t, `{"inputs":"big","timeout":50,"query":[]}`)
	first.Close()
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("waiting for a slot: %v", err)
	}
	goroutines(t, base)
}

func TestRunOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Workers: 8}, false)
	var want []string
	for i := range 500 {
		k := fmt.Sprintf("k%04d", i)
		e.put(t, "default", "o", k, "v")
		want = append(want, `"`+k+`"`)
	}
	e.mustRun(t, job(`"o"`, mapPhase("slow")), "["+strings.Join(want, ",")+"]")
}

func TestCollector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		adds  []result
		want  string
	}{
		{`[]`, []result{{0, []json.RawMessage{raw(`["b","k"]`)}}}, `[["b","k"]]`},
		{`[{"map":{"language":"erlang","module":"m","function":"f"}}]`, nil, `[]`},
		{`[{"map":{"language":"erlang","module":"m","function":"f"}}]`, []result{{0, []json.RawMessage{raw(`1`), raw(`2`)}}, {0, []json.RawMessage{raw(`3`)}}}, `[1,2,3]`},
		{`[{"map":{"language":"erlang","module":"m","function":"f","keep":true}},{"link":{}}]`,
			[]result{{1, []json.RawMessage{raw(`2`)}}, {0, []json.RawMessage{raw(`1`)}}, {1, []json.RawMessage{raw(`3`)}}}, `[[1],[2,3]]`},
		{`[{"map":{"language":"erlang","module":"m","function":"f","keep":true}},{"link":{}}]`, []result{{1, []json.RawMessage{raw(`2`)}}}, `[[2]]`},
		{`[{"map":{"language":"erlang","module":"m","function":"f","keep":true}},{"link":{}}]`, nil, `[]`},
	} {
		jb, err := ParseJob([]byte(`{"inputs":"b","query":` + tc.query + `}`))
		if err != nil {
			t.Fatal(err)
		}
		c := NewCollector(jb, 1000)
		for _, a := range tc.adds {
			if err := c.Add(a.phase, a.values); err != nil {
				t.Fatal(err)
			}
		}
		if got := string(c.Body()); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
}
