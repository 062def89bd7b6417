package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// maxRetryPause caps the pause between two attempts of RetryConflicts.
const maxRetryPause = 20 * time.Millisecond

// RetryConflicts runs fn — one read → compute → conditional commit — until it returns
// anything but an error wrapping ErrConflict, at most attempts times, while ctx lasts.
// Between attempts it pauses a random time that grows with the attempt (up to
// 2^n × 100 µs, at most 20 ms), so that writers that conflicted do not meet again in
// step. After the last attempt conflicts it returns that attempt's error; when ctx
// ends first, ctx's error.
func RetryConflicts(ctx context.Context, attempts int, fn func() error) error {
	for n := 1; ; n++ {
		err := fn()
		if !errors.Is(err, ErrConflict) || n >= attempts {
			return err
		}
		if err := retryPause(ctx, n); err != nil {
			return err
		}
	}
}

// retryPause waits before attempt n+1, or until ctx is done.
func retryPause(ctx context.Context, n int) error {
	d := min(maxRetryPause, time.Duration(100<<min(n, 20))*time.Microsecond)
	t := time.NewTimer(rand.N(d) + time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
