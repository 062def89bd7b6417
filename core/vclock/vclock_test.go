package vclock

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func vc(entries ...Entry) VClock { return VClock(entries) }

func TestDescendsAndConcurrent(t *testing.T) {
	a1 := vc(Entry{"a", 1, 0})
	a2 := vc(Entry{"a", 2, 0})
	a1b1 := vc(Entry{"a", 1, 0}, Entry{"b", 1, 0})
	b1 := vc(Entry{"b", 1, 0})
	tests := []struct {
		name       string
		x, y       VClock
		descends   bool
		concurrent bool
	}{
		{"empty descends empty", nil, nil, true, false},
		{"anything descends empty", a1, nil, true, false},
		{"empty does not descend a1", nil, a1, false, false},
		{"later descends earlier", a2, a1, true, false},
		{"earlier does not descend later", a1, a2, false, false},
		{"superset descends", a1b1, a1, true, false},
		{"disjoint are concurrent", a1, b1, false, true},
		{"equal descends", a1b1, a1b1.Clone(), true, false},
	}
	for i, tt := range tests {
		if got := tt.x.Descends(tt.y); got != tt.descends {
			t.Errorf("%d %s: Descends = %v, want %v", i, tt.name, got, tt.descends)
		}
		if got := tt.x.Concurrent(tt.y); got != tt.concurrent {
			t.Errorf("%d %s: Concurrent = %v, want %v", i, tt.name, got, tt.concurrent)
		}
	}
}

func TestMergeIncrementCovers(t *testing.T) {
	now := time.Unix(1000, 0)
	a := vc(Entry{"a", 3, 10}, Entry{"c", 1, 5})
	b := vc(Entry{"a", 2, 20}, Entry{"b", 4, 7})
	m := Merge(a, b)
	want := vc(Entry{"a", 3, 20}, Entry{"b", 4, 7}, Entry{"c", 1, 5})
	if len(m) != len(want) {
		t.Fatalf("Merge = %v, want %v", m, want)
	}
	for i := range want {
		if m[i] != want[i] {
			t.Fatalf("Merge = %v, want %v", m, want)
		}
	}
	if !m.Descends(a) || !m.Descends(b) {
		t.Fatal("merge must descend both inputs")
	}
	inc, dot := m.Increment("b", now)
	if dot != (Dot{"b", 5}) || inc.Counter("b") != 5 || m.Counter("b") != 4 {
		t.Fatalf("Increment: got %v dot %v, receiver %v", inc, dot, m)
	}
	if inc[1].Timestamp != 1000 {
		t.Fatalf("timestamp not set: %v", inc)
	}
	inc2, dot2 := VClock(nil).Increment("z", now)
	if dot2 != (Dot{"z", 1}) || len(inc2) != 1 {
		t.Fatalf("increment of empty: %v %v", inc2, dot2)
	}
	mid, _ := m.Increment("ab", now)
	if mid[1].Actor != "ab" {
		t.Fatalf("new actor must be inserted in order: %v", mid)
	}
	if !inc.Covers(Dot{"b", 5}) || inc.Covers(Dot{"b", 6}) || inc.Covers(Dot{"q", 1}) || inc.Covers(Dot{"b", 0}) {
		t.Fatal("Covers wrong")
	}
}

func TestPrune(t *testing.T) {
	now := time.Unix(100_000, 0)
	mk := func(n int, age int64) VClock {
		var c VClock
		for i := 0; i < n; i++ {
			c = append(c, Entry{Actor: string(rune('a' + i)), Counter: 1, Timestamp: now.Unix() - age - int64(n-i)})
		}
		return c
	}
	p := PruneOptions{Small: 3, Big: 5, Young: 20 * time.Second, Old: 86400 * time.Second}
	tests := []struct {
		name string
		c    VClock
		p    PruneOptions
		want int
	}{
		{"small clocks are kept", mk(3, 1_000_000), p, 3},
		{"young clocks are kept even when big", mk(8, 0), p, 8},
		{"big and not young: pruned to big", mk(8, 100), p, 5},
		{"old entries pruned to small", mk(5, 100_000), p, 3},
		{"between small and big, not old: kept", mk(4, 100), p, 4},
		{"keep protects the local actor", mk(8, 100_000), PruneOptions{Small: 0, Big: 0, Young: 0, Old: 0, Keep: "a"}, 1},
	}
	for i, tt := range tests {
		got := tt.c.Prune(now, tt.p)
		if len(got) != tt.want {
			t.Errorf("%d %s: %d entries left (%v), want %d", i, tt.name, len(got), got, tt.want)
		}
		for j := 1; j < len(got); j++ {
			if got[j-1].Actor >= got[j].Actor {
				t.Errorf("%d %s: result not sorted: %v", i, tt.name, got)
			}
		}
	}
	// the oldest entries go first
	c := mk(8, 100)
	got := c.Prune(now, p)
	if got[0].Actor != "d" {
		t.Fatalf("oldest entries must be pruned first, got %v", got)
	}
	if got := mk(8, 100_000).Prune(now, PruneOptions{Small: 0, Big: 0, Keep: "a"}); got[0].Actor != "a" {
		t.Fatalf("kept actor lost: %v", got)
	}
}

func TestEncodeDecode(t *testing.T) {
	clocks := []VClock{
		nil,
		vc(Entry{"node-1", 1, 1700000000}),
		vc(Entry{"a", 1 << 40, -5}, Entry{"b\x00c", 7, 0}, Entry{"zz", 3, 1 << 33}),
	}
	for i, c := range clocks {
		enc := c.Encode()
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("%d: decode: %v", i, err)
		}
		if len(got) != len(c) {
			t.Fatalf("%d: round trip %v -> %v", i, c, got)
		}
		for j := range c {
			if got[j] != c[j] {
				t.Fatalf("%d: round trip %v -> %v", i, c, got)
			}
		}
		if !bytes.Equal(got.Encode(), enc) {
			t.Fatalf("%d: encoding not canonical", i)
		}
	}
	if c, err := Decode(nil); err != nil || c != nil {
		t.Fatalf("empty input: %v %v", c, err)
	}
}

// TestEncodedLen: EncodedLen is the length Encode writes, across the varint boundaries
// of the entry count, actor lengths, counters and (negative) timestamps.
func TestEncodedLen(t *testing.T) {
	many := make(VClock, 130)
	for i := range many {
		many[i] = Entry{Actor: fmt.Sprintf("a%04d", i), Counter: 1, Timestamp: 1}
	}
	for _, tc := range []struct {
		name string
		c    VClock
	}{
		{"empty", nil},
		{"small", vc(Entry{"n1", 1, 0})},
		{"varint boundaries", vc(Entry{"a", 127, 63}, Entry{"b", 128, 64}, Entry{"c", 1 << 14, -64}, Entry{"d", 1<<14 - 1, -65})},
		{"extremes", vc(Entry{strings.Repeat("x", MaxActorLen), math.MaxUint64, math.MinInt64}, Entry{"y", 1, math.MaxInt64})},
		{"130 entries", many},
	} {
		if got, want := tc.c.EncodedLen(), len(tc.c.Encode()); got != want {
			t.Errorf("%s: EncodedLen %d, Encode writes %d bytes", tc.name, got, want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good := vc(Entry{"a", 1, 1}, Entry{"b", 2, 2}).Encode()
	bad := map[string][]byte{
		"unknown version":   {9, 0},
		"truncated":         good[:len(good)-1],
		"trailing":          append(append([]byte{}, good...), 0),
		"zero counter":      {1, 1, 1, 'a', 0, 0},
		"empty actor":       {1, 1, 0, 1, 0},
		"unsorted":          {1, 2, 1, 'b', 1, 0, 1, 'a', 1, 0},
		"duplicate actor":   {1, 2, 1, 'a', 1, 0, 1, 'a', 2, 0},
		"count beyond data": {1, 100, 1, 'a', 1, 0},
		"non-canonical":     {1, 0x81, 0x00, 1, 'a', 1, 0},
		"overlong actor":    append([]byte{1, 1, 65}, bytes.Repeat([]byte{'x'}, 65)...),
	}
	for name, b := range bad {
		if _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode(%x) err = %v, want ErrMalformed", name, b, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(vc(Entry{"n1", 3, 1700000000}).Encode())
	f.Add(vc(Entry{"a", 1, -1}, Entry{"b", 1 << 50, 1}).Encode())
	f.Add([]byte{1, 2, 1, 'b', 1, 0, 1, 'a', 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes is canonical: re-encoding gives back the same bytes.
		if len(b) > 0 && !bytes.Equal(c.Encode(), b) {
			t.Fatalf("Decode(%x) = %v re-encodes to %x", b, c, c.Encode())
		}
		if len(b) > 0 && c.EncodedLen() != len(b) {
			t.Fatalf("Decode(%x) = %v: EncodedLen %d, encoding has %d bytes", b, c, c.EncodedLen(), len(b))
		}
		for i := 1; i < len(c); i++ {
			if c[i-1].Actor >= c[i].Actor {
				t.Fatalf("decoded clock unsorted: %v", c)
			}
		}
		if !c.Descends(c) || !Merge(c, c).Equal(c) {
			t.Fatalf("clock algebra broken for %v", c)
		}
	})
}

// TestIncrementNeverWraps: a counter at 2^64−1 stays there instead of wrapping to a zero
// that Decode refuses.
func TestIncrementNeverWraps(t *testing.T) {
	for _, c := range []uint64{math.MaxUint64 - 1, math.MaxUint64} {
		clk, dot := vc(Entry{"n", c, 0}).Increment("n", time.Unix(5, 0))
		if dot.Counter != math.MaxUint64 || clk.Counter("n") != math.MaxUint64 {
			t.Fatalf("increment of %d: %v %v", c, clk, dot)
		}
		if _, err := Decode(clk.Encode()); err != nil {
			t.Fatalf("increment of %d does not decode: %v", c, err)
		}
	}
}

func TestCheckReceived(t *testing.T) {
	many := func(n int) VClock {
		c := make(VClock, n)
		for i := range c {
			c[i] = Entry{Actor: fmt.Sprintf("a%05d", i), Counter: 1}
		}
		return c
	}
	tests := []struct {
		name string
		c    VClock
		want string // "" = accepted
	}{
		{"empty", nil, ""},
		{"counter at the limit", vc(Entry{"a", MaxCounter, 0}), ""},
		{"counter above the limit", vc(Entry{"a", 1, 0}, Entry{"b", MaxCounter + 1, 0}), `counter 9007199254740993 of actor "b" is above 9007199254740992`},
		{"counter 2^64-1", vc(Entry{"a", math.MaxUint64, 0}), "is above"},
		{"entries at the limit", many(MaxReceivedEntries), ""},
		{"entries above the limit", many(MaxReceivedEntries + 1), "1025 entries, more than 1024"},
	}
	for _, tt := range tests {
		err := tt.c.CheckReceived()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an ErrMalformed naming %q", tt.name, err, tt.want)
		}
	}
}

func TestLimit(t *testing.T) {
	c := vc(Entry{"a", 1, 30}, Entry{"b", 1, 10}, Entry{"c", 1, 20}, Entry{"n", 9, 5}, Entry{"z", 1, 30})
	tests := []struct {
		max  int
		keep string
		want string
	}{
		{5, "n", "{a:1@30,b:1@10,c:1@20,n:9@5,z:1@30}"},
		{9, "n", "{a:1@30,b:1@10,c:1@20,n:9@5,z:1@30}"},
		{4, "n", "{a:1@30,c:1@20,n:9@5,z:1@30}"}, // the oldest foreign entry goes
		{2, "n", "{a:1@30,n:9@5}"},               // ties by actor; the kept one stays though oldest
		{1, "n", "{n:9@5}"},                      //
		{0, "n", "{n:9@5}"},                      // the kept entry always stays
		{2, "", "{a:1@30,z:1@30}"},               // nothing to keep
		{3, "absent", "{a:1@30,c:1@20,z:1@30}"},  // keep names no entry
	}
	for _, tt := range tests {
		got := c.Limit(tt.max, tt.keep)
		if got.String() != tt.want {
			t.Errorf("Limit(%d, %q) = %v, want %s", tt.max, tt.keep, got, tt.want)
		}
		if _, err := Decode(got.Encode()); err != nil {
			t.Errorf("Limit(%d, %q) does not decode: %v", tt.max, tt.keep, err)
		}
	}
	if c.String() != "{a:1@30,b:1@10,c:1@20,n:9@5,z:1@30}" {
		t.Fatalf("Limit changed its receiver: %v", c)
	}
}
