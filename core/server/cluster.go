package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi"
	"github.com/cairnkv/cairn/core/storage"
)

// openStore opens the data directory's store: the local LevelDB standalone, or in
// cluster mode (cfg.ClusterName) the local LevelDB as the replica of a cluster node,
// whose replicated store it returns with the node.
func openStore(cfg Config, log *slog.Logger) (storage.Store, *cluster.Node, error) {
	opts := storage.Options{BlockCacheSize: cfg.CacheSize, SyncLatency: cfg.SyncLatency, Logger: log}
	if cfg.ClusterName == "" {
		db, err := storage.OpenStore(cfg.DataDir, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("server: %w", err)
		}
		return db, nil, nil
	}
	local, err := storage.Open(filepath.Join(cfg.DataDir, storage.StoreDir), opts)
	if err != nil {
		return nil, nil, fmt.Errorf("server: %w", err)
	}
	node, err := cluster.Open(context.Background(), cfg.clusterConfig(), local, log)
	if err != nil {
		local.Close()
		return nil, nil, fmt.Errorf("server: %w", err)
	}
	return node.Store(), node, nil
}

// wireCluster lets the cluster store learn each object key's n_val from the bucket's
// properties, and adds the cluster's lines to /stats.
func (s *Server) wireCluster(svc *kv.Service) {
	st := s.node.Store().(*cluster.Store)
	st.SetReplicasFunc(func(key []byte) int {
		_, comps, err := storage.DecodeKey(key)
		if err != nil || len(comps) < 2 {
			return cluster.DefaultNVal
		}
		p, err := svc.Props(context.Background(), string(comps[0]), string(comps[1]))
		if err != nil || p == nil {
			return cluster.DefaultNVal
		}
		return p.NVal
	})
	s.stats.AddSource(s.node.Stats)
	s.stats.Prometheus().MustRegister(newClusterCollector(st))
}

// clusterStatus returns the provider of GET /cluster (nil standalone).
func (s *Server) clusterStatus() kvapi.ClusterStatusFunc {
	if s.node == nil {
		return nil
	}
	return func(ctx context.Context, digest bool) (any, error) { return s.node.Status(ctx, digest) }
}

// Cluster returns the cluster node (nil standalone).
func (s *Server) Cluster() *cluster.Node { return s.node }

// clusterMembership returns the membership routes' provider (nil standalone or with
// an external NATS, whose own tools manage its servers).
func (s *Server) clusterMembership() kvapi.ClusterMembership {
	if s.node == nil || !s.node.Embedded() {
		return nil
	}
	return membership{s.node}
}

// membership adapts a cluster node to kvapi.ClusterMembership, its errors to
// *core.Error codes.
type membership struct{ n *cluster.Node }

func (m membership) Members() (any, error) {
	ms, err := m.n.Members()
	return ms, membershipError(err)
}

func (m membership) Retire(ctx context.Context, node string) (any, bool, error) {
	st, err := m.n.Retire(ctx, node)
	return st, st.Done, membershipError(err)
}

func (m membership) Forget(ctx context.Context, node string) error {
	return membershipError(m.n.Forget(ctx, node))
}

// membershipError gives a membership error the code the interfaces answer it with:
// an unknown server 404, a refused change 409 (the message says why), other
// failures stay as they are (500, logged).
func membershipError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrUnknownServer):
		return fmt.Errorf("%w (%w)", &core.Error{Code: core.ENOTFOUND, Message: "No such server in the cluster\n"}, err)
	case errors.Is(err, cluster.ErrMembershipConflict):
		return fmt.Errorf("%w (%w)", &core.Error{Code: core.ECONFLICT, Message: conflictMessage(err)}, err)
	}
	return err
}

// conflictMessage is the client-facing text of a refused membership change: the
// error's own text without the package prefixes and the sentinel's.
func conflictMessage(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+cluster.ErrMembershipConflict.Error())
	msg = strings.TrimPrefix(msg, "cluster: ")
	return strings.ToUpper(msg[:1]) + msg[1:] + "\n"
}
