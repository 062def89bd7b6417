package core

import (
	"context"
	"errors"
	"sync"
)

// ErrClientBusy is the cause of a refusal because the requesting client (ClientFrom)
// already holds its whole share of a resource (MapReduce jobs, JavaScript VMs) and none
// of it came free in time. Interfaces answer it with 503: the server is not full, this
// client is.
var ErrClientBusy = errors.New("this client already uses its share")

// ClientLimiter bounds how many units of a resource each client holds at once, so that
// one client cannot take all of it. The zero value is not usable; see NewClientLimiter.
// It is safe for concurrent use and has no goroutines.
type ClientLimiter struct {
	max int
	// mu guards held (units held per client; absent: none) and freed (per client with
	// waiters, a channel closed at that client's next Release).
	mu    sync.Mutex
	held  map[string]int
	freed map[string]chan struct{}
}

// NewClientLimiter returns a limiter that lets each client hold at most n units (n < 1
// means 1).
func NewClientLimiter(n int) *ClientLimiter {
	return &ClientLimiter{max: max(n, 1), held: map[string]int{}, freed: map[string]chan struct{}{}}
}

// Max returns the units a client may hold.
func (l *ClientLimiter) Max() int { return l.max }

// Acquire takes a unit for client, waiting while the client holds Max of them, until
// ctx ends; it then returns context.Cause(ctx) and holds nothing. Every client,
// "" included (callers that name none), has its own share.
func (l *ClientLimiter) Acquire(ctx context.Context, client string) error {
	for {
		l.mu.Lock()
		if l.held[client] < l.max {
			l.held[client]++
			l.mu.Unlock()
			return nil
		}
		ch := l.freed[client]
		if ch == nil {
			ch = make(chan struct{})
			l.freed[client] = ch
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Release gives back a unit Acquire took for client and wakes the client's waiters.
func (l *ClientLimiter) Release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n := l.held[client]; {
	case n <= 0:
		panic("core: ClientLimiter.Release without Acquire")
	case n == 1:
		delete(l.held, client)
	default:
		l.held[client] = n - 1
	}
	if ch := l.freed[client]; ch != nil {
		close(ch)
		delete(l.freed, client)
	}
}

// Held returns how many units client holds now.
func (l *ClientLimiter) Held(client string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[client]
}
