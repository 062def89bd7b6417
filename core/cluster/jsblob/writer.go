package jsblob

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/storage"
)

// writer writes one new blob: its chunks, Window of them in flight, then the
// committed head.
type writer struct {
	s   *Store
	ctx context.Context
	id  []byte
	hid string
	// claim is the sequence of the head's "writing" record: the generation.
	claim uint64
	// buf holds the chunk being filled (grown by the bytes written, up to ChunkSize).
	buf []byte
	// free holds chunk buffers whose publishes are acknowledged.
	free [][]byte
	// inflight are the chunk publishes not yet acknowledged, oldest first.
	inflight []jetstream.PubAckFuture
	// n is how many chunks were published, size how many bytes were written.
	n    int64
	size int64
	done bool
}

// Create claims the id (conditional on its head: no blob, or a removed one) and
// returns the writer of its chunks.
func (s *Store) Create(ctx context.Context, id []byte) (storage.BlobWriter, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	hid := hex.EncodeToString(id)
	h, err := s.readHead(ctx, hid, true)
	if err != nil {
		return nil, fmt.Errorf("jsblob: create %x: %w", id, err)
	}
	if h.State == stateWriting || h.State == stateCommitted {
		return nil, fmt.Errorf("jsblob: create %x: %w", id, ErrExists)
	}
	claim, err := s.publishHead(ctx, hid, headRec{State: stateWriting}, h.seq)
	if errors.Is(err, errConflict) {
		return nil, fmt.Errorf("jsblob: create %x: %w", id, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("jsblob: create %x: %w", id, err)
	}
	return &writer{s: s, ctx: ctx, id: bytes.Clone(id), hid: hid, claim: claim}, nil
}

// Write appends p to the blob, publishing every chunk it fills. On failure the blob
// is removed.
func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errDone
	}
	cs := w.s.cfg.ChunkSize
	written := 0
	for len(p) > 0 {
		if w.buf == nil && len(w.free) > 0 {
			w.buf, w.free = w.free[len(w.free)-1][:0], w.free[:len(w.free)-1]
		}
		k := min(cs-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		written += k
		w.size += int64(k)
		if len(w.buf) == cs {
			if err := w.flush(); err != nil {
				w.fail()
				return written, fmt.Errorf("jsblob: write %x: %w", w.id, err)
			}
		}
	}
	return written, nil
}

// flush publishes the chunk in buf (asynchronously, after waiting for the oldest
// publish if Window are in flight).
func (w *writer) flush() error {
	if len(w.inflight) >= w.s.cfg.Window {
		if err := w.waitOldest(); err != nil {
			return err
		}
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	m := nats.NewMsg(w.s.chunkSubj(w.hid, w.claim, w.n))
	m.Data = w.buf
	f, err := w.s.js.PublishMsgAsync(m, append(w.s.pubRetry(), jetstream.WithExpectStream(w.s.cfg.Stream))...)
	if err != nil {
		return w.s.pubErr(fmt.Sprintf("chunk %d", w.n), err)
	}
	// The future keeps the message (to resend it): buf is not reused before its ack.
	w.inflight = append(w.inflight, f)
	w.buf = nil
	w.n++
	return nil
}

// waitOldest waits for the acknowledgement of the oldest chunk in flight and keeps its
// buffer for reuse.
func (w *writer) waitOldest() error {
	f := w.inflight[0]
	w.inflight = w.inflight[1:]
	if err := w.s.awaitAck(w.ctx, f); err != nil {
		return err
	}
	w.free = append(w.free, f.Msg().Data)
	return nil
}

// awaitAck waits for the acknowledgement of the publish f, for at most the store's
// timeout.
func (s *Store) awaitAck(ctx context.Context, f jetstream.PubAckFuture) error {
	t := time.NewTimer(s.cfg.Timeout)
	defer t.Stop()
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return s.pubErr(f.Msg().Subject, err)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("jsblob: publish %s: no acknowledgement in %v", f.Msg().Subject, s.cfg.Timeout)
	}
}

// Commit publishes the last chunk, waits until the quorum stored every chunk, and
// publishes the committed head (conditional on the claim still being the head: a
// Remove of the unfinished blob wins). On failure the blob is removed.
func (w *writer) Commit(ctx context.Context) error {
	if w.done {
		return errDone
	}
	w.ctx = ctx
	err := w.finish(ctx)
	if err != nil {
		if !errors.Is(err, errUnknown) {
			w.fail()
		}
		w.done = true
		return fmt.Errorf("jsblob: commit %x: %w", w.id, err)
	}
	w.done = true
	w.buf, w.free = nil, nil
	return nil
}

// errUnknown is a commit whose outcome could not be learnt: the blob is left for
// Remove (the S3 collector removes an id whose write failed).
var errUnknown = errors.New("jsblob: the commit's outcome is unknown")

// finish publishes what is left and the committed head.
func (w *writer) finish(ctx context.Context) error {
	if len(w.buf) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	for len(w.inflight) > 0 {
		if err := w.waitOldest(); err != nil {
			return err
		}
	}
	rec := headRec{State: stateCommitted, Gen: w.claim, Size: w.size, Chunk: int64(w.s.cfg.ChunkSize)}
	_, err := w.s.publishHead(ctx, w.hid, rec, w.claim)
	if err == nil || errors.Is(err, errConflict) {
		return err
	}
	// The publish may have been stored and its acknowledgement lost: the head says.
	h, herr := w.s.readHead(ctx, w.hid, true)
	switch {
	case herr != nil:
		return fmt.Errorf("%w: %w (and reading the head: %w)", errUnknown, err, herr)
	case h.State == stateCommitted && h.Gen == w.claim:
		return nil
	}
	return err
}

// fail removes the unfinished blob: its chunks, and its head if still the claim.
func (w *writer) fail() {
	w.done = true
	// Cleaning up must not depend on the caller's context, which may be why it failed.
	ctx, cancel := context.WithTimeout(context.Background(), w.s.cfg.Timeout)
	defer cancel()
	// Chunks still in flight would land after the purge: wait for them first.
	for _, f := range w.inflight {
		_ = w.s.awaitAck(ctx, f)
	}
	w.buf, w.free, w.inflight = nil, nil, nil
	_ = w.s.purgeGen(ctx, w.hid, w.claim, w.claim)
}

// Abort removes the unfinished blob (nothing once committed or failed).
func (w *writer) Abort() {
	if w.done {
		return
	}
	w.fail()
}
