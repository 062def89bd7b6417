package jsvm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestClientShare is the attack of one client taking every JavaScript VM with slow
// calls: it gets MaxVMsPerClient VMs of each pool, its next call waits PoolWait and
// fails with hooks.Unavailable wrapping core.ErrClientBusy, and another client's call
// runs at once on a VM the first could not take.
func TestClientShare(t *testing.T) {
	t.Parallel()
	dir := sourceDir(t, map[string]string{"hooks.js": `
		function spin(o) { while (true) {} }
		function pass(o) { return o; }`})
	r := newRuntime(t, Config{SourceDir: dir, PoolSize: 3, HookPoolSize: 2, MaxVMsPerClient: 2,
		PoolWait: 300 * time.Millisecond})
	spinMap := sourceMap(t, r, "function(v) { while (true) {} }")
	quickMap := sourceMap(t, r, "function(v) { return [1]; }")
	spinHook, err := r.Lookup("", "spin", hooks.PointPrecommit)
	if err != nil {
		t.Fatal(err)
	}
	passHook, err := r.Lookup("", "pass", hooks.PointPrecommit)
	if err != nil {
		t.Fatal(err)
	}
	obj := object("b", "k", "application/json", `{"a":1}`)
	a, stop := context.WithCancel(core.WithClient(context.Background(), "a"))
	defer stop()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _, _ = spinMap.Map(a, hooks.MapInput{Object: obj}) })
		wg.Go(func() { _, _ = spinHook.(hooks.Precommit).Precommit(a, hooks.OpPut, obj) })
	}
	deadline := time.Now().Add(30 * time.Second)
	for r.mapred.clients.Held("a") < 2 || r.hook.clients.Held("a") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the client's calls never all started")
		}
		time.Sleep(5 * time.Millisecond)
	}

	start := time.Now()
	_, err = quickMap.Map(a, hooks.MapInput{Object: obj})
	callErr(t, err, hooks.Unavailable, "this client already uses its share (2 of the 3 JavaScript VMs for MapReduce), and none came free within 300ms")
	if !errors.Is(err, core.ErrClientBusy) || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("a third map call of the client: %v after %v", err, time.Since(start))
	}
	b := core.WithClient(context.Background(), "b")
	if out, err := quickMap.Map(b, hooks.MapInput{Object: obj}); err != nil || joined(t, out) != "[1]" {
		t.Fatalf("another client's map call: %s, %v", joined(t, out), err)
	}

	// The hook pool is full (2 VMs, both the client's): a third call of the client
	// is refused as busy; another client's waits for a VM like any call.
	_, err = passHook.(hooks.Precommit).Precommit(a, hooks.OpPut, obj)
	callErr(t, err, hooks.Unavailable, "this client already uses its share (2 of the 2 JavaScript VMs for precommit hooks)")
	_, err = passHook.(hooks.Precommit).Precommit(b, hooks.OpPut, obj)
	callErr(t, err, hooks.Unavailable, "no JavaScript VM for precommit hooks was free within 300ms")
	if errors.Is(err, core.ErrClientBusy) {
		t.Fatal("a full pool is not the other client's share")
	}

	stop()
	wg.Wait()
	if _, err := passHook.(hooks.Precommit).Precommit(core.WithClient(context.Background(), "a"), hooks.OpPut, obj); err != nil {
		t.Fatalf("after the client's calls ended: %v", err)
	}
	for _, p := range []*pool{r.mapred, r.hook} {
		if n := p.clients.Held("a"); n != 0 {
			t.Errorf("%s: the client still holds %d VMs", p.name, n)
		}
	}
}
