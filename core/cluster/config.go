// Package cluster is Cairn's cluster mode: a replicated implementation of
// storage.Store on NATS JetStream, in front of each node's local LevelDB (a full local
// read replica), and the embedded NATS server every node runs (or a connection to an
// existing NATS). core/server is the only package that constructs it; see
// docs/cluster.md for the operator's view and docs/rationale.md for the decisions.
//
// Keys replicate by table tag (core/storage/key.go): objects go to partition streams
// (hash(key) mod Partitions, replicas = the bucket's n_val clamped to the servers),
// cluster-wide metadata (props, types, modules, S3 records, grants, chunks) to one META
// stream, and the rest (2i postings, the reap queue: derived on apply; the node's own
// metadata) stays local. Every node applies every stream to its local DB through
// (*storage.DB).Commit, so derived writes and Subscribe callbacks happen on every node.
package cluster

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// Config is the configuration of a cluster node.
type Config struct {
	// Name is the cluster's name (the embedded NATS cluster name). Required.
	Name string
	// NodeName is this node's name, unique in the cluster (the embedded NATS server's
	// name). Required.
	NodeName string
	// DataDir is the node's data directory; the embedded server keeps its JetStream
	// store in DataDir/nats (NATSDir).
	DataDir string
	// Listen is the host:port of the embedded server's route listener.
	Listen string
	// Peers are the route addresses (host:port) of the other nodes; this node's own
	// address may be among them.
	Peers []string
	// NATSURLs, when set, connect to an existing NATS (JetStream on) instead of starting
	// an embedded server; Listen and Peers are then unused.
	NATSURLs []string
	// Partitions is the number of object partitions, a power of two (default
	// DefaultPartitions). Every node of a cluster must use the same.
	Partitions int
	// StartTimeout bounds the wait for JetStream's meta leader at start (default
	// DefaultStartTimeout).
	StartTimeout time.Duration
}

// Defaults.
const (
	DefaultPartitions   = 64
	DefaultStartTimeout = 2 * time.Minute
	// MaxPartitions bounds Partitions: each partition is a stream (a Raft group per
	// replica set).
	MaxPartitions = 1024
	// NATSDir is the directory, inside the data directory, of the embedded server's
	// JetStream store.
	NATSDir = "nats"
	// maxPayload is the embedded server's largest message: an object record (bounded by
	// --max-object-size, 50 MiB at most by default in kv) plus its key.
	maxPayload = 64 << 20
	// maxBatchMsgs bounds the messages of one commit (one JetStream atomic batch): the
	// embedded server's limit; an existing NATS has its own (1000 by default).
	maxBatchMsgs = 11_000
)

// withDefaults returns c with its zero fields defaulted.
func (c Config) withDefaults() Config {
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	return c
}

// Validate checks c (defaults applied).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Name == "":
		return fmt.Errorf("cluster: a cluster name is required")
	case !validName(c.Name):
		return fmt.Errorf("cluster: cluster name %q: use letters, digits, '-', '_', '.', '@' or ':'", c.Name)
	case c.NodeName == "" || !validName(c.NodeName):
		return fmt.Errorf("cluster: node name %q: use letters, digits, '-', '_', '.', '@' or ':'", c.NodeName)
	case c.Partitions < 1 || c.Partitions > MaxPartitions || c.Partitions&(c.Partitions-1) != 0:
		return fmt.Errorf("cluster: partitions %d: a power of two from 1 to %d", c.Partitions, MaxPartitions)
	}
	if len(c.NATSURLs) > 0 {
		return nil
	}
	if c.DataDir == "" {
		return fmt.Errorf("cluster: a data directory is required for the embedded NATS server")
	}
	if _, _, err := splitHostPort(c.Listen); err != nil {
		return fmt.Errorf("cluster: listen address %q: %w", c.Listen, err)
	}
	for _, p := range c.Peers {
		if _, _, err := splitHostPort(p); err != nil {
			return fmt.Errorf("cluster: peer %q: %w", p, err)
		}
	}
	return nil
}

// validName reports whether s is a usable cluster or server name: no spaces, dots
// allowed, nothing NATS gives a meaning to in names.
func validName(s string) bool {
	if len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_.@:", r):
		default:
			return false
		}
	}
	return true
}

// splitHostPort splits a host:port route address with a numeric port.
func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("bad port %q", port)
	}
	return host, p, nil
}

// servers returns how many JetStream servers the embedded cluster has: the distinct
// addresses of Peers and Listen.
func (c Config) servers() int {
	seen := map[string]bool{c.Listen: true}
	for _, p := range c.Peers {
		seen[p] = true
	}
	return len(seen)
}
