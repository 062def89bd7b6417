package jsvm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// benchObject is a Riak-shaped object whose JSON is about 350 bytes.
func benchObject(b *testing.B, r *Runtime) hooks.MapInput {
	b.Helper()
	o := &core.Object{
		Type: core.DefaultType, Bucket: "users", Key: "alice", VClock: []byte("a85hYGBgzGDKBVIcypz/fgbd"),
		Siblings: []core.Sibling{{
			Value:       []byte(`{"name":"Alice","age":33}`),
			ContentType: "application/json", VTag: "6dQBm9oYA1mxRSH0e96l5W",
			LastModified: time.Date(2010, 3, 10, 18, 11, 41, 0, time.UTC),
			Meta:         []core.MetaEntry{{Name: "Fo", Value: "b"}},
			Indexes:      []core.IndexEntry{{Field: "age_int", Value: "33"}},
		}},
	}
	if n := len(r.codec.AppendObject(nil, o)); n < 330 || n > 370 {
		b.Fatalf("the object's JSON has %d bytes", n)
	}
	return hooks.MapInput{Object: o}
}

func benchMap(b *testing.B, m hooks.Map, in hooks.MapInput, want string) {
	ctx := context.Background()
	got, err := m.Map(ctx, in)
	if err != nil || joined(b, got) != want {
		b.Fatalf("%s, %v", joined(b, got), err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Map(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMapValuesJson is one call of the built-in Riak.mapValuesJson on a 350-byte
// object: the object encoded to JSON, parsed in the VM, the value parsed, the result
// stringified and split in Go.
func BenchmarkMapValuesJson(b *testing.B) {
	r := newRuntime(b, Config{PoolSize: 1})
	in := benchObject(b, r)
	benchMap(b, namedMap(b, r, "Riak.mapValuesJson"), in, `[{"name":"Alice","age":33}]`)
}

// BenchmarkAnonymousMap is the same with a client's source (cached after the first call).
func BenchmarkAnonymousMap(b *testing.B) {
	r := newRuntime(b, Config{PoolSize: 1})
	in := benchObject(b, r)
	benchMap(b, sourceMap(b, r, `function(v) { return [JSON.parse(v.values[0].data)]; }`), in,
		`[{"name":"Alice","age":33}]`)
}

// BenchmarkReduceSum is Riak.reduceSum over 20 numbers (the reference's batch size).
func BenchmarkReduceSum(b *testing.B) {
	r := newRuntime(b, Config{PoolSize: 1})
	f := namedReduce(b, r, "Riak.reduceSum")
	vals := make([]json.RawMessage, 20)
	for i := range vals {
		vals[i] = json.RawMessage("17")
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Reduce(ctx, vals, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewVM is the cost of starting one VM with the built-ins and the prelude.
func BenchmarkNewVM(b *testing.B) {
	r := newRuntime(b, Config{})
	b.ReportAllocs()
	for b.Loop() {
		v, err := r.newVM()
		if err != nil {
			b.Fatal(err)
		}
		v.close()
	}
}

// BenchmarkEmptyMap is a map function that ignores its input: the cost of a call plus
// the object's crossing (encoding, JSON.parse in the VM), without the user's work.
func BenchmarkEmptyMap(b *testing.B) {
	r := newRuntime(b, Config{PoolSize: 1})
	in := benchObject(b, r)
	benchMap(b, sourceMap(b, r, `function(v) { return []; }`), in, `[]`)
}

// BenchmarkCallOverhead is a reduce of nothing to nothing: the cost of a call alone
// (pool, limits, dispatch, the answer's string).
func BenchmarkCallOverhead(b *testing.B) {
	r := newRuntime(b, Config{PoolSize: 1})
	f := sourceReduce(b, r, `function(vs) { return vs; }`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Reduce(ctx, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
