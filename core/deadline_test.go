package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

// deadlineOnly is a context whose deadline has passed but whose Err has not caught up,
// as a context whose timer the runtime has not run yet.
type deadlineOnly struct {
	context.Context
	dl time.Time
}

func (d deadlineOnly) Deadline() (time.Time, bool) { return d.dl, true }

// TestExpired: a passed deadline counts even before the context says so; a live one
// and no deadline do not; a cancelled context answers its own error.
func TestExpired(t *testing.T) {
	bg := context.Background()
	if err := Expired(bg); err != nil {
		t.Errorf("no deadline: %v", err)
	}
	if err := Expired(deadlineOnly{bg, time.Now().Add(time.Hour)}); err != nil {
		t.Errorf("a deadline ahead: %v", err)
	}
	if err := Expired(deadlineOnly{bg, time.Now().Add(-time.Millisecond)}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a deadline passed, timer not fired: %v", err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := Expired(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
