package goplugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// benchObject is a typical small object: a JSON value of about 350 bytes, metadata, an
// index entry and a link.
func benchObject() *hookspb.Object {
	return &hookspb.Object{BucketType: []byte("default"), Bucket: []byte("users"), Key: []byte("user-000001"),
		Vclock: bytes.Repeat([]byte{0x6b}, 40),
		Contents: []*hookspb.Content{{
			Value:       append([]byte(`{"name":"alice","email":"alice@example.com","bio":"`), append(bytes.Repeat([]byte("x"), 280), `"}`...)...),
			ContentType: "application/json", Vtag: "4Ldx", LastModUsecs: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(),
			Usermeta: []*hookspb.Pair{{Key: []byte("owner"), Value: []byte("bob")}},
			Indexes:  []*hookspb.Pair{{Key: []byte("email_bin"), Value: []byte("alice@example.com")}},
			Links:    []*hookspb.Link{{Bucket: []byte("users"), Key: []byte("u2"), Tag: []byte("friend")}},
		}}}
}

// benchMux has a map function and a precommit that do almost nothing, so that the
// benchmarks measure the transport and the conversions.
func benchMux() *goplugin.Mux {
	m := goplugin.NewMux()
	m.Map("size", func(_ context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
		if len(in.Object.Contents) == 0 {
			return nil, errors.New("not found")
		}
		return []json.RawMessage{strconv.AppendInt(nil, int64(len(in.Object.Contents[0].Value)), 10)}, nil
	})
	m.Precommit("check", func(_ context.Context, _ goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		if obj.Key == "" {
			return goplugin.Verdict{Reject: true}, nil
		}
		return goplugin.Verdict{}, nil
	})
	return m
}

// benchMapStream sends b.N copies of one input on one stream and receives the answers.
func benchMapStream(b *testing.B, hc hookspb.HooksClient) {
	ctx := b.Context()
	first := &hookspb.MapRequest{Fun: "size", Object: benchObject()}
	rest := &hookspb.MapRequest{Object: first.Object}
	size, _ := json.Marshal(len(first.Object.Contents[0].Value))
	b.ReportAllocs()
	b.ResetTimer()
	stream, err := hc.Map(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		for i := range b.N {
			req := rest
			if i == 0 {
				req = first
			}
			if err := stream.Send(req); err != nil {
				sent <- err
				return
			}
		}
		sent <- stream.CloseSend()
	}()
	n := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.GetValuesJson()) != 1 || !bytes.Equal(resp.GetValuesJson()[0], size) {
			b.Fatalf("answer %d: %v", n, resp)
		}
		n++
	}
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
	if n != b.N {
		b.Fatalf("%d answers for %d inputs", n, b.N)
	}
}

// BenchmarkMapStream is the cost of one input on a map stream through the Harness
// (in-memory connection): encoding, the transport, decoding, the call, the answer.
func BenchmarkMapStream(b *testing.B) {
	benchMapStream(b, newHarness(b, benchMux()).Client())
}

// BenchmarkPluginProcessMap is the same through a plugin process started by go-plugin
// (a Unix socket), as the server runs it.
func BenchmarkPluginProcessMap(b *testing.B) {
	benchMapStream(b, startPlugin(b, buildTestPlugin(b, "testplugin")))
}

// BenchmarkPrecommit is one precommit call through the Harness.
func BenchmarkPrecommit(b *testing.B) {
	hc := newHarness(b, benchMux()).Client()
	ctx := b.Context()
	req := &hookspb.HookRequest{Fun: "check", Object: benchObject()}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := hc.Precommit(ctx, req)
		if err != nil || !resp.GetAccept() {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkPrecommitServer is the plugin side of one precommit call alone: the
// adapter's conversions and the call, without gRPC.
func BenchmarkPrecommitServer(b *testing.B) {
	srv, err := goplugin.NewServer(benchMux())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := &hookspb.HookRequest{Fun: "check", Object: benchObject()}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.Precommit(ctx, req)
		if err != nil || !resp.GetAccept() {
			b.Fatal(resp, err)
		}
	}
}
