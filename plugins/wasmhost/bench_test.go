package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// benchPrecommit returns the "accept" precommit of the fixture and a typical object.
func benchPrecommit(b *testing.B, cfg Config) (hooks.Precommit, *core.Object) {
	h := newHost(b, cfg)
	load(b, h, "fx", "hooks")
	impl, err := h.Lookup("fx", "accept", hooks.PointPrecommit)
	if err != nil {
		b.Fatal(err)
	}
	obj := &core.Object{Type: "default", Bucket: "users", Key: "alice", VClock: []byte("a85hYGBgzGDKBVIcypz/fgaUHjmdwZTImMfKwNR1/gxfFgA="),
		Siblings: []core.Sibling{{
			Value: []byte(`{"name":"alice","email":"alice@example.com"}`), ContentType: "application/json",
			Meta:    []core.MetaEntry{{Name: "Owner", Value: "bob"}},
			Indexes: []core.IndexEntry{{Field: "email_bin", Value: "alice@example.com"}},
		}}}
	return impl.(hooks.Precommit), obj
}

// BenchmarkPrecommitNoop is the host's cost of one precommit call whose guest accepts
// at once: encoding the input, taking an instance, cairn_alloc, the copy, the call
// under a deadline, and giving the instance back.
func BenchmarkPrecommitNoop(b *testing.B) {
	// The deadline is armed as usual, but long: a busy machine must not fail the run.
	pc, obj := benchPrecommit(b, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute}})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil || v.Reject || v.Replace != nil {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkPrecommitParallel is the same call from 64 goroutines sharing the default
// pool (2*GOMAXPROCS instances). The deadline is raised: on a busy machine the slowest
// of thousands of calls can wait longer than 100ms for a CPU.
func BenchmarkPrecommitParallel(b *testing.B) {
	pc, obj := benchPrecommit(b, Config{PoolWait: time.Minute,
		Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute}})
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// schemaDocument returns a JSON document of about 1 KiB that satisfies the schema of
// wasm-examples/rust/json-schema-precommit: name, email, age, role and 80 short tags.
func schemaDocument() []byte {
	var b bytes.Buffer
	b.WriteString(`{"name":"user-000001","email":"user1@example.com","age":21,"role":"member","tags":[`)
	for i := range 80 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"tag-1-%d"`, i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// BenchmarkRustJSONSchemaPrecommit is the Rust JSON-schema example validating a 1 KiB
// document per call: mostly guest work (serde_json parsing, then the schema walk), so
// it shows what the loop and call instrumentation costs real code.
func BenchmarkRustJSONSchemaPrecommit(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "wasm-examples", "rust", "json-schema-precommit", "json-schema-precommit.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	h := newHost(b, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute}})
	if _, err := h.Load(context.Background(), "schema", wasm); err != nil {
		b.Fatal(err)
	}
	impl, err := h.Lookup("schema", "validate", hooks.PointPrecommit)
	if err != nil {
		b.Fatal(err)
	}
	pc := impl.(hooks.Precommit)
	doc := schemaDocument()
	obj := &core.Object{Type: "default", Bucket: "users", Key: "u1",
		Siblings: []core.Sibling{{Value: doc, ContentType: "application/json"}}}
	ctx := context.Background()
	if v, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil || v.Reject || v.Replace != nil {
		b.Fatalf("the document does not pass: %+v %v", v, err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil {
			b.Fatal(err)
		}
	}
}
