// Package vclock implements Cairn's causal clocks: version vectors with one entry per
// actor (a node id persisted in the data directory), dots that identify the write that
// produced each sibling (dotted version vectors), pruning by the reference system's
// small/big/young/old_vclock bucket properties, and a compact, strictly validated binary
// encoding that clients receive base64-encoded and send back unchanged.
//
// A VClock value is immutable by convention: every method that "changes" a clock
// returns a new one and leaves its receiver untouched.
package vclock

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// Entry is one actor's component of a clock: how many writes it has coordinated and
// when it last did (unix seconds, used only for pruning).
type Entry struct {
	Actor     string
	Counter   uint64
	Timestamp int64
}

// VClock is a version vector: entries sorted by Actor, at most one per actor, every
// Counter > 0. The zero value (nil) is the empty clock.
type VClock []Entry

// Dot identifies one write: the actor that coordinated it and the counter it assigned.
type Dot struct {
	Actor   string
	Counter uint64
}

func (c VClock) find(actor string) (int, bool) {
	i := sort.Search(len(c), func(i int) bool { return c[i].Actor >= actor })
	return i, i < len(c) && c[i].Actor == actor
}

// Counter returns actor's counter, 0 when the clock has no entry for it.
func (c VClock) Counter(actor string) uint64 {
	if i, ok := c.find(actor); ok {
		return c[i].Counter
	}
	return 0
}

// Covers reports whether the write identified by d happened before (or is) c.
func (c VClock) Covers(d Dot) bool {
	return d.Counter != 0 && c.Counter(d.Actor) >= d.Counter
}

// Descends reports whether c is equal to or later than o: every counter of o is at most
// the matching counter of c. Every clock descends the empty clock.
func (c VClock) Descends(o VClock) bool {
	for _, e := range o {
		if c.Counter(e.Actor) < e.Counter {
			return false
		}
	}
	return true
}

// Equal reports whether c and o hold the same counters (timestamps are ignored).
func (c VClock) Equal(o VClock) bool {
	return c.Descends(o) && o.Descends(c)
}

// Concurrent reports whether neither clock descends the other.
func (c VClock) Concurrent(o VClock) bool {
	return !c.Descends(o) && !o.Descends(c)
}

// Merge returns the least upper bound of a and b: for each actor the larger counter and
// the later timestamp.
func Merge(a, b VClock) VClock {
	out := make(VClock, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Actor < b[j].Actor):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Actor < a[i].Actor:
			out = append(out, b[j])
			j++
		default:
			e := a[i]
			if b[j].Counter > e.Counter {
				e.Counter = b[j].Counter
			}
			if b[j].Timestamp > e.Timestamp {
				e.Timestamp = b[j].Timestamp
			}
			out = append(out, e)
			i++
			j++
		}
	}
	return out
}

// Increment returns a copy of c in which actor's counter is one more than before and its
// timestamp is now. The new counter is also returned as a Dot naming this event.
//
// A counter never wraps: at math.MaxUint64 it stays there (the dot then repeats). Clocks
// received from clients are refused above MaxCounter (CheckReceived), so only a record
// stored by an older build that accepted such a clock can get there, and its key stays
// writable instead of storing a zero counter that no longer decodes.
func (c VClock) Increment(actor string, now time.Time) (VClock, Dot) {
	i, ok := c.find(actor)
	out := make(VClock, 0, len(c)+1)
	out = append(out, c[:i]...)
	var e Entry
	if ok {
		e = c[i]
		i++
	}
	e.Actor = actor
	if e.Counter < math.MaxUint64 {
		e.Counter++
	}
	e.Timestamp = now.Unix()
	out = append(out, e)
	out = append(out, c[i:]...)
	return out, Dot{Actor: actor, Counter: e.Counter}
}

// PruneOptions are a bucket's clock-pruning properties. A clock with at most Small
// entries is never pruned; otherwise its oldest entries are dropped, oldest first, while
// the oldest is at least Young old and either the clock has more than Big entries or the
// oldest is more than Old old.
type PruneOptions struct {
	Small, Big int
	Young, Old time.Duration
	// Keep names an actor that is never pruned (the local node: dropping its entry would
	// restart its counter and reuse dots).
	Keep string
}

// Prune applies the reference system's pruning rule and returns the pruned clock.
func (c VClock) Prune(now time.Time, p PruneOptions) VClock {
	if len(c) <= p.Small {
		return c
	}
	byAge := make(VClock, 0, len(c))
	var kept []Entry
	for _, e := range c {
		if p.Keep != "" && e.Actor == p.Keep {
			kept = append(kept, e)
			continue
		}
		byAge = append(byAge, e)
	}
	sort.SliceStable(byAge, func(i, j int) bool { return byAge[i].Timestamp < byAge[j].Timestamp })
	nowSec := now.Unix()
	young, old := int64(p.Young/time.Second), int64(p.Old/time.Second)
	for len(byAge) > 0 && len(byAge)+len(kept) > p.Small {
		age := nowSec - byAge[0].Timestamp
		if age < young {
			break
		}
		if len(byAge)+len(kept) > p.Big || age > old {
			byAge = byAge[1:]
			continue
		}
		break
	}
	out := append(byAge[:len(byAge):len(byAge)], kept...)
	sort.Slice(out, func(i, j int) bool { return out[i].Actor < out[j].Actor })
	return out
}

// Limits of clocks received from clients and of the clocks stored with objects. They keep
// every clock a write stores below what Decode accepts, whatever a client sends: a stored
// clock has at most MaxStoredEntries entries, a received one at most MaxReceivedEntries,
// so their merge plus this node's entry (at most MaxStoredEntries+MaxReceivedEntries+1)
// is far below MaxEntries even before Limit brings it back to MaxStoredEntries.
const (
	// MaxReceivedEntries bounds the entries of a clock a client sends.
	MaxReceivedEntries = 1024
	// MaxStoredEntries bounds the entries of a clock a write stores (Limit).
	MaxStoredEntries = 1024
	// MaxCounter bounds every counter of a clock a client sends: 2^53, nine
	// quadrillion writes, so that incrementing a received counter can never come near
	// the end of its 64 bits.
	MaxCounter = 1 << 53
)

// CheckReceived reports, as an error wrapping ErrMalformed, a clock that a client may not
// send: one with more than MaxReceivedEntries entries or a counter above MaxCounter.
// Decode has already checked its shape.
func (c VClock) CheckReceived() error {
	if len(c) > MaxReceivedEntries {
		return fmt.Errorf("%w: %d entries, more than %d", ErrMalformed, len(c), MaxReceivedEntries)
	}
	for _, e := range c {
		if e.Counter > MaxCounter {
			return fmt.Errorf("%w: counter %d of actor %q is above %d", ErrMalformed, e.Counter, e.Actor, uint64(MaxCounter))
		}
	}
	return nil
}

// Limit returns c with at most max entries: when it has more, its oldest entries (by
// timestamp, then actor) are dropped, except keep's, which always stays. Like pruning,
// dropping an entry can only make a later write look concurrent (a sibling), never lose
// one; it bounds what a flood of forged actors can make a stored clock grow to.
func (c VClock) Limit(max int, keep string) VClock {
	if len(c) <= max {
		return c
	}
	others := make(VClock, 0, len(c))
	var kept VClock
	for _, e := range c {
		if e.Actor == keep {
			kept = append(kept, e)
			continue
		}
		others = append(others, e)
	}
	sort.Slice(others, func(i, j int) bool {
		if others[i].Timestamp != others[j].Timestamp {
			return others[i].Timestamp > others[j].Timestamp
		}
		return others[i].Actor < others[j].Actor
	})
	n := max - len(kept)
	if n < 0 {
		n = 0
	}
	out := append(others[:n:n], kept...)
	sort.Slice(out, func(i, j int) bool { return out[i].Actor < out[j].Actor })
	return out
}

// Clone returns a copy of c that shares no memory with it.
func (c VClock) Clone() VClock {
	if c == nil {
		return nil
	}
	return append(VClock(nil), c...)
}

// String is a readable form for logs and test failures, e.g. "{n1:3@1700000000}".
func (c VClock) String() string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.Actor)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(e.Counter, 10))
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(e.Timestamp, 10))
	}
	b.WriteByte('}')
	return b.String()
}
