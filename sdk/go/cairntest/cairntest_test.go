package cairntest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/sdk/go/cairn"
)

// TestResultReading checks how results are read, point by point, from statuses and
// outputs that the SDK's own encoders would never produce.
func TestResultReading(t *testing.T) {
	t.Parallel()
	obj := `{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{}},"data":"x"}]}`
	for _, tc := range []struct {
		name   string
		point  cairn.Point
		status cairn.Status
		out    string
		want   string // the value read, rendered with %v, or the error's text when it starts with "cairntest:"
	}{
		{"precommit accept", cairn.PointPrecommit, 0, "", "accept"},
		{"precommit reject", cairn.PointPrecommit, 1, "no way", "reject: no way"},
		{"precommit replace", cairn.PointPrecommit, 0, obj, "replace: " + obj},
		{"precommit replacement not an object", cairn.PointPrecommit, 0, "[1]", "cairntest: precommit bad result: replacement: cairn: object: <...>"},
		{"precommit replacement without values", cairn.PointPrecommit, 0, `{"values":[]}`, "cairntest: precommit bad result: replacement: no values"},
		{"precommit replacement bad index name", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","index":{"email":"a"}}}]}`,
			`cairntest: precommit bad result: replacement: index "email": a field name ends in _bin or _int`},
		{"precommit replacement bad int", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","index":{"n_int":"x"}}}]}`,
			`cairntest: precommit bad result: replacement: index "n_int": "x" is not an integer`},
		{"precommit replacement bad link", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","Links":[["","k","t"]]}}]}`,
			`cairntest: precommit bad result: replacement: link [ k t]: a link names a bucket and a key`},
		{"precommit replacement without content type", cairn.PointPrecommit, 0, `{"values":[{"metadata":{},"data":"x"}]}`,
			`cairntest: precommit bad result: replacement: content-type "" is not a media type (type/subtype)`},
		{"precommit replacement with a control character", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","charset":"a\nb"}}]}`,
			`cairntest: precommit bad result: replacement: charset "a\nb" has control characters`},
		{"precommit replacement bad meta name", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{"X-Store-Meta-a b":"v"}}}]}`,
			`cairntest: precommit bad result: replacement: user metadata "a b": not a valid header name`},
		{"precommit replacement bad meta value", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{"X-Store-Meta-A":"\u0000"}}}]}`,
			`cairntest: precommit bad result: replacement: user metadata "A": "\x00" has control characters`},
		{"precommit replacement bad date", cairn.PointPrecommit, 0, `{"values":[{"metadata":{"content-type":"text/plain","X-Store-Last-Modified":"today"}}]}`,
			`cairntest: precommit bad result: replacement: cairn: last-modified: <...>`},
		{"precommit error", cairn.PointPrecommit, 2, "broken", "cairntest: precommit failed: broken"},
		{"precommit unknown status", cairn.PointPrecommit, 3, "", "cairntest: precommit bad result: unknown status 3"},
		{"postcommit ok, output ignored", cairn.PointPostcommit, 0, "whatever", "<nil>"},
		{"postcommit reject is an error", cairn.PointPostcommit, 1, "no", "cairntest: postcommit failed: no"},
		{"keyfun", cairn.PointKeyFun, 0, "\x01\x02", "[1 2]"},
		{"keyfun empty", cairn.PointKeyFun, 0, "", "cairntest: chash_keyfun bad result: hash of 0 bytes, want 1 to 20"},
		{"keyfun too long", cairn.PointKeyFun, 0, strings.Repeat("x", 21), "cairntest: chash_keyfun bad result: hash of 21 bytes, want 1 to 20"},
		{"linkfun", cairn.PointLinkFun, 0, `[["b","k","t"]]`, "[{b k t}]"},
		{"linkfun empty list", cairn.PointLinkFun, 0, `[]`, "[]"},
		{"linkfun not a list", cairn.PointLinkFun, 0, `{}`, "cairntest: linkfun bad result: want [[bucket, key, tag], ...]: <...>"},
		{"linkfun two strings", cairn.PointLinkFun, 0, `[["b","k"]]`, "cairntest: linkfun bad result: link 0: a link is [bucket, key, tag], have 2 strings"},
		{"linkfun empty key", cairn.PointLinkFun, 0, `[["b","k","t"],["b","","t"]]`, "cairntest: linkfun bad result: link 1: a link's bucket and key are not empty"},
		{"linkfun null", cairn.PointLinkFun, 0, `null`, "cairntest: linkfun bad result: want [[bucket, key, tag], ...], have null"},
		{"map", cairn.PointMap, 0, `[1,{"a":2}]`, `[1 {"a":2}]`},
		{"map not an array", cairn.PointMap, 0, `{"a":2}`, `cairntest: map bad result: want a JSON array, have "{\"a\":2}"`},
		{"map reject is an error", cairn.PointMap, 1, "no", "cairntest: map failed: no"},
		{"reduce", cairn.PointReduce, 0, `[3]`, `[3]`},
		{"reduce empty output", cairn.PointReduce, 0, ``, `cairntest: reduce bad result: want a JSON array, have ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Result{Point: tc.point, Status: tc.status, Output: []byte(tc.out)}
			var got any
			var err error
			switch tc.point {
			case cairn.PointPrecommit:
				got, err = res.Precommit()
			case cairn.PointPostcommit:
				err = res.Postcommit()
			case cairn.PointKeyFun:
				got, err = res.KeyHash()
			case cairn.PointLinkFun:
				got, err = res.Links()
			case cairn.PointMap, cairn.PointReduce:
				var vals []json.RawMessage
				vals, err = res.Values()
				got = strings.ReplaceAll(fmt.Sprintf("%s", vals), "\n", "")
			}
			text := fmt.Sprintf("%v", got)
			if err != nil {
				text = err.Error()
				var ce *CallError
				if !errors.As(err, &ce) {
					t.Errorf("error %v is not a *CallError", err)
				}
			}
			if !match(tc.want, text) {
				t.Errorf("got  %s\nwant %s", text, tc.want)
			}
		})
	}
}

// match compares with "<...>" matching any run of characters.
func match(pattern, s string) bool {
	parts := strings.Split(pattern, "<...>")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return s == ""
}

func TestReplacementOnDeleteIgnored(t *testing.T) {
	t.Parallel()
	res := Result{Point: cairn.PointPrecommit, Op: cairn.OpDelete, Status: cairn.StatusOK, Output: []byte("not even JSON")}
	if v, err := res.Precommit(); err != nil || v.Reject || v.Replacement != nil {
		t.Errorf("got %v, %v; want accept", v, err)
	}
	res.Op = cairn.OpPut
	if _, err := res.Precommit(); err == nil {
		t.Error("a bad replacement on put was accepted")
	}
	hook := cairn.Precommit(func(*cairn.CommitInput) cairn.Verdict { return cairn.Accept() })
	if got := New(nil).Call(hook, []byte(`{"op":"delete","object":{}}`)).Op; got != cairn.OpDelete {
		t.Errorf("Call read op %q from the input", got)
	}
}

func TestWrongPoint(t *testing.T) {
	t.Parallel()
	h := New(nil)
	mapHook := cairn.Map(func(*cairn.MapInput) ([]any, error) { return nil, nil })
	if _, err := h.Precommit(mapHook, cairn.OpPut, cairn.NewObject("b", "k", "text/plain", nil)); err == nil ||
		!strings.Contains(err.Error(), "not a precommit but a map") {
		t.Errorf("precommit of a map hook: %v", err)
	}
	res := h.Call(mapHook, []byte(`{"not_found":{}}`))
	for name, err := range map[string]error{
		"postcommit": res.Postcommit(),
		"keyfun":     second(res.KeyHash()),
		"linkfun":    second(res.Links()),
	} {
		if err == nil {
			t.Errorf("%s reading of a map result succeeded", name)
		}
	}
	pre := h.Call(cairn.Precommit(func(*cairn.CommitInput) cairn.Verdict { return cairn.Accept() }), nil)
	if _, err := pre.Values(); err == nil {
		t.Error("values reading of a precommit result succeeded")
	}
}

func second[T any](_ T, err error) error { return err }

// recorder is a Logger that keeps what it is given.
type recorder struct{ lines []string }

func (r *recorder) Logf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func TestTypedCallsAndLogs(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := New(rec)

	pre := cairn.Precommit(func(in *cairn.CommitInput) cairn.Verdict {
		cairn.Logf(cairn.LevelInfo, "%s %s", in.Op, in.Object.Key)
		if in.Op == cairn.OpDelete {
			if !in.Object.First().Metadata.Deleted {
				return cairn.Reject("delete without a tombstone")
			}
			o := in.Object.Clone()
			o.First().Data = []byte("ignored on delete")
			return cairn.Replace(o)
		}
		o := in.Object.Clone()
		o.First().Data = []byte(strings.ToUpper(string(o.First().Data)))
		return cairn.Replace(o)
	})
	res, err := h.Precommit(pre, cairn.OpPut, cairn.NewObject("b", "k", "text/plain", []byte("<hi>")))
	if err != nil || res.Replacement == nil || string(res.Replacement.First().Data) != "<HI>" {
		t.Errorf("put: %v, %v", res, err)
	}
	res, err = h.Precommit(pre, cairn.OpDelete, Tombstone("default", "b", "k"))
	if err != nil || res.Reject || res.Replacement != nil {
		t.Errorf("delete: %v, %v (a replacement on delete is ignored)", res, err)
	}
	wantLogs := []LogLine{{cairn.LevelInfo, "put k"}, {cairn.LevelInfo, "delete k"}}
	if !reflect.DeepEqual(h.Logs, wantLogs) {
		t.Errorf("logs %v, want %v", h.Logs, wantLogs)
	}
	if len(rec.lines) != 2 || rec.lines[0] != "hook log [info] put k" {
		t.Errorf("logger got %q", rec.lines)
	}

	post := cairn.Postcommit(func(in *cairn.CommitInput) error {
		if len(in.Object.Values) != 2 {
			return fmt.Errorf("%d siblings", len(in.Object.Values))
		}
		return nil
	})
	two := cairn.NewObject("b", "k", "text/plain", []byte("a"))
	two.Values = append(two.Values, two.Values[0])
	if err := h.Postcommit(post, cairn.OpPut, two); err != nil {
		t.Errorf("postcommit: %v", err)
	}
	if err := h.Postcommit(post, cairn.OpPut, cairn.NewObject("b", "k", "", nil)); err == nil || !strings.Contains(err.Error(), "1 siblings") {
		t.Errorf("postcommit error: %v", err)
	}

	kf := cairn.KeyFun(func(in *cairn.KeyFunInput) ([]byte, error) {
		return []byte(in.BucketType + "/" + in.Bucket + "/" + in.Key), nil
	})
	if hash, err := h.KeyFun(kf, "t", "b", "k"); err != nil || string(hash) != "t/b/k" {
		t.Errorf("keyfun: %q, %v", hash, err)
	}

	lf := cairn.LinkFun(func(in *cairn.LinkFunInput) ([]cairn.Link, error) {
		return in.Spec.Filter(in.Object.First().Metadata.Links), nil
	})
	lo := cairn.NewObject("b", "k", "text/plain", nil)
	lo.First().Metadata.Links = []cairn.Link{{Bucket: "p", Key: "1", Tag: "friend"}, {Bucket: "q", Key: "2", Tag: "friend"}}
	if links, err := h.LinkFun(lf, lo, "q", cairn.Wildcard); err != nil || !reflect.DeepEqual(links, []cairn.Link{{Bucket: "q", Key: "2", Tag: "friend"}}) {
		t.Errorf("linkfun: %v, %v", links, err)
	}

	mf := cairn.Map(func(in *cairn.MapInput) ([]any, error) {
		if in.Object == nil {
			return []any{"missing " + in.NotFound.Key}, nil
		}
		var arg map[string]int
		if err := in.DecodeArg(&arg); err != nil {
			return nil, err
		}
		return []any{string(in.Object.First().Data), string(in.KeyData), arg["n"]}, nil
	})
	if vals, err := h.Map(mf, cairn.NewObject("b", "k", "", []byte("v")), "kd", map[string]int{"n": 3}); err != nil ||
		fmt.Sprintf("%s", vals) != `["v" "\"kd\"" 3]` {
		t.Errorf("map: %s, %v", vals, err)
	}
	if vals, err := h.MapNotFound(mf, cairn.Place{BucketType: "default", Bucket: "b", Key: "gone"}, nil, nil); err != nil ||
		fmt.Sprintf("%s", vals) != `["missing gone"]` {
		t.Errorf("map not found: %s, %v", vals, err)
	}
	if _, err := h.Map(mf, cairn.NewObject("b", "k", "", nil), nil, func() {}); err == nil {
		t.Error("map with an argument that cannot be encoded succeeded")
	}

	rf := cairn.Reduce(func(in *cairn.ReduceInput) ([]any, error) {
		total := 0
		for _, v := range in.Values {
			var n int
			if err := json.Unmarshal(v, &n); err != nil {
				return nil, err
			}
			total += n
		}
		return []any{total}, nil
	})
	first, err := h.Reduce(rf, []any{1, 2, 3}, nil)
	if err != nil || string(first[0]) != "6" {
		t.Fatalf("reduce: %s, %v", first, err)
	}
	again, err := h.Reduce(rf, []any{first[0], 4}, nil)
	if err != nil || string(again[0]) != "10" {
		t.Errorf("re-reduce: %s, %v", again, err)
	}
	if none, err := h.Reduce(rf, nil, nil); err != nil || string(none[0]) != "0" {
		t.Errorf("reduce of nothing: %s, %v", none, err)
	}
	if _, err := h.Reduce(rf, []any{"x"}, nil); err == nil {
		t.Error("reduce of a string succeeded")
	}
}

func TestTombstone(t *testing.T) {
	t.Parallel()
	b, _ := Tombstone("default", "b", "k").MarshalJSON()
	want := `{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"","X-Store-Meta":{},"X-Store-Deleted":"true"},"data":""}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
