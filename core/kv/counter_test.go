package kv

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

func counterAdd(t testing.TB, s *Service, bucket, key string, delta int64) int64 {
	t.Helper()
	v, err := s.CounterAdd(ctx, bucket, key, delta, PutOptions{})
	if err != nil {
		t.Fatalf("CounterAdd(%s/%s, %d): %v", bucket, key, delta, err)
	}
	return v
}

func counterValue(t testing.TB, s *Service, bucket, key string) int64 {
	t.Helper()
	v, err := s.CounterValue(ctx, bucket, key, GetOptions{})
	if err != nil {
		t.Fatalf("CounterValue(%s/%s): %v", bucket, key, err)
	}
	return v
}

// putRaw stores a value with a content type and no clock (so, in an allow_mult bucket,
// next to whatever is stored).
func putRaw(t testing.TB, s *Service, bucket, key, ct, value string) {
	t.Helper()
	if _, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: bucket, Key: key,
		Value: core.Sibling{Value: []byte(value), ContentType: ct}}); err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

func TestCounterEncoding(t *testing.T) {
	t.Parallel()
	c := pnCounter{"b": {P: 3, N: 0}, "a": {P: 7, N: 2}, `q"\<`: {P: math.MaxInt64, N: math.MaxInt64}}
	enc := string(c.encode())
	want := `{"pncounter":{"a":[7,2],"b":[3,0],"q\"\\\u003c":[9223372036854775807,9223372036854775807]}}`
	if enc != want {
		t.Errorf("encode = %s, want %s", enc, want)
	}
	back, err := decodeCounter([]byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(c) {
		t.Errorf("round trip: %v, want %v", back, c)
	}
	for _, ok := range []string{`{"pncounter":{}}`, ` {"pncounter" : {"x":[0,0]}} `, "{\"pncounter\":{\"x\":[1,2]}}\n"} {
		if _, err := decodeCounter([]byte(ok)); err != nil {
			t.Errorf("decode %q: %v", ok, err)
		}
	}
	for _, bad := range []string{
		``, `abc`, `5`, `null`, `{}`, `{"pncounter":null}`, `{"pncounter":[]}`,
		`{"pncounter":{"x":[1]}}`, `{"pncounter":{"x":[1,2,3]}}`, `{"pncounter":{"x":[-1,0]}}`,
		`{"pncounter":{"x":[1.5,0]}}`, `{"pncounter":{"x":[1e3,0]}}`, `{"pncounter":{"x":["1",0]}}`,
		`{"pncounter":{"x":[9223372036854775808,0]}}`, `{"pncounter":{"":[1,0]}}`,
		`{"pncounter":{"x":[1,0]},"extra":1}`, `{"pncounter":{"x":[1,0]}} trailing`, `{"pncounter":{"x":[1,0]}}{}`,
	} {
		if _, err := decodeCounter([]byte(bad)); err == nil {
			t.Errorf("decode %q: accepted", bad)
		}
	}
}

func TestCounterMergeAndValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		states []pnCounter
		want   int64
	}{
		{"empty", nil, 0},
		{"one actor", []pnCounter{{"a": {5, 2}}}, 3},
		{"same state twice counts once", []pnCounter{{"a": {5, 2}}, {"a": {5, 2}}}, 3},
		{"per-actor max of each total", []pnCounter{{"a": {5, 0}}, {"a": {3, 1}, "b": {2, 0}}}, 6},
		{"an older state adds nothing", []pnCounter{{"a": {9, 4}}, {"a": {5, 2}}}, 5},
		{"disjoint actors add up", []pnCounter{{"a": {1, 0}}, {"b": {0, 4}}, {"c": {10, 1}}}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Merging in either order gives the same state (commutative).
			fwd, rev := pnCounter{}, pnCounter{}
			for i := range tt.states {
				fwd.merge(tt.states[i])
				rev.merge(tt.states[len(tt.states)-1-i])
			}
			if string(fwd.encode()) != string(rev.encode()) {
				t.Errorf("merge order matters: %s vs %s", fwd.encode(), rev.encode())
			}
			if v, ok := fwd.value(); !ok || v != tt.want {
				t.Errorf("value = %d, %v; want %d", v, ok, tt.want)
			}
		})
	}
	if _, ok := (pnCounter{"a": {math.MaxInt64, 0}, "b": {1, 0}}).value(); ok {
		t.Error("a sum beyond int64 reported as in range")
	}
}

func TestCounterAddOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start pnCounter
		delta int64
		ok    bool
	}{
		{"max from zero", pnCounter{}, math.MaxInt64, true},
		{"min+1 from zero", pnCounter{}, math.MinInt64 + 1, true},
		{"value beyond max", pnCounter{"me": {math.MaxInt64, 0}}, 1, false},
		{"value beyond min", pnCounter{"me": {0, math.MaxInt64}}, -2, false},
		{"min from zero: the decrement total cannot hold 2^63", pnCounter{}, math.MinInt64, false},
		{"increment total full though the value is 0", pnCounter{"me": {math.MaxInt64, math.MaxInt64}}, 1, false},
		{"decrement total full though the value is 0", pnCounter{"me": {math.MaxInt64, math.MaxInt64}}, -1, false},
		{"another actor's totals do not limit mine", pnCounter{"x": {math.MaxInt64, math.MaxInt64}}, 1, true},
		{"zero", pnCounter{"me": {math.MaxInt64, 0}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := string(tt.start.encode())
			err := tt.start.add("me", tt.delta)
			if tt.ok != (err == nil) {
				t.Fatalf("add(%d) = %v, want ok=%v", tt.delta, err, tt.ok)
			}
			if err != nil {
				if core.ErrorCode(err) != core.EINVALID || !strings.HasPrefix(core.ErrorMessage(err), "Counter update out of range") {
					t.Errorf("error %v, want EINVALID out of range", err)
				}
				if after := string(tt.start.encode()); after != before {
					t.Errorf("a refused add changed the state: %s → %s", before, after)
				}
			}
		})
	}
}

func TestCounterAddAndRead(t *testing.T) {
	t.Parallel()
	s := newTestService(t, Config{NodeID: "node-a"})
	if _, err := s.CounterAdd(ctx, "plain", "k", 1, PutOptions{}); core.ErrorCode(err) != core.ECONFLICT ||
		core.ErrorMessage(err) != "Counters require bucket property 'allow_mult=true'" {
		t.Fatalf("counter without allow_mult: %v, want ECONFLICT", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "plain", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("a refused counter update stored something: %v", err)
	}
	setProps(t, s, "c", `{"allow_mult":true}`)
	if _, err := s.CounterValue(ctx, "c", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("missing counter: %v, want not found", err)
	}
	if v := counterAdd(t, s, "c", "k", 4); v != 4 {
		t.Errorf("+4 = %d", v)
	}
	if v := counterAdd(t, s, "c", "k", -2); v != 2 {
		t.Errorf("+4-2 = %d", v)
	}
	if v := counterValue(t, s, "c", "k"); v != 2 {
		t.Errorf("value = %d, want 2", v)
	}
	o := get(t, s, "c", "k")
	if len(o.Siblings) != 1 || o.Siblings[0].ContentType != CounterContentType ||
		string(o.Siblings[0].Value) != `{"pncounter":{"node-a":[4,2]}}` {
		t.Errorf("stored object %+v, want one counter sibling {node-a:[4,2]}", o.Siblings)
	}
	if _, err := s.CounterAdd(ctx, "c", "k", 1, PutOptions{W: core.Quorum{N: 4}}); core.ErrorMessage(err) != "Specified w/dw/pw values invalid for bucket n value of 3\n" {
		t.Errorf("w=4: %v", err)
	}
	if _, err := s.CounterValue(ctx, "c", "k", GetOptions{R: core.Quorum{N: 4}}); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("r=4: %v", err)
	}
	if _, err := s.CounterAdd(ctx, "c", "k", math.MaxInt64, PutOptions{}); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("overflowing add: %v, want EINVALID", err)
	}
	if v := counterValue(t, s, "c", "k"); v != 2 {
		t.Errorf("after a refused add the value is %d, want 2", v)
	}
	// Reading a counter does not need allow_mult (only updates do).
	setProps(t, s, "c", `{"allow_mult":false}`)
	if v := counterValue(t, s, "c", "k"); v != 2 {
		t.Errorf("value with allow_mult=false = %d, want 2", v)
	}
}

// TestCounterSiblingsConverge builds concurrent siblings (counters written directly, a
// non-counter value, a stale tombstone) and checks that reads merge them by per-actor
// max and that an update resolves the counter siblings without losing any increment.
func TestCounterSiblingsConverge(t *testing.T) {
	t.Parallel()
	s := newTestService(t, Config{NodeID: "me"})
	setProps(t, s, "c", `{"allow_mult":true}`)
	counterAdd(t, s, "c", "k", 10) // me:[10,0]
	stale := get(t, s, "c", "k").VClock
	// Concurrent writes without a clock: each becomes a sibling.
	putRaw(t, s, "c", "k", CounterContentType, `{"pncounter":{"me":[7,0],"other":[5,1]}}`)
	putRaw(t, s, "c", "k", CounterContentType, `{"pncounter":{"other":[3,2],"third":[1,0]}}`)
	putRaw(t, s, "c", "k", "text/plain", "not a counter")
	if _, err := s.Delete(ctx, core.DefaultType, "c", "k", DeleteOptions{Context: stale}); err != nil {
		t.Fatal(err) // a stale delete: its tombstone becomes one more sibling
	}
	if n := len(get(t, s, "c", "k").Siblings); n != 5 {
		t.Fatalf("%d siblings, want 5", n)
	}
	// me: max(10,7)=10; other: max(5,3)-max(1,2)=3; third: 1.
	if v := counterValue(t, s, "c", "k"); v != 14 {
		t.Fatalf("merged value %d, want 14", v)
	}
	if v := counterAdd(t, s, "c", "k", 1); v != 15 {
		t.Fatalf("after +1: %d, want 15", v)
	}
	o := get(t, s, "c", "k")
	var counters, others int
	for _, sib := range o.Siblings {
		switch {
		case sib.Deleted:
			t.Errorf("the tombstone survived the update")
		case sib.ContentType == CounterContentType:
			counters++
			if string(sib.Value) != `{"pncounter":{"me":[11,0],"other":[5,2],"third":[1,0]}}` {
				t.Errorf("merged counter %s", sib.Value)
			}
		default:
			others++
			if string(sib.Value) != "not a counter" {
				t.Errorf("kept sibling %q", sib.Value)
			}
		}
	}
	if counters != 1 || others != 1 {
		t.Errorf("after the update: %d counter and %d other siblings, want 1 and 1", counters, others)
	}
	// The object's clock descends everything: a write with it resolves to one value.
	if _, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "c", Key: "k", Context: o.VClock,
		Value: core.Sibling{Value: []byte(`{"pncounter":{"me":[11,0],"other":[5,2],"third":[1,0]}}`), ContentType: CounterContentType}}); err != nil {
		t.Fatal(err)
	}
	if o := get(t, s, "c", "k"); len(o.Siblings) != 1 {
		t.Errorf("%d siblings after a write with the read clock, want 1", len(o.Siblings))
	}
	if v := counterValue(t, s, "c", "k"); v != 15 {
		t.Errorf("value %d, want 15", v)
	}
}

func TestCounterCorruptSibling(t *testing.T) {
	t.Parallel()
	s := newTestService(t, Config{})
	setProps(t, s, "c", `{"allow_mult":true}`)
	counterAdd(t, s, "c", "k", 3)
	putRaw(t, s, "c", "k", CounterContentType, "junk")
	for name, err := range map[string]error{
		"read":   func() error { _, err := s.CounterValue(ctx, "c", "k", GetOptions{}); return err }(),
		"update": func() error { _, err := s.CounterAdd(ctx, "c", "k", 1, PutOptions{}); return err }(),
	} {
		if core.ErrorCode(err) != core.EINTERNAL || !strings.Contains(core.ErrorMessage(err), "is not a valid counter") {
			t.Errorf("%s with a corrupt counter sibling: %v, want EINTERNAL naming it", name, err)
		}
	}
	if n := len(get(t, s, "c", "k").Siblings); n != 2 {
		t.Errorf("a failed update changed the object: %d siblings", n)
	}
	// A key holding only a value of another type is a counter at zero.
	putRaw(t, s, "c", "text", "text/plain", "hello")
	if v := counterValue(t, s, "c", "text"); v != 0 {
		t.Errorf("value of a text object = %d, want 0", v)
	}
}

func TestCounterAfterDelete(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newTestService(t, Config{Now: clk.Now})
	setProps(t, s, "c", `{"allow_mult":true}`)
	counterAdd(t, s, "c", "k", 5)
	if _, err := s.Delete(ctx, core.DefaultType, "c", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CounterValue(ctx, "c", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("deleted counter: %v, want not found", err)
	}
	if v := counterAdd(t, s, "c", "k", 2); v != 2 {
		t.Errorf("update after delete = %d, want 2 (a fresh counter)", v)
	}
	if o := get(t, s, "c", "k"); len(o.Siblings) != 1 || o.Deleted() {
		t.Errorf("after the update: %+v, want one live counter", o.Siblings)
	}
	// Once the tombstone's window has passed, the key is simply absent.
	if _, err := s.Delete(ctx, core.DefaultType, "c", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if v := counterAdd(t, s, "c", "k", -1); v != -1 {
		t.Errorf("update after the reap delay = %d, want -1", v)
	}
}

func TestCounterConcurrentAdds(t *testing.T) {
	t.Parallel()
	s := newTestService(t, Config{})
	setProps(t, s, "c", `{"allow_mult":true}`)
	const workers, each = 32, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				delta := int64(1)
				if w%2 == 1 && i%5 == 0 {
					delta = -1 // some decrements in the mix
				}
				if _, err := s.CounterAdd(ctx, "c", "k", delta, PutOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// 16 workers add 50; 16 add 40 and subtract 10.
	if v := counterValue(t, s, "c", "k"); v != 16*50+16*30 {
		t.Errorf("value %d, want %d", v, 16*50+16*30)
	}
	if o := get(t, s, "c", "k"); len(o.Siblings) != 1 {
		t.Errorf("%d siblings, want 1", len(o.Siblings))
	}
}

func TestCounterHooks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	var posts []string
	postDone := make(chan struct{}, 8)
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"watch": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			mu.Lock()
			seen = append(seen, string(op)+" "+o.Siblings[0].ContentType+" "+string(o.Siblings[0].Value))
			mu.Unlock()
			return hooks.Verdict{}, nil
		}),
		"nonegative": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			if strings.Contains(string(o.Siblings[0].Value), ",1]") {
				return hooks.Verdict{Reject: true, Reason: "no decrements"}, nil
			}
			return hooks.Verdict{}, nil
		}),
		"text": precommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) (hooks.Verdict, error) {
			r := *o
			r.Siblings = []core.Sibling{{Value: []byte("x"), ContentType: "text/plain"}}
			return hooks.Verdict{Replace: &r}, nil
		}),
		"post": postcommitFunc(func(_ context.Context, op hooks.Op, o *core.Object) error {
			mu.Lock()
			posts = append(posts, string(op)+" "+string(o.Siblings[0].Value))
			mu.Unlock()
			postDone <- struct{}{}
			return nil
		}),
	}}}
	s := newTestService(t, Config{NodeID: "me", Hooks: hooks.NewRegistry(prov)})
	setProps(t, s, "c", `{"allow_mult":true,"precommit":[{"mod":"m","fun":"watch"},{"mod":"m","fun":"nonegative"}],"postcommit":[{"mod":"m","fun":"post"}]}`)
	counterAdd(t, s, "c", "k", 2)
	if _, err := s.CounterAdd(ctx, "c", "k", -1, PutOptions{}); core.ErrorCode(err) != core.EFORBIDDEN || core.ErrorMessage(err) != "no decrements" {
		t.Fatalf("rejected update: %v", err)
	}
	if v := counterValue(t, s, "c", "k"); v != 2 {
		t.Errorf("value after a rejected update = %d, want 2", v)
	}
	select {
	case <-postDone:
	case <-time.After(5 * time.Second):
		t.Fatal("postcommit did not run")
	}
	mu.Lock()
	want := []string{
		"put application/riak_counter " + `{"pncounter":{"me":[2,0]}}`,
		"put application/riak_counter " + `{"pncounter":{"me":[2,1]}}`,
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("precommit saw %q, want %q", seen, want)
	}
	if want := []string{`put {"pncounter":{"me":[2,0]}}`}; fmt.Sprint(posts) != fmt.Sprint(want) {
		t.Errorf("postcommit saw %q, want %q", posts, want)
	}
	mu.Unlock()

	setProps(t, s, "t", `{"allow_mult":true,"precommit":[{"mod":"m","fun":"text"}]}`)
	if _, err := s.CounterAdd(ctx, "t", "k", 1, PutOptions{}); core.ErrorCode(err) != core.EINTERNAL {
		t.Errorf("a hook replacing the counter by text: %v, want EINTERNAL", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "t", "k", GetOptions{}); !IsNotFound(err) {
		t.Errorf("the refused replacement was stored: %v", err)
	}
}

func FuzzDecodeCounter(f *testing.F) {
	for _, seed := range []string{
		`{"pncounter":{}}`, `{"pncounter":{"a":[1,2],"b":[0,0]}}`, `{"pncounter":{"a":[1]}}`,
		`{"pncounter":{"a":[-1,2]}}`, `{"pncounter":{"a":[1,2]}} x`, `null`, ``, `{"pncounter":{"\u00e9":[9223372036854775807,0]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCounter(data)
		if err != nil {
			return
		}
		for a, tot := range c {
			if a == "" || tot.P < 0 || tot.N < 0 {
				t.Fatalf("decoded an invalid state %v from %q", c, data)
			}
		}
		enc := c.encode()
		back, err := decodeCounter(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if string(back.encode()) != string(enc) {
			t.Fatalf("encoding not stable: %s vs %s", back.encode(), enc)
		}
		// Merging a state with itself changes nothing.
		m := pnCounter{}
		m.merge(c)
		m.merge(back)
		if string(m.encode()) != string(enc) {
			t.Fatalf("self-merge changed %s into %s", enc, m.encode())
		}
	})
}
