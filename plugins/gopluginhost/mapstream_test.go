package gopluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// openStream opens a map stream of mod:fun.
func openStream(t testing.TB, h *Host, mod, fun string) hooks.MapStream {
	t.Helper()
	ms, err := lookup[hooks.MapStreamer](t, h, mod, fun, hooks.PointMap).OpenMapStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// streamKey is the key of input i.
func streamKey(i int) string { return fmt.Sprintf("k%06d", i) }

// sendAll sends n inputs (input i failing when fail(i)) and closes the send side, on
// a goroutine of its own; the channel gets its error.
func sendAll(ms hooks.MapStream, n int, fail func(int) bool) <-chan error {
	done := make(chan error, 1)
	go func() {
		for i := range n {
			in := hooks.MapInput{Object: &core.Object{Type: "default", Bucket: "b", Key: streamKey(i),
				Siblings: []core.Sibling{{Value: []byte("1")}}}}
			if fail != nil && fail(i) {
				in.KeyData = json.RawMessage(`"fail"`)
			}
			if err := ms.Send(in); err != nil {
				done <- err
				return
			}
		}
		done <- ms.CloseSend()
	}()
	return done
}

func TestMapStreamOrder(t *testing.T) {
	cfg := testConfig(nil, tp(t, "tp"))
	cfg.MapStreams, cfg.MapWindow = 2, 64
	h := newHost(t, cfg)
	const n = 20_000
	fail := func(i int) bool { return i%97 == 5 }
	ms := openStream(t, h, "tp", "echo")
	defer ms.Close()
	sent := sendAll(ms, n, fail)
	failures := 0
	for i := 0; ; i++ {
		vals, err := ms.Recv()
		if errors.Is(err, io.EOF) {
			if i != n {
				t.Fatalf("EOF after %d outputs, want %d", i, n)
			}
			break
		}
		if fail(i) {
			if callKind(err) != hooks.Failed || err.Error() != "hook tp:echo failed: failed on "+streamKey(i) {
				t.Fatalf("input %d: err = %v, want its own failure", i, err)
			}
			failures++
			continue
		}
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if want := strconv.Quote(streamKey(i)); len(vals) != 1 || string(vals[0]) != want {
			t.Fatalf("input %d: got %s, want %s", i, vals, want)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after EOF: %v", err)
	}
	ps := statsOf(t, h, "tp")
	if ps.Calls != n || ps.Failures[hooks.Failed] != int64(failures) {
		t.Errorf("stats: %d calls, %d failed; want %d, %d", ps.Calls, ps.Failures[hooks.Failed], n, failures)
	}
}

func TestMapStreamEdges(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	t.Run("no inputs", func(t *testing.T) {
		ms := openStream(t, h, "tp", "echo")
		defer ms.Close()
		if err := ms.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := ms.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("Recv = %v, want EOF", err)
		}
	})
	t.Run("fewer inputs than streams", func(t *testing.T) {
		ms := openStream(t, h, "tp", "arg")
		defer ms.Close()
		if err := ms.Send(hooks.MapInput{NotFound: &hooks.Place{Key: "x"}, Arg: json.RawMessage(`[1]`)}); err != nil {
			t.Fatal(err)
		}
		if err := ms.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if vals, err := ms.Recv(); err != nil || len(vals) != 1 || string(vals[0]) != "[1]" {
			t.Fatalf("Recv = %s, %v", vals, err)
		}
		if _, err := ms.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("Recv = %v, want EOF", err)
		}
	})
	for _, tt := range []struct {
		fun  string
		kind hooks.CallErrorKind
	}{
		// The plugin's Map returned an error: that ends the stream, so it is no
		// per-input failure.
		{"error_stream", hooks.Crashed},
	} {
		t.Run(tt.fun, func(t *testing.T) {
			ms := openStream(t, h, "tp", tt.fun)
			defer ms.Close()
			sent := sendAll(ms, 10, nil)
			_, err := ms.Recv()
			if callKind(err) != tt.kind {
				t.Fatalf("Recv = %v, want kind %s", err, tt.kind)
			}
			if _, err2 := ms.Recv(); !errors.Is(err2, err) {
				t.Errorf("Recv after the end = %v, want %v again", err2, err)
			}
			ms.Close()
			<-sent
		})
	}
}

func TestMapStreamTimeout(t *testing.T) {
	cfg := testConfig(nil, tp(t, "tp"))
	cfg.Timeouts = map[hooks.Point]time.Duration{hooks.PointMap: 300 * time.Millisecond}
	h := newHost(t, cfg)
	ms := openStream(t, h, "tp", "sleep")
	defer ms.Close()
	if err := ms.Send(hooks.MapInput{Object: sampleObject()}); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Recv(); callKind(err) != hooks.TimedOut {
		t.Fatalf("Recv = %v, want timed out", err)
	}
	if err := ms.Send(hooks.MapInput{Object: sampleObject()}); callKind(err) != hooks.TimedOut {
		t.Fatalf("Send after the end = %v", err)
	}
}

func TestMapStreamCrash(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	// Warm up: a first stream starts gRPC's goroutines that stay.
	warm := openStream(t, h, "tp", "echo")
	<-sendAll(warm, 10, nil)
	for {
		if _, err := warm.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	warm.Close()
	base := runtime.NumGoroutine()

	ms := openStream(t, h, "tp", "crash_after")
	sent := sendAllArg(ms, 10_000, json.RawMessage("500"))
	var err error
	got := 0
	for err == nil {
		if _, err = ms.Recv(); err == nil {
			got++
		}
	}
	// Each of the two gRPC streams counts its own inputs, so the process exits at
	// about input 1000; answers sent just before may or may not have left it.
	if callKind(err) != hooks.Crashed || got > 1001 {
		t.Fatalf("after %d outputs: %v; want at most 1001 outputs, then crashed", got, err)
	}
	if err := <-sent; err == nil {
		t.Error("Send never failed")
	}
	ms.Close()
	// The plugin comes back, and everything the stream started is gone.
	waitUp(t, h, "tp", pid)
	waitGoroutines(t, base)
}

func TestMapStreamClose(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	waitUp(t, h, "tp", 0)
	base := runtime.NumGoroutine()
	ms := openStream(t, h, "tp", "echo")
	sent := sendAll(ms, 1_000_000, nil) // more than the windows: Send blocks
	if _, err := ms.Recv(); err != nil {
		t.Fatal(err)
	}
	ms.Close()
	if err := <-sent; !errors.Is(err, ErrStreamClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if _, err := ms.Recv(); !errors.Is(err, ErrStreamClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
	ms.Close() // twice is fine
	waitGoroutines(t, base)
	// The plugin is fine.
	if err := accept(t, h, "tp"); err != nil {
		t.Fatal(err)
	}
}

// sendAllArg sends n inputs with arg and closes the send side, on a goroutine.
func sendAllArg(ms hooks.MapStream, n int, arg json.RawMessage) <-chan error {
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := ms.Send(hooks.MapInput{Object: &core.Object{Key: streamKey(i)}, Arg: arg}); err != nil {
				done <- err
				return
			}
		}
		done <- ms.CloseSend()
	}()
	return done
}

func TestMapStreamCallerContext(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	ctx, cancel := context.WithCancel(context.Background())
	ms, err := lookup[hooks.MapStreamer](t, h, "tp", "sleep", hooks.PointMap).OpenMapStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	if err := ms.Send(hooks.MapInput{Object: sampleObject()}); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := ms.Recv(); callKind(err) != hooks.Unavailable || !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv = %v, want unavailable (canceled)", err)
	}
}
