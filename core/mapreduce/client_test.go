package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestClientJobShare is the attack of one client flooding the server with slow jobs:
// it gets MaxJobsPerClient of them running, its next one waits within its own timeout
// and is refused with a *BusyError, and another client's job starts at once.
func TestClientJobShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxJobs: 8, MaxJobsPerClient: 2}, false)
	e.put(t, "default", "b", "k", "1")
	a := core.WithClient(context.Background(), "10.0.0.1")
	slow, err := ParseJob([]byte(job(`[["b","k"]]`, mapPhase("block"))))
	if err != nil {
		t.Fatal(err)
	}
	var held []*Execution
	for range 2 {
		ex, err := e.mr.Start(a, slow)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ex)
	}

	start := time.Now()
	_, err = e.runCtx(a, t, `{"inputs":[["b","k"]],"timeout":100,"query":[`+mapPhase("number")+`]}`)
	var be *BusyError
	if !errors.As(err, &be) || !errors.Is(err, core.ErrClientBusy) ||
		!strings.HasPrefix(be.Message, "Too many MapReduce jobs from this client: at most 2 run at once") {
		t.Fatalf("a third job of the client: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Errorf("the refused job waited %v, want its timeout of 100ms", d)
	}

	// Another client is not held up.
	start = time.Now()
	got, err := e.runCtx(core.WithClient(context.Background(), "10.0.0.2"), t, job(`[["b","k"]]`, mapPhase("number")))
	if err != nil || got != "[1]" {
		t.Fatalf("another client's job: %s, %v", got, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("another client's job took %v", d)
	}

	// Once one of its jobs ends, the client may start another.
	held[0].Close()
	if got, err := e.runCtx(a, t, job(`[["b","k"]]`, mapPhase("number"))); err != nil || got != "[1]" {
		t.Fatalf("after a job ended: %s, %v", got, err)
	}
	held[1].Close()
	if n := e.mr.clientJobs.Held("10.0.0.1"); n != 0 {
		t.Errorf("the client still holds %d job slots", n)
	}
}

// TestClientCallShare checks that the calls of one client's jobs hold at most
// MaxCallsPerClient call slots, so that another client's job finds one free.
func TestClientCallShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxJobs: 8, MaxCalls: 4, MaxCallsPerClient: 2, Workers: 4}, false)
	var keys []string
	for i := range 8 {
		k := "k" + strconv.Itoa(i)
		e.put(t, "default", "b", k, strconv.Itoa(i))
		keys = append(keys, `["b","`+k+`"]`)
	}
	a, cancel := context.WithCancel(core.WithClient(context.Background(), "a"))
	defer cancel()
	done := make(chan error, 2)
	for range 2 { // two jobs of a, each with 4 workers blocked in their calls
		go func() {
			_, err := e.runCtx(a, t, job("["+strings.Join(keys, ",")+"]", mapPhase("block")))
			done <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.mr.clientCalls.Held("a") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the client's calls never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // give the other workers time to try
	if n := e.mr.clientCalls.Held("a"); n != 2 || len(e.mr.calls) != 2 {
		t.Fatalf("the client holds %d call slots (%d in all), want 2", n, len(e.mr.calls))
	}
	got, err := e.runCtx(core.WithClient(context.Background(), "b"), t,
		`{"inputs":[`+strings.Join(keys, ",")+`],"timeout":2000,"query":[`+mapPhase("number")+`,`+reducePhase("sum")+`]}`)
	if err != nil || got != "[28]" {
		t.Fatalf("another client's job: %s, %v", got, err)
	}
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the blocked job: %v", err)
		}
	}
}

// TestClientBusyRuntime checks that a runtime refusing a call, or a compilation,
// because the client used up its share of the runtime's instances (core.ErrClientBusy)
// fails the job with a *BusyError, not a phase error.
func TestClientBusyRuntime(t *testing.T) {
	t.Parallel()
	busy := &hooks.CallError{Kind: hooks.Unavailable, Module: hooks.KindJavaScript,
		Err: fmt.Errorf("%w (2 of the 4 JavaScript VMs for MapReduce), and none came free within 2s", core.ErrClientBusy)}
	e := newEnvWith(t, Config{}, false, map[string]any{
		"js:Busy.map": fakeMap(func(context.Context, hooks.MapInput) ([]json.RawMessage, error) { return nil, busy }),
	})
	e.put(t, "default", "b", "k", "1")
	_, err := e.run(t, job(`[["b","k"]]`, `{"map":{"language":"javascript","name":"Busy.map"}}`))
	var be *BusyError
	if !errors.As(err, &be) || be.Message != "Phase 0: unavailable: this client already uses its share (2 of the 4 JavaScript VMs for MapReduce), and none came free within 2s." {
		t.Fatalf("busy call: %v", err)
	}

	e.mr.hooks = hooks.NewRegistry(busySource{busy})
	_, err = e.run(t, job(`[["b","k"]]`, `{"map":{"language":"javascript","source":"function(v){return [1];}"}}`))
	if !errors.As(err, &be) || !strings.Contains(be.Message, "this client already uses its share") {
		t.Fatalf("busy compilation: %v", err)
	}
}

// busySource is a JavaScript runtime whose compilations fail with err.
type busySource struct{ err error }

func (busySource) Kind() string            { return hooks.KindJavaScript }
func (busySource) HasModule(_ string) bool { return false }
func (b busySource) Lookup(_, _ string, _ hooks.Point) (any, error) {
	return nil, hooks.ErrNoFunction
}
func (b busySource) FromSource(context.Context, string, hooks.Point) (any, error) { return nil, b.err }
