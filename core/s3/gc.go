package s3

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// gcBatch is how many chunk deletions the collector writes per batch, and how many "g"
// records it reads per scan.
const gcBatch = 64

// gcInterval is how often the collector looks for work it was not woken for.
const gcInterval = time.Minute

// collector deletes the chunks named by "g" records, then the records. Its goroutine is
// owned by the Service (started by New, stopped by Close).
type collector struct {
	s      *Service
	wakeCh chan struct{}
	stop   chan struct{}
	// ctx is done when stop is closed: it bounds the blob store calls of a pass.
	ctx    context.Context
	cancel context.CancelFunc
	done   sync.WaitGroup
	// collected counts deleted chunk records, blobs removed blob files (for tests and
	// stats), passes the passes over the "g" records (for tests).
	mu                       sync.Mutex // guards collected, blobs and passes
	collected, blobs, passes int64
}

func startCollector(s *Service) *collector {
	c := &collector{s: s, wakeCh: make(chan struct{}, 1), stop: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.done.Add(1)
	go c.run()
	c.wake()
	return c
}

func (c *collector) wake() {
	if c == nil {
		return
	}
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

func (c *collector) close() {
	close(c.stop)
	c.cancel()
	c.done.Wait()
}

// warn logs err, the failure of a pass, unless the collector is stopping (its context
// then fails the pass's writes; the work resumes at the next start).
func (c *collector) warn(msg string, err error) {
	if c.ctx.Err() == nil {
		c.s.log.Warn(msg, "err", err)
	}
}

func (c *collector) run() {
	defer c.done.Done()
	// Look for abandoned uploads often enough to abort them within a quarter of their
	// TTL past it (short TTLs are for tests).
	every := min(gcInterval, max(c.s.cfg.UploadTTL/4, 100*time.Millisecond))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wakeCh:
		case <-t.C:
			if n, err := c.s.abortExpired(c.ctx, time.Now().Add(-c.s.cfg.UploadTTL)); err != nil {
				c.warn("s3: abort abandoned uploads", err)
			} else if n > 0 {
				c.s.log.Info("s3: aborted abandoned multipart uploads", "uploads", n, "older_than", c.s.cfg.UploadTTL)
			}
			if err := c.s.expireCompleted(c.ctx, time.Now().Add(-c.s.completedTTL())); err != nil {
				c.warn("s3: expire completed uploads", err)
			}
		}
		if err := c.collect(); err != nil {
			c.warn("s3: collect chunks", err)
		}
		// Wakes that arrive meanwhile wait for the pause, then make one pass.
		pause := time.NewTimer(gcPause)
		select {
		case <-c.stop:
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

// gcPause spaces the collector's passes. A pass scans the "g" records, stepping over
// the deleted ones until a compaction drops them: one pass per commit under a stream of
// overwrites cost 11% of the CPU of 16 connections PUTting 1 MiB objects.
const gcPause = 50 * time.Millisecond

// collect works through the "g" records once, in key order, until none is left after
// the last one it saw or the collector stops. A blob an open object still reads is
// skipped; its record stays, and closing the object wakes the collector again.
func (c *collector) collect() error {
	c.mu.Lock()
	c.passes++
	c.mu.Unlock()
	prefix := garbageTable
	from := prefix
	for {
		it := c.s.db.Iterate(from, storage.PrefixEnd(prefix))
		var ids [][]byte
		var last []byte
		for len(ids) < gcBatch && it.Next() {
			last = append(last[:0], it.Key()...)
			_, comps, err := storage.DecodeKey(it.Key())
			// In a cluster the node that owns the record collects it (storage.Owner):
			// the others leave it, and its delete, when applied, removes it here too.
			if err == nil && len(comps) == 2 && (c.s.owner == nil || c.s.owner.Owns(it.Key())) {
				ids = append(ids, comps[1])
			}
		}
		err := it.Err()
		it.Release()
		if err != nil || last == nil {
			return err
		}
		from = append(last, 0) // the smallest key after last
		for _, id := range ids {
			select {
			case <-c.stop:
				return nil
			default:
			}
			if err := c.collectOne(id); err != nil {
				return err
			}
		}
	}
}

// collectOne deletes the chunks of one id, then its blob (unless an open object pins
// it: then the record stays for a later pass), then its "g" record.
func (c *collector) collectOne(id []byte) error {
	db := c.s.db
	for {
		it := db.IteratePrefix(chunkPrefix(id))
		b := new(storage.Batch)
		for b.Len() < gcBatch && it.Next() {
			b.Delete(append([]byte(nil), it.Key()...))
		}
		err := it.Err()
		it.Release()
		if err != nil {
			return wrapf(err, "collect")
		}
		n := b.Len()
		if n == 0 {
			break
		}
		if err := db.Commit(c.ctx, b, false); err != nil {
			return wrapf(err, "collect")
		}
		c.mu.Lock()
		c.collected += int64(n)
		c.mu.Unlock()
		select {
		case <-c.stop:
			return nil
		default:
		}
	}
	if b := c.s.cfg.Blobs; b != nil {
		c.s.blobMu.Lock()
		if h := hex.EncodeToString(id); c.s.readers[h] > 0 {
			c.s.deferred[h] = true // its last reader wakes the collector
			c.s.blobMu.Unlock()
			return nil
		}
		removed, err := b.Remove(c.ctx, id)
		if removed {
			c.s.blobsRemoved.Add(1)
		}
		c.s.blobMu.Unlock()
		if err != nil {
			return wrapf(err, "collect")
		}
		if removed {
			c.mu.Lock()
			c.blobs++
			c.mu.Unlock()
		}
	}
	return wrapf(storage.Delete(c.ctx, db, garbageKey(id), false), "collect")
}

// staleWriteAge is how old a record of a write in progress must be for any node of a
// cluster to take it for interrupted: far longer than a write may last (the S3
// listener's timeouts end a stalled upload within minutes), so that the writes of a
// node that crashed and never came back are collected too.
const staleWriteAge = 24 * time.Hour

// recoverWrites turns every "w" record of a write a crash interrupted into a "g"
// record, and returns how many it found. Standalone that is every "w" record (nothing
// writes before New returns). In a cluster the records are shared and the other nodes
// are writing while this one starts: only this node's own (Config.Node) and those
// older than staleWriteAge are interrupted — taking another node's live write would
// collect the data of a PUT about to be acknowledged.
func (s *Service) recoverWrites() (int, error) {
	it := s.db.IteratePrefix(storage.KeyString(storage.TagS3, "w"))
	b := new(storage.Batch)
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 2 {
			continue
		}
		if s.owner != nil && !s.interruptedHere(it.Value(), time.Now()) {
			continue
		}
		b.Delete(append([]byte(nil), it.Key()...))
		b.Put(garbageKey(comps[1]), nil)
	}
	err := it.Err()
	it.Release()
	if err != nil {
		return 0, wrapf(err, "recover writes")
	}
	n := b.Len() / 2
	if n == 0 {
		return 0, nil
	}
	return n, wrapf(s.db.Commit(context.Background(), b, true), "recover writes")
}

// interruptedHere reports whether the "w" record v is, in a cluster, this node's
// write (so its start means the write died) or older than staleWriteAge. A record
// that does not decode is taken as interrupted only once stale by no measure (never:
// it is left for `cairn check` to report).
func (s *Service) interruptedHere(v []byte, now time.Time) bool {
	var rec writeRecord
	if json.Unmarshal(v, &rec) != nil {
		return false
	}
	return (rec.Node != "" && rec.Node == s.cfg.Node) || now.Sub(rec.Started) > staleWriteAge
}

// Pending reports whether chunk collection has work queued or running.
func (s *Service) Pending() (bool, error) {
	for _, t := range []string{"g", "w"} {
		it := s.db.IteratePrefix(storage.KeyString(storage.TagS3, t))
		ok := it.Next()
		err := it.Err()
		it.Release()
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Collected returns how many chunk records and blob files the collector has deleted
// since start.
func (s *Service) Collected() (chunks, blobs int64) {
	if s.gc == nil {
		return 0, 0
	}
	s.gc.mu.Lock()
	defer s.gc.mu.Unlock()
	return s.gc.collected, s.gc.blobs
}
