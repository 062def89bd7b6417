package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A read-your-writes read (Sync) needs a sequence of the key's stream at least as
// high as every write acknowledged before the read began, then waits until the local
// replica applied it. The stream's leader has every acknowledged message (it answers
// a publish once it stored it), so its last sequence is one, and one answer serves
// every read that began before the request was sent: reads share rounds of one
// request each (the read-index technique of Raft systems) instead of one request per
// read.
//
// Rounds are per stream leader, not per stream: each node with an embedded server
// answers, on a subject of its own, the last sequences of every stream its server
// leads (from the server's in-process state), so the reads of all the streams one
// server leads share a round. A node learns the leaders from the streams' info; a
// read of a stream whose leader is unknown, or whose leader no longer leads it, asks
// the stream itself (JetStream's stream info, answered by its leader), in rounds of
// that stream.
//
// A round's request is sent after every read that joined it began: a read that comes
// while a round is in flight joins the next one, which starts when that one ends.

// readRound is one request for the last sequences of streams (by name) and the reads
// waiting for it.
type readRound struct {
	done chan struct{} // closed once seqs and err are set
	seqs map[string]uint64
	err  error
}

// readIndex is the rounds of one stream, or of one stream leader.
type readIndex struct {
	mu   sync.Mutex // guards cur and next
	cur  *readRound // the round in flight; nil when none is
	next *readRound // the round the reads that came during cur wait for; nil when none did
}

// join returns the round a read beginning now waits for, and whether the caller must
// start it (no round was in flight).
func (ri *readIndex) join() (r *readRound, start bool) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.cur == nil {
		ri.cur = &readRound{done: make(chan struct{})}
		return ri.cur, true
	}
	if ri.next == nil {
		ri.next = &readRound{done: make(chan struct{})}
	}
	return ri.next, false
}

// finish ends the round in flight and returns the next one, now in flight (nil when
// no read is waiting for one).
func (ri *readIndex) finish() *readRound {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.cur, ri.next = ri.next, nil
	return ri.cur
}

// run answers r, then every round that follows it, with fetch.
func (ri *readIndex) run(r *readRound, fetch func() (map[string]uint64, error)) {
	for ; r != nil; r = ri.finish() {
		r.seqs, r.err = fetch()
		close(r.done)
	}
}

// fail answers r and every round that follows it with err.
func (ri *readIndex) fail(r *readRound, err error) {
	ri.run(r, func() (map[string]uint64, error) { return nil, err })
}

// readIndexTimeout bounds one round's request (asked again while no leader answers):
// the reads waiting for it leave at their own deadlines.
const readIndexTimeout = 10 * time.Second

// readIndexOf returns the rounds named name ("stream:<name>", "leader:<server>"),
// made on first use.
func (n *Node) readIndexOf(name string) *readIndex {
	if ri, ok := n.readIndexes.Load(name); ok {
		return ri.(*readIndex)
	}
	ri, _ := n.readIndexes.LoadOrStore(name, &readIndex{})
	return ri.(*readIndex)
}

// go runs fn in a goroutine the node owns (Close waits for it), or returns errClosed.
func (n *Node) goOwned(fn func()) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errClosed
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		fn()
	}()
	return nil
}

// lastSeq returns a sequence of stream at least as high as every write acknowledged
// before the call: the stream's last sequence, from a round of its leader's (when this
// node knows it) or of the stream's.
func (s *Store) lastSeq(ctx context.Context, stream streamRef) (uint64, error) {
	s.node.readIndexReads.Add(1)
	name := stream.name()
	if v, ok := s.node.leaders.Load(name); ok && s.node.srv != nil {
		leader := v.(string)
		seqs, err := s.node.round(ctx, "leader:"+leader, func() (map[string]uint64, error) {
			s.node.readIndexRounds.Add(1)
			return s.node.askLeader(leader)
		})
		if seq, ok := seqs[name]; ok && err == nil {
			return seq, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("cluster: sync %s: %w", name, ctx.Err())
		}
		// The server no longer leads the stream, or did not answer: ask the stream.
		s.node.leaders.CompareAndDelete(name, leader)
	}
	seqs, err := s.node.round(ctx, "stream:"+name, func() (map[string]uint64, error) {
		s.node.readIndexRounds.Add(1)
		seq, err := s.fetchLastSeq(stream)
		return map[string]uint64{name: seq}, err
	})
	return seqs[name], err
}

// round waits for the answer of a round of the rounds named name, starting one with
// fetch when none is in flight.
func (n *Node) round(ctx context.Context, name string, fetch func() (map[string]uint64, error)) (map[string]uint64, error) {
	ri := n.readIndexOf(name)
	r, start := ri.join()
	if start {
		if err := n.goOwned(func() { ri.run(r, fetch) }); err != nil {
			ri.fail(r, err)
		}
	}
	select {
	case <-r.done:
		return r.seqs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetchLastSeq asks stream's leader for its last sequence (0 for a stream not made
// yet), again while no leader answers, until readIndexTimeout or the node closes. It
// records the leader named in the answer for lastSeq.
func (s *Store) fetchLastSeq(stream streamRef) (uint64, error) {
	ctx, cancel := context.WithTimeout(s.node.ctx, readIndexTimeout)
	defer cancel()
	st, err := s.node.streamHandle(ctx, stream.name())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: sync %s: %w", stream.name(), err)
	}
	info, err := retryUnanswered(ctx, syncAttempt, func(ctx context.Context) (*jetstream.StreamInfo, error) {
		return st.Info(ctx)
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: sync %s: %w", stream.name(), err)
	}
	if info.Cluster != nil && info.Cluster.Leader != "" {
		s.node.leaders.Store(stream.name(), info.Cluster.Leader)
	}
	return info.State.LastSeq, nil
}

// readIndexSubject is the subject on which the Cairn node of the server named server
// answers the last sequences of the streams its server leads.
func readIndexSubject(server string) string {
	return "_CAIRN.readindex." + base64.RawURLEncoding.EncodeToString([]byte(server))
}

// leaderAttempt bounds a request to a stream leader's node for its last sequences:
// without an answer in time, the read asks the stream instead.
const leaderAttempt = time.Second

// askLeader returns the last sequences of the streams the server named leader leads:
// from the embedded server when it is this node's, else from its node.
func (n *Node) askLeader(leader string) (map[string]uint64, error) {
	ctx, cancel := context.WithTimeout(n.ctx, leaderAttempt)
	defer cancel()
	if leader == n.cfg.NodeName {
		return n.ownLedStreams(ctx)
	}
	msg, err := n.nc.RequestWithContext(ctx, readIndexSubject(leader), nil)
	if err != nil {
		return nil, fmt.Errorf("cluster: ask %s for its streams' last sequences: %w", leader, err)
	}
	return decodeLedStreams(msg.Data)
}

// ownLedStreams is ledStreams, in rounds shared by this node's reads and the other
// nodes' requests: reading the server's state costs about as much for one stream as
// for all, so one reading serves every request received before it began.
func (n *Node) ownLedStreams(ctx context.Context) (map[string]uint64, error) {
	return n.round(ctx, "own", n.ledStreams)
}

// serveReadIndex answers askLeader's requests for this node's embedded server until
// the node's connection closes. Each request waits for its round in a goroutine of
// its own (the subscription's callbacks run one at a time).
func (n *Node) serveReadIndex() error {
	_, err := n.nc.Subscribe(readIndexSubject(n.cfg.NodeName), func(m *nats.Msg) {
		_ = n.goOwned(func() {
			ctx, cancel := context.WithTimeout(n.ctx, leaderAttempt)
			defer cancel()
			seqs, err := n.ownLedStreams(ctx)
			if err != nil {
				n.log.Debug("cluster: read index", "err", err)
				return // the asker falls back to the stream's own info
			}
			_ = m.Respond(encodeLedStreams(seqs))
		})
	})
	if err != nil {
		return fmt.Errorf("cluster: read index: %w", err)
	}
	return nil
}

// ledStreams returns the last sequence of every Cairn stream the embedded server
// leads, read from the server's own state.
func (n *Node) ledStreams() (map[string]uint64, error) {
	acc := n.srv.GlobalAccount()
	if acc == nil {
		return nil, errors.New("cluster: read index: no account")
	}
	d, err := n.srv.JszAccount(&server.JSzOptions{Account: acc.Name, Streams: true, StreamLeaderOnly: true})
	if err != nil {
		return nil, fmt.Errorf("cluster: read index: %w", err)
	}
	seqs := make(map[string]uint64, len(d.Streams))
	for _, st := range d.Streams {
		if strings.HasPrefix(st.Name, streamPrefix) && st.Cluster != nil && st.Cluster.Leader == n.cfg.NodeName {
			seqs[st.Name] = st.State.LastSeq
		}
	}
	return seqs, nil
}

// encodeLedStreams encodes seqs as lines "<stream> <sequence>".
func encodeLedStreams(seqs map[string]uint64) []byte {
	var b []byte
	for name, seq := range seqs {
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, '\n')
	}
	return b
}

// decodeLedStreams decodes encodeLedStreams's lines.
func decodeLedStreams(b []byte) (map[string]uint64, error) {
	seqs := map[string]uint64{}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		name, num, ok := strings.Cut(line, " ")
		seq, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("cluster: read index: bad answer line %q", line)
		}
		seqs[name] = seq
	}
	return seqs, nil
}
