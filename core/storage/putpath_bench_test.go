package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
)

// BenchmarkPutPath is core/kv's PUT of a new key at the storage level, unsynced, from
// 64 goroutines on 2 CPUs as under the load benchmark: read the key, then write a 1 KiB
// record. "blind" writes without reading (the floor); "plain" reads with Get and
// writes with Write (core/kv before the seam); "require" reads with Read and commits
// on the condition Require(key, rev), with a DeriveFunc registered for objects (that
// reads the old value and derives nothing, as for an object without indexes) and one
// subscriber, as core/kv on the Store does; "requireitem" is the same with
// RequireItem, which the write log settles without reading the key again.
func BenchmarkPutPath(b *testing.B) {
	val := make([]byte, 1024)
	for i := range val {
		val[i] = byte(i * 7)
	}
	key := func(i uint64) []byte {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], i*0x9e3779b97f4a7c15)
		return KeyString(TagObject, "default", "bench", string(k[:]))
	}
	for _, mode := range []string{"blind", "plain", "require", "requireitem"} {
		b.Run(mode, func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if mode == "require" || mode == "requireitem" {
				db.RegisterDerive(TagObject, func(_, _, _ []byte, _ *Derived) error { return nil })
				cancel := db.Subscribe(func([]Change) {})
				defer cancel()
			}
			ctx := context.Background()
			var next atomic.Uint64
			b.SetParallelism(32) // 64 goroutines with GOMAXPROCS=2
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				batch := new(Batch)
				for pb.Next() {
					k := key(next.Add(1))
					batch.Reset()
					switch mode {
					case "blind":
					case "plain":
						if _, err := db.Get(k); err != nil && !errors.Is(err, ErrNotFound) {
							b.Error(err)
							return
						}
					case "require", "requireitem":
						it, err := db.Read(ctx, k)
						if err != nil {
							b.Error(err)
							return
						}
						if mode == "require" {
							batch.Require(k, it.Rev)
						} else {
							batch.RequireItem(k, it)
						}
					}
					batch.Put(k, val)
					if err := db.Commit(ctx, batch, false); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
