package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/storage"
)

// applier applies one stream to the local DB: a consumer (replaced by watch when it
// stalls) from the last sequence applied (persisted in the same local batches as the records), many
// messages per local commit, an atomic batch always within one.
type applier struct {
	n      *Node
	stream streamRef
	msgs   chan jetstream.Msg // from the consumer's callback to run
	cc     jetstream.ConsumeContext
	ccMu   sync.Mutex // guards cc
	mu     sync.Mutex // guards applied and changed
	// applied is the last sequence applied to the local DB; changed is closed (and
	// replaced) whenever it grows.
	applied uint64
	changed chan struct{}
	// pending is what the stream held after the last message applied, as its
	// metadata said (the apply lag, for /stats).
	pending atomic.Uint64
	// lastSign is when (unix nanoseconds) the consumer last showed it works: a
	// message delivered or applied, or the consumer (re)started.
	lastSign atomic.Int64
	// kick wakes watch: the consumer reported an error or skipped a message, or a
	// waiter waited too long.
	kick chan struct{}
	// broken is set when the consumer skipped a message: watch replaces it at once.
	broken atomic.Bool
	// seen is the last sequence taken from msgs (loop's alone): a message at or
	// below it is a redelivery (an earlier consumer's, or a restarted one's).
	seen uint64
}

// Applier tuning.
const (
	applyBuffer   = 1024    // messages buffered between the consumer and the applier
	applyMaxMsgs  = 512     // messages per local commit at most
	applyMaxBytes = 8 << 20 // bytes of records per local commit at most (one batch may exceed it)
	applyRetry    = 200 * time.Millisecond
	// consumeHeartbeat is the consumer's idle heartbeat: two missed ones report the
	// consumer lost.
	consumeHeartbeat = time.Second
	// stallAfter is how long a consumer may show no sign of working, while it reports
	// errors or a commit waits for it, before watch replaces it.
	stallAfter = 1500 * time.Millisecond
	// restartPause separates the attempts to start a consumer; their failures are
	// logged every restartLog.
	restartPause = 500 * time.Millisecond
	restartLog   = 10 * time.Second
	// consumeTimeout bounds one attempt to start a consumer: JetStream answers at
	// once, or not at all while its meta leader is lost.
	consumeTimeout = 2 * time.Second
	// consumerIdle is how long the server keeps a consumer nobody pulls from (one
	// replaced by watch) before deleting it.
	consumerIdle = 30 * time.Second
)

// newApplier returns the applier of s, its applied sequence read from the local DB.
func newApplier(n *Node, s streamRef) (*applier, error) {
	a := &applier{n: n, stream: s, msgs: make(chan jetstream.Msg, applyBuffer), changed: make(chan struct{}),
		kick: make(chan struct{}, 1)}
	v, err := n.local.Get(appliedKey(s.name()))
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("cluster: applied sequence of %s: %w", s.name(), err)
	default:
		if a.applied, err = decodeSeq(v); err != nil {
			return nil, fmt.Errorf("cluster: applied sequence of %s: %w", s.name(), err)
		}
	}
	a.seen = a.applied
	return a, nil
}

// appliedSeq returns the last sequence applied and a channel closed when it grows.
func (a *applier) appliedSeq() (uint64, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied, a.changed
}

// setApplied records seq as applied and wakes the waiters.
func (a *applier) setApplied(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if seq > a.applied {
		a.applied = seq
		a.lastSign.Store(time.Now().UnixNano())
		close(a.changed)
		a.changed = make(chan struct{})
	}
}

// waitApplied waits until seq is applied, ctx ends or the node closes. While it
// waits, it asks watch every stallAfter to check the consumer.
func (a *applier) waitApplied(ctx context.Context, seq uint64) error {
	var tick <-chan time.Time
	for {
		got, ch := a.appliedSeq()
		if got >= seq {
			return nil
		}
		if tick == nil {
			t := time.NewTicker(stallAfter)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-ch:
		case <-tick:
			a.poke()
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s: sequence %d not applied locally (at %d): %w", a.stream.name(), seq, got, ctx.Err())
		case <-a.n.ctx.Done():
			return errClosed
		}
	}
}

// run consumes and applies until the node closes; watch, its companion, replaces
// a consumer that stopped working.
func (a *applier) run() {
	defer a.n.wg.Done()
	if !a.startConsuming() {
		return
	}
	a.n.wg.Add(1)
	go a.watch()
	a.loop()
}

// startConsuming starts a consumer after the applied sequence, again every
// restartPause until it succeeds (logging the failures every restartLog); it
// reports false when the node closed first.
func (a *applier) startConsuming() bool {
	var logged time.Time
	for attempt := 1; a.n.ctx.Err() == nil; attempt++ {
		err := a.consume()
		if err == nil {
			return true
		}
		if a.n.ctx.Err() != nil {
			return false
		}
		if time.Since(logged) >= restartLog {
			logged = time.Now()
			a.n.log.Warn("cluster: start applying", "stream", a.stream.name(), "attempt", attempt, "err", err)
		}
		if !sleepCtx(a.n.ctx, restartPause) {
			return false
		}
	}
	return false
}

// watch replaces the consumer, with one resuming after the applied sequence,
// whenever it was poked (a consumer error, a commit waiting) and the consumer has
// shown no sign of working for stallAfter, or at once when it skipped a message,
// until the node closes.
//
// JetStream's ordered consumer does this by itself, but each of its attempts waits
// 10 s for an answer (none comes while the meta leader is lost and not yet replaced)
// and they back off to 10 s apart: after a node's loss or a partition an applier
// could stay behind its stream for tens of seconds, and commits through the node
// waited for their local apply (docs/rationale.md).
func (a *applier) watch() {
	defer a.n.wg.Done()
	for {
		select {
		case <-a.kick:
		case <-a.n.ctx.Done():
			return
		}
		if !a.broken.Load() {
			// Let a consumer that is recovering by itself show it first.
			if !sleepCtx(a.n.ctx, restartPause) {
				return
			}
			if time.Since(time.Unix(0, a.lastSign.Load())) < stallAfter {
				continue
			}
		}
		a.n.log.Info("cluster: replacing a stalled consumer", "stream", a.stream.name(), "broken", a.broken.Load())
		a.stopConsuming()
		if !a.startConsuming() {
			return
		}
	}
}

// poke asks watch to check the consumer.
func (a *applier) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// consume starts an ephemeral consumer (in memory, one replica, no acks) from the
// message after the applied sequence. Its messages must come with consecutive
// delivery sequences: one missing (lost on the way) marks the consumer broken, and
// watch replaces it; the messages after the gap are dropped.
func (a *applier) consume() error {
	ctx, cancel := context.WithTimeout(a.n.ctx, consumeTimeout)
	defer cancel()
	applied, _ := a.appliedSeq()
	cfg := jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, AckPolicy: jetstream.AckNonePolicy,
		Replicas: 1, MemoryStorage: true, InactiveThreshold: consumerIdle}
	if applied > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, applied+1
	}
	c, err := a.n.js.CreateConsumer(ctx, a.stream.name(), cfg)
	if err != nil {
		return err
	}
	a.broken.Store(false)
	var delivered uint64 // the consumer's last delivery sequence; the callback's alone
	broken := false      // this consumer skipped a message; the callback's alone
	cc, err := c.Consume(func(m jetstream.Msg) {
		if broken {
			return
		}
		if md, err := m.Metadata(); err == nil {
			if md.Sequence.Consumer != delivered+1 {
				broken = true
				a.broken.Store(true)
				a.poke()
				return
			}
			delivered = md.Sequence.Consumer
		}
		a.lastSign.Store(time.Now().UnixNano())
		select {
		case a.msgs <- m:
		case <-a.n.ctx.Done():
		}
	}, jetstream.PullExpiry(5*time.Second), jetstream.PullHeartbeat(consumeHeartbeat),
		jetstream.ConsumeErrHandler(func(jetstream.ConsumeContext, error) { a.poke() }))
	if err != nil {
		return err
	}
	a.lastSign.Store(time.Now().UnixNano())
	a.ccMu.Lock()
	defer a.ccMu.Unlock()
	a.cc = cc
	if a.n.ctx.Err() != nil { // Close ran stopConsuming before a.cc was set
		cc.Stop()
	}
	return nil
}

// stopConsuming stops the consumer (watch, Close).
func (a *applier) stopConsuming() {
	a.ccMu.Lock()
	defer a.ccMu.Unlock()
	if a.cc != nil {
		a.cc.Stop()
		a.cc = nil
	}
}

// loop applies groups of messages until the node closes.
func (a *applier) loop() {
	var pending []jetstream.Msg
	for {
		group, ok := a.take(pending)
		if !ok {
			return
		}
		pending = nil
		// Never end a local commit inside an atomic batch whose later messages may
		// still come: what follows the last complete group waits for the next round.
		cut := openBatchStart(group)
		for cut == 0 {
			if group, ok = a.more(group); !ok {
				return
			}
			cut = openBatchStart(group)
		}
		if cut > 0 {
			group, pending = group[:cut], append([]jetstream.Msg(nil), group[cut:]...)
		}
		for !a.apply(group) {
			if !sleepCtx(a.n.ctx, applyRetry) {
				return
			}
		}
	}
}

// take returns pending and the messages available: at least one, waiting for it.
func (a *applier) take(pending []jetstream.Msg) ([]jetstream.Msg, bool) {
	group := pending
	for len(group) == 0 {
		select {
		case m := <-a.msgs:
			if a.fresh(m) {
				group = append(group, m)
			}
		case <-a.n.ctx.Done():
			return nil, false
		}
	}
	return a.drain(group), true
}

// fresh reports whether m follows the messages taken so far (and records it taken):
// after watch replaced a consumer, the old one's last messages and the new one's
// first may repeat what was taken.
func (a *applier) fresh(m jetstream.Msg) bool {
	md, err := m.Metadata()
	if err != nil {
		return true // apply logs and skips it
	}
	if md.Sequence.Stream <= a.seen {
		return false
	}
	a.seen = md.Sequence.Stream
	return true
}

// more waits for one more message after group (an atomic batch not complete yet) and
// returns group with it and what else is available.
func (a *applier) more(group []jetstream.Msg) ([]jetstream.Msg, bool) {
	for {
		select {
		case m := <-a.msgs:
			if a.fresh(m) {
				return a.drain(append(group, m)), true
			}
		case <-a.n.ctx.Done():
			return nil, false
		}
	}
}

// drain appends the messages available without waiting, up to the limits.
func (a *applier) drain(group []jetstream.Msg) []jetstream.Msg {
	size := 0
	for _, m := range group {
		size += len(m.Data())
	}
	for len(group) < applyMaxMsgs && size < applyMaxBytes {
		select {
		case m := <-a.msgs:
			if a.fresh(m) {
				group = append(group, m)
				size += len(m.Data())
			}
		default:
			return group
		}
	}
	return group
}

// openBatchStart returns the index where the last atomic batch of group starts if
// that batch may not be complete (its last message seen is not its last), or -1.
// A batch's messages are stored consecutively; some may be missing (superseded by a
// later write of their key), but then a later message always follows.
func openBatchStart(group []jetstream.Msg) int {
	last := group[len(group)-1]
	id := last.Headers().Get(hdrBatch)
	if id == "" {
		return -1
	}
	i, n := batchPos(last.Headers().Get(hdrBatchPos))
	if i >= n {
		return -1
	}
	start := len(group) - 1
	for start > 0 && group[start-1].Headers().Get(hdrBatch) == id {
		start--
	}
	return start
}

// batchPos parses "i/n".
func batchPos(s string) (int, int) {
	is, ns, _ := strings.Cut(s, "/")
	i, _ := strconv.Atoi(is)
	n, _ := strconv.Atoi(ns)
	return i, n
}

// apply commits group to the local DB in one batch: its records, each key's side
// entry and the stream's applied sequence. It reports false when the commit failed
// (logged; the caller retries the same group: an applier never skips a record).
func (a *applier) apply(group []jetstream.Msg) bool {
	var b storage.Batch
	applied, _ := a.appliedSeq()
	last := applied
	name := a.stream.name()
	for _, m := range group {
		md, err := m.Metadata()
		if err != nil {
			a.n.log.Error("cluster: a message without metadata", "stream", name, "subject", m.Subject(), "err", err)
			continue
		}
		seq := md.Sequence.Stream
		a.pending.Store(md.NumPending)
		if seq <= applied {
			continue // redelivered
		}
		last = max(last, seq)
		r, err := decodeRecord(m.Data())
		if err != nil {
			a.n.log.Error("cluster: skipped a message that is not a Cairn record", "stream", name, "seq", seq, "err", err)
			continue
		}
		switch r.kind {
		case kindPut:
			b.Put(r.key, r.value)
		case kindDelete:
			b.Delete(r.key)
		default:
			continue
		}
		b.Put(sideKey(r.key), sideEntry{stream: name, seq: seq}.encode())
	}
	if last == applied {
		return true
	}
	b.Put(appliedKey(name), encodeSeq(last))
	if err := a.n.local.Commit(a.n.ctx, &b, false); err != nil {
		if a.n.ctx.Err() == nil {
			a.n.log.Error("cluster: apply to the local replica failed; retrying", "stream", name, "through", last, "err", err)
		}
		return false
	}
	a.n.store.applied.Add(uint64(len(group)))
	a.setApplied(last)
	return true
}

// sleepCtx sleeps d unless ctx ends first; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
