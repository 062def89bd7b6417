package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// Object expiry (TTL). A write gives its record an absolute expiry — the coordinating
// node's clock plus the object's TTL (the X-Riak-TTL header, else the bucket's ttl
// property) — stored in the record itself (record version 2), so every replica that
// applies the record agrees on it whatever its own clock says at write time. From that
// instant the object reads as absent: Get, the write path (a PUT over it starts a new
// clock), listings, index queries (each posting holds the expiry, see derive.go) and
// MapReduce inputs skip it. The store derives an expiry-index entry (tag 'e', ordered by
// expiry) from every record with an expiry; the reaper scans the entries that are due
// and deletes their objects with conditional commits, so a concurrent rewrite wins.

// MaxTTLSeconds bounds a TTL (the ttl property and the TTL header): ten years, far
// below the int64 nanosecond range the absolute expiry is stored in.
const MaxTTLSeconds = 10 * 365 * 24 * 3600

// expiryBatch is the number of expired objects the reaper deletes in one commit.
const expiryBatch = 256

// expiryScanLimit bounds the entries one reaper pass reads before it commits what it
// found: a pass holds an iterator only that long.
const expiryScanLimit = 4 * expiryBatch

// expirySweepEvery is how often the reaper scans the expiry index from its start rather
// than from its cursor (expiryCursor).
const expirySweepEvery = time.Minute

// expiryCursor is where the reaper's next scan of the expiry index starts. Each entry
// the reaper removes leaves a LevelDB tombstone until compaction drops it, and a scan
// from the index's start would step over all of them on every pass: with hundreds of
// thousands reaped, that cost grows with what was reaped, not with what is due. So a
// scan starts after the last entry removed. An entry that sorts before the cursor
// (written with an expiry already past: a replica applying an old record, or a clock
// set back) is found by the sweep from the start, every expirySweepEvery.
type expiryCursor struct {
	mu      sync.Mutex // guards from and sweptAt
	from    []byte     // the last entry removed; nil: the index's start
	sweptAt time.Time  // when a scan last started from the index's start
}

// start returns where a scan at now starts.
func (c *expiryCursor) start(now time.Time) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.from == nil || now.Sub(c.sweptAt) >= expirySweepEvery || now.Before(c.sweptAt) {
		c.sweptAt = now
		c.from = nil
		return storage.Key(storage.TagExpiry)
	}
	return c.from
}

// advance records that every entry up to and including last was handled.
func (c *expiryCursor) advance(last []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Compare(last, c.from) > 0 {
		c.from = last
	}
}

// expiredAt reports whether a record with the given expiry (unix nanoseconds, 0 = none)
// has expired at now.
func expiredAt(expiry int64, now time.Time) bool {
	return expiry > 0 && now.UnixNano() >= expiry
}

// expiryOf returns the absolute expiry of a write made at now with a TTL of ttl seconds
// (0: none).
func expiryOf(ttl int64, now time.Time) int64 {
	if ttl <= 0 {
		return 0
	}
	return now.Add(time.Duration(ttl) * time.Second).UnixNano()
}

// ParseTTL parses a TTL header value: whole seconds from 0 (never expires) to
// MaxTTLSeconds. The error is a client error with the text to answer.
func ParseTTL(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > MaxTTLSeconds {
		return 0, &core.Error{Code: core.EINVALID,
			Message: fmt.Sprintf("Invalid TTL %q: must be whole seconds from 0 to %d.\n", v, MaxTTLSeconds)}
	}
	return n, nil
}

// ExpiresIn returns how long an object has left to live, rounded up to whole seconds,
// and false if it never expires.
func ExpiresIn(o *core.Object, now time.Time) (int64, bool) {
	if o.Expiry.IsZero() {
		return 0, false
	}
	left := o.Expiry.Sub(now)
	if left <= 0 {
		return 0, true
	}
	return int64((left + time.Second - 1) / time.Second), true
}

// postingValue is the value of an index posting of a record with the given expiry: its
// 8-byte big-endian form, or nil when the record does not expire.
func postingValue(expiry int64) []byte {
	if expiry <= 0 {
		return nil
	}
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(expiry))
}

// postingLive reports whether a posting value (postingValue) names an object that has
// not expired at now.
func postingLive(value []byte, now time.Time) bool {
	if len(value) != 8 {
		return true
	}
	return !expiredAt(int64(binary.BigEndian.Uint64(value)), now)
}

// expiryEntry returns the expiry-index key of a stored record, nil when it has none.
func expiryEntry(r derivedInfo, typ, bucket, key string) []byte {
	if !r.present || r.expiry <= 0 {
		return nil
	}
	return storage.ExpiryKey(r.expiry, []byte(typ), []byte(bucket), []byte(key))
}

// deriveExpiry adds the expiry-index changes of replacing prev by next to out.
func deriveExpiry(prev, next derivedInfo, typ, bucket, key string, out *storage.Derived) {
	if prev.expiry == next.expiry && prev.present == next.present {
		return
	}
	before, after := expiryEntry(prev, typ, bucket, key), expiryEntry(next, typ, bucket, key)
	if before != nil && string(before) != string(after) {
		out.Delete(before)
	}
	if after != nil {
		out.Put(after, nil)
	}
}

// expiryStats counts the objects the reaper removed, in total and per second over the
// last minute, and records how far behind it is, for /stats.
type expiryStats struct {
	total atomic.Int64
	// oldest is the expiry (unix nanoseconds) of the first due entry the reaper has not
	// handled yet, while it has some; 0 once a pass found nothing more due.
	oldest atomic.Int64
	mu     sync.Mutex // guards slots and last
	slots  [60]int64  // objects reaped in each second of the last minute, by unix second mod 60
	last   int64      // the unix second slots were last advanced to
}

// behind records that the reaper is about to handle due entries from one with the given
// expiry on (0, a malformed entry's: unknown, the last known one stands).
func (e *expiryStats) behind(expiry int64) {
	if expiry > 0 {
		e.oldest.Store(expiry)
	}
}

// caughtUp records that a pass found nothing more due.
func (e *expiryStats) caughtUp() { e.oldest.Store(0) }

// backlog returns how long before now the oldest due entry not yet handled expired (0
// when caught up).
func (e *expiryStats) backlog(now time.Time) time.Duration {
	oldest := e.oldest.Load()
	if oldest == 0 {
		return 0
	}
	return max(0, now.Sub(time.Unix(0, oldest)))
}

// add records n objects reaped at now.
func (e *expiryStats) add(n int, now time.Time) {
	e.total.Add(int64(n))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now.Unix())
	e.slots[now.Unix()%60] += int64(n)
}

// advance clears the slots of the seconds between the last update and sec.
func (e *expiryStats) advance(sec int64) {
	if sec <= e.last {
		return
	}
	for s := max(e.last+1, sec-59); s <= sec; s++ {
		e.slots[s%60] = 0
	}
	e.last = sec
}

// lastMinute returns the objects reaped in the 60 seconds up to now.
func (e *expiryStats) lastMinute(now time.Time) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now.Unix())
	var n int64
	for _, v := range e.slots {
		n += v
	}
	return n
}

// ExpiredReaped returns the number of expired objects the reaper removed since start,
// and in the last minute.
func (s *Service) ExpiredReaped() (total, lastMinute int64) {
	return s.expiry.total.Load(), s.expiry.lastMinute(s.now())
}

// dueExpiry is one expiry-index entry that is due: the entry, the expiry it is
// ordered by and the object it names (k nil for a malformed entry, which names none).
type dueExpiry struct {
	entry            []byte
	expiry           int64
	k                []byte // the object's key
	typ, bucket, key string
}

// ReapExpired deletes the objects whose expiry has passed, in batches of expiryBatch
// conditional deletes, until none is due, the service stops or ctx ends. The background
// reaper calls it on every tick; tests may call it directly. It returns the number of
// objects deleted.
func (s *Service) ReapExpired(ctx context.Context) (int, error) {
	deleted := 0
	for {
		now := s.now()
		due, err := s.dueExpiries(s.expiryCursor.start(now), now)
		if err != nil {
			return deleted, err
		}
		if len(due) == 0 {
			s.expiry.caughtUp()
			return deleted, nil
		}
		// In a cluster the node that owns an object reaps it (storage.Owner); the
		// others step over it, and its delete, when applied, removes their entries.
		owned := due
		if s.owner != nil {
			owned = make([]dueExpiry, 0, len(due))
			for _, e := range due {
				if e.k == nil || s.owns(e.k) {
					owned = append(owned, e)
				}
			}
		}
		for start := 0; start < len(owned); start += expiryBatch {
			batch := owned[start:min(start+expiryBatch, len(owned))]
			s.expiry.behind(batch[0].expiry)
			select {
			case <-s.stop: // shutting down: the entries stay for the next start
				return deleted, nil
			default:
			}
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
			n, err := s.reapExpiredBatch(ctx, batch, now)
			deleted += n
			s.expiry.add(n, now)
			if err != nil {
				return deleted, err
			}
			s.expiryCursor.advance(batch[len(batch)-1].entry)
		}
		s.expiryCursor.advance(due[len(due)-1].entry) // the entries of other owners too
		if len(due) < expiryScanLimit {
			s.expiry.caughtUp()
			return deleted, nil
		}
	}
}

// ExpiryBacklog returns how far the expiry reaper is behind: how long ago the oldest
// expired object it has not removed yet expired, 0 when its last pass removed every
// object due (objects that expired since, up to one reaper tick, are not counted). An
// expired object reads as absent whether or not it is removed; this is how long its
// bytes may still be stored. It costs no read of the store.
func (s *Service) ExpiryBacklog() time.Duration { return s.expiry.backlog(s.now()) }

// dueExpiries reads up to expiryScanLimit expiry-index entries due at now, from the
// entry from on (an entry equal to from was handled: it is skipped).
func (s *Service) dueExpiries(from []byte, now time.Time) ([]dueExpiry, error) {
	hi := storage.PrefixEnd(storage.ExpiryPrefix(now.UnixNano()))
	it := s.db.Iterate(from, hi)
	defer it.Release()
	var list []dueExpiry
	for len(list) < expiryScanLimit && it.Next() {
		if bytes.Equal(it.Key(), from) {
			continue
		}
		e := dueExpiry{entry: append([]byte(nil), it.Key()...)}
		// A malformed entry cannot name an object: it is dropped (k nil).
		if exp, typ, bucket, key, err := storage.DecodeExpiryKey(it.Key()); err == nil {
			e.expiry, e.typ, e.bucket, e.key = exp, string(typ), string(bucket), string(key)
			e.k = objectKey(e.typ, e.bucket, e.key)
		}
		list = append(list, e)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("kv: scan expiry index: %w", err)
	}
	return list, nil
}

// reapExpiredBatch deletes the expired objects of due in one commit, each on the
// revision read, and drops the entries. When a writer changed one of them in between
// (a conflict), or when the store refuses the batch as a whole (a cluster store
// commits the keys of one stream at once), the entries are reaped one by one so the
// others are not held up. It
// returns the number of objects deleted.
func (s *Service) reapExpiredBatch(ctx context.Context, due []dueExpiry, now time.Time) (int, error) {
	var b storage.Batch
	n := 0
	deleting := make(map[string]struct{}, len(due)) // the objects b deletes
	for _, e := range due {
		ok, err := s.addExpiredDelete(ctx, &b, e, now, deleting)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	err := s.db.Commit(ctx, &b, false)
	if err == nil {
		return n, nil
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("kv: reap expired: %w", err)
	}
	// A conflict, or a batch a replicated store cannot commit at once (its keys in
	// several streams): one by one, each commit saying for itself what went wrong.
	n = 0
	for _, e := range due {
		var one storage.Batch
		ok, err := s.addExpiredDelete(ctx, &one, e, now, nil)
		if err != nil {
			return n, err
		}
		switch err := s.db.Commit(ctx, &one, false); {
		case errors.Is(err, storage.ErrConflict): // rewritten meanwhile: its new record decides
		case err != nil:
			return n, fmt.Errorf("kv: reap expired %s/%s: %w", e.bucket, e.key, err)
		case ok:
			n++
		}
	}
	return n, nil
}

// addExpiredDelete adds to b the removal of e: if the object e names has expired at
// now, its delete, conditional on the revision read (a rewrite meanwhile wins), and
// otherwise the removal of the entry alone. It reports whether the object is deleted.
//
// It reads the record's header only (its expiry), from the store rather than the
// object cache: the item read is stamped (storage.Batch.RequireItem), so the commit
// settles the condition without reading the record again and derives the deletes of
// the postings and of the expiry entry from the value read. The entry is deleted
// explicitly only when it is not the record's own (one an older build left), which
// the derived writes would not remove. deleting, when not nil, holds the objects b
// already deletes (two entries may name one object): e's object is then not deleted
// twice, and e is added to it.
func (s *Service) addExpiredDelete(ctx context.Context, b *storage.Batch, e dueExpiry, now time.Time, deleting map[string]struct{}) (bool, error) {
	if _, dup := deleting[string(e.k)]; e.k == nil || dup {
		b.Delete(e.entry)
		return false, nil
	}
	it, err := s.db.Read(ctx, e.k)
	if err != nil {
		return false, fmt.Errorf("kv: reap expired %s/%s: %w", e.bucket, e.key, err)
	}
	var expiry int64
	if it.Value != nil {
		if expiry, err = recordExpiry(it.Value); err != nil {
			return false, fmt.Errorf("kv: reap expired %s/%s: %w", e.bucket, e.key, err)
		}
	}
	if !expiredAt(expiry, now) {
		b.Delete(e.entry)
		return false, nil
	}
	b.RequireItem(e.k, it)
	b.Delete(e.k)
	if expiry != e.expiry {
		b.Delete(e.entry)
	}
	if deleting != nil {
		deleting[string(e.k)] = struct{}{}
	}
	return true, nil
}
