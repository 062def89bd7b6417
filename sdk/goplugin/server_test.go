package goplugin_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func TestPrecommit(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	upper := sampleObject()
	for i := range upper.Contents {
		c := &upper.Contents[i]
		if c.Value != nil { // an empty value comes back as nil
			c.Value = bytes.ToUpper(c.Value)
		}
		c.UserMeta = append(c.UserMeta, goplugin.Pair{Key: "shouted", Value: "yes"})
	}
	tests := []struct {
		fun  string
		op   goplugin.Op
		want goplugin.Verdict
		code codes.Code // codes.OK: no error
		msg  string
	}{
		{fun: "accept", op: goplugin.OpPut, want: goplugin.Verdict{}},
		{fun: "accept", op: goplugin.OpDelete, want: goplugin.Verdict{}},
		{fun: "reject", op: goplugin.OpPut, want: goplugin.Verdict{Reject: true, Reason: "no put of key\uFFFD\x00\uFFFD(\uFFFD"}},
		{fun: "reject", op: goplugin.OpDelete, want: goplugin.Verdict{Reject: true, Reason: "no delete of key\uFFFD\x00\uFFFD(\uFFFD"}},
		{fun: "reject_silently", op: goplugin.OpPut, want: goplugin.Verdict{Reject: true, Reason: "rejected by reject_silently"}},
		{fun: "echo", op: goplugin.OpPut, want: goplugin.Verdict{Replace: sampleObject()}},
		{fun: "upper", op: goplugin.OpPut, want: goplugin.Verdict{Replace: upper}},
		{fun: "bad_content_type", op: goplugin.OpPut, code: codes.Unknown, msg: "content type that is not valid UTF-8"},
		{fun: "fail", op: goplugin.OpPut, code: codes.Unknown, msg: "quota service down"},
		{fun: "fail_silently", op: goplugin.OpPut, code: codes.Unknown, msg: `precommit function "fail_silently" failed`},
		{fun: "panic", op: goplugin.OpPut, code: codes.Internal, msg: "panic: precommit boom"},
		{fun: "missing", op: goplugin.OpPut, code: codes.NotFound, msg: `no function "missing" at point precommit`},
		{fun: "record", op: goplugin.OpPut, code: codes.NotFound, msg: `no function "record" at point precommit`},
	}
	for i, tt := range tests {
		got, err := h.Precommit(testContext(t), tt.fun, tt.op, sampleObject())
		if tt.code != codes.OK {
			wantCode(t, err, tt.code, tt.msg)
			continue
		}
		if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%d: %s: got %+v, want %+v", i, tt.fun, got, tt.want)
			if got.Replace != nil && tt.want.Replace != nil {
				t.Errorf("replace: got %+v\nwant %+v", *got.Replace, *tt.want.Replace)
			}
		}
	}
}

func TestPrecommitBadRequests(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	if _, err := h.Precommit(testContext(t), "accept", goplugin.OpPut, nil); err == nil {
		t.Fatal("a precommit without an object was accepted")
	} else {
		wantCode(t, err, codes.InvalidArgument, "no object")
	}
	if _, err := h.Precommit(testContext(t), "accept", goplugin.Op("merge"), sampleObject()); err == nil {
		t.Fatal("an unknown operation was sent")
	}
}

// TestLargeValue sends and receives a value larger than gRPC's default 4 MiB message
// limit.
func TestLargeValue(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	obj := &goplugin.Object{Bucket: "b", Key: "k", Contents: []goplugin.Content{{Value: bytes.Repeat([]byte("x"), 6<<20)}}}
	got, err := h.Precommit(testContext(t), "upper", goplugin.OpPut, obj)
	if err != nil {
		t.Fatal(err)
	}
	if got.Replace == nil || !bytes.Equal(got.Replace.Contents[0].Value, bytes.Repeat([]byte("X"), 6<<20)) {
		t.Fatal("the large value did not come back upper-cased")
	}
}

func TestPostcommit(t *testing.T) {
	rec := &recorder{}
	h := newHarness(t, testMux(rec))
	tests := []struct {
		fun  string
		op   goplugin.Op
		code codes.Code
		msg  string
	}{
		{fun: "record", op: goplugin.OpPut},
		{fun: "record", op: goplugin.OpDelete},
		{fun: "fail", op: goplugin.OpPut, code: codes.Unknown, msg: "log disk full"},
		{fun: "panic", op: goplugin.OpPut, code: codes.Internal, msg: "panic: runtime error: invalid memory address"},
		{fun: "accept", op: goplugin.OpPut, code: codes.NotFound, msg: `no function "accept" at point postcommit`},
	}
	for i, tt := range tests {
		err := h.Postcommit(testContext(t), tt.fun, tt.op, sampleObject())
		if tt.code != codes.OK {
			wantCode(t, err, tt.code, tt.msg)
		} else if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
	}
	want := []record{{op: goplugin.OpPut, key: sampleObject().Key}, {op: goplugin.OpDelete, key: sampleObject().Key}}
	if got := rec.calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
}

func TestKeyHash(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	sum := sha1.Sum([]byte("default/users" + binary + "/k" + binary))
	tests := []struct {
		fun                     string
		bucketType, bucket, key string
		want                    []byte
		code                    codes.Code
		msg                     string
	}{
		{fun: "sha1", bucketType: "default", bucket: "users" + binary, key: "k" + binary, want: sum[:]},
		{fun: "first_byte", bucketType: "default", bucket: "b", key: binary, want: []byte{0xff}},
		{fun: "empty", key: "k", code: codes.Unknown, msg: "returned 0 bytes; a ring position is 1 to 20 bytes"},
		{fun: "too_long", key: "k", code: codes.Unknown, msg: "returned 21 bytes"},
		{fun: "fail", key: "k", code: codes.Unknown, msg: "no ring"},
		{fun: "panic", key: "k", code: codes.Internal, msg: "panic: keyhash boom"},
		{fun: "first_byte", key: "", code: codes.Internal, msg: "panic: runtime error: slice bounds out of range"},
		{fun: "sum", key: "k", code: codes.NotFound, msg: `no function "sum" at point chash_keyfun`},
	}
	for i, tt := range tests {
		got, err := h.KeyHash(testContext(t), tt.fun, tt.bucketType, tt.bucket, tt.key)
		if tt.code != codes.OK {
			wantCode(t, err, tt.code, tt.msg)
			continue
		}
		if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%d: %s: got %x, want %x", i, tt.fun, got, tt.want)
		}
	}
}

func TestLinks(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	all := sampleObject().Contents[0].Links
	tests := []struct {
		fun         string
		bucket, tag string
		want        []goplugin.Link
		code        codes.Code
		msg         string
	}{
		{fun: "match", bucket: "_", tag: "_", want: all},
		{fun: "match", bucket: "b" + binary, tag: "_", want: all[:1]},
		{fun: "match", bucket: "_", tag: "friend", want: all[1:]},
		{fun: "match", bucket: "nobody", tag: "_", want: nil},
		{fun: "fail", bucket: "_", tag: "_", code: codes.Unknown, msg: "links unavailable"},
		{fun: "panic", bucket: "_", tag: "_", code: codes.Internal, msg: "panic: links boom"},
		{fun: "sha1", bucket: "_", tag: "_", code: codes.NotFound, msg: `no function "sha1" at point linkfun`},
	}
	for i, tt := range tests {
		got, err := h.Links(testContext(t), tt.fun, sampleObject(), tt.bucket, tt.tag)
		if tt.code != codes.OK {
			wantCode(t, err, tt.code, tt.msg)
			continue
		}
		if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%d: %s %q %q: got %q, want %q", i, tt.fun, tt.bucket, tt.tag, got, tt.want)
		}
	}
	if _, err := h.Links(testContext(t), "match", nil, "_", "_"); err == nil {
		t.Fatal("a linkfun call without an object was answered")
	} else {
		wantCode(t, err, codes.InvalidArgument, "no object")
	}
}

func TestReduce(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	values := []json.RawMessage{json.RawMessage("1"), json.RawMessage("2"), json.RawMessage("39")}
	tests := []struct {
		fun    string
		values []json.RawMessage
		arg    json.RawMessage
		want   []json.RawMessage
		code   codes.Code
		msg    string
	}{
		{fun: "sum", values: values, want: []json.RawMessage{json.RawMessage("42")}},
		{fun: "sum", values: values, arg: json.RawMessage(`{"add":100}`), want: []json.RawMessage{json.RawMessage("142")}},
		{fun: "sum", values: nil, want: []json.RawMessage{json.RawMessage("0")}},
		{fun: "sum", values: []json.RawMessage{json.RawMessage(`"x"`)}, code: codes.Unknown, msg: `not an integer: "x"`},
		{fun: "fail", values: values, code: codes.Unknown, msg: "cannot add"},
		{fun: "panic", values: values, code: codes.Internal, msg: "panic: reduce boom"},
		{fun: "describe", values: values, code: codes.NotFound, msg: `no function "describe" at point reduce`},
	}
	for i, tt := range tests {
		got, err := h.Reduce(testContext(t), tt.fun, tt.values, tt.arg)
		if tt.code != codes.OK {
			wantCode(t, err, tt.code, tt.msg)
			continue
		}
		if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%d: %s: got %s, want %s", i, tt.fun, got, tt.want)
		}
	}
}

// TestPanicThenServe checks, at every point, that a panic is reported as a crash and
// that the plugin serves the next call.
func TestPanicThenServe(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	ctx := testContext(t)
	tests := []struct {
		point        goplugin.Point
		panics, next func() error
	}{
		{goplugin.PointPrecommit,
			func() error { _, err := h.Precommit(ctx, "panic", goplugin.OpPut, sampleObject()); return err },
			func() error { _, err := h.Precommit(ctx, "accept", goplugin.OpPut, sampleObject()); return err }},
		{goplugin.PointPostcommit,
			func() error { return h.Postcommit(ctx, "panic", goplugin.OpPut, sampleObject()) },
			func() error { return h.Postcommit(ctx, "record", goplugin.OpPut, sampleObject()) }},
		{goplugin.PointKeyFun,
			func() error { _, err := h.KeyHash(ctx, "panic", "", "b", "k"); return err },
			func() error { _, err := h.KeyHash(ctx, "sha1", "", "b", "k"); return err }},
		{goplugin.PointLinkFun,
			func() error { _, err := h.Links(ctx, "panic", sampleObject(), "_", "_"); return err },
			func() error { _, err := h.Links(ctx, "match", sampleObject(), "_", "_"); return err }},
		{goplugin.PointMap,
			func() error {
				_, err := h.Map(ctx, "panic_on_boom", nil, goplugin.MapInput{Object: &goplugin.Object{Key: "boom"}})
				return err
			},
			func() error {
				_, err := h.Map(ctx, "panic_on_boom", nil, goplugin.MapInput{Object: &goplugin.Object{Key: "fine"}})
				return err
			}},
		{goplugin.PointReduce,
			func() error { _, err := h.Reduce(ctx, "panic", nil, nil); return err },
			func() error { _, err := h.Reduce(ctx, "sum", nil, nil); return err }},
	}
	for _, tt := range tests {
		for round := range 3 {
			wantCode(t, tt.panics(), codes.Internal, "panic: ")
			if err := tt.next(); err != nil {
				t.Fatalf("%s, round %d: the call after a panic: %v", tt.point, round, err)
			}
		}
	}
}

// onlyPrecommit implements one point, without listing functions: any name is served.
type onlyPrecommit struct{}

func (onlyPrecommit) Precommit(_ context.Context, fun string, _ goplugin.Op, _ *goplugin.Object) (goplugin.Verdict, error) {
	return goplugin.Verdict{Reject: true, Reason: "called " + fun}, nil
}

// TestUnimplemented calls every point a plugin does not offer.
func TestUnimplemented(t *testing.T) {
	m := goplugin.NewMux()
	m.Precommit("quota", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, nil
	})
	for _, impl := range []any{m, onlyPrecommit{}} {
		h := newHarness(t, impl)
		ctx := testContext(t)
		calls := []struct {
			point goplugin.Point
			call  func() error
		}{
			{goplugin.PointPostcommit, func() error { return h.Postcommit(ctx, "quota", goplugin.OpPut, sampleObject()) }},
			{goplugin.PointKeyFun, func() error { _, err := h.KeyHash(ctx, "quota", "", "b", "k"); return err }},
			{goplugin.PointLinkFun, func() error { _, err := h.Links(ctx, "quota", sampleObject(), "_", "_"); return err }},
			{goplugin.PointMap, func() error {
				_, err := h.Map(ctx, "quota", nil, goplugin.MapInput{Object: sampleObject()})
				return err
			}},
			{goplugin.PointMap, func() error { _, err := h.Map(ctx, "quota", nil); return err }},
			{goplugin.PointReduce, func() error { _, err := h.Reduce(ctx, "quota", nil, nil); return err }},
		}
		for _, c := range calls {
			wantCode(t, c.call(), codes.Unimplemented, "the plugin does not offer "+string(c.point)+" functions")
		}
		if v, err := h.Precommit(ctx, "quota", goplugin.OpPut, sampleObject()); err != nil {
			t.Fatalf("%T: %v", impl, err)
		} else if _, unlisted := impl.(onlyPrecommit); unlisted && v.Reason != "called quota" {
			t.Fatalf("%T: got %+v", impl, v)
		}
	}
	// Without a function list, any name is served.
	h := newHarness(t, onlyPrecommit{})
	if v, err := h.Precommit(testContext(t), "anything", goplugin.OpPut, sampleObject()); err != nil || v.Reason != "called anything" {
		t.Fatalf("got %+v, %v", v, err)
	}
}

// listed implements three points and lists functions at two of them.
type listed struct {
	onlyPrecommit
}

func (listed) Map(context.Context, string, goplugin.MapInput) ([]json.RawMessage, error) {
	return []json.RawMessage{json.RawMessage("true")}, nil
}

func (listed) Reduce(context.Context, string, []json.RawMessage, json.RawMessage) ([]json.RawMessage, error) {
	return nil, errors.New("unreachable: no reduce function is listed")
}

func (listed) Functions() []goplugin.Function {
	return []goplugin.Function{
		{Name: "check", Points: []goplugin.Point{goplugin.PointPrecommit}},
		{Name: "both", Points: []goplugin.Point{goplugin.PointMap, goplugin.PointPrecommit}},
	}
}

// unlistedPoint lists a function at a point it does not implement.
type unlistedPoint struct{ onlyPrecommit }

func (unlistedPoint) Functions() []goplugin.Function {
	return []goplugin.Function{{Name: "m", Points: []goplugin.Point{goplugin.PointMap}}}
}

// listsFunctions lists whatever it holds.
type listsFunctions struct {
	onlyPrecommit
	fs []goplugin.Function
}

func (l listsFunctions) Functions() []goplugin.Function { return l.fs }

func TestDescribe(t *testing.T) {
	one := goplugin.NewMux()
	one.Precommit("quota", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, nil
	})
	all := []goplugin.Point{goplugin.PointPrecommit, goplugin.PointPostcommit, goplugin.PointKeyFun,
		goplugin.PointLinkFun, goplugin.PointMap, goplugin.PointReduce}
	pre := []goplugin.Point{goplugin.PointPrecommit}
	tests := []struct {
		name string
		impl any
		want goplugin.Capabilities
	}{
		{"mux with one precommit", one, goplugin.Capabilities{ABIVersion: goplugin.ABIVersion, Points: pre,
			Functions: []goplugin.Function{{Name: "quota", Points: pre}}}},
		{"unlisted", onlyPrecommit{}, goplugin.Capabilities{ABIVersion: goplugin.ABIVersion, Points: pre}},
		{"listed", listed{}, goplugin.Capabilities{ABIVersion: goplugin.ABIVersion,
			Points: []goplugin.Point{goplugin.PointPrecommit, goplugin.PointMap},
			Functions: []goplugin.Function{
				{Name: "both", Points: []goplugin.Point{goplugin.PointPrecommit, goplugin.PointMap}},
				{Name: "check", Points: pre}}}},
		{"full mux", testMux(&recorder{}), goplugin.Capabilities{ABIVersion: goplugin.ABIVersion, Points: all,
			Functions: testMux(&recorder{}).Functions()}},
	}
	for _, tt := range tests {
		got, err := newHarness(t, tt.impl).Describe(testContext(t))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// TestListedPoints checks that a FunctionLister's implemented but unlisted point is not
// offered and its unlisted names are not found.
func TestListedPoints(t *testing.T) {
	h := newHarness(t, listed{})
	ctx := testContext(t)
	_, err := h.Reduce(ctx, "both", nil, nil)
	wantCode(t, err, codes.Unimplemented, "reduce")
	_, err = h.Precommit(ctx, "other", goplugin.OpPut, sampleObject())
	wantCode(t, err, codes.NotFound, `no function "other" at point precommit`)
	_, err = h.Map(ctx, "check", nil, goplugin.MapInput{Object: sampleObject()})
	wantCode(t, err, codes.NotFound, `no function "check" at point map`)
	if out, err := h.Map(ctx, "both", nil, goplugin.MapInput{Object: sampleObject()}); err != nil || len(out) != 1 {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestNewServerRefuses(t *testing.T) {
	tests := []struct {
		name string
		impl any
		msg  string
	}{
		{"nil", nil, "no implementation"},
		{"nil mux", (*goplugin.Mux)(nil), "nil *Mux"},
		{"no point", struct{}{}, "implements no extension point"},
		{"empty mux", goplugin.NewMux(), "lists no functions"},
		{"unimplemented point", unlistedPoint{}, `lists function "m" at point map but does not implement Mapper`},
		{"unknown point", listsFunctions{fs: []goplugin.Function{{Name: "f", Points: []goplugin.Point{"commit"}}}}, `unknown point "commit"`},
		{"no name", listsFunctions{fs: []goplugin.Function{{Points: []goplugin.Point{goplugin.PointPrecommit}}}}, "without a name"},
		{"no points", listsFunctions{fs: []goplugin.Function{{Name: "f"}}}, `function "f" at no point`},
		{"binary name", listsFunctions{fs: []goplugin.Function{{Name: "f\xff", Points: []goplugin.Point{goplugin.PointPrecommit}}}}, "not valid UTF-8"},
	}
	for _, tt := range tests {
		_, err := goplugin.NewServer(tt.impl)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.msg)
		}
		if _, err := goplugin.NewHarness(tt.impl); err == nil {
			t.Errorf("%s: NewHarness accepted it", tt.name)
		}
	}
}

// TestConcurrentCalls runs calls of every kind from many goroutines at once (for the
// race detector).
func TestConcurrentCalls(t *testing.T) {
	h := newHarness(t, testMux(&recorder{}))
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				var err error
				switch (g + i) % 4 {
				case 0:
					_, err = h.Precommit(ctx, "upper", goplugin.OpPut, sampleObject())
				case 1:
					_, err = h.KeyHash(ctx, "sha1", "t", "b", "k")
				case 2:
					_, err = h.Map(ctx, "describe", nil, mapInputs(50)...)
				case 3:
					_, err = h.Precommit(ctx, "panic", goplugin.OpPut, sampleObject())
					if ce := (*goplugin.CallError)(nil); errors.As(err, &ce) && ce.Code == codes.Internal {
						err = nil
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
