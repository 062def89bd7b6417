package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/storage"
)

// Status is a node's view of the cluster (GET /cluster, cairn cluster status).
type Status struct {
	Cluster    string         `json:"cluster"`
	Node       string         `json:"node"`
	Partitions int            `json:"partitions"`
	Embedded   bool           `json:"embedded_nats"` // false with --nats-url
	Servers    []ServerStatus `json:"servers"`
	Streams    []StreamStatus `json:"streams"`
	// MaxLag is the largest apply lag of this node's streams, in messages.
	MaxLag uint64 `json:"max_lag"`
}

// ServerStatus is one JetStream server as the streams' replica sets report it.
type ServerStatus struct {
	Name string `json:"name"`
	// Up is whether the server is current in the replica sets it belongs to (or leads
	// one).
	Up bool `json:"up"`
	// LastSeen is how long ago a leader last heard from it (0 for a leader).
	LastSeen string `json:"last_seen,omitempty"`
}

// StreamStatus is one replication stream.
type StreamStatus struct {
	Name     string   `json:"name"`
	Replicas int      `json:"replicas"`
	Leader   string   `json:"leader"`
	Peers    []string `json:"peers"`
	LastSeq  uint64   `json:"last_seq"`
	Applied  uint64   `json:"applied"` // this node's applied sequence
	Lag      uint64   `json:"lag"`
	Keys     uint64   `json:"messages"`
	// Digest is the SHA-256 over this node's local replica of the stream's keys and
	// values in key order (only when asked for): equal on every up-to-date node.
	Digest string `json:"digest,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Status returns the node's view of the cluster; with digest, each stream's digest
// of the local replica (it reads every replicated key: use it for checks, not often).
func (n *Node) Status(ctx context.Context, digest bool) (Status, error) {
	st := Status{Cluster: n.cfg.Name, Node: n.cfg.NodeName, Partitions: n.cfg.Partitions, Embedded: n.srv != nil}
	n.mu.Lock()
	appliers := make([]*applier, 0, len(n.appliers))
	for _, a := range n.appliers {
		appliers = append(appliers, a)
	}
	n.mu.Unlock()
	sort.Slice(appliers, func(i, j int) bool { return appliers[i].stream.name() < appliers[j].stream.name() })
	var digests map[string][]byte
	if digest {
		var err error
		if digests, err = n.digests(); err != nil {
			return st, err
		}
	}
	servers := map[string]*ServerStatus{}
	seen := func(name string, up bool, active time.Duration) {
		s := servers[name]
		if s == nil {
			s = &ServerStatus{Name: name}
			servers[name] = s
		}
		if up {
			s.Up = true
		}
		if active > 0 {
			s.LastSeen = active.Round(time.Millisecond).String()
		}
	}
	// Every server of the meta group, also those that hold no stream replica (a node
	// just added, or one retired): up when current in the group.
	if ms, err := n.Members(); err == nil && n.srv != nil && n.servers > 1 {
		for _, m := range ms {
			seen(m.Name, m.Current && !m.Offline, 0)
		}
	}
	for _, a := range appliers {
		ss := n.streamStatus(ctx, a, seen)
		if digest {
			ss.Digest = hex.EncodeToString(digests[a.stream.name()])
			if ss.Digest == "" {
				ss.Digest = hex.EncodeToString(emptyDigest[:])
			}
		}
		st.MaxLag = max(st.MaxLag, ss.Lag)
		st.Streams = append(st.Streams, ss)
	}
	for _, s := range servers {
		st.Servers = append(st.Servers, *s)
	}
	sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].Name < st.Servers[j].Name })
	return st, nil
}

// streamStatus reads one stream's info and this node's applied sequence.
func (n *Node) streamStatus(ctx context.Context, a *applier, seen func(string, bool, time.Duration)) StreamStatus {
	applied, _ := a.appliedSeq()
	ss := StreamStatus{Name: a.stream.name(), Applied: applied}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := n.js.Stream(ictx, ss.Name)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = s.Info(ictx)
	}
	if err != nil {
		ss.Error = err.Error()
		return ss
	}
	ss.Replicas, ss.LastSeq, ss.Keys = info.Config.Replicas, info.State.LastSeq, info.State.Msgs
	if ss.LastSeq > applied {
		ss.Lag = ss.LastSeq - applied
	}
	if c := info.Cluster; c != nil {
		ss.Leader = c.Leader
		if c.Leader != "" {
			ss.Peers = append(ss.Peers, c.Leader)
			seen(c.Leader, true, 0)
		}
		for _, p := range c.Replicas {
			ss.Peers = append(ss.Peers, p.Name)
			seen(p.Name, p.Current && !p.Offline, p.Active)
		}
	} else {
		ss.Leader, ss.Peers = n.cfg.NodeName, []string{n.cfg.NodeName}
		seen(n.cfg.NodeName, true, 0)
	}
	sort.Strings(ss.Peers)
	return ss
}

var emptyDigest = sha256.Sum256(nil)

// digests hashes, per stream, the local replica's keys and values in key order (from
// one snapshot): for each key, its length, the key, the value's length (or a delete
// mark) and the value.
func (n *Node) digests() (map[string][]byte, error) {
	snap, err := n.local.NewSnapshot()
	if err != nil {
		return nil, fmt.Errorf("cluster: digest: %w", err)
	}
	defer snap.Release()
	it := snap.IteratePrefix(sideKeyPrefix)
	defer it.Release()
	hs := map[string]hash.Hash{}
	var num [binary.MaxVarintLen64]byte
	for it.Next() {
		e, err := decodeSideEntry(it.Value())
		if err != nil {
			return nil, err
		}
		key := sideKeyOf(it.Key())
		if key == nil {
			continue
		}
		h := hs[e.stream]
		if h == nil {
			h = sha256.New()
			hs[e.stream] = h
		}
		h.Write(num[:binary.PutUvarint(num[:], uint64(len(key)))])
		h.Write(key)
		v, err := snap.Get(key)
		if errors.Is(err, storage.ErrNotFound) {
			h.Write([]byte{0}) // absent (deleted)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: digest: %w", err)
		}
		h.Write([]byte{1})
		h.Write(num[:binary.PutUvarint(num[:], uint64(len(v)))])
		h.Write(v)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("cluster: digest: %w", err)
	}
	out := make(map[string][]byte, len(hs))
	for name, h := range hs {
		out[name] = h.Sum(nil)
	}
	return out, nil
}

// sideKeyOf returns the replicated key a side-table key is of (nil if it is not one).
func sideKeyOf(sk []byte) []byte {
	if !bytes.HasPrefix(sk, sideKeyPrefix) {
		return nil
	}
	_, comps, err := storage.DecodeKey(sk)
	if err != nil || len(comps) != 2 {
		return nil
	}
	return comps[1]
}

// Stats returns the node's lines of /stats: its cluster and name, the streams it
// applies and its apply lag (messages its appliers have yet to apply, as the last
// message each received reported).
func (n *Node) Stats() map[string]any {
	n.mu.Lock()
	var lag uint64
	streams := len(n.appliers)
	for _, a := range n.appliers {
		lag += a.pending.Load()
	}
	n.mu.Unlock()
	return map[string]any{"cluster_name": n.cfg.Name, "cluster_node": n.cfg.NodeName,
		"cluster_streams": streams, "cluster_apply_lag": lag,
		"cluster_read_index_reads_total": n.readIndexReads.Load(), "cluster_read_index_rounds_total": n.readIndexRounds.Load()}
}

// Metrics are a node's replication figures, read without asking the cluster: for
// Prometheus (core/server exports them).
type Metrics struct {
	// Streams is every stream this node applies, by name.
	Streams []StreamMetrics
	// Commits counts the commits of replicated keys this node coordinated, Conflicts
	// those refused on their expected sequence (storage.ErrConflict), Unknown those
	// whose outcome stayed unknown (ErrOutcomeUnknown), Applied the records this node's
	// appliers applied.
	Commits, Conflicts, Unknown, Applied uint64
	// ServersReached is how many of the cluster's servers the embedded server has
	// routes to, itself included (0 with --nats-url); Servers how many there are.
	ServersReached, Servers int
}

// StreamMetrics is one stream's apply progress on this node.
type StreamMetrics struct {
	Name string
	// Applied is the last sequence applied locally; Lag how many messages the stream
	// held beyond the last one applied, as that message's metadata said.
	Applied, Lag uint64
}

// Metrics returns the node's replication figures.
func (s *Store) Metrics() Metrics {
	n := s.node
	m := Metrics{Commits: s.commits.Load(), Conflicts: s.conflicts.Load(), Unknown: s.unknown.Load(),
		Applied: s.applied.Load(), Servers: n.clusterSize()}
	if n.srv != nil {
		m.ServersReached = n.srv.NumRemotes() + 1
	}
	n.mu.Lock()
	for _, a := range n.appliers {
		applied, _ := a.appliedSeq()
		m.Streams = append(m.Streams, StreamMetrics{Name: a.stream.name(), Applied: applied, Lag: a.pending.Load()})
	}
	n.mu.Unlock()
	sort.Slice(m.Streams, func(i, j int) bool { return m.Streams[i].Name < m.Streams[j].Name })
	return m
}
