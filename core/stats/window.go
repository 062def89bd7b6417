package stats

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Histogram geometry. Values 0..7 have a bucket each; from 8 on, every power of two is
// split into 8 equal sub-buckets, so a bucket's width is at most 1/8 of its lower bound
// and its midpoint is within 1/16 (6.25%) of any value in it. Values at or above
// 2^maxExp (about 12.7 days in microseconds, or 1 TiB in bytes) share the last bucket;
// Max stays exact for them.
const (
	subBits    = 3
	subCount   = 1 << subBits
	maxExp     = 40
	numBuckets = subCount + (maxExp-subBits)*subCount

	// WindowSeconds is the length of a Window and of a Counter's recent count.
	WindowSeconds = 60
)

// RelativeError is the largest relative error of a percentile reported by Window: the
// reported value is within RelativeError × v of the exact nearest-rank value v.
const RelativeError = 1.0 / (2 * subCount)

// bucketOf returns the bucket index of v; negative values count as 0.
func bucketOf(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1
	if e >= maxExp {
		return numBuckets - 1
	}
	sub := int(v>>(e-subBits)) & (subCount - 1)
	return subCount + (e-subBits)*subCount + sub
}

// bucketRange returns the lowest value of bucket i and the number of values it holds.
func bucketRange(i int) (lo, width int64) {
	if i < subCount {
		return int64(i), 1
	}
	j := i - subCount
	e := j/subCount + subBits
	width = int64(1) << (e - subBits)
	return int64(1)<<e + int64(j%subCount)*width, width
}

// bucketValue is the value reported for samples in bucket i: the middle of its range.
func bucketValue(i int) int64 {
	lo, w := bucketRange(i)
	return lo + (w-1)/2
}

// slot holds the samples of one wall-clock second.
type slot struct {
	sec atomic.Int64 // the Unix second held; samples of other seconds are stale
	// sec is read by every observation and written once a minute; keep it off the cache
	// line of the counters every observation writes.
	_       [56]byte
	sum     atomic.Int64
	max     atomic.Int64
	buckets [numBuckets]atomic.Uint64
}

// Window is a histogram of the values observed during the last WindowSeconds seconds:
// latencies, sizes, counts. It keeps one slot per second in a ring; a slot is cleared
// when the ring comes round to it again, so samples expire 60 seconds after they were
// taken. Observe is lock-free and allocation-free; a short lock is taken only by the
// first observation of each new second. The zero value is ready to use with the real
// clock. A Window must not be copied after first use.
type Window struct {
	clock clock
	mu    sync.Mutex // serialises clearing a slot for a new second
	slots [WindowSeconds]slot
}

// NewWindow returns an empty Window that reads the time from now, or from the real clock
// when now is nil. Tests pass a fake clock to drive slot rotation.
func NewWindow(now func() time.Time) *Window {
	return &Window{clock: clock{now: now}}
}

// Summary describes the samples of a Window over the last minute. Percentiles are
// nearest-rank values within RelativeError; Max is exact. All fields are zero when
// Count is zero.
type Summary struct {
	Count  int64   // number of samples
	Sum    int64   // sum of the samples
	Mean   float64 // Sum / Count
	Median int64   // 50th percentile
	P95    int64   // 95th percentile
	P99    int64   // 99th percentile
	Max    int64   // largest sample (100th percentile)
}

// Observe records v at the current second. Negative values count as 0.
func (w *Window) Observe(v int64) {
	w.observeAt(w.clock.sec(), v)
}

// ObserveDuration records d in microseconds, the unit of the reference's *_time stats.
func (w *Window) ObserveDuration(d time.Duration) {
	w.observeAt(w.clock.sec(), d.Microseconds())
}

// observeAt records v in the slot of second sec.
func (w *Window) observeAt(sec, v int64) {
	if v < 0 {
		v = 0
	}
	s := &w.slots[uint64(sec)%WindowSeconds]
	if s.sec.Load() != sec && !w.advance(s, sec) {
		return
	}
	s.buckets[bucketOf(v)].Add(1)
	s.sum.Add(v)
	for m := s.max.Load(); v > m; m = s.max.Load() {
		if s.max.CompareAndSwap(m, v) {
			break
		}
	}
}

// advance clears s for second sec. It reports false when s already holds a later second:
// the caller's sample is older than the window and is dropped.
func (w *Window) advance(s *slot, sec int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := s.sec.Load()
	if cur == sec {
		return true // another goroutine cleared it first
	}
	if cur > sec {
		return false
	}
	for i := range s.buckets {
		s.buckets[i].Store(0)
	}
	s.sum.Store(0)
	s.max.Store(0)
	s.sec.Store(sec) // publish last: observers that see sec find cleared counters
	return true
}

// Snapshot summarises the samples of the last WindowSeconds seconds, the current one
// included.
func (w *Window) Snapshot() Summary {
	now := w.clock.sec()
	var agg [numBuckets]uint64
	var sum, maxV int64
	var count uint64
	for i := range w.slots {
		s := &w.slots[i]
		if sec := s.sec.Load(); sec <= now-WindowSeconds || sec > now {
			continue
		}
		for b := range s.buckets {
			if n := s.buckets[b].Load(); n != 0 {
				agg[b] += n
				count += n
			}
		}
		sum += s.sum.Load()
		if m := s.max.Load(); m > maxV {
			maxV = m
		}
	}
	if count == 0 {
		return Summary{}
	}
	sm := Summary{
		Count: int64(count),
		Sum:   sum,
		Mean:  float64(sum) / float64(count),
		Max:   maxV,
	}
	// Slots are read one after another while observers write, so sum may be a little
	// ahead of the buckets; keep the mean within the range it describes.
	if sm.Mean > float64(maxV) {
		sm.Mean = float64(maxV)
	}
	sm.Median = quantile(&agg, count, 0.50, maxV)
	sm.P95 = quantile(&agg, count, 0.95, maxV)
	sm.P99 = quantile(&agg, count, 0.99, maxV)
	return sm
}

// quantile returns the nearest-rank q-quantile of the bucketed samples: the value of the
// bucket holding the ceil(q×count)-th smallest sample, capped at maxV.
func quantile(agg *[numBuckets]uint64, count uint64, q float64, maxV int64) int64 {
	rank := uint64(math.Ceil(q * float64(count)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, n := range agg {
		seen += n
		if seen >= rank {
			return min(bucketValue(i), maxV)
		}
	}
	return maxV
}
