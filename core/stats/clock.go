package stats

import (
	"sync"
	"sync/atomic"
	"time"
)

// clock returns the current Unix second: from now when set (tests inject a fake clock),
// otherwise from the shared coarse clock.
type clock struct {
	now func() time.Time
}

// sec returns the current second.
func (c clock) sec() int64 {
	if c.now != nil {
		return c.now().Unix()
	}
	return coarse.sec()
}

// coarse is the process-wide coarse clock behind every clock without a fake.
var coarse coarseClock

// coarseClock caches the current Unix second so the hot path reads one atomic instead of
// the system clock (a vDSO clock read costs 20-40 ns, more than the rest of
// Window.Observe). While in use it is refreshed by a timer that fires just after each
// second boundary; when a whole second passes without a reader, the timer stops itself,
// so an idle process has no timer and no goroutine for it, and the next reader restarts
// it. A reading lags the wall clock by the timer's latency at most (normally well below a
// millisecond), which moves a sample into the neighbouring one-second slot at worst.
type coarseClock struct {
	cur  atomic.Int64 // the current second; 0 while stopped
	used atomic.Bool  // read since the last tick
	mu   sync.Mutex   // serialises start and tick
}

// sec returns the current second, starting the refresh timer if it is stopped.
func (c *coarseClock) sec() int64 {
	if s := c.cur.Load(); s != 0 {
		if !c.used.Load() { // store only when needed: readers share the cache line
			c.used.Store(true)
		}
		return s
	}
	return c.start()
}

// start reads the clock and arms the timer unless another reader did so first.
func (c *coarseClock) start() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.cur.Load(); s != 0 {
		return s
	}
	now := time.Now()
	c.used.Store(true)
	c.cur.Store(now.Unix())
	time.AfterFunc(untilNextSecond(now), c.tick)
	return now.Unix()
}

// tick refreshes the second and re-arms the timer, or stops when nobody read the clock
// during the last second.
func (c *coarseClock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.used.Swap(false) {
		c.cur.Store(0)
		return
	}
	now := time.Now()
	c.cur.Store(now.Unix())
	time.AfterFunc(untilNextSecond(now), c.tick)
}

// untilNextSecond returns the time from now to just after the next second boundary.
func untilNextSecond(now time.Time) time.Duration {
	return time.Second - time.Duration(now.Nanosecond()) + 50*time.Microsecond
}
