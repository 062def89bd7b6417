package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRetryConflicts: conflicts are retried up to the bound, other outcomes end at
// once, and a context that ends stops the pauses.
func TestRetryConflicts(t *testing.T) {
	conflict := fmt.Errorf("commit: %w", ErrConflict)
	other := errors.New("other")
	for _, c := range []struct {
		name      string
		results   []error // what fn returns, call by call (the last repeats)
		attempts  int
		wantCalls int
		want      error
	}{
		{"success", []error{nil}, 5, 1, nil},
		{"other error", []error{other}, 5, 1, other},
		{"conflict then success", []error{conflict, conflict, nil}, 5, 3, nil},
		{"conflict then other", []error{conflict, other}, 5, 2, other},
		{"always conflicts", []error{conflict}, 5, 5, ErrConflict},
		{"one attempt", []error{conflict}, 1, 1, ErrConflict},
		{"zero attempts run once", []error{conflict}, 0, 1, ErrConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := RetryConflicts(context.Background(), c.attempts, func() error {
				r := c.results[min(calls, len(c.results)-1)]
				calls++
				return r
			})
			if calls != c.wantCalls || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("%d calls, %v; want %d, %v", calls, err, c.wantCalls, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	calls := 0
	err := RetryConflicts(ctx, 1000, func() error { calls++; return ErrConflict })
	if !errors.Is(err, context.Canceled) || calls != 1 || time.Since(start) > time.Second {
		t.Fatalf("canceled: %d calls, %v after %v", calls, err, time.Since(start))
	}
}
