package modules

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/storage"
)

// fakeLoader accepts any code that starts with "ok" and exports the words after it.
type fakeLoader struct {
	mu     sync.Mutex // guards loaded
	loaded map[string]string
}

func (l *fakeLoader) Kind() string { return hooks.KindWASM }
func (l *fakeLoader) Load(_ context.Context, name string, code []byte) (hooks.ModuleInfo, error) {
	if !strings.HasPrefix(string(code), "ok") {
		return hooks.ModuleInfo{}, &hooks.InvalidModuleError{Reason: "not ok"}
	}
	l.mu.Lock()
	l.loaded[name] = string(code)
	l.mu.Unlock()
	sum := sha256.Sum256(code)
	return hooks.ModuleInfo{Name: name, Kind: hooks.KindWASM, SHA256: hex.EncodeToString(sum[:]), Size: len(code),
		Functions: strings.Fields(string(code))[1:]}, nil
}
func (l *fakeLoader) Remove(_ context.Context, name string) error {
	l.mu.Lock()
	delete(l.loaded, name)
	l.mu.Unlock()
	return nil
}

// nativeNames is a provider that owns the module name "native_mod".
type nativeNames struct{}

func (nativeNames) Kind() string                                    { return hooks.KindNative }
func (nativeNames) HasModule(m string) bool                         { return m == "native_mod" }
func (nativeNames) Lookup(string, string, hooks.Point) (any, error) { return nil, hooks.ErrNoFunction }

func TestModules(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refs := map[string][]string{}
	open := func() (*Service, *fakeLoader) {
		l := &fakeLoader{loaded: map[string]string{}}
		s := New(db, Config{Loader: l, Registry: hooks.NewRegistry(nativeNames{}),
			References: func(_ context.Context, name string) ([]string, error) { return refs[name], nil }})
		t.Cleanup(s.Close)
		if err := s.LoadAll(ctx); err != nil {
			t.Fatal(err)
		}
		return s, l
	}
	s, l := open()

	info, created, err := s.Put(ctx, "audit", []byte("ok log"))
	if err != nil || !created || info.Functions[0] != "log" {
		t.Fatalf("Put: %+v %v %v", info, created, err)
	}
	if _, created, err = s.Put(ctx, "audit", []byte("ok log2")); err != nil || created {
		t.Fatalf("replacing Put: created=%v err=%v", created, err)
	}
	for _, tc := range []struct {
		name, code, code2 string
	}{
		{"bad name!", "ok f", core.EINVALID},
		{"", "ok f", core.EINVALID},
		{".hidden", "ok f", core.EINVALID},
		{strings.Repeat("x", hooks.MaxModuleNameLen+1), "ok f", core.EINVALID},
		{"junk", "not wasm", core.EINVALID},
		{"native_mod", "ok f", core.ECONFLICT},
	} {
		if _, _, err := s.Put(ctx, tc.name, []byte(tc.code)); core.ErrorCode(err) != tc.code2 {
			t.Errorf("Put(%q, %q): %v, want %s", tc.name, tc.code, err, tc.code2)
		}
	}
	if _, ok := l.loaded["junk"]; ok {
		t.Error("an invalid module was loaded")
	}

	// Restart: the stored module is loaded again, at its latest version.
	s, l = open()
	if l.loaded["audit"] != "ok log2" {
		t.Fatalf("after restart the loader has %q", l.loaded["audit"])
	}
	if list := s.List(ctx); len(list) != 1 || list[0].Name != "audit" {
		t.Fatalf("List: %+v", list)
	}
	if _, code, err := s.Get(ctx, "audit"); err != nil || string(code) != "ok log2" {
		t.Fatalf("Get: %q %v", code, err)
	}

	refs["audit"] = []string{"bucket default/b postcommit"}
	err = s.Delete(ctx, "audit")
	if e := core.AsError(err); e == nil || e.Code != core.ECONFLICT || !strings.Contains(e.Message, "default/b") {
		t.Fatalf("Delete of a module in use: %v", err)
	}
	delete(refs, "audit")
	if err := s.Delete(ctx, "audit"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "audit"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("second Delete: %v", err)
	}
	if _, ok := l.loaded["audit"]; ok {
		t.Error("a deleted module is still loaded")
	}
	s, _ = open()
	if list := s.List(ctx); len(list) != 0 {
		t.Fatalf("a deleted module came back after restart: %v", fmt.Sprint(list))
	}
}

// loadedCode returns what l has loaded under name.
func (l *fakeLoader) loadedCode(name string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	code, ok := l.loaded[name]
	return code, ok
}

// TestModulesFollowTheStore: a module that another service over the same store puts,
// replaces or deletes is loaded into, replaced in or removed from this service's runtime.
func TestModulesFollowTheStore(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	open := func() (*Service, *fakeLoader) {
		l := &fakeLoader{loaded: map[string]string{}}
		s := New(db, Config{Loader: l, Registry: hooks.NewRegistry(nativeNames{})})
		t.Cleanup(s.Close)
		if err := s.LoadAll(ctx); err != nil {
			t.Fatal(err)
		}
		return s, l
	}
	a, _ := open()
	b, lb := open()
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	steps := []struct {
		name string
		do   func() error
		want string // "" for not loaded
	}{
		{"put", func() error { _, _, err := a.Put(ctx, "m", []byte("ok f")); return err }, "ok f"},
		{"replace", func() error { _, _, err := a.Put(ctx, "m", []byte("ok g")); return err }, "ok g"},
		{"delete", func() error { return a.Delete(ctx, "m") }, ""},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		eventually(st.name, func() bool {
			code, ok := lb.loadedCode("m")
			return ok == (st.want != "") && code == st.want
		})
		eventually(st.name+": List", func() bool {
			list := b.List(ctx)
			return (len(list) == 1) == (st.want != "")
		})
	}
}
