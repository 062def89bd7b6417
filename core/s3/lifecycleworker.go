package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// DefaultLifecycleInterval is Config.LifecycleInterval's default.
const DefaultLifecycleInterval = time.Hour

// minLifecycleInterval is the shortest interval the worker keeps (a shorter one would
// spin).
const minLifecycleInterval = 100 * time.Millisecond

// lifecycleCycleLimit bounds the index entries one cycle visits, over all buckets: the
// rest waits for the next cycle, which resumes where this one stopped (lifecycleState).
const lifecycleCycleLimit = 10000

// lifecycleBatch is how many index entries the worker reads per iterator: it holds an
// iterator only that long, never while it commits.
const lifecycleBatch = 256

// lifecycleState is the lifecycle worker's state: its resume cursors and counters.
type lifecycleState struct {
	mu sync.Mutex // guards cursors and nextBucket
	// cursors maps an index prefix (a bucket's "lo", "lu", "ln" or "lm" entries) to the smallest
	// key after the last entry a cycle handled: a cycle that ran out of budget leaves
	// it, the next resumes from it; a scan that reaches the due end forgets it.
	cursors map[string][]byte
	// nextBucket is the bucket the next cycle starts with: one that ran out of budget
	// does not keep the others waiting.
	nextBucket string

	expired, aborted, cycles atomic.Int64
	lastCycle                atomic.Int64 // nanoseconds
	// noncurrent and markers count the noncurrent versions and the lone delete
	// markers removed (lifecyclenoncurrent.go).
	noncurrent, markers atomic.Int64
}

// LifecycleStats returns the lifecycle worker's counters for /stats: objects expired,
// uploads aborted, noncurrent versions expired, lone delete markers removed, cycles run, and the last cycle's duration in milliseconds.
func (s *Service) LifecycleStats() map[string]any {
	l := &s.lc
	return map[string]any{
		"s3_lifecycle_objects_expired_total":        l.expired.Load(),
		"s3_lifecycle_uploads_aborted_total":        l.aborted.Load(),
		"s3_lifecycle_noncurrent_expired_total":     l.noncurrent.Load(),
		"s3_lifecycle_delete_markers_removed_total": l.markers.Load(),
		"s3_lifecycle_cycles_total":                 l.cycles.Load(),
		"s3_lifecycle_last_cycle_ms":                time.Duration(l.lastCycle.Load()).Milliseconds(),
	}
}

// lifecycleWorker runs the lifecycle cycles every Config.LifecycleInterval. Its
// goroutine is owned by the Service (started by New, stopped by Close).
type lifecycleWorker struct {
	s      *Service
	ctx    context.Context // done when the worker stops: bounds every cycle
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func startLifecycle(s *Service) *lifecycleWorker {
	w := &lifecycleWorker{s: s}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.done.Add(1)
	go w.run()
	return w
}

func (w *lifecycleWorker) close() {
	w.cancel()
	w.done.Wait()
}

// run gives old records their index entries (once per store), then runs a cycle every
// interval until the worker stops. Each cycle is bounded by the interval.
func (w *lifecycleWorker) run() {
	defer w.done.Done()
	s := w.s
	every := s.cfg.LifecycleInterval
	if every <= 0 {
		every = DefaultLifecycleInterval
	}
	every = max(every, minLifecycleInterval)
	if s.owns(lifecycleVersionKey()) {
		if err := s.backfillLifecycleIndex(w.ctx); err != nil && w.ctx.Err() == nil {
			s.log.Warn("s3: backfill the lifecycle index", "err", err)
		}
		if err := s.backfillVersionsIndex(w.ctx); err != nil && w.ctx.Err() == nil {
			s.log.Warn("s3: backfill the lifecycle index of versions", "err", err)
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(w.ctx, every)
		err := s.lifecycleCycle(ctx, time.Now())
		cancel()
		if err != nil && w.ctx.Err() == nil {
			s.log.Warn("s3: lifecycle cycle", "err", err)
		}
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// owns reports whether this node runs the background work of key (storage.Owner).
func (s *Service) owns(key []byte) bool { return s.owner == nil || s.owner.Owns(key) }

// lifecycleCycle applies the lifecycle rules due at now: it expires the current
// objects and aborts the uploads that enabled rules select and whose time has come,
// visiting at most lifecycleCycleLimit index entries (the next cycle resumes), only
// the entries old enough for some rule of their bucket to be due, in the buckets whose
// record this node owns (storage.Owner). It stops at ctx's end.
func (s *Service) lifecycleCycle(ctx context.Context, now time.Time) error {
	start := time.Now()
	defer func() {
		s.lc.cycles.Add(1)
		s.lc.lastCycle.Store(int64(time.Since(start)))
	}()
	buckets, err := s.lifecycleBuckets()
	if err != nil {
		return err
	}
	budget := lifecycleCycleLimit
	steps := []func(context.Context, *Bucket, time.Time, int) (int, error){s.expireObjects, s.abortUploads,
		s.applyVersionedLifecycle}
	for i, b := range buckets {
		for _, step := range steps {
			n, err := step(ctx, b, now, budget)
			budget -= n
			if err != nil && ctx.Err() == nil {
				// One bucket's failure (a record that does not decode, a write that kept
				// conflicting) does not hold the others back.
				s.log.Warn("s3: lifecycle", "bucket", b.Name, "err", err)
			}
		}
		if budget <= 0 || ctx.Err() != nil {
			s.lc.mu.Lock()
			s.lc.nextBucket = buckets[(i+1)%len(buckets)].Name
			s.lc.mu.Unlock()
			return ctx.Err()
		}
	}
	return nil
}

// lifecycleBuckets returns the buckets with an enabled lifecycle rule whose record this
// node owns, starting with lifecycleState.nextBucket and wrapping around.
func (s *Service) lifecycleBuckets() ([]*Bucket, error) {
	it := s.db.IteratePrefix(bucketTable)
	var out []*Bucket
	for it.Next() {
		if !s.owns(it.Key()) || !bytes.Contains(it.Value(), []byte(`"lifecycle"`)) {
			continue
		}
		b := new(Bucket)
		if err := json.Unmarshal(it.Value(), b); err != nil || b.Lifecycle == nil {
			continue // Check reports records that do not decode
		}
		for _, r := range b.Lifecycle.Rules {
			if r.Enabled {
				out = append(out, b)
				break
			}
		}
	}
	err := it.Err()
	it.Release()
	if err != nil {
		return nil, wrapf(err, "lifecycle: list buckets")
	}
	s.lc.mu.Lock()
	next := s.lc.nextBucket
	s.lc.mu.Unlock()
	for i, b := range out {
		if b.Name >= next {
			return append(out[i:], out[:i]...), nil
		}
	}
	return out, nil
}

// dueCutoff returns the latest time an index entry may have for some enabled rule of
// lc to be due at now, given each rule's days (days returns 0 for a rule that has
// none of the action, -1 for a rule due whatever the time, as a past Date); ok is false
// when no rule can be due.
func dueCutoff(lc *Lifecycle, now time.Time, day time.Duration, days func(*LifecycleRule) int) (time.Time, bool) {
	var cut time.Time
	ok := false
	n := max(now.UnixNano(), 0)
	floor := time.Unix(0, n-n%int64(day)) // the last multiple of day since the epoch
	for i := range lc.Rules {
		r := &lc.Rules[i]
		if !r.Enabled {
			continue
		}
		var t time.Time
		switch d := days(r); {
		case d == 0:
			continue
		case d < 0:
			t = time.Unix(0, 1<<62) // every entry
		default:
			if int64(d) > floor.UnixNano()/int64(day) {
				continue // nothing is that old
			}
			t = floor.Add(-time.Duration(d) * day)
		}
		if !ok || t.After(cut) {
			cut, ok = t, true
		}
	}
	return cut, ok
}

// expirationDays is dueCutoff's days of a rule's Expiration.
func expirationDays(now time.Time) func(*LifecycleRule) int {
	return func(r *LifecycleRule) int {
		switch e := r.Expiration; {
		case e == nil || e.DeleteMarker != nil:
			return 0
		case !e.Date.IsZero():
			if e.Date.After(now) {
				return 0
			}
			return -1
		default:
			return e.Days
		}
	}
}

// abortDays is dueCutoff's days of a rule's AbortIncompleteMultipartUpload.
func abortDays(r *LifecycleRule) int {
	if r.AbortUpload == nil {
		return 0
	}
	return r.AbortUpload.DaysAfterInitiation
}

// expireObjects expires the current objects of b that its rules make due at now,
// visiting at most budget "lo" entries; it returns how many it visited.
func (s *Service) expireObjects(ctx context.Context, b *Bucket, now time.Time, budget int) (int, error) {
	return s.scanDueIndex(ctx, "lo", b, now, budget, expirationDays(now), func(entry []byte, t time.Time, comps [][]byte) error {
		if len(comps) != 4 {
			return nil
		}
		key := string(comps[3])
		switch res, err := s.expireObject(ctx, b.Name, key, t, now); {
		case err != nil:
			return err
		case res == expired:
			s.lc.expired.Add(1)
		case res == stale:
			return s.dropStaleEntry(ctx, entry, objectKey(b.Name, key), false, t)
		}
		return nil
	})
}

// expireResult is what expireObject did.
type expireResult int

const (
	kept    expireResult = iota // the object is not due (or its bucket is gone)
	expired                     // deleted
	stale                       // the entry names no current version: absent, or modified at another time
)

// expireObject deletes bucket/key as DeleteObject does (deleteCurrent), in a commit
// conditional on the bucket record and the manifest it reads, if that manifest is
// still the version indexed at modified and the bucket's rules, as read, make it due
// at now. An object rewritten or retagged meanwhile stays.
func (s *Service) expireObject(ctx context.Context, bucket, key string, modified, now time.Time) (expireResult, error) {
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	l := s.keyLock(bucket, key)
	l.Lock()
	defer l.Unlock()
	res := kept
	err := s.update(ctx, "lifecycle: expire "+bucket+"/"+key, func(t *txn) error {
		b, err := s.bucketIn(t, bucket)
		if err != nil {
			return err
		}
		res = stale
		due := func(m *Manifest) bool {
			if !m.LastModified.Equal(modified) {
				return false
			}
			res = kept
			at, _, ok := s.ManifestExpiry(b, key, m)
			return ok && !at.After(now)
		}
		if b.Versioning != "" {
			return s.expireVersioned(t, b, key, due, &res)
		}
		deleted, err := s.deleteCurrent(t, bucket, key, due)
		if deleted {
			res = expired
		}
		return err
	})
	switch {
	case IsCode(err, NoSuchBucket):
		return kept, nil
	case err != nil:
		return kept, err
	}
	if res == expired {
		s.gc.wake()
	}
	return res, nil
}

// expireVersioned is expireObject's deletion in a bucket whose versioning was set:
// as AWS, the current version is kept (noncurrent) and a delete marker owned by the
// bucket's owner becomes the newest version (the null version while suspended), when
// due says the current version read is due; *res is set to expired then.
func (s *Service) expireVersioned(t *txn, b *Bucket, key string, due func(*Manifest) bool, res *expireResult) error {
	kv, err := s.loadVersions(t, b.Name, key)
	if err != nil || kv.cur == nil || !due(kv.cur) {
		return err
	}
	owner := Requester{ID: b.Owner.ID, DisplayName: b.Owner.DisplayName}
	if _, err := kv.addMarker(owner, b.Versioning == VersioningSuspended); err != nil {
		return err
	}
	*res = expired
	return nil
}

// abortUploads aborts the uploads of b that its rules make due at now, visiting at
// most budget "lu" entries; it returns how many it visited.
func (s *Service) abortUploads(ctx context.Context, b *Bucket, now time.Time, budget int) (int, error) {
	day := s.lifecycleDay()
	return s.scanDueIndex(ctx, "lu", b, now, budget, abortDays, func(entry []byte, t time.Time, comps [][]byte) error {
		if len(comps) != 5 {
			return nil
		}
		key, id := string(comps[3]), string(comps[4])
		if at, ok := uploadAbortAt(b.Lifecycle, key, t, day); !ok || at.After(now) {
			return nil
		}
		unlock := s.uploadLock(id)
		err := s.abortLocked(ctx, b.Name, key, id)
		unlock()
		switch {
		case err == nil:
			s.lc.aborted.Add(1)
		case IsCode(err, NoSuchUpload):
			return s.dropStaleEntry(ctx, entry, uploadKey(b.Name, key, id), true, t)
		default:
			return err
		}
		return nil
	})
}

// scanDueIndex is scanDue over b's entries of the lifecycle index table ("lo", "lu",
// "ln", "lm") old enough for some enabled rule of b to be due at now (dueCutoff with
// days); it visits none when no rule can be.
func (s *Service) scanDueIndex(ctx context.Context, table string, b *Bucket, now time.Time, budget int,
	days func(*LifecycleRule) int, handle func(entry []byte, t time.Time, comps [][]byte) error) (int, error) {
	cut, ok := dueCutoff(b.Lifecycle, now, s.lifecycleDay(), days)
	if !ok {
		return 0, nil
	}
	prefix := storage.Key(storage.TagS3, []byte(table), []byte(b.Name))
	hi := storage.AppendComponent(bytes.Clone(prefix), storage.Uint64Component(unixNano(cut)+1))
	return s.scanDue(ctx, prefix, hi, budget, handle)
}

// scanDue calls handle for the index entries in [the prefix's cursor, hi), at most
// budget of them, a batch at a time (no iterator is held while handle runs), with
// each entry's time and decoded key components; it records where it stopped in the
// prefix's cursor (forgotten when it reached hi) and returns how many it visited. An
// entry whose handling fails is passed over (the first such error is returned): one
// bad record does not stop the scan of the others. It stops when ctx is done.
func (s *Service) scanDue(ctx context.Context, prefix, hi []byte, budget int, handle func(entry []byte, t time.Time, comps [][]byte) error) (int, error) {
	s.lc.mu.Lock()
	from := s.lc.cursors[string(prefix)]
	s.lc.mu.Unlock()
	if from == nil {
		from = prefix
	}
	visited := 0
	var firstErr error
	for visited < budget {
		if err := ctx.Err(); err != nil {
			return visited, err
		}
		keys, err := s.readEntries(from, hi, min(lifecycleBatch, budget-visited))
		if err != nil || len(keys) == 0 {
			s.setCursor(prefix, nil)
			return visited, errors.Join(firstErr, err)
		}
		for _, k := range keys {
			_, comps, err := storage.DecodeKey(k)
			t, ok := time.Time{}, false
			if err == nil && len(comps) > 2 {
				t, ok = entryTime(comps[2])
			}
			if ok {
				if err := handle(k, t, comps); err != nil && firstErr == nil {
					firstErr = err // the entry is skipped; the next round tries it again
				}
			}
			visited++
		}
		from = append(keys[len(keys)-1], 0) // the smallest key after the last
		s.setCursor(prefix, from)
	}
	return visited, firstErr
}

// readEntries returns copies of at most n keys in [from, hi).
func (s *Service) readEntries(from, hi []byte, n int) ([][]byte, error) {
	it := s.db.Iterate(from, hi)
	defer it.Release()
	var keys [][]byte
	for len(keys) < n && it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	return keys, wrapf(it.Err(), "lifecycle: read index")
}

func (s *Service) setCursor(prefix, at []byte) {
	s.lc.mu.Lock()
	defer s.lc.mu.Unlock()
	if at == nil {
		delete(s.lc.cursors, string(prefix))
		return
	}
	if s.lc.cursors == nil {
		s.lc.cursors = map[string][]byte{}
	}
	s.lc.cursors[string(prefix)] = at
}

// dropStaleEntry deletes a lifecycle index entry whose record (record) is gone or
// indexed at another time than t: one the backfill wrote for a record that changed
// meanwhile. The commit is conditional on the record as read.
func (s *Service) dropStaleEntry(ctx context.Context, entry, record []byte, upload bool, t time.Time) error {
	return s.update(ctx, "lifecycle: drop stale entry", func(tx *txn) error {
		v, err := tx.get(record)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return wrapf(err, "lifecycle: read %q", record)
		default:
			if rt, err := indexTime(upload, v); err == nil && rt.Equal(t) {
				return nil // not stale
			}
		}
		tx.b.Delete(entry)
		return nil
	})
}
