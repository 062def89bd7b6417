package cairn

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/sdk/abi"
)

const putInput = `{"op":"put","object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Riak-Meta":{}},"data":"hello"}]}}`

func TestHookCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hook   Hook
		input  string
		status Status
		output string // exact, or a substring when prefixed with "~"
	}{
		{"precommit accept", Precommit(func(*CommitInput) Verdict { return Accept() }), putInput, StatusOK, ""},
		{"precommit zero verdict accepts", Precommit(func(*CommitInput) Verdict { return Verdict{} }), putInput, StatusOK, ""},
		{"precommit reject", Precommit(func(in *CommitInput) Verdict { return Rejectf("no %s", in.Object.Key) }), putInput, StatusReject, "no k"},
		{"precommit fail", Precommit(func(*CommitInput) Verdict { return Fail(errors.New("boom")) }), putInput, StatusError, "boom"},
		{"precommit fail nil", Precommit(func(*CommitInput) Verdict { return Fail(nil) }), putInput, StatusError, "precommit failed"},
		{"precommit replace keeps the dialect", Precommit(func(in *CommitInput) Verdict {
			o := in.Object.Clone()
			o.First().Data = []byte("HELLO")
			o.First().Metadata.AddIndex("x_bin", "1")
			return Replace(o)
		}), putInput, StatusOK,
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Riak-Meta":{},"index":{"x_bin":"1"}},"data":"HELLO"}]}`},
		{"precommit replace nil accepts", Precommit(func(*CommitInput) Verdict { return Replace(nil) }), putInput, StatusOK, ""},
		{"precommit replace without values fails", Precommit(func(*CommitInput) Verdict { return Replace(&Object{}) }), putInput, StatusError, "~no values"},
		{"precommit sees op and tombstone", Precommit(func(in *CommitInput) Verdict {
			if in.Op != OpDelete || !in.Object.First().Metadata.Deleted {
				return Reject("wrong input")
			}
			return Accept()
		}), `{"op":"delete","object":{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"X-Store-Meta":{},"X-Store-Deleted":"true"},"data":""}]}}`, StatusOK, ""},
		{"precommit input not JSON", Precommit(func(*CommitInput) Verdict { return Accept() }), `{`, StatusError, "~cairn: decode precommit input"},
		{"precommit input without object", Precommit(func(*CommitInput) Verdict { return Accept() }), `{"op":"put"}`, StatusError, `~no "object"`},
		{"precommit panic", Precommit(func(*CommitInput) Verdict { panic("oops") }), putInput, StatusError, "cairn: precommit panicked: oops"},

		{"postcommit ok", Postcommit(func(*CommitInput) error { return nil }), putInput, StatusOK, ""},
		{"postcommit error", Postcommit(func(*CommitInput) error { return errors.New("audit down") }), putInput, StatusError, "audit down"},

		{"keyfun", KeyFun(func(in *KeyFunInput) ([]byte, error) { return []byte(in.BucketType + in.Bucket + in.Key), nil }),
			`{"bucket_type":"t","bucket":"b","key":"k"}`, StatusOK, "tbk"},
		{"keyfun empty hash", KeyFun(func(*KeyFunInput) ([]byte, error) { return nil, nil }), `{}`, StatusError, "~returned 0 bytes"},
		{"keyfun long hash", KeyFun(func(*KeyFunInput) ([]byte, error) { return make([]byte, 21), nil }), `{}`, StatusError, "~returned 21 bytes"},
		{"keyfun error", KeyFun(func(*KeyFunInput) ([]byte, error) { return nil, errors.New("no") }), `{}`, StatusError, "no"},

		{"linkfun filters", LinkFun(func(in *LinkFunInput) ([]Link, error) {
			return in.Spec.Filter([]Link{{"a", "1", "x"}, {"b", "2", "x"}, {"a", "3", "y"}}), nil
		}), `{"object":{"values":[]},"spec":{"bucket":"a","tag":"_"}}`, StatusOK, `[["a","1","x"],["a","3","y"]]`},
		{"linkfun none", LinkFun(func(*LinkFunInput) ([]Link, error) { return nil, nil }),
			`{"object":{"values":[]},"spec":{"bucket":"_","tag":"_"}}`, StatusOK, `[]`},
		{"linkfun without object", LinkFun(func(*LinkFunInput) ([]Link, error) { return nil, nil }),
			`{"spec":{"bucket":"_","tag":"_"}}`, StatusError, `~no "object"`},

		{"map object", Map(func(in *MapInput) ([]any, error) {
			var kd string
			if err := in.DecodeKeyData(&kd); err != nil {
				return nil, err
			}
			return []any{in.Object.Key, kd, in.Arg, "<&>"}, nil
		}), `{"object":{"key":"k","values":[]},"keydata":"kd","arg":{"a":1}}`, StatusOK, `["k","kd",{"a":1},"<&>"]`},
		{"map not found, null keydata and arg", Map(func(in *MapInput) ([]any, error) {
			if in.KeyData != nil || in.Arg != nil || in.Object != nil {
				return nil, errors.New("want nil key data, arg and object")
			}
			return []any{in.NotFound.Bucket + "/" + in.NotFound.Key}, nil
		}), `{"not_found":{"bucket_type":"default","bucket":"b","key":"k"},"keydata":null,"arg":null}`, StatusOK, `["b/k"]`},
		{"map nil result", Map(func(*MapInput) ([]any, error) { return nil, nil }), `{"not_found":{}}`, StatusOK, `[]`},
		{"map neither object nor not_found", Map(func(*MapInput) ([]any, error) { return nil, nil }), `{"arg":1}`, StatusError, "~neither"},
		{"map unencodable result", Map(func(*MapInput) ([]any, error) { return []any{func() {}}, nil }), `{"not_found":{}}`, StatusError, "~encode map output"},
		{"map bad arg", Map(func(in *MapInput) ([]any, error) {
			var n int
			return nil, in.DecodeArg(&n)
		}), `{"not_found":{},"arg":"x"}`, StatusError, "~cairn: arg"},

		{"reduce sums", Reduce(func(in *ReduceInput) ([]any, error) {
			sum := 0
			for _, v := range in.Values {
				var n int
				if err := json.Unmarshal(v, &n); err != nil {
					return nil, err
				}
				sum += n
			}
			var mul int
			if err := in.DecodeArg(&mul); err != nil {
				return nil, err
			}
			return []any{sum * mul}, nil
		}), `{"values":[1,2,3],"arg":10}`, StatusOK, `[60]`},
		{"reduce no values", Reduce(func(in *ReduceInput) ([]any, error) { return []any{len(in.Values), in.Arg == nil}, nil }),
			`{"arg":null}`, StatusOK, `[0,true]`},

		{"zero hook", Hook{}, `{}`, StatusError, "~not initialized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, out := tc.hook.Call([]byte(tc.input))
			if st != tc.status {
				t.Errorf("status %d, want %d (output %q)", st, tc.status, out)
			}
			if sub, ok := strings.CutPrefix(tc.output, "~"); ok {
				if !strings.Contains(string(out), sub) {
					t.Errorf("output %q, want it to contain %q", out, sub)
				}
			} else if string(out) != tc.output {
				t.Errorf("output\n %s\nwant\n %s", out, tc.output)
			}
		})
	}
}

func TestHookOutputLimit(t *testing.T) {
	t.Parallel()
	h := KeyFun(func(*KeyFunInput) ([]byte, error) { return nil, errors.New(strings.Repeat("x", abi.MaxOutputBytes+1)) })
	st, out := h.Call([]byte(`{}`))
	if st != StatusError || !strings.Contains(string(out), "over the limit") {
		t.Errorf("status %d, output %.80q", st, out)
	}
}

func TestPointAndLevelNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{Precommit(nil).Point().String(), "precommit"},
		{Postcommit(nil).Point().String(), "postcommit"},
		{KeyFun(nil).Point().String(), "chash_keyfun"},
		{LinkFun(nil).Point().String(), "linkfun"},
		{Map(nil).Point().String(), "map"},
		{Reduce(nil).Point().String(), "reduce"},
		{Point(99).String(), "unknown"},
		{LevelDebug.String(), "debug"},
		{LevelError.String(), "error"},
		{Level(7).String(), "level(7)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestLinkSpec(t *testing.T) {
	t.Parallel()
	l := Link{"people", "bob", "friend"}
	for _, tc := range []struct {
		spec LinkSpec
		want bool
	}{
		{LinkSpec{"_", "_"}, true},
		{LinkSpec{"people", "_"}, true},
		{LinkSpec{"_", "friend"}, true},
		{LinkSpec{"people", "friend"}, true},
		{LinkSpec{"other", "_"}, false},
		{LinkSpec{"_", "foe"}, false},
		{LinkSpec{"", ""}, false},
	} {
		if got := tc.spec.Matches(l); got != tc.want {
			t.Errorf("%+v.Matches = %v, want %v", tc.spec, got, tc.want)
		}
	}
}
