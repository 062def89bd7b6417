package core

import (
	"context"
	"time"
)

// Expired returns ctx's error, or context.DeadlineExceeded when ctx's deadline has
// passed by the clock while its timer has not fired yet: on a loaded machine the
// runtime may deliver a deadline's timer many milliseconds late, and a loop that only
// asks ctx.Err() between batches of work could run to its end past a short deadline.
// Loops bounded by a client's timeout check it every so many steps.
func Expired(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
