package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// Store is the replicated storage.Store of a Node: reads, snapshots and iterators
// are the local replica's; a commit of replicated keys is published to the key's
// stream with JetStream's per-subject compare-and-set and returns once the stream's
// quorum stored it and the local applier applied it.
type Store struct {
	node  *Node
	local *storage.DB
	// replicas returns the n_val of an object key (SetReplicasFunc); nil: DefaultNVal.
	replicas atomic.Pointer[func(key []byte) int]
	// Counters for /stats and Metrics.
	commits, conflicts, unknown, applied atomic.Uint64
}

// ErrCrossStream is returned (wrapped) by Commit for a batch whose replicated keys
// belong to two streams: JetStream commits atomically within one stream only.
var ErrCrossStream = errors.New("cluster: a batch writes keys of two replication streams")

// ErrOutcomeUnknown is returned (wrapped) by Commit when the commit may or may not
// have been applied: an attempt to publish it went unanswered (the stream's leader was
// lost, stopped or cut off while it had the message) and no later attempt settled the
// question, or the quorum acknowledged it but the local replica did not apply it in
// time. It is never a conflict: a caller that retried a conditional write after it
// could meet its own write and refuse a precondition for a write that was applied. It
// carries the core.EUNAVAILABLE code (errors.As finds a *core.Error in it): the
// interfaces answer 503, as Riak answers a write whose replicas did not all answer in
// time, which may have been applied all the same.
var ErrOutcomeUnknown error = outcomeError{unknown: true}

// ErrNoLeader is returned (wrapped) by Commit when no leader of the key's stream
// answered until the commit's deadline and no attempt can have been stored. It
// carries the core.EUNAVAILABLE code: 503.
var ErrNoLeader error = outcomeError{}

// outcomeError is the type of ErrOutcomeUnknown and ErrNoLeader.
type outcomeError struct{ unknown bool }

func (e outcomeError) Error() string {
	if e.unknown {
		return "cluster: the commit may or may not have been applied (its stream did not answer in time)"
	}
	return "cluster: no leader of the key's stream answered; the commit was not applied"
}

// As lets errors.As find the client-facing *core.Error in an error wrapping e.
func (e outcomeError) As(target any) bool {
	p, ok := target.(**core.Error)
	if !ok {
		return false
	}
	msg := "The key's replicas have no leader to take the write; it was not applied. Try again\n"
	if e.unknown {
		msg = "The key's replicas did not answer in time: the write may or may not have been applied. Read the key before writing it again\n"
	}
	*p = &core.Error{Code: core.EUNAVAILABLE, Message: msg}
	return true
}

// Commit timeouts: publish and apply waits are bounded by ctx and by these.
const (
	publishTimeout = 30 * time.Second
	// conflictCatchUp bounds the wait, after a refused compare-and-set, for the local
	// replica to catch up with the key before ErrConflict is returned.
	conflictCatchUp = 5 * time.Second
)

// SetReplicasFunc sets how the store learns an object key's n_val (the bucket's
// property); fn must be quick and safe for concurrent use. A key stays in the stream
// it was first written to (see docs/rationale.md).
func (s *Store) SetReplicasFunc(fn func(key []byte) int) {
	if fn == nil {
		s.replicas.Store(nil)
		return
	}
	s.replicas.Store(&fn)
}

// Get returns the local replica's value of key.
func (s *Store) Get(key []byte) ([]byte, error) { return s.local.Get(key) }

// Read returns the local replica's value of key with its revision.
func (s *Store) Read(ctx context.Context, key []byte) (storage.Item, error) {
	return s.local.Read(ctx, key)
}

// NewSnapshot returns a snapshot of the local replica.
func (s *Store) NewSnapshot() (*storage.Snapshot, error) { return s.local.NewSnapshot() }

// Iterate iterates the local replica.
func (s *Store) Iterate(lo, hi []byte) *storage.Iterator { return s.local.Iterate(lo, hi) }

// IteratePrefix iterates the local replica.
func (s *Store) IteratePrefix(prefix []byte) *storage.Iterator { return s.local.IteratePrefix(prefix) }

// RegisterDerive registers fn with the local replica, whose appliers' commits derive.
func (s *Store) RegisterDerive(tag byte, fn storage.DeriveFunc) { s.local.RegisterDerive(tag, fn) }

// Subscribe subscribes to the local replica's commits: every record applied, whoever
// wrote it.
// Changes of the side tables (the appliers' bookkeeping) are not reported.
func (s *Store) Subscribe(fn func([]storage.Change)) (cancel func()) {
	return s.local.Subscribe(func(cs []storage.Change) {
		if cs = withoutSide(cs); len(cs) > 0 {
			fn(cs)
		}
	})
}

// withoutSide returns cs without the changes of side-table keys (cs itself when it
// has none).
func withoutSide(cs []storage.Change) []storage.Change {
	n := 0
	for _, c := range cs {
		if isSideKey(c.Key) {
			n++
		}
	}
	if n == 0 {
		return cs
	}
	out := make([]storage.Change, 0, len(cs)-n)
	for _, c := range cs {
		if !isSideKey(c.Key) {
			out = append(out, c)
		}
	}
	return out
}

// Stats returns the local replica's statistics and the cluster's counters.
func (s *Store) Stats() map[string]any {
	m := s.local.Stats()
	m["cluster_commits_total"] = s.commits.Load()
	m["cluster_commit_conflicts_total"] = s.conflicts.Load()
	m["cluster_commit_outcome_unknown_total"] = s.unknown.Load()
	m["cluster_records_applied_total"] = s.applied.Load()
	return m
}

// Close closes the node and the local replica.
func (s *Store) Close() error { return s.node.Close() }

// Commit applies b (see storage.Store.Commit). Keys that never replicate go to the
// local replica alone; replicated keys, which must all belong to one stream, are
// published (one message, or one atomic batch) with the expected sequences of their
// conditions. sync is the local replica's: JetStream's durability is its quorum's.
func (s *Store) Commit(ctx context.Context, b *storage.Batch, sync bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cluster: commit: %w", err)
	}
	ops, conds := b.Ops(), b.Conditions()
	var repl, local []storage.Op
	var rconds, lconds []storage.Condition
	for _, op := range ops {
		if placeOf(op.Key) == placeLocal {
			local = append(local, op)
		} else {
			repl = append(repl, op)
		}
	}
	for _, c := range conds {
		if placeOf(c.Key) == placeLocal {
			lconds = append(lconds, c)
		} else {
			rconds = append(rconds, c)
		}
	}
	if len(repl) == 0 && len(rconds) == 0 {
		return s.local.Commit(ctx, b, sync)
	}
	s.commits.Add(1)
	if err := s.commitReplicated(ctx, repl, rconds); err != nil {
		switch {
		case errors.Is(err, storage.ErrConflict):
			s.conflicts.Add(1)
		case errors.Is(err, ErrOutcomeUnknown):
			s.unknown.Add(1)
		}
		return err
	}
	if len(local) == 0 && len(lconds) == 0 {
		return nil
	}
	// The local part (derived tables such as the reap queue, this node's metadata)
	// follows the replicated one; it is this node's alone.
	var lb storage.Batch
	for _, c := range lconds {
		lb.Require(c.Key, c.Rev)
	}
	for _, op := range local {
		if op.Delete {
			lb.Delete(op.Key)
		} else {
			lb.Put(op.Key, op.Value)
		}
	}
	return s.local.Commit(ctx, &lb, sync)
}

// keyStream returns the stream of a replicated key: the one its side entry names
// (a key stays where it was first written), else by placement (and n_val).
func (s *Store) keyStream(snap getter, key []byte) (streamRef, sideEntry, error) {
	var e sideEntry
	v, err := snap.Get(sideKey(key))
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return streamRef{}, e, fmt.Errorf("cluster: side entry of %q: %w", key, err)
	default:
		if e, err = decodeSideEntry(v); err != nil {
			return streamRef{}, e, fmt.Errorf("cluster: side entry of %q: %w", key, err)
		}
		if ref, ok := parseStreamName(e.stream); ok {
			return ref, e, nil
		}
		return streamRef{}, e, fmt.Errorf("cluster: side entry of %q names stream %q", key, e.stream)
	}
	if placeOf(key) == placeMeta {
		return streamRef{token: metaToken, replicas: s.node.clamp(3)}, e, nil
	}
	nval := DefaultNVal
	if fn := s.replicas.Load(); fn != nil {
		nval = (*fn)(key)
	}
	return partitionStream(partitionOf(key, s.node.cfg.Partitions), s.node.clamp(nval)), e, nil
}

// getter reads a key: the local DB or one of its snapshots.
type getter interface {
	Get(key []byte) ([]byte, error)
}

// Owns reports whether this node should do the background work on key (reap it,
// expire it): whether its embedded server leads the key's stream now, so that one node
// of the cluster does it instead of every node racing to. A node alone, a key that
// never replicates, and a node on an external NATS (which cannot tell) own every key.
// It implements storage.Owner.
func (s *Store) Owns(key []byte) bool {
	n := s.node
	if placeOf(key) == placeLocal || n.srv == nil || n.servers <= 1 {
		return true
	}
	stream, _, err := s.keyStream(s.local, key)
	if err != nil {
		return true // the work's own commit is conditional: at worst a conflict
	}
	acc := n.srv.GlobalAccount()
	return acc != nil && n.srv.JetStreamIsStreamLeader(acc.Name, stream.name())
}

// pubMsg is one message of a commit.
type pubMsg struct {
	subject string
	data    []byte
	expect  string // Nats-Expected-Last-Subject-Sequence, "" for none
	forSubj string // the subject the expectation is on, when not the message's
}

// plan checks the conditions against the local replica and builds the messages of a
// replicated commit, all of one stream.
func (s *Store) plan(repl []storage.Op, conds []storage.Condition) (streamRef, []pubMsg, error) {
	snap, err := s.local.NewSnapshot()
	if err != nil {
		return streamRef{}, nil, fmt.Errorf("cluster: commit: %w", err)
	}
	defer snap.Release()
	var stream streamRef
	same := func(ref streamRef) error {
		if stream.token == "" {
			stream = ref
			return nil
		}
		if ref.token != stream.token {
			return fmt.Errorf("cluster: commit: %s and %s: %w", stream.name(), ref.name(), ErrCrossStream)
		}
		return nil
	}
	expect := map[string]uint64{} // by key: the expected sequence of its subject
	for _, c := range conds {
		ref, e, err := s.keyStream(snap, c.Key)
		if err != nil {
			return stream, nil, err
		}
		if err := same(ref); err != nil {
			return stream, nil, err
		}
		v, err := snap.Get(c.Key)
		rev := storage.NoRevision
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return stream, nil, fmt.Errorf("cluster: commit: read %q: %w", c.Key, err)
		default:
			rev = storage.RevisionOf(v)
		}
		if rev != c.Rev {
			return stream, nil, fmt.Errorf("cluster: commit: key %q: %w", c.Key, storage.ErrConflict)
		}
		expect[string(c.Key)] = e.seq
	}
	var msgs []pubMsg
	written := map[string]bool{}
	for _, op := range repl {
		ref, _, err := s.keyStream(snap, op.Key)
		if err != nil {
			return stream, nil, err
		}
		if err := same(ref); err != nil {
			return stream, nil, err
		}
		m := pubMsg{subject: ref.keySubject(op.Key), data: encodeRecord(op.Key, op.Value, op.Delete)}
		if seq, ok := expect[string(op.Key)]; ok && !written[string(op.Key)] {
			m.expect = strconv.FormatUint(seq, 10)
		}
		written[string(op.Key)] = true
		msgs = append(msgs, m)
	}
	for _, c := range conds {
		if written[string(c.Key)] {
			continue
		}
		written[string(c.Key)] = true // one check per key
		msgs = append(msgs, pubMsg{subject: stream.subject(checkSuffix), data: []byte{kindCheck},
			expect: strconv.FormatUint(expect[string(c.Key)], 10), forSubj: stream.keySubject(c.Key)})
	}
	return stream, msgs, nil
}

// commitReplicated publishes the replicated part of a batch and waits until the local
// applier applied it.
func (s *Store) commitReplicated(ctx context.Context, repl []storage.Op, conds []storage.Condition) error {
	stream, msgs, err := s.plan(repl, conds)
	if err != nil {
		return err
	}
	if len(msgs) > maxBatchMsgs {
		return fmt.Errorf("cluster: commit: a batch of %d writes and conditions is more than one commit takes (%d)", len(msgs), maxBatchMsgs)
	}
	if err := s.local.CheckDerive(repl); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if _, err := s.node.ensureStream(ctx, stream); err != nil {
		return err
	}
	a, err := s.node.applierOf(stream)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	seq, err := s.publish(pctx, stream, msgs)
	if err != nil {
		if isWrongSequence(err) {
			s.catchUp(ctx, stream, conds)
			return fmt.Errorf("cluster: commit to %s: %w", stream.name(), storage.ErrConflict)
		}
		return fmt.Errorf("cluster: commit to %s: %w", stream.name(), err)
	}
	if err := a.waitApplied(pctx, seq); err != nil {
		if errors.Is(err, errClosed) {
			return fmt.Errorf("cluster: commit to %s acknowledged: %w", stream.name(), err)
		}
		// Stored by the quorum, not yet visible here: the caller cannot tell the client
		// it is readable on this node.
		return fmt.Errorf("cluster: commit to %s acknowledged: %w (%s)", stream.name(), ErrOutcomeUnknown, err.Error())
	}
	return nil
}

// publish publishes msgs (publishOnce), again while the stream has no leader to
// answer (an election: at start, after a node's loss), until ctx ends.
//
// A single message carries a message id, the same in every attempt: JetStream's
// duplicate window (two minutes) answers an attempt after one that was stored but not
// acknowledged with the first one's sequence instead of storing it again, and one
// while the first is still being proposed with "in process" (attempted again). An
// atomic batch has no such id (see docs/rationale.md).
//
// An attempt that went unanswered may have been stored all the same, and a refusal
// may come from a deposed leader (stopped, resumed, not yet told of its successor)
// while the successor stores the same publish. So when an attempt of a single message
// is refused on its expected sequence, a message whose id is on the subject's latest
// message is done (one more request per conflict). Otherwise, after an attempt that
// may have been stored, the outcome is unknown (ErrOutcomeUnknown), never a conflict,
// which would make the caller read its own write and answer a precondition failure for
// a write that was applied; that holds for a batch (no message id) too. A commit whose
// attempts all went unanswered is ErrOutcomeUnknown too, or ErrNoLeader when none can
// have reached a leader (no responders).
func (s *Store) publish(ctx context.Context, stream streamRef, msgs []pubMsg) (uint64, error) {
	return publishWith(ctx, s, stream, msgs)
}

// publisher is what publish needs of a Store: a seam for its tests.
type publisher interface {
	publishOnce(ctx context.Context, msgs []pubMsg, msgID string) (uint64, error)
	storedAlready(ctx context.Context, stream streamRef, subject, msgID string) (uint64, bool)
}

// publishWith is publish over p.
func publishWith(ctx context.Context, s publisher, stream streamRef, msgs []pubMsg) (uint64, error) {
	attempt, msgID := batchAttempt, ""
	if len(msgs) == 1 {
		attempt, msgID = msgAttempt, nuid.Next()
	}
	mayBeStored := false
	seq, err := retryUnanswered(ctx, attempt, func(ctx context.Context) (uint64, error) {
		seq, err := s.publishOnce(ctx, msgs, msgID)
		switch {
		case err == nil:
		case unanswered(err):
			mayBeStored = mayBeStored || !neverStored(err)
		case msgID != "" && isWrongSequence(err):
			// Also on a first attempt: a server that still believes it leads the stream
			// (stopped, then resumed, not yet told of the new term) may refuse from its
			// stale copy faster than the real leader acknowledges the same publish.
			if seq, ok := s.storedAlready(ctx, stream, msgs[0].subject, msgID); ok {
				return seq, nil
			}
		}
		return seq, err
	})
	switch {
	case err == nil:
		return seq, nil
	case mayBeStored && (unanswered(err) || isWrongSequence(err)):
		// Not %w: the cause must not read as a conflict (isWrongSequence) or as the
		// caller's own deadline.
		return 0, fmt.Errorf("%w (last attempt: %s)", ErrOutcomeUnknown, err.Error())
	case unanswered(err):
		return 0, fmt.Errorf("%w (last attempt: %s)", ErrNoLeader, err.Error())
	}
	return 0, err
}

// storedAlready reports whether the latest message of subject in stream is the one
// published with message id msgID, and its sequence.
func (s *Store) storedAlready(ctx context.Context, stream streamRef, subject, msgID string) (uint64, bool) {
	st, err := s.node.streamHandle(ctx, stream.name())
	if err != nil {
		return 0, false
	}
	raw, err := st.GetLastMsgForSubject(ctx, subject)
	if err != nil || raw.Header.Get(jetstream.MsgIDHeader) != msgID {
		return 0, false
	}
	return raw.Sequence, true
}

// Publish attempts: a stream leader answers within milliseconds, or not at all while
// it is lost (killed, stopped, cut off) and not yet replaced. A single message is
// tried again sooner: its message id makes a repeat harmless, while a batch's repeat
// after one that was stored but not acknowledged meets a conflict.
const (
	msgAttempt   = 2 * time.Second
	batchAttempt = 5 * time.Second
	// syncAttempt bounds one request for a stream's last sequence (Sync's read
	// index) or of a membership change: asking again early costs only the request.
	syncAttempt = time.Second
	// maxRetryPause caps the pause between attempts: "no responders" comes at once
	// while an election runs, and a new leader should be found within this.
	maxRetryPause = 250 * time.Millisecond
)

// retryUnanswered runs fn, each attempt bounded by attempt, again with a growing
// pause (up to maxRetryPause) while it fails because no stream leader answered,
// until ctx ends.
func retryUnanswered[T any](ctx context.Context, attempt time.Duration, fn func(ctx context.Context) (T, error)) (T, error) {
	pause := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		v, err := fn(actx)
		cancel()
		if err == nil || !unanswered(err) || ctx.Err() != nil {
			return v, err
		}
		if !sleepCtx(ctx, pause) {
			return v, err
		}
		pause = min(2*pause, maxRetryPause)
	}
}

// unanswered reports whether err means no stream leader answered in time, the stream
// had too many atomic batches open at once, or an earlier attempt of the same message
// is still being proposed: worth publishing again.
func unanswered(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeTooManyInflight || apiErr.ErrorCode == errCodeMsgIDInProcess) {
		return true
	}
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}

// neverStored reports whether an unanswered attempt's err proves that it reached no
// stream leader or was refused before being proposed: nothing of it can be stored.
func neverStored(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeTooManyInflight {
		return true
	}
	// A synchronous publish that met no responders is answered ErrNoStreamResponse.
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// JetStream error codes Cairn tells apart: JSAtomicPublishTooManyInflight, and
// JSStreamDuplicateMessageConflict ("duplicate message id is in process": an earlier
// attempt with the same message id is being proposed and may yet be stored).
const (
	errCodeTooManyInflight = 10210
	errCodeMsgIDInProcess  = 10158
)

// publishOnce publishes msgs, one alone (with message id msgID) or as an atomic batch,
// and returns the stream sequence of the last.
func (s *Store) publishOnce(ctx context.Context, msgs []pubMsg, msgID string) (uint64, error) {
	if len(msgs) == 1 {
		m := msgs[0].natsMsg()
		m.Header.Set(jetstream.MsgIDHeader, msgID)
		ack, err := s.node.js.PublishMsg(ctx, m)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	id := nuid.Next()
	total := strconv.Itoa(len(msgs))
	for i, pm := range msgs {
		m := pm.natsMsg()
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		m.Header.Set(hdrBatch, id)
		m.Header.Set(hdrBatchPos, strconv.Itoa(i+1)+"/"+total)
		if i < len(msgs)-1 {
			if err := s.node.nc.PublishMsg(m); err != nil {
				return 0, err
			}
			continue
		}
		m.Header.Set("Nats-Batch-Commit", "1")
		ack, err := s.node.js.PublishMsg(ctx, m)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	return 0, nil
}

// natsMsg returns m as a NATS message.
func (m pubMsg) natsMsg() *nats.Msg {
	msg := nats.NewMsg(m.subject)
	msg.Data = m.data
	if m.expect != "" {
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, m.expect)
		if m.forSubj != "" {
			msg.Header.Set("Nats-Expected-Last-Subject-Sequence-Subject", m.forSubj)
		}
	}
	return msg
}

// catchUp waits (bounded) until the local replica applied the latest record of each
// condition's key, so that the caller's retry after a conflict reads fresh state.
func (s *Store) catchUp(ctx context.Context, stream streamRef, conds []storage.Condition) {
	ctx, cancel := context.WithTimeout(ctx, conflictCatchUp)
	defer cancel()
	if len(conds) == 0 {
		return
	}
	// The stream's last sequence covers every condition's key (all in stream).
	if err := s.syncStream(ctx, stream); err != nil {
		s.node.log.Debug("cluster: catch up after a conflict", "stream", stream.name(), "err", err)
	}
}

// ErrNoMajority is returned (wrapped) by Sync on a node whose embedded server is
// connected to no majority of the cluster's servers: a stream leader it reaches may
// be deposed already, its answer stale.
var ErrNoMajority = errors.New("cluster: this node reaches no majority of the cluster's servers")

// Sync waits until the local replica has applied the latest record of key in its
// stream (read-your-writes across nodes: a read after Sync sees every write
// acknowledged before Sync began): it waits for the stream's last sequence, which one
// request to the stream's leader gives to all the Syncs of the stream that began
// before it was sent (lastSeq). Keys that never replicate return at once. A node
// cut off from a majority refuses (ErrNoMajority) once its routes are down (see
// docs/cluster.md for the window before).
func (s *Store) Sync(ctx context.Context, key []byte) error {
	if placeOf(key) == placeLocal {
		return nil
	}
	if err := s.node.checkMajority(); err != nil {
		return err
	}
	snap, err := s.local.NewSnapshot()
	if err != nil {
		return fmt.Errorf("cluster: sync: %w", err)
	}
	stream, _, err := s.keyStream(snap, key)
	snap.Release()
	if err != nil {
		return err
	}
	return s.syncStream(ctx, stream)
}

// syncStream waits until the local applier of stream applied the stream's last
// sequence, as a read-index round gives it (lastSeq).
func (s *Store) syncStream(ctx context.Context, stream streamRef) error {
	seq, err := s.lastSeq(ctx, stream)
	if err != nil || seq == 0 {
		return err
	}
	a, err := s.node.applierOf(stream)
	if err != nil {
		return err
	}
	return a.waitApplied(ctx, seq)
}

// checkMajority returns ErrNoMajority when the embedded server has routes to fewer
// than a majority of the cluster's other servers; with an existing NATS (no embedded
// server) it trusts that cluster's own leaders.
func (n *Node) checkMajority() error {
	if n.srv == nil || n.servers <= 1 {
		return nil
	}
	size := n.clusterSize()
	if reached := n.srv.NumRemotes() + 1; reached < size/2+1 {
		return fmt.Errorf("cluster: sync: routes to %d of %d servers: %w", reached-1, size-1, ErrNoMajority)
	}
	return nil
}

var (
	_ storage.Store     = (*Store)(nil)
	_ storage.Freshener = (*Store)(nil)
	_ storage.Owner     = (*Store)(nil)
)
