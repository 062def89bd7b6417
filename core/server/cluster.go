package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

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
