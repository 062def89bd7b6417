package cluster_test

import (
	"testing"

	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/storage/storagetest"
)

// The conformance suite commits batches of object keys of several buckets at once,
// which a cluster of several partitions refuses (ErrCrossStream): it runs with one
// partition, where every object key shares a stream.
func TestConformanceOneNode(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, dir string) storage.Store {
		c := clustertest.StartIn(t, dir, 1, clustertest.Options{Partitions: 1})
		return c.Node(0).Store()
	})
}

// TestConformanceThreeNodes runs the suite on node 1 of a three-node cluster (every
// stream three replicas); closing the store closes the cluster.
func TestConformanceThreeNodes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, dir string) storage.Store {
		c := clustertest.StartIn(t, dir, 3, clustertest.Options{Partitions: 1})
		return wholeCluster{Store: c.Node(0).Store(), c: c}
	})
}

// wholeCluster is one node's store whose Close stops the whole cluster.
type wholeCluster struct {
	storage.Store
	c *clustertest.Cluster
}

func (w wholeCluster) Close() error {
	w.c.Close()
	return nil
}
