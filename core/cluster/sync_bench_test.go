package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// BenchmarkSync measures read-your-writes confirmations (Store.Sync) of keys spread
// over a 3-node cluster's streams, issued in parallel on every node (as quorum GETs
// do), with no writes meanwhile: the cost of asking the streams' leaders.
func BenchmarkSync(b *testing.B) {
	c := clustertest.Start(b, 3, clustertest.Options{Partitions: 64})
	ctx := context.Background()
	const keys = 256
	st0 := c.Node(0).Store()
	for i := range keys {
		var batch storage.Batch
		batch.Put(storage.KeyString(storage.TagObject, "default", "b", fmt.Sprintf("k%d", i)), []byte("v"))
		if err := st0.Commit(ctx, &batch, false); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			st := c.Node(int(i % 3)).Store().(*cluster.Store)
			key := storage.KeyString(storage.TagObject, "default", "b", fmt.Sprintf("k%d", i%keys))
			if err := st.Sync(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPut measures KV PUTs (kv.Service.Put, 1 KiB, new keys) through the three
// nodes of a cluster in parallel: read, merge, publish with the key's condition, wait
// for the local apply.
func BenchmarkPut(b *testing.B) {
	c := clustertest.Start(b, 3, clustertest.Options{Partitions: 64})
	svcs := services(b, c)
	ctx := context.Background()
	value := core.Sibling{Value: make([]byte, 1024), ContentType: "application/octet-stream"}
	for i := range 64 { // every stream made and attached before the clock starts
		if _, err := svcs[0].Put(ctx, &kv.PutRequest{Type: core.DefaultType, Bucket: "b", Key: fmt.Sprintf("warm%d", i), Value: value}); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if _, err := svcs[i%3].Put(ctx, &kv.PutRequest{Type: core.DefaultType, Bucket: "b", Key: fmt.Sprintf("k%d", i), Value: value}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
