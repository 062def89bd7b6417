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
