package goplugin_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

// testTimeout bounds every call of a test: generous, for a loaded machine.
const testTimeout = time.Minute

// testContext returns a context that ends with the test or after testTimeout.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newHarness serves impl in process for the test.
func newHarness(t testing.TB, impl any) *goplugin.Harness {
	t.Helper()
	h, err := goplugin.NewHarness(impl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// wantCode checks that err is a *goplugin.CallError with code and a message
// containing msg.
func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	var ce *goplugin.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *CallError with code %s", err, err, code)
	}
	if ce.Code != code || !strings.Contains(ce.Message, msg) {
		t.Fatalf("error %s %q, want code %s with %q", ce.Code, ce.Message, code, msg)
	}
	if ce.Failed() != (code == codes.Unknown) {
		t.Fatalf("Failed() = %v for code %s", ce.Failed(), code)
	}
}

// binary is bytes that are not UTF-8, with a NUL: every bytes field must carry them.
const binary = "\xff\x00\xc3(\xfe"

// sampleObject returns an object with every field set, binary bytes in the bytes
// fields, and two contents.
func sampleObject() *goplugin.Object {
	mod := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
	return &goplugin.Object{
		BucketType: "type" + binary, Bucket: "bucket" + binary, Key: "key" + binary,
		VClock: []byte("clock" + binary),
		Contents: []goplugin.Content{{
			Value: []byte("value" + binary), ContentType: "application/octet-stream", Charset: "utf-8",
			ContentEncoding: "gzip", VTag: "vtag1", LastModified: mod,
			Links:    []goplugin.Link{{Bucket: "b" + binary, Key: "k" + binary, Tag: "t" + binary}, {Bucket: "b2", Key: "k2", Tag: "friend"}},
			UserMeta: []goplugin.Pair{{Key: "owner", Value: "bob" + binary}},
			Indexes:  []goplugin.Pair{{Key: "email_bin", Value: "a@b.c"}, {Key: "age_int", Value: "42"}},
		}, {
			Value: nil, Deleted: true, VTag: "vtag2",
		}},
	}
}

// record is what the "record" postcommit saw.
type record struct {
	op  goplugin.Op
	key string
}

// recorder collects postcommit calls.
type recorder struct {
	mu   sync.Mutex // guards seen
	seen []record
}

// calls returns what was recorded.
func (r *recorder) calls() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.seen...)
}

// testMux returns a Mux with functions at every point, each doing what its name says.
// The "record" postcommit writes to rec.
func testMux(rec *recorder) *goplugin.Mux {
	m := goplugin.NewMux()
	m.Precommit("accept", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, nil
	})
	m.Precommit("reject", func(_ context.Context, op goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{Reject: true, Reason: fmt.Sprintf("no %s of %s", op, obj.Key)}, nil
	})
	m.Precommit("reject_silently", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{Reject: true}, nil
	})
	m.Precommit("echo", func(_ context.Context, _ goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{Replace: obj}, nil
	})
	m.Precommit("upper", func(_ context.Context, _ goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		for i := range obj.Contents {
			c := &obj.Contents[i]
			c.Value = bytes.ToUpper(c.Value)
			c.UserMeta = append(c.UserMeta, goplugin.Pair{Key: "shouted", Value: "yes"})
		}
		return goplugin.Verdict{Replace: obj}, nil
	})
	m.Precommit("bad_content_type", func(_ context.Context, _ goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		obj.Contents[0].ContentType = binary
		return goplugin.Verdict{Replace: obj}, nil
	})
	m.Precommit("fail", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, errors.New("quota service down")
	})
	m.Precommit("fail_silently", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, errors.New("")
	})
	m.Precommit("panic", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		panic("precommit boom")
	})
	m.Postcommit("record", func(_ context.Context, op goplugin.Op, obj *goplugin.Object) error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.seen = append(rec.seen, record{op: op, key: obj.Key})
		return nil
	})
	m.Postcommit("fail", func(context.Context, goplugin.Op, *goplugin.Object) error {
		return errors.New("log disk full")
	})
	m.Postcommit("panic", func(context.Context, goplugin.Op, *goplugin.Object) error {
		var objs map[string]*goplugin.Object
		return fmt.Errorf("unreachable %s", objs["x"].Key) // a nil dereference
	})
	m.KeyHash("sha1", func(_ context.Context, bucketType, bucket, key string) ([]byte, error) {
		h := sha1.Sum([]byte(bucketType + "/" + bucket + "/" + key))
		return h[:], nil
	})
	m.KeyHash("first_byte", func(_ context.Context, _, _, key string) ([]byte, error) {
		return []byte(key[:1]), nil
	})
	m.KeyHash("empty", func(context.Context, string, string, string) ([]byte, error) { return nil, nil })
	m.KeyHash("too_long", func(context.Context, string, string, string) ([]byte, error) { return make([]byte, 21), nil })
	m.KeyHash("fail", func(context.Context, string, string, string) ([]byte, error) { return nil, errors.New("no ring") })
	m.KeyHash("panic", func(context.Context, string, string, string) ([]byte, error) { panic("keyhash boom") })
	m.Links("match", func(_ context.Context, obj *goplugin.Object, bucket, tag string) ([]goplugin.Link, error) {
		var out []goplugin.Link
		for _, c := range obj.Contents {
			for _, l := range c.Links {
				if (bucket == "_" || l.Bucket == bucket) && (tag == "_" || l.Tag == tag) {
					out = append(out, l)
				}
			}
		}
		return out, nil
	})
	m.Links("fail", func(context.Context, *goplugin.Object, string, string) ([]goplugin.Link, error) {
		return nil, errors.New("links unavailable")
	})
	m.Links("panic", func(context.Context, *goplugin.Object, string, string) ([]goplugin.Link, error) {
		panic("links boom")
	})
	m.Map("describe", describeInput)
	m.Map("panic_on_boom", func(ctx context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
		if in.Object.Key == "boom" {
			panic("map boom")
		}
		return describeInput(ctx, in)
	})
	m.Reduce("sum", sumValues)
	m.Reduce("fail", func(context.Context, []json.RawMessage, json.RawMessage) ([]json.RawMessage, error) {
		return nil, errors.New("cannot add")
	})
	m.Reduce("panic", func(context.Context, []json.RawMessage, json.RawMessage) ([]json.RawMessage, error) {
		panic("reduce boom")
	})
	return m
}

// describeInput maps an input to one JSON object with its key (hex), whether it was
// found, its first value, its key data and the argument. Keys starting with "bad" fail,
// with a message that quotes the binary key.
func describeInput(_ context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
	if strings.HasPrefix(in.Object.Key, "bad") {
		return nil, fmt.Errorf("bad input %s", in.Object.Key)
	}
	var value string
	if len(in.Object.Contents) > 0 {
		value = string(in.Object.Contents[0].Value)
	}
	out, err := json.Marshal(mapOutput{Key: fmt.Sprintf("%x", in.Object.Key), NotFound: in.NotFound,
		Value: value, KeyData: in.KeyData, Arg: in.Arg})
	if err != nil {
		return nil, err
	}
	return []json.RawMessage{out, json.RawMessage(`"second"`)}, nil
}

// mapOutput is the first value describeInput answers.
type mapOutput struct {
	Key      string          `json:"key"`
	NotFound bool            `json:"not_found"`
	Value    string          `json:"value"`
	KeyData  json.RawMessage `json:"keydata,omitempty"`
	Arg      json.RawMessage `json:"arg,omitempty"`
}

// sumValues adds up numbers, plus the argument's "add" when given.
func sumValues(_ context.Context, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	var total int64
	for _, v := range values {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer: %s", v)
		}
		total += n
	}
	if arg != nil {
		var a struct {
			Add int64 `json:"add"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return nil, err
		}
		total += a.Add
	}
	return []json.RawMessage{strconv.AppendInt(nil, total, 10)}, nil
}
