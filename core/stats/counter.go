package stats

import (
	"sync"
	"sync/atomic"
	"time"
)

// counterSlot holds the count of one wall-clock second.
type counterSlot struct {
	sec atomic.Int64
	n   atomic.Int64
}

// Counter counts events: a total since start and the number in the last WindowSeconds
// seconds, the pair the reference reports as e.g. node_gets_total and node_gets. Add is
// lock-free and allocation-free except for the first event of each new second, which
// takes a short lock to reuse the ring slot. The zero value is ready to use with the real
// clock. A Counter must not be copied after first use.
type Counter struct {
	clock clock
	total atomic.Int64
	mu    sync.Mutex // guards slots (rotation and per-slot adds)
	slots [WindowSeconds]counterSlot
}

// NewCounter returns a zero Counter that reads the time from now, or from the real clock
// when now is nil.
func NewCounter(now func() time.Time) *Counter {
	return &Counter{clock: clock{now: now}}
}

// Inc counts one event.
func (c *Counter) Inc() { c.addAt(c.clock.sec(), 1) }

// Add counts n events; n should not be negative.
func (c *Counter) Add(n int64) { c.addAt(c.clock.sec(), n) }

// addAt counts n events at second sec.
func (c *Counter) addAt(sec, n int64) {
	c.total.Add(n)
	s := &c.slots[uint64(sec)%WindowSeconds]
	if s.sec.Load() != sec && !c.advance(s, sec) {
		return
	}
	s.n.Add(n)
}

// advance clears s for second sec; false means s holds a later second already.
func (c *Counter) advance(s *counterSlot, sec int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := s.sec.Load()
	if cur == sec {
		return true
	}
	if cur > sec {
		return false
	}
	s.n.Store(0)
	s.sec.Store(sec)
	return true
}

// Total returns the number of events since the Counter was created.
func (c *Counter) Total() int64 { return c.total.Load() }

// LastMinute returns the number of events in the last WindowSeconds seconds, the current
// one included.
func (c *Counter) LastMinute() int64 {
	now := c.clock.sec()
	var n int64
	for i := range c.slots {
		s := &c.slots[i]
		if sec := s.sec.Load(); sec > now-WindowSeconds && sec <= now {
			n += s.n.Load()
		}
	}
	return n
}
