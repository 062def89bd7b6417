package core

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestClientLimiter(t *testing.T) {
	t.Parallel()
	l := NewClientLimiter(2)
	ctx := context.Background()
	for range 2 {
		if err := l.Acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	// a is at its share: it waits until its context ends; b is not affected.
	short, cancel := context.WithTimeoutCause(ctx, 20*time.Millisecond, ErrClientBusy)
	defer cancel()
	if err := l.Acquire(short, "a"); !errors.Is(err, ErrClientBusy) {
		t.Fatalf("a over its share: err = %v, want the context's cause", err)
	}
	if got := l.Held("a"); got != 2 {
		t.Fatalf("a failed Acquire took a unit: held %d", got)
	}
	if err := l.Acquire(ctx, "b"); err != nil {
		t.Fatalf("another client waits for a's share: %v", err)
	}

	// A waiter of a gets the unit a releases.
	got := make(chan error, 1)
	go func() { got <- l.Acquire(ctx, "a") }()
	select {
	case err := <-got:
		t.Fatalf("a took a third unit: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	l.Release("a")
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l.Held("a") != 2 {
		t.Fatalf("held %d, want 2", l.Held("a"))
	}
}

func TestClientLimiterConcurrent(t *testing.T) {
	t.Parallel()
	l := NewClientLimiter(3)
	var mu sync.Mutex
	in, peak := 0, 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 50 {
				if err := l.Acquire(context.Background(), "c"); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				in++
				peak = max(peak, in)
				mu.Unlock()
				mu.Lock()
				in--
				mu.Unlock()
				l.Release("c")
			}
		})
	}
	wg.Wait()
	if peak > 3 || l.Held("c") != 0 {
		t.Fatalf("peak %d (max 3), held at the end %d", peak, l.Held("c"))
	}
}

func TestClientLimiterReleaseWithoutAcquire(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("Release without Acquire did not panic")
		}
	}()
	NewClientLimiter(1).Release("x")
}
