package jsblob

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/cairnkv/cairn/core/cluster/jsblob/internal/natstest"
	"github.com/cairnkv/cairn/core/storage"
)

// benchIDs numbers the blobs the benchmark writes: -count runs it again on a store.
var benchIDs atomic.Int64

// benchBlobSize is the size of the blobs the benchmark writes and reads.
const benchBlobSize = 4 << 20

// BenchmarkBlobs writes and reads 4 MiB blobs in 64 KiB pieces (as the S3 service
// does) through the local blob files, and through this store on one node and on a
// 3-node cluster with 3 replicas, all in one run (docs/benchmarks.md).
func BenchmarkBlobs(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) storage.BlobStore
	}{
		{"files", func(b *testing.B) storage.BlobStore {
			s, err := storage.OpenBlobs(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"jetstream-1", func(b *testing.B) storage.BlobStore {
			return newStore(b, natstest.Start(b, 1)[0].JS, Config{})
		}},
		{"jetstream-3", func(b *testing.B) storage.BlobStore {
			return newStore(b, natstest.Start(b, 3)[0].JS, Config{Replicas: 3})
		}},
	}
	data := make([]byte, benchBlobSize)
	for i := range data {
		data[i] = byte(i % 251)
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			b.Run("write", func(b *testing.B) {
				b.SetBytes(benchBlobSize)
				for b.Loop() {
					writeBench(b, s, []byte(fmt.Sprintf("w%d", benchIDs.Add(1))), data)
				}
			})
			id := []byte(fmt.Sprintf("r%d", benchIDs.Add(1)))
			writeBench(b, s, id, data)
			b.Run("read", func(b *testing.B) {
				b.SetBytes(benchBlobSize)
				for b.Loop() {
					r, err := s.Open(context.Background(), id)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := r.CopyRange(io.Discard, 0, r.Size()); err != nil {
						b.Fatal(err)
					}
					r.Close()
				}
			})
		})
	}
}

// writeBench writes data as the blob id in 64 KiB pieces.
func writeBench(b *testing.B, s storage.BlobStore, id, data []byte) {
	ctx := context.Background()
	w, err := s.Create(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	for rest := data; len(rest) > 0; rest = rest[min(len(rest), 64<<10):] {
		if _, err := w.Write(rest[:min(len(rest), 64<<10)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(ctx); err != nil {
		b.Fatal(err)
	}
}
