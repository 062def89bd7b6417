package s3

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// BenchmarkSSE measures PUT and GET of 1 MiB objects in a blob store (as a server
// keeps them), in clear, SSE-S3 and SSE-C (docs/benchmarks.md, "Server-side
// encryption").
func BenchmarkSSE(b *testing.B) {
	mk, err := sse.NewMasterKey(sse.NewKey())
	if err != nil {
		b.Fatal(err)
	}
	data := randomData(1 << 20)
	for _, mode := range []struct {
		name string
		q    SSERequest
	}{
		{"clear", SSERequest{}},
		{"sse-s3", SSERequest{S3: true}},
		{"sse-c", SSERequest{Customer: customerKey(1)}},
	} {
		setup := func(b *testing.B) (*Service, Requester) {
			blobs, err := storage.OpenBlobs(filepath.Join(b.TempDir(), "blobs"))
			if err != nil {
				b.Fatal(err)
			}
			return benchService(b, Config{Blobs: blobs, MasterKey: mk})
		}
		ctx := context.Background()
		b.Run("put-1MiB/"+mode.name, func(b *testing.B) {
			s, r := setup(b)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				in := PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: mode.q}
				if _, err := s.PutObject(ctx, r, "bench", "k", in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get-1MiB/"+mode.name, func(b *testing.B) {
			s, r := setup(b)
			in := PutInput{Body: bytes.NewReader(data), Size: int64(len(data)), SSE: mode.q}
			if _, err := s.PutObject(ctx, r, "bench", "k", in); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				o, err := s.OpenObject(ctx, r, "bench", "k")
				if err == nil {
					err = o.Unseal(mode.q.Customer)
				}
				if err == nil {
					err = o.WriteRange(ctx, io.Discard, 0, o.Manifest.Size)
					o.Close()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
