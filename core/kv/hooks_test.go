package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// testProvider is a hooks.Provider with Go functions, for the kv tests.
type testProvider struct {
	mods map[string]map[string]any // module → function → implementation
}

func (p *testProvider) Kind() string              { return hooks.KindWASM }
func (p *testProvider) HasModule(mod string) bool { _, ok := p.mods[mod]; return ok }
func (p *testProvider) Lookup(mod, fun string, pt hooks.Point) (any, error) {
	f, ok := p.mods[mod][fun]
	if !ok {
		return nil, fmt.Errorf("%w: %s:%s", hooks.ErrNoFunction, mod, fun)
	}
	return f, nil
}

type precommitFunc func(ctx context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error)

func (f precommitFunc) Precommit(ctx context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
	return f(ctx, op, o)
}

type postcommitFunc func(ctx context.Context, op hooks.Op, o *core.Object) error

func (f postcommitFunc) Postcommit(ctx context.Context, op hooks.Op, o *core.Object) error {
	return f(ctx, op, o)
}

type keyFunc func(typ, bucket, key string) []byte

func (f keyFunc) KeyHash(ctx context.Context, typ, bucket, key string) ([]byte, error) {
	return f(typ, bucket, key), nil
}

// hookObserver counts hook failures.
type hookObserver struct {
	mu         sync.Mutex // guards pre and post
	pre, post  int
	postSignal chan struct{}
}

func (o *hookObserver) RecordGet(time.Duration, int, int) {}
func (o *hookObserver) RecordPut(time.Duration, int)      {}
func (o *hookObserver) RecordDelete(time.Duration)        {}
func (o *hookObserver) IncPrecommitFail()                 { o.mu.Lock(); o.pre++; o.mu.Unlock() }
func (o *hookObserver) IncPostcommitFail() {
	o.mu.Lock()
	o.post++
	o.mu.Unlock()
	o.postSignal <- struct{}{}
}

func setHooks(t *testing.T, s *Service, bucket string, props string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(props), &m); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProps(ctx, core.DefaultType, bucket, m); err != nil {
		t.Fatalf("SetProps(%s): %v", props, err)
	}
}

func TestPrecommit(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"accept": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			mu.Lock()
			seen = append(seen, string(op)+":"+o.Key+":"+string(o.Siblings[0].Value))
			mu.Unlock()
			return hooks.Verdict{}, nil
		}),
		"reject": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			if strings.Contains(string(o.Siblings[0].Value), "bad") || op == hooks.OpDelete {
				return hooks.Verdict{Reject: true, Reason: "no bad values"}, nil
			}
			return hooks.Verdict{}, nil
		}),
		"upper": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			r := *o
			v := r.Siblings[0]
			v.Value = []byte(strings.ToUpper(string(v.Value)))
			v.Indexes = append(v.Indexes, core.IndexEntry{Field: "upper_bin", Value: string(v.Value)})
			r.Siblings = []core.Sibling{v}
			return hooks.Verdict{Replace: &r}, nil
		}),
		"badindex": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			r := *o
			v := r.Siblings[0]
			v.Indexes = []core.IndexEntry{{Field: "n_int", Value: "not a number"}}
			r.Siblings = []core.Sibling{v}
			return hooks.Verdict{Replace: &r}, nil
		}),
		"crash": precommitFunc(func(context.Context, hooks.Op, *core.Object) (hooks.Verdict, error) {
			return hooks.Verdict{}, &hooks.CallError{Kind: hooks.TimedOut, Module: "m", Function: "crash", Err: errors.New("deadline exceeded")}
		}),
	}}}
	obs := &hookObserver{postSignal: make(chan struct{}, 16)}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), Observer: obs})

	setHooks(t, s, "b", `{"precommit":[{"mod":"m","fun":"accept"},{"mod":"m","fun":"upper"},{"mod":"m","fun":"accept"}]}`)
	put(t, s, "b", "k", "hello", nil)
	got, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := string(got.Siblings[0].Value); v != "HELLO" {
		t.Errorf("stored %q, want the replacement HELLO", v)
	}
	if ix := got.Siblings[0].Indexes; len(ix) != 1 || ix[0] != (core.IndexEntry{Field: "upper_bin", Value: "HELLO"}) {
		t.Errorf("indexes %v, want the hook's entry", ix)
	}
	if want := []string{"put:k:hello", "put:k:HELLO"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("hooks saw %v, want %v (in order, each seeing the previous one's result)", seen, want)
	}

	setHooks(t, s, "r", `{"precommit":[{"mod":"m","fun":"reject"}]}`)
	_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "r", Key: "k", Value: core.Sibling{Value: []byte("bad"), ContentType: "text/plain"}})
	if e := core.AsError(err); e == nil || e.Code != core.EFORBIDDEN || e.Message != "no bad values" {
		t.Fatalf("rejected put: %v, want EFORBIDDEN with the reason", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "r", "k", GetOptions{}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("a rejected put stored something: %v", err)
	}
	put(t, s, "r", "k", "good", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "r", "k", DeleteOptions{}); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Fatalf("rejected delete: %v, want EFORBIDDEN", err)
	}
	if o, err := s.Get(ctx, core.DefaultType, "r", "k", GetOptions{}); err != nil || o.Deleted() {
		t.Fatalf("a rejected delete deleted: %v", err)
	}

	for _, fun := range []string{"crash", "badindex"} {
		setHooks(t, s, "c", `{"precommit":[{"mod":"m","fun":"`+fun+`"}]}`)
		_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "c", Key: fun, Value: core.Sibling{Value: []byte("x"), ContentType: "text/plain"}})
		if e := core.AsError(err); e == nil || e.Code != core.EINTERNAL || !strings.Contains(e.Message, "m:"+fun) {
			t.Fatalf("%s: %v, want EINTERNAL naming the hook", fun, err)
		}
		if _, err := s.Get(ctx, core.DefaultType, "c", fun, GetOptions{}); core.ErrorCode(err) != core.ENOTFOUND {
			t.Fatalf("%s: a failed precommit stored something: %v", fun, err)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.pre != 4 {
		t.Errorf("precommit failures counted %d, want 4 (2 rejects, crash, bad replacement)", obs.pre)
	}
}

func TestPostcommit(t *testing.T) {
	got := make(chan string, 16)
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"log": postcommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) error {
			got <- string(op) + ":" + o.Key + ":" + fmt.Sprint(len(o.VClock) > 0)
			return nil
		}),
		"fail": postcommitFunc(func(context.Context, hooks.Op, *core.Object) error { return errors.New("boom") }),
	}}}
	obs := &hookObserver{postSignal: make(chan struct{}, 16)}
	// One worker, so that the put's hooks run before the delete's.
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), Observer: obs, PostcommitWorkers: 1})
	setHooks(t, s, "b", `{"postcommit":[{"mod":"m","fun":"fail"},{"mod":"m","fun":"log"}]}`)
	put(t, s, "b", "k", "v", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"put:k:true", "delete:k:true"} {
		select {
		case g := <-got:
			if g != want {
				t.Errorf("postcommit saw %q, want %q", g, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("postcommit for %q never ran", want)
		}
		select {
		case <-obs.postSignal:
		case <-time.After(5 * time.Second):
			t.Fatal("the failing postcommit was not counted")
		}
	}
}

func TestHookPropsResolve(t *testing.T) {
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"pre": precommitFunc(func(context.Context, hooks.Op, *core.Object) (hooks.Verdict, error) { return hooks.Verdict{}, nil }),
	}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov)})
	for _, tc := range []struct {
		props, bad string
	}{
		{`{"precommit":[{"mod":"m","fun":"pre"}]}`, ""},
		{`{"precommit":[{"mod":"nope","fun":"pre"}]}`, "precommit"},
		{`{"precommit":[{"mod":"m","fun":"missing"}]}`, "precommit"},
		{`{"postcommit":[{"mod":"m","fun":"pre"}]}`, "postcommit"}, // a precommit is not a postcommit
		{`{"precommit":[{"name":"Js.fun"}]}`, "precommit"},         // no JavaScript runtime
		{`{"chash_keyfun":{"mod":"nope","fun":"f"}}`, "chash_keyfun"},
		{`{"linkfun":{"mod":"nope","fun":"f"}}`, "linkfun"},
	} {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(tc.props), &m)
		err := s.SetProps(ctx, core.DefaultType, "b", m)
		e := core.AsError(err)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.props, err)
		case tc.bad != "" && (e == nil || e.Code != core.EINVALID || !strings.HasPrefix(e.Reasons[tc.bad], "unknown_hook")):
			t.Errorf("%s: %v (reasons %v), want an unknown_hook reason for %s", tc.props, err, e, tc.bad)
		}
	}
}

func TestPreflistAndModuleReferences(t *testing.T) {
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"prefix": keyFunc(func(typ, bucket, key string) []byte {
			// Place by the first byte of the key: 'a'..: high bytes pick the partition.
			return []byte{key[0]}
		}),
		"pre": precommitFunc(func(context.Context, hooks.Op, *core.Object) (hooks.Verdict, error) { return hooks.Verdict{}, nil }),
	}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), NodeName: "n@h"})
	setHooks(t, s, "b", `{"chash_keyfun":{"mod":"m","fun":"prefix"},"n_val":2}`)
	pl, err := s.Preflist(ctx, core.DefaultType, "b", "a1")
	if err != nil {
		t.Fatal(err)
	}
	// 'a' = 0x61: 0x61/4 = 24 (each of 64 partitions spans 4 values of the top byte) → first is 25.
	want := []PreflistEntry{{25, "n@h", true}, {26, "n@h", true}}
	if fmt.Sprint(pl) != fmt.Sprint(want) {
		t.Errorf("preflist %v, want %v", pl, want)
	}
	if got := firstPartition([]byte{0xff, 0xff}); got != 0 {
		t.Errorf("the last partition wraps to 0, got %d", got)
	}

	setHooks(t, s, "c", `{"precommit":[{"mod":"wasm:m","fun":"pre"}]}`)
	refs, err := s.ModuleReferences(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if want := "[bucket default/b chash_keyfun bucket default/c precommit]"; fmt.Sprint(refs) != want {
		t.Errorf("references %v, want %s", refs, want)
	}
	if refs, _ := s.ModuleReferences(ctx, "other"); len(refs) != 0 {
		t.Errorf("references of an unnamed module: %v", refs)
	}
}
