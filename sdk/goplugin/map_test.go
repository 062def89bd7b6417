package goplugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// mapInputs returns n inputs: key "k<i>" (binary bytes appended) with value "v<i>";
// every 7th is a missing object, every 13th has key data.
func mapInputs(n int) []goplugin.MapInput {
	inputs := make([]goplugin.MapInput, n)
	for i := range inputs {
		obj := &goplugin.Object{Bucket: "b", Key: fmt.Sprintf("k%d%s", i, binary)}
		in := goplugin.MapInput{Object: obj}
		if i%7 == 3 {
			in.NotFound = true
		} else {
			obj.Contents = []goplugin.Content{{Value: fmt.Appendf(nil, "v%d", i)}}
		}
		if i%13 == 5 {
			in.KeyData = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		}
		inputs[i] = in
	}
	return inputs
}

// wantDescribed checks that out is describeInput's answer to in with arg.
func wantDescribed(t *testing.T, i int, in goplugin.MapInput, arg json.RawMessage, out []json.RawMessage) {
	t.Helper()
	if len(out) != 2 || string(out[1]) != `"second"` {
		t.Fatalf("input %d: got %s", i, out)
	}
	var got mapOutput
	if err := json.Unmarshal(out[0], &got); err != nil {
		t.Fatalf("input %d: %v", i, err)
	}
	want := mapOutput{Key: fmt.Sprintf("%x", in.Object.Key), NotFound: in.NotFound, KeyData: in.KeyData, Arg: arg}
	if len(in.Object.Contents) > 0 {
		want.Value = string(in.Object.Contents[0].Value)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %d: got %+v, want %+v", i, got, want)
	}
}

// TestMapStream maps many inputs over one stream and checks that every output is its
// input's, in order, with the stream's argument.
func TestMapStream(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	tests := []struct {
		n   int
		arg json.RawMessage
	}{
		{n: 0},
		{n: 1, arg: json.RawMessage(`"one"`)},
		{n: 10_000, arg: json.RawMessage(`{"min_length":3}`)},
		{n: 500},
	}
	for _, tt := range tests {
		inputs := mapInputs(tt.n)
		out, err := h.Map(testContext(t), "describe", tt.arg, inputs...)
		if err != nil {
			t.Fatalf("%d inputs: %v", tt.n, err)
		}
		if len(out) != tt.n {
			t.Fatalf("%d inputs: %d outputs", tt.n, len(out))
		}
		for i, in := range inputs {
			wantDescribed(t, i, in, tt.arg, out[i])
		}
	}
}

// TestMapInputErrors checks that a function's error for some inputs is reported for
// those inputs only, and the stream goes on.
func TestMapInputErrors(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	inputs := mapInputs(10_000)
	var want []goplugin.InputError
	for i := range inputs {
		if i%97 == 11 || i == len(inputs)-1 {
			inputs[i].Object.Key = "bad" + binary + fmt.Sprint(i)
			want = append(want, goplugin.InputError{Index: i, Message: fmt.Sprintf("bad input bad\uFFFD\x00\uFFFD(\uFFFD%d", i)})
		}
	}
	out, err := h.Map(testContext(t), "describe", nil, inputs...)
	var me *goplugin.MapError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MapError", err)
	}
	if !reflect.DeepEqual(me.Inputs, want) {
		t.Fatalf("failed inputs:\n got %+v\nwant %+v", me.Inputs, want)
	}
	if !strings.Contains(me.Error(), fmt.Sprintf("failed for %d input(s)", len(want))) {
		t.Fatalf("message %q", me.Error())
	}
	if len(out) != len(inputs) {
		t.Fatalf("%d outputs for %d inputs", len(out), len(inputs))
	}
	failed := map[int]bool{}
	for _, f := range want {
		failed[f.Index] = true
	}
	for i, in := range inputs {
		if failed[i] {
			if out[i] != nil {
				t.Fatalf("input %d failed but has outputs %s", i, out[i])
			}
			continue
		}
		wantDescribed(t, i, in, nil, out[i])
	}
}

// TestMapPanicEndsStream checks that a panic mid-stream ends the stream as a crash and
// that the next stream is served.
func TestMapPanicEndsStream(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	for _, at := range []int{0, 1, 63, 64, 65, 999} {
		inputs := mapInputs(1000)
		inputs[at].Object.Key = "boom"
		_, err := h.Map(testContext(t), "panic_on_boom", nil, inputs...)
		wantCode(t, err, codes.Internal, "panic: map boom")
		if _, err := h.Map(testContext(t), "panic_on_boom", nil, mapInputs(100)...); err != nil {
			t.Fatalf("panic at %d: the next stream: %v", at, err)
		}
	}
}

// rawMap sends reqs on a raw Map stream, closes it and returns the responses and the
// stream's status.
func rawMap(ctx context.Context, h *goplugin.Harness, reqs ...*hookspb.MapRequest) ([]*hookspb.ValuesResponse, error) {
	stream, err := h.Client().Map(ctx)
	if err != nil {
		return nil, err
	}
	for _, req := range reqs {
		if err := stream.Send(req); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var out []*hookspb.ValuesResponse
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, resp)
	}
}

// TestMapStreamProtocol checks the stream's rules on fun and arg_json in later
// messages, and inputs without an object.
func TestMapStreamProtocol(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	obj := &hookspb.Object{Key: []byte("k")}
	arg := []byte(`{"a":1}`)
	tests := []struct {
		name    string
		reqs    []*hookspb.MapRequest
		answers int
		code    codes.Code
		msg     string
	}{
		{"first names fun and arg", []*hookspb.MapRequest{{Fun: "describe", ArgJson: arg, Object: obj}, {Object: obj}, {Object: obj}}, 3, codes.OK, ""},
		{"later ones repeat them", []*hookspb.MapRequest{{Fun: "describe", ArgJson: arg, Object: obj}, {Fun: "describe", ArgJson: arg, Object: obj}}, 2, codes.OK, ""},
		{"another function", []*hookspb.MapRequest{{Fun: "describe", Object: obj}, {Object: obj}, {Fun: "panic_on_boom", Object: obj}}, 2, codes.InvalidArgument, `names function "panic_on_boom"`},
		{"another argument", []*hookspb.MapRequest{{Fun: "describe", ArgJson: arg, Object: obj}, {ArgJson: []byte(`{"a":2}`), Object: obj}}, 1, codes.InvalidArgument, "an argument other than"},
		{"no object", []*hookspb.MapRequest{{Fun: "describe", Object: obj}, {NotFound: true}}, 1, codes.InvalidArgument, "no object"},
		{"unknown function", []*hookspb.MapRequest{{Fun: "nope", Object: obj}}, 0, codes.NotFound, `no function "nope" at point map`},
		{"no inputs", nil, 0, codes.OK, ""},
	}
	for _, tt := range tests {
		out, err := rawMap(testContext(t), h, tt.reqs...)
		if tt.code == codes.OK && err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if tt.code != codes.OK {
			wantCode(t, callErr(err), tt.code, tt.msg)
		}
		if len(out) != tt.answers {
			t.Fatalf("%s: %d answers, want %d", tt.name, len(out), tt.answers)
		}
		for i, resp := range out {
			if resp.GetError() != "" {
				t.Fatalf("%s: answer %d: %s", tt.name, i, resp.GetError())
			}
			var got mapOutput
			if err := json.Unmarshal(resp.GetValuesJson()[0], &got); err != nil {
				t.Fatal(err)
			}
			if wantArg := string(tt.reqs[0].ArgJson); string(got.Arg) != wantArg {
				t.Fatalf("%s: answer %d has argument %s, want %s", tt.name, i, got.Arg, wantArg)
			}
		}
	}
}

// callErr converts a raw gRPC error as the harness does.
func callErr(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return &goplugin.CallError{Code: st.Code(), Message: st.Message()}
}

// TestMapCancel cancels a stream while the function waits for its context, and checks
// that the function sees the cancellation and the stream's goroutines end.
func TestMapCancel(t *testing.T) {
	entered := make(chan struct{}, 1)
	left := make(chan error, 1)
	m := goplugin.NewMux()
	m.Map("wait", func(ctx context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
		if in.Object.Key != "wait" {
			return nil, nil
		}
		entered <- struct{}{}
		<-ctx.Done()
		left <- ctx.Err()
		return nil, ctx.Err()
	})
	before := runtime.NumGoroutine()
	h, err := goplugin.NewHarness(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	inputs := mapInputs(200)
	inputs[100].Object.Key = "wait"
	done := make(chan error, 1)
	go func() {
		_, err := h.Map(ctx, "wait", nil, inputs...)
		done <- err
	}()
	select {
	case <-entered:
	case <-time.After(testTimeout):
		t.Fatal("the function was not called")
	}
	cancel()
	wantCode(t, <-done, codes.Canceled, "")
	select {
	case err := <-left:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the function's context ended with %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the function's context was not cancelled")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// Every goroutine of the harness and the stream ends (polled: gRPC's own end
	// asynchronously).
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the harness:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
