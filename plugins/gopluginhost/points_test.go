package gopluginhost

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// sampleObject is an object with a bit of everything.
func sampleObject() *core.Object {
	return &core.Object{
		Type: "default", Bucket: "users", Key: "alice", VClock: []byte("vclock-bytes"),
		Siblings: []core.Sibling{{
			Value: []byte(`{"name":"alice"}`), ContentType: "application/json", Charset: "utf-8", Encoding: "identity",
			VTag: "vt1", LastModified: time.UnixMicro(1_700_000_000_123_456).UTC(),
			Meta:    []core.MetaEntry{{Name: "Owner", Value: "bob"}},
			Indexes: []core.IndexEntry{{Field: "age_int", Value: "42"}, {Field: "email_bin", Value: "a@b.c"}},
			Links:   []core.Link{{Bucket: "users", Key: "bob", Tag: "friend"}, {Bucket: "pets", Key: "rex", Tag: "owns"}},
		}},
	}
}

func TestPrecommit(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	obj := sampleObject()
	tests := []struct {
		fun    string
		op     hooks.Op
		want   hooks.Verdict
		kind   hooks.CallErrorKind // -1: no error
		errSub string
	}{
		{"accept", hooks.OpPut, hooks.Verdict{}, -1, ""},
		{"accept_nil", hooks.OpPut, hooks.Verdict{}, -1, ""},
		{"accept_false", hooks.OpPut, hooks.Verdict{Reject: true, Reason: "rejected by tp:accept_false"}, -1, ""},
		{"reject", hooks.OpPut, hooks.Verdict{Reject: true, Reason: "no thanks: alice PUT"}, -1, ""},
		{"reject", hooks.OpDelete, hooks.Verdict{Reject: true, Reason: "no thanks: alice DELETE"}, -1, ""},
		{"reject_empty", hooks.OpPut, hooks.Verdict{Reject: true, Reason: "rejected by tp:reject_empty"}, -1, ""},
		{"replace", hooks.OpDelete, hooks.Verdict{}, -1, ""}, // a delete's replacement is ignored
		{"error", hooks.OpPut, hooks.Verdict{}, hooks.Failed, "boom: alice"},
		{"bad_replace", hooks.OpPut, hooks.Verdict{}, hooks.BadResult, "index field names end in _bin or _int"},
		{"empty_replace", hooks.OpPut, hooks.Verdict{}, hooks.BadResult, "no contents"},
		{"nonesuch", hooks.OpPut, hooks.Verdict{}, hooks.Failed, `unknown precommit function "nonesuch"`},
	}
	for _, tt := range tests {
		t.Run(tt.fun+"/"+string(tt.op), func(t *testing.T) {
			pc := lookup[hooks.Precommit](t, h, "tp", tt.fun, hooks.PointPrecommit)
			v, err := pc.Precommit(context.Background(), tt.op, obj)
			if tt.kind >= 0 {
				if callKind(err) != tt.kind || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want kind %s containing %q", err, tt.kind, tt.errSub)
				}
				var ce *hooks.CallError
				if errors.As(err, &ce); ce.Module != "tp" || ce.Function != tt.fun {
					t.Errorf("error names %s:%s", ce.Module, ce.Function)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", v, err, tt.want)
			}
		})
	}
}

func TestPrecommitReplace(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	obj := sampleObject()

	t.Run("replace", func(t *testing.T) {
		pc := lookup[hooks.Precommit](t, h, "tp", "replace", hooks.PointPrecommit)
		v, err := pc.Precommit(context.Background(), hooks.OpPut, obj)
		if err != nil || v.Replace == nil {
			t.Fatalf("got %+v, %v", v, err)
		}
		want := &core.Object{
			Type: "default", Bucket: "users", Key: "alice", VClock: []byte("vclock-bytes"),
			Siblings: []core.Sibling{{
				Value: []byte(`{"NAME":"ALICE"}`), ContentType: "text/plain", Charset: "utf-8",
				Meta: []core.MetaEntry{{Name: "Owner", Value: "bob"}, {Name: "Plugin", Value: "yes"}},
				Indexes: []core.IndexEntry{{Field: "age_int", Value: "42"}, {Field: "email_bin", Value: "a@b.c"},
					{Field: "seen_int", Value: "7"}},
				Links: append(append([]core.Link(nil), obj.Siblings[0].Links...), core.Link{Bucket: "b", Key: "k", Tag: "t"}),
			}},
		}
		if !reflect.DeepEqual(v.Replace, want) {
			t.Fatalf("replacement\n got %+v\nwant %+v", v.Replace, want)
		}
	})
	t.Run("identity", func(t *testing.T) {
		// The object survives the trip to the plugin and back, for what a replacement
		// keeps.
		pc := lookup[hooks.Precommit](t, h, "tp", "identity", hooks.PointPrecommit)
		v, err := pc.Precommit(context.Background(), hooks.OpPut, obj)
		if err != nil || v.Replace == nil {
			t.Fatalf("got %+v, %v", v, err)
		}
		s := obj.Siblings[0]
		want := core.Sibling{Value: s.Value, ContentType: s.ContentType, Charset: s.Charset, Encoding: s.Encoding,
			Meta: s.Meta, Indexes: s.Indexes, Links: s.Links}
		if !reflect.DeepEqual(v.Replace.Siblings, []core.Sibling{want}) {
			t.Fatalf("replacement\n got %+v\nwant %+v", v.Replace.Siblings, want)
		}
	})
}

func TestPostcommit(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	for _, tt := range []struct {
		fun  string
		kind hooks.CallErrorKind
	}{{"ok", -1}, {"error", hooks.Failed}} {
		pc := lookup[hooks.Postcommit](t, h, "tp", tt.fun, hooks.PointPostcommit)
		if err := pc.Postcommit(context.Background(), hooks.OpPut, sampleObject()); callKind(err) != tt.kind {
			t.Errorf("%s: err = %v, want kind %d", tt.fun, err, tt.kind)
		}
	}
}

func TestKeyHash(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	sum := sha1.Sum([]byte("default/users/alice"))
	for _, tt := range []struct {
		fun  string
		want []byte
		kind hooks.CallErrorKind
	}{
		{"sha1", sum[:], -1},
		{"one", []byte{0x7f}, -1},
		{"empty", nil, hooks.BadResult},
		{"long", nil, hooks.BadResult},
		{"error", nil, hooks.Failed},
	} {
		kf := lookup[hooks.KeyFun](t, h, "tp", tt.fun, hooks.PointKeyFun)
		got, err := kf.KeyHash(context.Background(), "default", "users", "alice")
		if callKind(err) != tt.kind || string(got) != string(tt.want) {
			t.Errorf("%s: got %x, %v; want %x, kind %d", tt.fun, got, err, tt.want, tt.kind)
		}
	}
}

func TestLinks(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	obj := sampleObject()
	for _, tt := range []struct {
		fun, bucket, tag string
		want             []core.Link
	}{
		{"all", "_", "_", obj.Siblings[0].Links},
		{"all", "users", "_", []core.Link{{Bucket: "users", Key: "bob", Tag: "friend"}}},
		{"all", "_", "none", []core.Link{}},
		{"fixed", "_", "_", []core.Link{{Bucket: "b", Key: "k", Tag: "t"}}},
	} {
		lf := lookup[hooks.LinkFun](t, h, "tp", tt.fun, hooks.PointLinkFun)
		got, err := lf.Links(context.Background(), obj, tt.bucket, tt.tag)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s(%s,%s): got %v, %v; want %v", tt.fun, tt.bucket, tt.tag, got, err, tt.want)
		}
	}
}

func TestMapUnary(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	obj := sampleObject()
	for _, tt := range []struct {
		name, fun string
		in        hooks.MapInput
		want      []string
		kind      hooks.CallErrorKind
	}{
		{"echo", "echo", hooks.MapInput{Object: obj}, []string{`"alice"`}, -1},
		{"value", "value", hooks.MapInput{Object: obj}, []string{`{"name":"alice"}`}, -1},
		{"arg", "arg", hooks.MapInput{Object: obj, Arg: json.RawMessage(`{"x":1}`)}, []string{`{"x":1}`}, -1},
		{"not found", "notfound", hooks.MapInput{NotFound: &hooks.Place{Type: "default", Bucket: "b", Key: "gone"}},
			[]string{`{"not_found":"gone"}`}, -1},
		{"input error", "echo", hooks.MapInput{Object: obj, KeyData: json.RawMessage(`"fail"`)}, nil, hooks.Failed},
		// Values are handed on as sent: core/mapreduce checks that they are JSON.
		{"not JSON", "badjson", hooks.MapInput{Object: obj}, []string{"{not json"}, -1},
		{"stream error", "error_stream", hooks.MapInput{Object: obj}, nil, hooks.Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := lookup[hooks.Map](t, h, "tp", tt.fun, hooks.PointMap)
			got, err := m.Map(context.Background(), tt.in)
			if callKind(err) != tt.kind {
				t.Fatalf("err = %v, want kind %d", err, tt.kind)
			}
			var gs []string
			for _, v := range got {
				gs = append(gs, string(v))
			}
			if !reflect.DeepEqual(gs, tt.want) {
				t.Fatalf("got %q, want %q", gs, tt.want)
			}
		})
	}
}

func TestReduce(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	vals := []json.RawMessage{json.RawMessage("1"), json.RawMessage("2.5"), json.RawMessage("-0.5")}
	r := lookup[hooks.Reduce](t, h, "tp", "sum", hooks.PointReduce)
	got, err := r.Reduce(context.Background(), vals, nil)
	if err != nil || len(got) != 1 || string(got[0]) != "3" {
		t.Fatalf("sum = %s, %v", got, err)
	}
	for _, tt := range []struct {
		fun  string
		want []string
		kind hooks.CallErrorKind
	}{
		{"error", nil, hooks.Failed},
		// Values are handed on as sent: core/mapreduce checks that they are JSON.
		{"badjson", []string{"nope"}, -1},
	} {
		r := lookup[hooks.Reduce](t, h, "tp", tt.fun, hooks.PointReduce)
		got, err := r.Reduce(context.Background(), vals, nil)
		if callKind(err) != tt.kind {
			t.Errorf("%s: err = %v, want kind %d", tt.fun, err, tt.kind)
		}
		var gs []string
		for _, v := range got {
			gs = append(gs, string(v))
		}
		if !reflect.DeepEqual(gs, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.fun, gs, tt.want)
		}
	}
}

func TestDeadlines(t *testing.T) {
	cfg := testConfig(nil, tp(t, "tp"))
	cfg.Timeouts = map[hooks.Point]time.Duration{hooks.PointPrecommit: 300 * time.Millisecond}
	h := newHost(t, cfg)
	pc := lookup[hooks.Precommit](t, h, "tp", "sleep", hooks.PointPrecommit)

	// The point's own deadline.
	if _, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject()); callKind(err) != hooks.TimedOut {
		t.Errorf("past the point's deadline: err = %v, want timed out", err)
	}
	// The caller's sooner deadline (the point's is long).
	cfg.Timeouts = map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Hour}
	h2 := newHost(t, cfg)
	pc2 := lookup[hooks.Precommit](t, h2, "tp", "sleep", hooks.PointPrecommit)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := pc2.Precommit(ctx, hooks.OpPut, sampleObject()); callKind(err) != hooks.TimedOut {
		t.Errorf("past the caller's deadline: err = %v, want timed out", err)
	}
	// A caller that gives up.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := pc2.Precommit(ctx, hooks.OpPut, sampleObject()); callKind(err) != hooks.Unavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v, want unavailable wrapping context.Canceled", err)
	}
	// The plugin is fine afterwards (asked through h2: a loaded machine may take more
	// than h's 300ms for any call).
	ok := lookup[hooks.Precommit](t, h2, "tp", "accept", hooks.PointPrecommit)
	if _, err := ok.Precommit(context.Background(), hooks.OpPut, sampleObject()); err != nil {
		t.Fatal(err)
	}
	if n := statsOf(t, h, "tp").Failures[hooks.TimedOut]; n != 1 {
		t.Errorf("timed out failures = %d, want 1", n)
	}
}
