package cluster_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/modules"
)

// recordingLoader is a hooks.Loader that accepts code starting with "ok" and records
// what it has loaded, as a node's WebAssembly host would.
type recordingLoader struct {
	mu     sync.Mutex // guards loaded
	loaded map[string]string
}

func (l *recordingLoader) Kind() string { return hooks.KindWASM }

func (l *recordingLoader) Load(_ context.Context, name string, code []byte) (hooks.ModuleInfo, error) {
	if !strings.HasPrefix(string(code), "ok") {
		return hooks.ModuleInfo{}, &hooks.InvalidModuleError{Reason: "not ok"}
	}
	l.mu.Lock()
	l.loaded[name] = string(code)
	l.mu.Unlock()
	return hooks.ModuleInfo{Name: name, Kind: hooks.KindWASM, Size: len(code), Functions: strings.Fields(string(code))[1:]}, nil
}

func (l *recordingLoader) Remove(_ context.Context, name string) error {
	l.mu.Lock()
	delete(l.loaded, name)
	l.mu.Unlock()
	return nil
}

func (l *recordingLoader) code(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loaded[name]
}

// TestModulesHotLoadOnEveryNode: a module registered through one node is loaded by
// every node's runtime, without a restart; a replacement and a removal through another
// node follow the same way.
func TestModulesHotLoadOnEveryNode(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	ctx := context.Background()
	var svcs []*modules.Service
	var loaders []*recordingLoader
	for i := range c.Len() {
		l := &recordingLoader{loaded: map[string]string{}}
		s := modules.New(c.Node(i).Store(), modules.Config{Loader: l, Registry: hooks.NewRegistry(),
			References: func(context.Context, string) ([]string, error) { return nil, nil }})
		t.Cleanup(s.Close)
		if err := s.LoadAll(ctx); err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, s)
		loaders = append(loaders, l)
	}
	waitAll := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for i, l := range loaders {
			for l.code("audit") != want {
				if time.Now().After(deadline) {
					t.Fatalf("node %d: %s: runtime holds %q, want %q", i+1, what, l.code("audit"), want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	if _, _, err := svcs[0].Put(ctx, "audit", []byte("ok log")); err != nil {
		t.Fatal(err)
	}
	waitAll("after a put on node 1", "ok log")
	if _, _, err := svcs[1].Put(ctx, "audit", []byte("ok log check")); err != nil {
		t.Fatal(err)
	}
	waitAll("after a replacement on node 2", "ok log check")
	for i, s := range svcs {
		if got := s.List(ctx); len(got) != 1 || !slices.Equal(got[0].Functions, []string{"log", "check"}) {
			t.Fatalf("node %d lists %+v", i+1, got)
		}
	}
	if err := svcs[2].Delete(ctx, "audit"); err != nil {
		t.Fatal(err)
	}
	waitAll("after a removal on node 3", "")
}
