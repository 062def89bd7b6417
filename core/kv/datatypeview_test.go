package kv

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/abi"
)

// replaceWith is a precommit that replaces the object it is given by what edit makes of
// a copy of its first value.
func replaceWith(edit func(v *core.Sibling)) precommitFunc {
	return func(_ context.Context, _ hooks.Op, o *core.Object) (hooks.Verdict, error) {
		r := *o
		v := r.Siblings[0]
		v.Meta = append([]core.MetaEntry(nil), v.Meta...)
		edit(&v)
		r.Siblings = []core.Sibling{v}
		return hooks.Verdict{Replace: &r}, nil
	}
}

// TestDatatypePrecommitView: precommit hooks see the update's data-type view (Riak's
// JSON with the type, application/json, the Datatype metadata entry), can reject it, can
// return it unchanged (even reformatted), and a replacement that changes anything is
// refused with a 500 naming the hook; nothing is stored when an update is refused.
func TestDatatypePrecommitView(t *testing.T) {
	var mu sync.Mutex // guards seen
	var seen []core.Sibling
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"look": precommitFunc(func(_ context.Context, _ hooks.Op, o *core.Object) (hooks.Verdict, error) {
			mu.Lock()
			seen = append(seen, o.Siblings...)
			mu.Unlock()
			if strings.Contains(string(o.Siblings[0].Value), "forbidden") {
				return hooks.Verdict{Reject: true, Reason: "no forbidden elements"}, nil
			}
			return hooks.Verdict{}, nil
		}),
		"same": replaceWith(func(v *core.Sibling) {
			v.Value = []byte(" {\n \"value\" : [ \"a\" ] , \"type\":\"set\"}")
			v.Meta[0].Name = "DATATYPE"
		}),
		"value":   replaceWith(func(v *core.Sibling) { v.Value = []byte(`{"type":"set","value":["a","x"]}`) }),
		"ctype":   replaceWith(func(v *core.Sibling) { v.ContentType = "text/plain" }),
		"meta":    replaceWith(func(v *core.Sibling) { v.Meta = append(v.Meta, core.MetaEntry{Name: "By", Value: "hook"}) }),
		"index":   replaceWith(func(v *core.Sibling) { v.Indexes = []core.IndexEntry{{Field: "x_bin", Value: "1"}} }),
		"notjson": replaceWith(func(v *core.Sibling) { v.Value = []byte(`{"type":"set","value":["a"]`) }),
		"twovalue": precommitFunc(func(_ context.Context, _ hooks.Op, o *core.Object) (hooks.Verdict, error) {
			r := *o
			r.Siblings = []core.Sibling{o.Siblings[0], o.Siblings[0]}
			return hooks.Verdict{Replace: &r}, nil
		}),
	}}}
	obs := &hookObserver{postSignal: make(chan struct{}, 16)}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), Observer: obs})
	create := func(name, hook string) {
		t.Helper()
		if err := s.CreateType(ctx, name, props(t, `{"datatype":"set","precommit":[{"mod":"m","fun":"look"},{"mod":"m","fun":"`+hook+`"}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	create("same", "same")
	if _, err := dtUpdate(t, s, "same", "k", `{"add":"a"}`); err != nil {
		t.Fatalf("a hook returning the view reformatted: %v", err)
	}
	if r, err := s.DatatypeFetch(ctx, "same", "b", "k", GetOptions{}); err != nil || valueJSON(t, r) != `["a"]` {
		t.Fatalf("after an accepted update: %v %v", r, err)
	}
	if len(seen) != 1 {
		t.Fatalf("precommit saw %d values", len(seen))
	}
	v := seen[0]
	if string(v.Value) != `{"type":"set","value":["a"]}` || v.ContentType != "application/json" ||
		len(v.Meta) != 1 || v.Meta[0] != (core.MetaEntry{Name: DatatypeMetaName, Value: "set"}) {
		t.Errorf("precommit view %+v", v)
	}
	if _, err := dtUpdate(t, s, "same", "k", `{"add":"forbidden"}`); core.ErrorCode(err) != core.EFORBIDDEN || core.ErrorMessage(err) != "no forbidden elements" {
		t.Errorf("rejected update: %v", err)
	}

	refused := []struct{ hook, what string }{
		{"value", "changed the value"},
		{"ctype", "changed the content type"},
		{"meta", "changed the metadata"},
		{"index", "added links or index entries"},
		{"notjson", "changed the value"},
		{"twovalue", "returned 2 values instead"},
	}
	for _, tc := range refused {
		create(tc.hook, tc.hook)
		_, err := dtUpdate(t, s, tc.hook, "k", `{"add":"a"}`)
		want := "precommit hook m:" + tc.hook + " " + tc.what + " of the set it was given: " + errViewChanged.Error() + "\n"
		if core.ErrorCode(err) != core.EINTERNAL || core.ErrorMessage(err) != want {
			t.Errorf("%s: %v, want %q", tc.hook, err, want)
		}
		if _, err := s.DatatypeFetch(ctx, tc.hook, "b", "k", GetOptions{}); !IsNotFound(err) {
			t.Errorf("%s: a refused update was stored: %v", tc.hook, err)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.pre != len(refused)+1 {
		t.Errorf("precommit failures counted %d, want %d", obs.pre, len(refused)+1)
	}
}

// TestDatatypePostcommitView: postcommit hooks of an update see the view of what was
// stored, with its VTag and Last-Modified.
func TestDatatypePostcommitView(t *testing.T) {
	got := make(chan *core.Object, 1)
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"post": postcommitFunc(func(_ context.Context, _ hooks.Op, o *core.Object) error { got <- o; return nil }),
	}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov)})
	if err := s.CreateType(ctx, "maps", props(t, `{"datatype":"map","postcommit":[{"mod":"m","fun":"post"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := dtUpdate(t, s, "maps", "k", `{"update":{"n_counter":3,"f_flag":"enable"}}`); err != nil {
		t.Fatal(err)
	}
	var o *core.Object
	select {
	case o = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("postcommit not run")
	}
	stored, err := s.Get(ctx, "maps", "b", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Siblings) != 1 || o.Key != "k" || o.Type != "maps" {
		t.Fatalf("postcommit object %+v", o)
	}
	v := o.Siblings[0]
	if string(v.Value) != `{"type":"map","value":{"f_flag":true,"n_counter":3}}` || v.ContentType != "application/json" ||
		v.Meta[0].Value != "map" || v.VTag != stored.Siblings[0].VTag || !v.LastModified.Equal(stored.Siblings[0].LastModified) {
		t.Errorf("postcommit view %+v (stored VTag %s)", v, stored.Siblings[0].VTag)
	}
}

// TestHookView: what MapReduce hands its functions. Plain objects (even with a
// data type's content type in a plain bucket) are the same object; a datatype object's
// siblings merge into one view where the first was, tombstones and other content types
// kept; a corrupt sibling is an error.
func TestHookView(t *testing.T) {
	s := dtService(t)
	setA, setB := datatype.New(datatype.Set), datatype.New(datatype.Set)
	for i, v := range []*datatype.Data{&setA, &setB} {
		op, _ := datatype.ParseOp(datatype.Set, []byte(`{"add":"e`+string(rune('0'+i))+`"}`))
		*v, _ = datatype.Apply(*v, op, datatype.Writer{Actor: "n" + string(rune('0'+i))})
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	setCT := DatatypeContentType(datatype.Set)
	plain := core.Sibling{Value: []byte("p"), ContentType: "text/plain", VTag: "p"}
	tomb := core.Sibling{Deleted: true, VTag: "d"}
	view := func(vtag string, at time.Time, value string) core.Sibling {
		return core.Sibling{Value: []byte(value), ContentType: "application/json", VTag: vtag, LastModified: at,
			Meta: []core.MetaEntry{{Name: "Datatype", Value: "set"}}}
	}
	tests := []struct {
		name string
		obj  *core.Object
		want []core.Sibling // nil: the object itself
		code string
	}{
		{"plain bucket", &core.Object{Type: "plain", Bucket: "b", Key: "k", Siblings: []core.Sibling{
			{Value: datatype.Marshal(setA), ContentType: setCT}}}, nil, ""},
		{"no datatype sibling", &core.Object{Type: "sets", Bucket: "b", Key: "k", Siblings: []core.Sibling{plain, tomb}}, nil, ""},
		{"siblings merged", &core.Object{Type: "sets", Bucket: "b", Key: "k", Siblings: []core.Sibling{
			plain,
			{Value: datatype.Marshal(setA), ContentType: setCT, VTag: "a", LastModified: t0},
			tomb,
			{Value: datatype.Marshal(setB), ContentType: setCT, VTag: "b", LastModified: t0.Add(time.Second)},
		}}, []core.Sibling{plain, view("b", t0.Add(time.Second), `{"type":"set","value":["e0","e1"]}`), tomb}, ""},
		{"corrupt", &core.Object{Type: "sets", Bucket: "b", Key: "k", Siblings: []core.Sibling{
			{Value: []byte{0xff}, ContentType: setCT}}}, nil, core.EINTERNAL},
	}
	for _, tc := range tests {
		got, err := s.HookView(ctx, tc.obj)
		if tc.code != "" {
			if core.ErrorCode(err) != tc.code {
				t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == nil {
			if got != tc.obj {
				t.Errorf("%s: not the object itself: %+v", tc.name, got)
			}
			continue
		}
		if len(got.Siblings) != len(tc.want) {
			t.Fatalf("%s: %d siblings, want %d", tc.name, len(got.Siblings), len(tc.want))
		}
		for i := range tc.want {
			g, w := got.Siblings[i], tc.want[i]
			if string(g.Value) != string(w.Value) || g.ContentType != w.ContentType || g.VTag != w.VTag ||
				!g.LastModified.Equal(w.LastModified) || len(g.Meta) != len(w.Meta) || (len(w.Meta) > 0 && g.Meta[0] != w.Meta[0]) {
				t.Errorf("%s: sibling %d = %+v, want %+v", tc.name, i, g, w)
			}
		}
	}
	if DatatypeMetaName != abi.UserMetaDatatype {
		t.Errorf("the view's marker %q is not the ABI's %q", DatatypeMetaName, abi.UserMetaDatatype)
	}
	if got, err := s.HookView(ctx, nil); got != nil || err != nil {
		t.Errorf("HookView(nil) = %v, %v", got, err)
	}
}

// TestDatatypeTTL: an update gives the key the TTL it asks for, else the bucket's ttl;
// an expired key reads as not found and the next update starts from an empty value; a
// TTL out of bounds is refused as on a PUT, writing nothing.
func TestDatatypeTTL(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now})
	for name, p := range map[string]string{"counters": `{"datatype":"counter"}`, "ttlsets": `{"datatype":"set","ttl":60}`} {
		if err := s.CreateType(ctx, name, props(t, p)); err != nil {
			t.Fatal(err)
		}
	}
	update := func(typ, key, body string, ttl *int64) (DatatypeResult, error) {
		k, _ := s.DatatypeKind(ctx, typ, "b")
		op, err := datatype.ParseOp(k, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return s.DatatypeUpdate(ctx, typ, "b", key, op, PutOptions{TTL: ttl})
	}
	start := clk.Now()
	tests := []struct {
		typ, key string
		ttl      *int64
		expiry   time.Time // zero: never
	}{
		{"counters", "own", ttlOf(10), start.Add(10 * time.Second)},
		{"counters", "none", nil, time.Time{}},
		{"ttlsets", "bucket", nil, start.Add(60 * time.Second)},
		{"ttlsets", "zero", ttlOf(0), time.Time{}},
	}
	body := map[string]string{"counters": `5`, "ttlsets": `{"add":"a"}`}
	for _, tc := range tests {
		r, err := update(tc.typ, tc.key, body[tc.typ], tc.ttl)
		if err != nil || !r.Expiry.Equal(tc.expiry) {
			t.Fatalf("%s/%s: expiry %v (%v), want %v", tc.typ, tc.key, r.Expiry, err, tc.expiry)
		}
		if f, err := s.DatatypeFetch(ctx, tc.typ, "b", tc.key, GetOptions{}); err != nil || !f.Expiry.Equal(tc.expiry) {
			t.Fatalf("%s/%s: fetched expiry %v (%v), want %v", tc.typ, tc.key, f.Expiry, err, tc.expiry)
		}
	}
	if _, err := update("counters", "bad", `1`, ttlOf(MaxTTLSeconds+1)); core.ErrorCode(err) != core.EINVALID ||
		!strings.HasPrefix(core.ErrorMessage(err), "Invalid TTL") {
		t.Errorf("TTL out of range: %v", err)
	}
	if _, err := s.DatatypeFetch(ctx, "counters", "b", "bad", GetOptions{}); !IsNotFound(err) {
		t.Errorf("a refused update was stored: %v", err)
	}

	clk.Add(10 * time.Second)
	if _, err := s.DatatypeFetch(ctx, "counters", "b", "own", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("expired counter read: %v", err)
	}
	if r, err := update("counters", "own", `2`, nil); err != nil || valueJSON(t, r) != `2` || !r.Expiry.IsZero() {
		t.Fatalf("update of an expired counter: %v %v, want 2 never expiring", r, err)
	}
	clk.Add(50 * time.Second)
	if _, err := s.DatatypeFetch(ctx, "ttlsets", "b", "bucket", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("set expired by the bucket's ttl read: %v", err)
	}
	if r, err := update("ttlsets", "bucket", `{"add":"b"}`, nil); err != nil || valueJSON(t, r) != `["b"]` {
		t.Fatalf("update of an expired set: %v %v, want [\"b\"]", r, err)
	}
	if n, err := s.ReapExpired(ctx); err != nil || n != 0 {
		t.Errorf("reaped %d (%v): both expired keys were rewritten", n, err)
	}
	if f, err := s.DatatypeFetch(ctx, "counters", "b", "none", GetOptions{}); err != nil || valueJSON(t, f) != `5` {
		t.Errorf("key without TTL: %v %v", f, err)
	}
}

// TestWalkDatatypeView: a datatype bucket's linkfun is given the data-type view.
func TestWalkDatatypeView(t *testing.T) {
	var seen []string
	saw := linkFunc(func(_ context.Context, o *core.Object, _, _ string) ([]core.Link, error) {
		seen = append(seen, o.Siblings[0].ContentType+" "+string(o.Siblings[0].Value))
		return nil, nil
	})
	prov := &testProvider{mods: map[string]map[string]any{"lf": {"saw": saw}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov)})
	if err := s.CreateType(ctx, "sets", props(t, `{"datatype":"set","linkfun":{"mod":"lf","fun":"saw"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := dtUpdate(t, s, "sets", "k", `{"add":"x"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Walk(ctx, "sets", "b", "k", []WalkStep{{Bucket: WalkAny, Tag: WalkAny, Keep: true}}, WalkOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `application/json {"type":"set","value":["x"]}`; len(seen) != 1 || seen[0] != want {
		t.Errorf("linkfun saw %q, want [%q]", seen, want)
	}
}
