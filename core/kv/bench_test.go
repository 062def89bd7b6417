package kv

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// benchService is a service over a fresh store whose writes are not fsynced (dw=0 is
// the benchmarked case; NoSync keeps the disk out of the measure of the write path).
func benchService(b *testing.B) *Service {
	b.Helper()
	db, err := storage.Open(b.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(db, Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(); db.Close() })
	return s
}

// benchPut is one blind PUT of a 1 KiB value with one index entry over 20,000 keys,
// with dw=0 (not synced), as make bench's put case.
func benchPut(b *testing.B, s *Service, i int64, value []byte) {
	req := &PutRequest{Type: core.DefaultType, Bucket: "bench", Key: "k" + strconv.FormatInt(i%20_000, 10),
		Value: core.Sibling{Value: value, ContentType: "application/octet-stream",
			Indexes: []core.IndexEntry{{Field: "n_int", Value: strconv.FormatInt(i%100, 10)}}},
		Options: PutOptions{DW: core.Quorum{N: 0}}}
	if _, err := s.Put(ctx, req); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPut measures the in-process KV write path (props, read, resolve, commit with
// its index postings) one PUT at a time.
func BenchmarkPut(b *testing.B) {
	s := benchService(b)
	value := make([]byte, 1024)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		benchPut(b, s, int64(i), value)
	}
}

// BenchmarkPutParallel is BenchmarkPut from GOMAXPROCS goroutines (group commit).
func BenchmarkPutParallel(b *testing.B) {
	s := benchService(b)
	value := make([]byte, 1024)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchPut(b, s, n.Add(1), value)
		}
	})
}
