package kv

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestShutdownBoundsPostcommitDrain reproduces the slow shutdown of issue 15: hundreds of
// slow postcommit hooks queued, then a shutdown with a short deadline. Shutdown must
// return by the deadline (plus the cancel grace when a hook ignores its context), the
// running hook must see its context end, and the hooks not run must be counted.
func TestShutdownBoundsPostcommitDrain(t *testing.T) {
	const queued = 400
	for _, tc := range []struct {
		name string
		// hook is the postcommit; it reports each call on ran.
		hook     func(ctx context.Context) error
		deadline time.Duration
		// within bounds Shutdown's duration; wantErr says whether it reports hooks that
		// outlived their cancellation.
		within  time.Duration
		wantErr bool
		// allRun: every queued hook runs (the drain ends before the deadline).
		allRun bool
	}{
		{name: "slow hooks that honour their context", deadline: 300 * time.Millisecond, within: 800 * time.Millisecond,
			hook: func(ctx context.Context) error {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(200 * time.Millisecond):
					return nil
				}
			}},
		{name: "a hook that ignores its context", deadline: 200 * time.Millisecond,
			within: 200*time.Millisecond + postcommitCancelGrace + 500*time.Millisecond, wantErr: true,
			hook: func(context.Context) error {
				time.Sleep(postcommitCancelGrace + 500*time.Millisecond)
				return nil
			}},
		{name: "fast hooks drain before the deadline", deadline: 10 * time.Second, within: 5 * time.Second, allRun: true,
			hook: func(context.Context) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran, canceled atomic.Int64
			release := make(chan struct{})
			prov := &testProvider{mods: map[string]map[string]any{"m": {
				"slow": postcommitFunc(func(ctx context.Context, _ hooks.Op, _ *core.Object) error {
					<-release // every write is queued before the first hook runs
					err := tc.hook(ctx)
					if ctx.Err() != nil {
						canceled.Add(1)
					}
					ran.Add(1)
					return err
				}),
			}}}
			s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), PostcommitWorkers: 2, PostcommitQueue: queued,
				Observer: &hookObserver{postSignal: make(chan struct{}, 2*queued)}})
			setHooks(t, s, "b", `{"postcommit":[{"mod":"m","fun":"slow"}]}`)
			for i := range queued {
				put(t, s, "b", "k"+strconv.Itoa(i), "v", nil)
			}
			close(release)
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			start := time.Now()
			err := s.Shutdown(ctx)
			took := time.Since(start)
			if took > tc.within {
				t.Errorf("Shutdown took %v with a %v deadline, want at most %v", took, tc.deadline, tc.within)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("Shutdown = %v, want an error: %v", err, tc.wantErr)
			}
			dropped := s.PostcommitDropped()
			if tc.allRun {
				if ran.Load() != queued || dropped != 0 {
					t.Errorf("%d hooks ran, %d dropped; want all %d run", ran.Load(), dropped, queued)
				}
				return
			}
			// The workers have returned (or are stuck in the one hook that ignores its
			// context): every job is either run, running, or counted as dropped.
			if n := ran.Load(); dropped < queued-n-2 || dropped == 0 {
				t.Errorf("%d hooks ran and %d were dropped out of %d queued", n, dropped, queued)
			}
			if !tc.wantErr && canceled.Load() == 0 {
				t.Errorf("no running hook saw its context cancelled")
			}
			// Writes after a shutdown queue nothing and do not block.
			put(t, s, "b", "after", "v", nil)
		})
	}
}
