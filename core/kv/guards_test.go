package kv

// Regression tests for the attacks on objects, clocks and bucket properties (issue 15):
// props that size allocations, forged clocks that brick keys, sibling and metadata
// floods, and a check that stops at the first problem.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// newUncheckedService is newTestService without the invariant check at cleanup, for
// tests that seed the store with what an older build could have left in it.
func newUncheckedService(t testing.TB, cfg Config) *Service {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); db.Close() })
	return s
}

func rawProps(t testing.TB, props string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(props), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func reasonsOf(err error) map[string]string {
	if e := core.AsError(err); e != nil && e.Code == core.EINVALID {
		return e.Reasons
	}
	return nil
}

// TestNumericPropsRanges: every numeric property is refused outside its documented range,
// and integer quorums above n_val are refused whichever of the two the change sets.
func TestNumericPropsRanges(t *testing.T) {
	tests := []struct {
		name    string
		before  string // set first (must be accepted)
		props   string
		reasons map[string]string // nil: accepted
	}{
		{"the attack: n_val 10^12", "", `{"n_val":1000000000000}`,
			map[string]string{"n_val": "out_of_range: n_val must be an integer from 1 to 64"}},
		{"n_val beyond int64", "", `{"n_val":100000000000000000000}`, map[string]string{"n_val": "not_integer"}},
		{"n_val at the ring size", "", `{"n_val":64}`, nil},
		{"n_val above the ring size", "", `{"n_val":65}`, map[string]string{"n_val": "out_of_range: n_val must be an integer from 1 to 64"}},
		{"young_vclock is validated", "", `{"young_vclock":"any"}`, map[string]string{"young_vclock": "not_integer"}},
		{"young_vclock may be 0", "", `{"young_vclock":0}`, nil},
		{"negative young_vclock", "", `{"young_vclock":-1}`, map[string]string{"young_vclock": "not_integer"}},
		{"vclock ages overflowing a Duration", "", `{"old_vclock":10000000000,"young_vclock":9223372036854775807}`, map[string]string{
			"old_vclock":   "out_of_range: old_vclock must be an integer from 1 to 2147483647",
			"young_vclock": "out_of_range: young_vclock must be an integer from 0 to 2147483647"}},
		{"clock sizes", "", `{"small_vclock":1025,"big_vclock":1024}`,
			map[string]string{"small_vclock": "out_of_range: small_vclock must be an integer from 1 to 1024"}},
		{"sibling guards", "", `{"max_siblings":0,"warn_siblings":10001}`, map[string]string{
			"max_siblings": "not_integer", "warn_siblings": "out_of_range: warn_siblings must be an integer from 1 to 10000"}},
		{"size guards above 50 MiB", "", `{"max_object_size":52428801,"warn_object_size":"5MiB"}`, map[string]string{
			"max_object_size": "out_of_range: max_object_size must be an integer from 1 to 52428800", "warn_object_size": "not_integer"}},
		{"guards in range", "", `{"max_siblings":10000,"warn_siblings":1,"max_object_size":52428800,"warn_object_size":1}`, nil},
		{"quorum above n_val", "", `{"n_val":3,"w":4,"pr":3,"dw":"all"}`,
			map[string]string{"w": "not_valid_quorum: 4 is above n_val 3"}},
		{"quorum above the stored n_val", `{"n_val":2}`, `{"r":3}`, map[string]string{"r": "not_valid_quorum: 3 is above n_val 2"}},
		{"n_val lowered below a stored quorum", `{"n_val":5,"rw":5}`, `{"n_val":4}`,
			map[string]string{"n_val": "out_of_range: n_val 4 is below the rw quorum of 5"}},
		{"n_val and quorum lowered together", `{"n_val":5,"rw":5}`, `{"n_val":4,"rw":4}`, nil},
		{"quorum words always fit", `{"n_val":1}`, `{"r":"all","w":"quorum","dw":"one"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t, Config{MaxValueSize: 1 << 20})
			if tt.before != "" {
				setProps(t, s, "b", tt.before)
			}
			before, _ := s.Props(ctx, core.DefaultType, "b")
			beforeJSON, _ := json.Marshal(before)
			err := s.SetProps(ctx, core.DefaultType, "b", rawProps(t, tt.props))
			if tt.reasons == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := reasonsOf(err); !reflect.DeepEqual(got, tt.reasons) {
				t.Fatalf("reasons = %v (err %v), want %v", got, err, tt.reasons)
			}
			after, _ := s.Props(ctx, core.DefaultType, "b")
			if afterJSON, _ := json.Marshal(after); !bytes.Equal(afterJSON, beforeJSON) {
				t.Fatalf("a refused change altered the props:\n%s\n%s", beforeJSON, afterJSON)
			}
			// The same values are refused on a bucket type, the default one included.
			if tt.before == "" {
				err = s.SetTypeProps(ctx, core.DefaultType, rawProps(t, tt.props))
				if got := reasonsOf(err); !reflect.DeepEqual(got, tt.reasons) {
					t.Fatalf("type props: reasons = %v (err %v), want %v", got, err, tt.reasons)
				}
			}
		})
	}
}

// TestDefaultGuardProps: the guards' defaults are Riak's; a server that takes larger
// values makes max_object_size that large.
func TestDefaultGuardProps(t *testing.T) {
	for _, tt := range []struct {
		maxValue             int64
		wantMax, wantWarnObj int64
	}{{0, 50 << 20, 5 << 20}, {1 << 20, 50 << 20, 5 << 20}, {100 << 20, 100 << 20, 5 << 20}} {
		s := newTestService(t, Config{MaxValueSize: tt.maxValue})
		p, err := s.Props(ctx, core.DefaultType, "b")
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxSiblings != 100 || p.WarnSiblings != 25 || p.MaxObjectSize != tt.wantMax || p.WarnObjectSize != tt.wantWarnObj {
			t.Fatalf("max value %d: guards %d %d %d %d", tt.maxValue, p.MaxSiblings, p.WarnSiblings, p.MaxObjectSize, p.WarnObjectSize)
		}
		// Every default goes back unchanged.
		b, _ := json.Marshal(p)
		if err := s.SetProps(ctx, core.DefaultType, "b", rawProps(t, string(b))); err != nil {
			t.Fatalf("round trip of %s: %v", b, err)
		}
	}
}

// TestStoredOutOfRangePropsAreSafe reproduces issue 15's first attack as an older build
// left it: n_val 10^12 stored in the default type and in a bucket. The typed view clamps
// it, the preflist and writes work, and the check reports both records.
func TestStoredOutOfRangePropsAreSafe(t *testing.T) {
	s := newUncheckedService(t, Config{})
	seed := map[string][]byte{
		string(storage.KeyString(storage.TagType, core.DefaultType)):       []byte(`{"n_val":1000000000000,"young_vclock":"any","big_vclock":-5}`),
		string(storage.KeyString(storage.TagProps, core.DefaultType, "b")): []byte(`{"n_val":99999999999,"w":1000,"r":"lots","old_vclock":"` + strings.Repeat("9", 100) + `"}`),
	}
	for k, v := range seed {
		if err := storage.Put(ctx, s.db, []byte(k), v, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, bucket := range []string{"b", "other"} {
		p, err := s.Props(ctx, core.DefaultType, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if p.NVal != RingSize || p.YoungVclock != 20 || p.BigVclock != 1 {
			t.Fatalf("%s: n_val %d young %d big %d", bucket, p.NVal, p.YoungVclock, p.BigVclock)
		}
		pl, err := s.Preflist(ctx, core.DefaultType, bucket, "k")
		if err != nil || len(pl) != RingSize {
			t.Fatalf("%s: preflist of %d entries: %v", bucket, len(pl), err)
		}
		o := put(t, s, bucket, "k", "v", nil)
		if _, err := s.Delete(ctx, core.DefaultType, bucket, "k", DeleteOptions{Context: o.VClock}); err != nil {
			t.Fatalf("%s: delete: %v", bucket, err)
		}
	}
	rep, err := s.CheckStore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bucket type default: big_vclock is -5: not_integer",
		"bucket type default: n_val is 1000000000000: out_of_range: n_val must be an integer from 1 to 64",
		"bucket type default: young_vclock is \"any\": not_integer",
		"bucket default/b: n_val is 99999999999: out_of_range: n_val must be an integer from 1 to 64",
		`bucket default/b: old_vclock is "` + strings.Repeat("9", 63) + `…: not_integer`,
		`bucket default/b: r is "lots": not_valid_quorum`,
		"bucket default/b: w is 1000, above n_val 64",
	}
	if rep.Count != len(want) || !reflect.DeepEqual(rep.Problems, want) {
		t.Fatalf("check found %d:\n%s\nwant:\n%s", rep.Count, strings.Join(rep.Problems, "\n"), strings.Join(want, "\n"))
	}
}

// clockOf returns an encoded clock with the given entries.
func clockOf(entries ...vclock.Entry) []byte { return vclock.VClock(entries).Encode() }

// foreignActors returns the entries of n actors that are not the node, all with counter
// c and a timestamp of now, so that the bucket's pruning (young_vclock) keeps them.
func foreignActors(prefix string, n int, c uint64) []vclock.Entry {
	out := make([]vclock.Entry, n)
	now := time.Now().Unix()
	for i := range out {
		out[i] = vclock.Entry{Actor: fmt.Sprintf("%s%05d", prefix, i), Counter: c, Timestamp: now}
	}
	return out
}

// storedRecord reads and decodes a key's record, failing the test when it does not decode.
func storedRecord(t testing.TB, s *Service, bucket, key string) *record {
	t.Helper()
	v, err := s.db.Get(objectKey(core.DefaultType, bucket, key))
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	r, err := decodeRecord(v)
	if err == nil {
		_, err = r.clockValue()
	}
	if err != nil {
		t.Fatalf("%s/%s no longer decodes: %v", bucket, key, err)
	}
	return r
}

// assertWritable fails unless a PUT and a DELETE of the key without a clock succeed and
// leave a record that decodes.
func assertWritable(t testing.TB, s *Service, bucket, key string) {
	t.Helper()
	put(t, s, bucket, key, "again", nil)
	storedRecord(t, s, bucket, key)
	if _, err := s.Delete(ctx, core.DefaultType, bucket, key, DeleteOptions{}); err != nil {
		t.Fatalf("delete %s/%s: %v", bucket, key, err)
	}
	storedRecord(t, s, bucket, key)
}

// TestForgedClocks reproduces issue 15's second attack: a clock whose entry for the node
// is 2^64−1, and one with 4,096 foreign actors. Both are refused with 400; clocks at the
// limits are taken, and whatever is accepted leaves a record that decodes and a key
// that stays writable.
func TestForgedClocks(t *testing.T) {
	s := newTestService(t, Config{})
	node := s.NodeID()
	tests := []struct {
		name    string
		clock   []byte
		refused string // "" = accepted
	}{
		{"own counter 2^64-1", clockOf(vclock.Entry{Actor: node, Counter: math.MaxUint64}), "above 9007199254740992"},
		{"foreign counter 2^64-1", clockOf(vclock.Entry{Actor: "x", Counter: math.MaxUint64}), "above"},
		{"own counter at the limit", clockOf(vclock.Entry{Actor: node, Counter: vclock.MaxCounter}), ""},
		{"4096 foreign actors", clockOf(foreignActors("a", 4096, 1)...), "4096 entries, more than 1024"},
		{"1025 foreign actors", clockOf(foreignActors("a", 1025, 1)...), "1025 entries"},
		{"1024 foreign actors", clockOf(foreignActors("b", 1024, 7)...), ""},
		{"another 1024 foreign actors", clockOf(foreignActors("c", 1024, 7)...), ""},
	}
	for i, tt := range tests {
		for _, op := range []string{"put", "delete"} {
			key := fmt.Sprintf("k%d-%s", i, op)
			o := put(t, s, "b", key, "first", nil)
			var err error
			if op == "put" {
				_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: key, Context: tt.clock,
					Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}})
			} else {
				_, err = s.Delete(ctx, core.DefaultType, "b", key, DeleteOptions{Context: tt.clock})
			}
			if tt.refused != "" {
				e := core.AsError(err)
				if e == nil || e.Code != core.EINVALID || !strings.Contains(e.Message, tt.refused) || !strings.HasPrefix(e.Message, "Invalid vector clock") {
					t.Fatalf("%s %s: %v, want 400 naming %q", tt.name, op, err, tt.refused)
				}
				if r := storedRecord(t, s, "b", key); !bytes.Equal(r.rawClock, o.VClock) {
					t.Fatalf("%s %s: a refused write changed the record", tt.name, op)
				}
			} else if err != nil {
				t.Fatalf("%s %s: %v", tt.name, op, err)
			}
			if r := storedRecord(t, s, "b", key); len(r.clock) > vclock.MaxStoredEntries {
				t.Fatalf("%s %s: stored clock of %d entries", tt.name, op, len(r.clock))
			}
			assertWritable(t, s, "b", key)
		}
	}
	// Floods of new actors, write after write, never grow the clock beyond the limit and
	// never drop the node's own entry.
	for i := range 5 {
		put(t, s, "b", "flood", "v", clockOf(foreignActors(fmt.Sprintf("f%d-", i), vclock.MaxReceivedEntries, 3)...))
		r := storedRecord(t, s, "b", "flood")
		if len(r.clock) > vclock.MaxStoredEntries || r.clock.Counter(node) != uint64(i+1) {
			t.Fatalf("flood %d: %d entries, own counter %d", i, len(r.clock), r.clock.Counter(node))
		}
	}
}

// TestSaturatedOwnCounterStaysWritable: a record an older build stored with the node's
// counter at 2^64−1 (it took a forged clock) can still be written and deleted: the
// counter saturates instead of wrapping to a 0 that no longer decodes.
func TestSaturatedOwnCounterStaysWritable(t *testing.T) {
	s := newTestService(t, Config{})
	put(t, s, "b", "k", "v", nil)
	k := objectKey(core.DefaultType, "b", "k")
	r := storedRecord(t, s, "b", "k")
	r.clock = vclock.VClock{{Actor: s.NodeID(), Counter: math.MaxUint64, Timestamp: 1}}
	r.siblings[0].dot.Counter = math.MaxUint64
	if err := storage.Put(ctx, s.db, k, r.encode(), true); err != nil {
		t.Fatal(err)
	}
	s.cache.del(k)
	assertWritable(t, s, "b", "k")
	if c := storedRecord(t, s, "b", "k").clock.Counter(s.NodeID()); c != math.MaxUint64 {
		t.Fatalf("own counter %d, want it saturated", c)
	}
}

// randomClock returns a clock that is valid on the wire but otherwise arbitrary: up to
// 1,500 entries, the node's actor among them at times, counters anywhere in 64 bits.
func randomClock(rng *rand.Rand, node string) vclock.VClock {
	n := rng.IntN(1500)
	if rng.IntN(4) == 0 {
		n = rng.IntN(4)
	}
	seen := map[string]bool{}
	var c vclock.VClock
	for range n {
		actor := fmt.Sprintf("a%d", rng.IntN(5000))
		if rng.IntN(50) == 0 {
			actor = node
		}
		if seen[actor] {
			continue
		}
		seen[actor] = true
		counter := rng.Uint64() >> rng.IntN(64)
		if counter == 0 {
			counter = 1
		}
		c = append(c, vclock.Entry{Actor: actor, Counter: counter, Timestamp: time.Now().Unix() + rng.Int64N(100) - 50})
	}
	return vclock.Merge(c, nil) // sorted
}

// TestAnyReceivedClockLeavesADecodableRecord is the property the forged-clock fix
// guarantees: for any clock a client sends, a write that succeeds leaves a record that
// decodes, and the key stays writable (PUT and DELETE).
func TestAnyReceivedClockLeavesADecodableRecord(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "m", `{"allow_mult":true,"dvv_enabled":true}`)
	rng := rand.New(rand.NewPCG(15, 15))
	for i := range 60 {
		bucket := []string{"b", "m"}[i%2]
		key := fmt.Sprintf("k%d", i%7)
		clk := randomClock(rng, s.NodeID()).Encode()
		var err error
		if rng.IntN(3) == 0 {
			_, err = s.Delete(ctx, core.DefaultType, bucket, key, DeleteOptions{Context: clk})
		} else {
			_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: bucket, Key: key, Context: clk,
				Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}})
		}
		if err != nil && core.ErrorCode(err) != core.EINVALID && core.ErrorCode(err) != core.ENOTFOUND {
			t.Fatalf("write %d: %v", i, err)
		}
		if err == nil {
			storedRecord(t, s, bucket, key)
		}
		if i%10 == 9 {
			assertWritable(t, s, bucket, key)
		}
	}
}

// FuzzWriteAnyClock: arbitrary bytes as the causal context of a PUT or DELETE; whatever
// is accepted leaves a record that decodes and a writable key.
func FuzzWriteAnyClock(f *testing.F) {
	f.Add(clockOf(vclock.Entry{Actor: "x", Counter: math.MaxUint64}), false)
	f.Add(clockOf(foreignActors("a", 40, 1)...), true)
	f.Add([]byte{1, 0}, false)
	s := newTestService(f, Config{})
	f.Fuzz(func(t *testing.T, clk []byte, del bool) {
		put(t, s, "b", "k", "v", nil)
		var err error
		if del {
			_, err = s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{Context: clk})
		} else {
			_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Context: clk,
				Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}})
		}
		if err != nil && core.ErrorCode(err) != core.EINVALID {
			t.Fatalf("write: %v", err)
		}
		storedRecord(t, s, "b", "k")
		assertWritable(t, s, "b", "k")
	})
}

// syncLog is a log destination tests read while the service writes to it.
type syncLog struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
func (l *syncLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// TestSiblingGuards reproduces issue 15's sibling flood (blind writes with allow_mult):
// above max_siblings a write is refused (409) and stores nothing, a warning is logged
// above warn_siblings, and a write that resolves siblings is always taken, even when the
// key is above a limit lowered since.
func TestSiblingGuards(t *testing.T) {
	var logs syncLog
	s := newTestService(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	setProps(t, s, "b", `{"allow_mult":true,"dvv_enabled":true,"max_siblings":5,"warn_siblings":3}`)
	for i := range 5 {
		put(t, s, "b", "k", fmt.Sprint("v", i), nil)
	}
	if !strings.Contains(logs.String(), "too many siblings") || !strings.Contains(logs.String(), "siblings=4") {
		t.Fatalf("no warning above warn_siblings:\n%s", logs.String())
	}
	before := storedRecord(t, s, "b", "k")
	for _, op := range []string{"put", "delete"} {
		var err error
		if op == "put" {
			_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("v5"), ContentType: "text/plain"}})
		} else {
			_, err = s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{Context: clockOf()})
		}
		e := core.AsError(err)
		if e == nil || e.Code != core.ECONFLICT || e.Message != "Too many siblings: the write would leave 6, above the bucket's max_siblings of 5; write with the object's vector clock to resolve them\n" {
			t.Fatalf("6th sibling by %s: %v", op, err)
		}
		if after := storedRecord(t, s, "b", "k"); len(after.siblings) != 5 || !bytes.Equal(after.rawClock, before.rawClock) {
			t.Fatalf("a refused %s changed the record", op)
		}
	}
	// The limit is lowered below what the key holds: a write that resolves some of the
	// siblings (its context has seen two of them) is still taken.
	setProps(t, s, "b", `{"max_siblings":2}`)
	two := vclock.VClock{{Actor: s.NodeID(), Counter: 2, Timestamp: 0}}.Encode()
	o := put(t, s, "b", "k", "resolves two", two)
	if len(o.Siblings) != 4 {
		t.Fatalf("%d siblings after resolving two of five", len(o.Siblings))
	}
	// Adding one is refused; resolving all is taken.
	if _, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("x")}}); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("a 5th sibling over max_siblings 2: %v", err)
	}
	if o = put(t, s, "b", "k", "resolved", o.VClock); len(o.Siblings) != 1 {
		t.Fatalf("%d siblings after writing with the clock", len(o.Siblings))
	}
}

// TestObjectSizeGuard: max_object_size (plus one value's worth of headers) bounds the
// whole sibling set, values and headers, refuses with 413 and stores nothing, warns above
// warn_object_size, and always lets a write that shrinks the object through.
func TestObjectSizeGuard(t *testing.T) {
	var logs syncLog
	s := newTestService(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), MaxHeaderBytes: 100})
	setProps(t, s, "b", `{"allow_mult":true,"dvv_enabled":true,"max_object_size":1000,"warn_object_size":500}`)
	v400 := strings.Repeat("x", 400-len("text/plain"))
	put(t, s, "b", "k", v400, nil)
	put(t, s, "b", "k", v400, nil)
	if !strings.Contains(logs.String(), "very large object") || !strings.Contains(logs.String(), "bytes=800") {
		t.Fatalf("no warning above warn_object_size:\n%s", logs.String())
	}
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte(v400), ContentType: "text/plain"}})
	e := core.AsError(err)
	if e == nil || e.Code != core.ETOOLARGE || e.Message != "Object of 1200 bytes over all its siblings exceeds the bucket's max_object_size of 1000 bytes (plus 100 bytes of headers)\n" {
		t.Fatalf("third 400-byte sibling: %v", err)
	}
	if n := len(storedRecord(t, s, "b", "k").siblings); n != 2 {
		t.Fatalf("a refused write left %d siblings", n)
	}
	// Over a lowered limit, a write that leaves the object smaller is taken: its
	// context has seen the first value, which it replaces by a small one.
	setProps(t, s, "b", `{"max_object_size":200}`)
	first := vclock.VClock{{Actor: s.NodeID(), Counter: 1}}.Encode()
	if o2 := put(t, s, "b", "k", "small", first); len(o2.Siblings) != 2 {
		t.Fatalf("%d siblings", len(o2.Siblings))
	}
	// A lone value of the size limit with its headers fits: the limit counts no clock
	// or vtag bytes, and leaves room for one value's headers.
	setProps(t, s, "b", `{"max_object_size":390}`)
	o := get(t, s, "b", "k")
	if o = put(t, s, "b", "k", v400, o.VClock); len(o.Siblings) != 1 {
		t.Fatalf("%d siblings", len(o.Siblings))
	}
}

// TestHeaderLimits reproduces issue 15's metadata flood: more user metadata entries, or
// more header bytes (content type, metadata, index entries, links), than the service
// takes are refused with 400, and nothing is stored.
func TestHeaderLimits(t *testing.T) {
	s := newTestService(t, Config{MaxMetaEntries: 10, MaxHeaderBytes: 200})
	meta := func(n, size int) []core.MetaEntry {
		out := make([]core.MetaEntry, n)
		for i := range out {
			out[i] = core.MetaEntry{Name: fmt.Sprint("m", i), Value: strings.Repeat("v", size)}
		}
		return out
	}
	tests := []struct {
		name string
		v    core.Sibling
		want string // "" = accepted
	}{
		{"10 entries", core.Sibling{Meta: meta(10, 1), Indexes: []core.IndexEntry{{Field: "a_bin", Value: "1"}}, Links: make([]core.Link, 5)}, ""},
		{"11 entries", core.Sibling{Meta: meta(11, 1)}, "Too many user metadata entries: 11, the maximum is 10\n"},
		{"10,000 metadata entries", core.Sibling{Meta: meta(10000, 1)}, "Too many user metadata entries: 10000, the maximum is 10\n"},
		{"index entries and links count by their bytes", core.Sibling{Indexes: []core.IndexEntry{{Field: "a_bin", Value: strings.Repeat("i", 100)}},
			Links: []core.Link{{Bucket: "b", Key: strings.Repeat("k", 95), Tag: "t"}}},
			"Headers too large: 202 bytes of content type, user metadata, index entries and links, the maximum is 200\n"},
		{"200 bytes", core.Sibling{ContentType: "text/plain", Meta: meta(1, 200-10-2)}, ""},
		{"201 bytes", core.Sibling{ContentType: "text/plain", Meta: meta(1, 200-10-1)},
			"Headers too large: 201 bytes of content type, user metadata, index entries and links, the maximum is 200\n"},
		{"a long content type", core.Sibling{ContentType: strings.Repeat("t", 300)},
			"Headers too large: 300 bytes of content type, user metadata, index entries and links, the maximum is 200\n"},
	}
	for i, tt := range tests {
		key := fmt.Sprint("k", i)
		_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: key, Value: tt.v})
		if err == nil {
			err = s.CheckHeaders(&tt.v) // what the HTTP layer asks before reading a body
		}
		if tt.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			continue
		}
		if e := core.AsError(err); e == nil || e.Code != core.EINVALID || e.Message != tt.want {
			t.Fatalf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if _, err := s.Get(ctx, core.DefaultType, "b", key, GetOptions{}); !IsNotFound(err) {
			t.Fatalf("%s: a refused write stored something: %v", tt.name, err)
		}
	}
}

// TestPrecommitCannotAddHeaders: a precommit hook's rewrite is held to the same header
// limits as a client's write.
func TestPrecommitCannotAddHeaders(t *testing.T) {
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"meta": precommitFunc(func(_ context.Context, _ hooks.Op, o *core.Object) (hooks.Verdict, error) {
			r := *o
			v := r.Siblings[0]
			for i := range 11 {
				v.Meta = append(v.Meta, core.MetaEntry{Name: fmt.Sprint("h", i), Value: "v"})
			}
			r.Siblings = []core.Sibling{v}
			return hooks.Verdict{Replace: &r}, nil
		}),
	}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov), MaxMetaEntries: 10})
	setHooks(t, s, "b", `{"precommit":[{"mod":"m","fun":"meta"}]}`)
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}})
	e := core.AsError(err)
	if e == nil || e.Code != core.EINTERNAL || e.Message != "precommit hook m:meta returned an invalid object: Too many user metadata entries: 11, the maximum is 10\n" {
		t.Fatalf("rewrite with 11 headers: %v", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("stored: %v", err)
	}
}

// TestCheckReportsEveryProblem seeds a store with several distinct problems and expects
// the check to report each of them, not only the first.
func TestCheckReportsEveryProblem(t *testing.T) {
	s := newUncheckedService(t, Config{})
	put(t, s, "b", "good", "v", nil, core.IndexEntry{Field: "f_bin", Value: "x"})
	put(t, s, "b", "tomb", "v", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "b", "tomb", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wide := &record{clock: vclock.VClock(foreignActors("w", vclock.MaxEntries+1, 1)),
		siblings: []storedSibling{{Sibling: core.Sibling{Value: []byte("v")}, dot: vclock.Dot{Actor: "w00000", Counter: 1}}}}
	orphan, _ := index.PostingKey(core.DefaultType, "b", "gone", core.IndexEntry{Field: "f_bin", Value: "y"})
	missing, _ := index.PostingKey(core.DefaultType, "b", "good", core.IndexEntry{Field: "f_bin", Value: "x"})
	var reap []byte
	it := s.db.IteratePrefix([]byte{storage.TagReap})
	for it.Next() {
		reap = append([]byte(nil), it.Key()...)
	}
	it.Release()
	b := new(storage.Batch)
	b.Put(objectKey(core.DefaultType, "b", "garbage"), []byte{1, 2, 3})
	b.Put(objectKey(core.DefaultType, "b", "wide"), wide.encode())
	b.Put(objectKey(core.DefaultType, "b", "empty"), (&record{}).encode())
	b.Put(orphan, nil)
	b.Delete(missing)
	b.Delete(reap)
	b.Put(storage.KeyString(storage.TagProps, core.DefaultType, "p"), []byte(`{"n_val":1000000000000}`))
	b.Put(storage.KeyString(storage.TagProps, core.DefaultType, "q"), []byte(`not json`))
	writeUnderived(t, s, b)
	rep, err := s.CheckStore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"object default/b/empty has no values",
		"object default/b/garbage: kv: corrupt object record",
		"object default/b/wide: kv: corrupt object record: vclock: malformed clock: bad entry count",
		"orphan posting",
		"missing posting",
		`tombstone "`,
		"bucket default/p: n_val is 1000000000000: out_of_range",
		"bucket default/q: stored properties do not decode",
	}
	if rep.Count != len(want) || len(rep.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", rep.Count, len(want), strings.Join(rep.Problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(rep.Problems[i], w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, rep.Problems[i], w)
		}
	}
	if err := rep.Err(); err == nil || !strings.HasPrefix(err.Error(), "kv: check: 8 problems:\n") {
		t.Fatalf("Err() = %v", err)
	}
	if rep.Objects != 5 || rep.Postings != 1 || rep.Props != 2 {
		t.Fatalf("counted %d objects, %d postings, %d props", rep.Objects, rep.Postings, rep.Props)
	}
}

// TestCheckCountsBeyondTheList: past MaxCheckProblems the report keeps counting.
func TestCheckCountsBeyondTheList(t *testing.T) {
	s := newUncheckedService(t, Config{})
	b := new(storage.Batch)
	for i := range MaxCheckProblems + 5 {
		b.Put(objectKey(core.DefaultType, "b", fmt.Sprint(i)), []byte{9})
	}
	writeUnderived(t, s, b)
	rep, err := s.CheckStore()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count != MaxCheckProblems+5 || len(rep.Problems) != MaxCheckProblems || !strings.HasSuffix(rep.Err().Error(), "(and 5 more)") {
		t.Fatalf("count %d, listed %d", rep.Count, len(rep.Problems))
	}
}

// writeUnderived commits b without the derived writes of object records, as a store
// damaged by a bug, a disk or an older build may hold it (the derive function refuses
// records that do not decode).
func writeUnderived(t testing.TB, s *Service, b *storage.Batch) {
	t.Helper()
	s.db.RegisterDerive(storage.TagObject, nil)
	defer s.db.RegisterDerive(storage.TagObject, objectDeriver{reapDelay: s.cfg.ReapDelay}.derive)
	if err := s.db.Commit(ctx, b, true); err != nil {
		t.Fatal(err)
	}
}
