package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkv/cairn/core"
)

// fakeProvider serves every function of its modules as a KeyFun that returns its name.
type fakeProvider struct {
	kind    string
	mods    map[string][]string
	lookups int
}

type namedKeyFun string

func (n namedKeyFun) KeyHash(context.Context, string, string, string) ([]byte, error) {
	return []byte(n), nil
}

func (p *fakeProvider) Kind() string { return p.kind }
func (p *fakeProvider) HasModule(m string) bool {
	_, ok := p.mods[m]
	return ok
}
func (p *fakeProvider) Lookup(mod, fun string, pt Point) (any, error) {
	p.lookups++
	for _, f := range p.mods[mod] {
		if f == fun {
			return namedKeyFun(p.kind + ":" + mod + ":" + fun), nil
		}
	}
	return nil, fmt.Errorf("%w: %s:%s", ErrNoFunction, mod, fun)
}

func TestRegistryResolve(t *testing.T) {
	native := &fakeProvider{kind: KindNative, mods: map[string][]string{"shared": {"f"}, "n": {"f"}}}
	wasm := &fakeProvider{kind: KindWASM, mods: map[string][]string{"shared": {"f"}, "w": {"f"}}}
	r := NewRegistry(native, nil, wasm)
	for _, tc := range []struct {
		mod, fun, name string
		want           string
		err            error
	}{
		{mod: "n", fun: "f", want: "native:n:f"},
		{mod: "w", fun: "f", want: "wasm:w:f"},
		{mod: "shared", fun: "f", want: "native:shared:f"}, // native first
		{mod: "wasm:shared", fun: "f", want: "wasm:shared:f"},
		{mod: "native:w", fun: "f", err: ErrNoModule}, // pinned to a runtime without it
		{mod: "x", fun: "f", err: ErrNoModule},
		{mod: "w", fun: "g", err: ErrNoFunction},
		{name: "Js.f", err: ErrNoJavaScript},
		{err: ErrNoModule},
	} {
		kf, err := r.KeyFun(core.HookSpec{Mod: tc.mod, Fun: tc.fun, Name: tc.name})
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s:%s%s: err %v, want %v", tc.mod, tc.fun, tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s:%s: %v", tc.mod, tc.fun, err)
			continue
		}
		h, _ := kf.KeyHash(context.Background(), "", "", "")
		if string(h) != tc.want {
			t.Errorf("%s:%s resolved to %s, want %s", tc.mod, tc.fun, h, tc.want)
		}
	}
	// A KeyFun cannot serve as a precommit.
	if _, err := r.Precommit(core.HookSpec{Mod: "w", Fun: "f"}); !errors.Is(err, ErrNoFunction) {
		t.Errorf("KeyFun as precommit: %v", err)
	}
	if err := r.Validate(core.HookSpec{Mod: "w", Fun: "f"}, PointPrecommit); !errors.Is(err, ErrNoFunction) {
		t.Errorf("Validate of a KeyFun as precommit: %v", err)
	}
	if err := r.Validate(core.HookSpec{Mod: "w", Fun: "f"}, PointKeyFun); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if r.Owner("w") != KindWASM || r.Owner("shared") != KindNative || r.Owner("wasm:shared") != KindWASM || r.Owner("x") != "" {
		t.Errorf("Owner: w=%q shared=%q wasm:shared=%q x=%q", r.Owner("w"), r.Owner("shared"), r.Owner("wasm:shared"), r.Owner("x"))
	}
}

func TestRegistryCache(t *testing.T) {
	wasm := &fakeProvider{kind: KindWASM, mods: map[string][]string{"w": {"f"}}}
	r := NewRegistry(wasm)
	spec := core.HookSpec{Mod: "w", Fun: "f"}
	for range 3 {
		if _, err := r.KeyFun(spec); err != nil {
			t.Fatal(err)
		}
	}
	if wasm.lookups != 1 {
		t.Fatalf("%d lookups for 3 resolutions, want 1 (cached)", wasm.lookups)
	}
	wasm.mods["w"] = nil // the module changed: f is gone
	if _, err := r.KeyFun(spec); err != nil {
		t.Fatalf("before Invalidate the cached resolution stays: %v", err)
	}
	r.Invalidate()
	if _, err := r.KeyFun(spec); !errors.Is(err, ErrNoFunction) {
		t.Fatalf("after Invalidate: %v, want ErrNoFunction", err)
	}
}

type sourceProvider struct{ *fakeProvider }

func (sourceProvider) FromSource(_ context.Context, source string, p Point) (any, error) {
	if source == "bad" {
		return nil, ErrNoFunction
	}
	return source + "@" + p.String(), nil
}

func TestFromSource(t *testing.T) {
	if _, err := NewRegistry().FromSource(context.Background(), KindJavaScript, "function(){}", PointMap); !errors.Is(err, ErrNoJavaScript) {
		t.Errorf("no runtime: %v", err)
	}
	r := NewRegistry(sourceProvider{&fakeProvider{kind: KindJavaScript}})
	got, err := r.FromSource(context.Background(), KindJavaScript, "f", PointReduce)
	if err != nil || got != "f@reduce" {
		t.Errorf("FromSource = %v, %v", got, err)
	}
	if _, err := r.FromSource(context.Background(), KindJavaScript, "bad", PointMap); !errors.Is(err, ErrNoFunction) {
		t.Errorf("bad source: %v", err)
	}
	if _, err := r.FromSource(context.Background(), KindWASM, "f", PointMap); !errors.Is(err, ErrNoFunction) {
		t.Errorf("other kind: %v", err)
	}
}

// listed is a provider that lists its modules.
type listed struct {
	kind  string
	names []string
}

func (l listed) Kind() string { return l.kind }
func (l listed) HasModule(mod string) bool {
	for _, n := range l.names {
		if n == mod {
			return true
		}
	}
	return false
}
func (l listed) Lookup(string, string, Point) (any, error) { return nil, ErrNoFunction }
func (l listed) Names() []string                           { return l.names }

func TestShadowed(t *testing.T) {
	r := NewRegistry(listed{KindNative, []string{"riak_kv_mapreduce"}}, listed{KindWASM, []string{"audit"}},
		listed{KindPlugin, []string{"audit", "quota", "riak_kv_mapreduce"}})
	got := r.Shadowed()
	want := []Shadow{{"audit", KindPlugin, KindWASM}, {"riak_kv_mapreduce", KindPlugin, KindNative}}
	if !slices.Equal(got, want) {
		t.Fatalf("Shadowed() = %+v, want %+v", got, want)
	}
}
