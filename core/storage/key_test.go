package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/quick"
)

func TestKeyEncoding(t *testing.T) {
	tests := []struct {
		name  string
		tag   byte
		comps []string
		want  []byte
	}{
		{"tag only", TagMeta, nil, []byte{'v'}},
		{"empty component", TagType, []string{""}, []byte{'t', 0, 1}},
		{"plain", TagObject, []string{"default", "b", "k"},
			[]byte("odefault\x00\x01b\x00\x01k\x00\x01")},
		{"zero byte escaped", TagModule, []string{"a\x00b"}, []byte("ma\x00\xffb\x00\x01")},
		{"0xff kept", TagModule, []string{"\xff\x01"}, []byte("m\xff\x01\x00\x01")},
		{"only zeros", TagChunk, []string{"\x00\x00"}, []byte("c\x00\xff\x00\xff\x00\x01")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KeyString(tt.tag, tt.comps...)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("KeyString = %q, want %q", got, tt.want)
			}
			bs := make([][]byte, len(tt.comps))
			for i, c := range tt.comps {
				bs[i] = []byte(c)
			}
			if got := Key(tt.tag, bs...); !bytes.Equal(got, tt.want) {
				t.Fatalf("Key = %q, want %q", got, tt.want)
			}
			app := []byte{tt.tag}
			for _, c := range bs {
				app = AppendComponent(app, c)
			}
			if !bytes.Equal(app, tt.want) {
				t.Fatalf("AppendComponent chain = %q, want %q", app, tt.want)
			}
			tag, cs, err := DecodeKey(got)
			if err != nil {
				t.Fatal(err)
			}
			if tag != tt.tag || len(cs) != len(tt.comps) {
				t.Fatalf("DecodeKey = %c %q", tag, cs)
			}
			for i := range cs {
				if string(cs[i]) != tt.comps[i] {
					t.Fatalf("component %d = %q, want %q", i, cs[i], tt.comps[i])
				}
			}
		})
	}
}

func TestDecodeKeyErrors(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
	}{
		{"empty", nil},
		{"no terminator", []byte("oabc")},
		{"lone zero at end", []byte("oabc\x00")},
		{"bad escape", []byte("oab\x00\x02c\x00\x01")},
		{"second component truncated", []byte("oa\x00\x01b")},
		{"escape then end", []byte("oa\x00\xff")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeKey(tt.key)
			if !errors.Is(err, ErrMalformedKey) {
				t.Fatalf("DecodeKey(%q) err = %v, want ErrMalformedKey", tt.key, err)
			}
		})
	}
}

func TestDecodeKeyCopies(t *testing.T) {
	k := KeyString(TagObject, "abc", "def")
	_, cs, err := DecodeKey(k)
	if err != nil {
		t.Fatal(err)
	}
	for i := range k {
		k[i] = 'z'
	}
	if string(cs[0]) != "abc" || string(cs[1]) != "def" {
		t.Fatalf("components alias the key: %q", cs)
	}
}

// randTuple returns a random tuple biased towards the interesting bytes 0x00, 0x01 and
// 0xFF and towards short, shared prefixes.
func randTuple(r *rand.Rand) [][]byte {
	alphabet := []byte{0x00, 0x01, 0xFF, 0xFE, 'a', 'b'}
	n := r.IntN(4)
	t := make([][]byte, n)
	for i := range t {
		c := make([]byte, r.IntN(5))
		for j := range c {
			if r.IntN(4) == 0 {
				c[j] = byte(r.IntN(256))
			} else {
				c[j] = alphabet[r.IntN(len(alphabet))]
			}
		}
		t[i] = c
	}
	return t
}

// compareTuples is the reference lexicographic order of component tuples.
func compareTuples(a, b [][]byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := bytes.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestKeyOrderProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		a, b := randTuple(r), randTuple(r)
		if r.IntN(3) == 0 && len(a) > 0 { // share a prefix
			b = append(append([][]byte{}, a[:r.IntN(len(a))]...), b...)
		}
		ka, kb := Key(TagIndex, a...), Key(TagIndex, b...)
		if got, want := sign(bytes.Compare(ka, kb)), compareTuples(a, b); got != want {
			t.Fatalf("order mismatch for %q vs %q: keys compare %d, tuples %d", a, b, got, want)
		}
	}
}

func TestKeyQuick(t *testing.T) {
	// Round trip and order over testing/quick's arbitrary byte strings.
	roundTrip := func(tag byte, a, b, c []byte) bool {
		in := [][]byte{a, b, c}
		gt, cs, err := DecodeKey(Key(tag, in...))
		if err != nil || gt != tag || len(cs) != 3 {
			return false
		}
		for i := range in {
			if !bytes.Equal(cs[i], in[i]) {
				return false
			}
		}
		return true
	}
	if err := quick.Check(roundTrip, nil); err != nil {
		t.Fatal(err)
	}
	order := func(a1, a2, b1, b2 []byte) bool {
		a, b := [][]byte{a1, a2}, [][]byte{b1, b2}
		return sign(bytes.Compare(Key(TagObject, a...), Key(TagObject, b...))) == compareTuples(a, b)
	}
	if err := quick.Check(order, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPrefixExactness(t *testing.T) {
	prefix := KeyString(TagObject, "default", "users")
	tests := []struct {
		name  string
		key   []byte
		match bool
	}{
		{"same bucket", KeyString(TagObject, "default", "users", "alice"), true},
		{"same bucket, empty key", KeyString(TagObject, "default", "users", ""), true},
		{"bucket itself", KeyString(TagObject, "default", "users"), true},
		{"longer bucket", KeyString(TagObject, "default", "users2", "alice"), false},
		{"bucket with zero suffix", KeyString(TagObject, "default", "users\x00", "alice"), false},
		{"bucket with 0x01 suffix", KeyString(TagObject, "default", "users\x01", "alice"), false},
		{"shorter bucket", KeyString(TagObject, "default", "user", "salice"), false},
		{"other type", KeyString(TagObject, "defaults", "users", "alice"), false},
		{"other tag", KeyString(TagIndex, "default", "users", "alice"), false},
	}
	end := PrefixEnd(prefix)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bytes.HasPrefix(tt.key, prefix); got != tt.match {
				t.Fatalf("HasPrefix = %v, want %v", got, tt.match)
			}
			inRange := bytes.Compare(tt.key, prefix) >= 0 && bytes.Compare(tt.key, end) < 0
			if inRange != tt.match {
				t.Fatalf("in [prefix, PrefixEnd) = %v, want %v", inRange, tt.match)
			}
		})
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		in, want []byte
	}{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0xFF}, nil},
		{[]byte{0xFF, 0xFF}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xfe"), []byte("a\xff")},
		{[]byte("ab\xff\xff"), []byte("ac")},
		{[]byte{'o', 0x00, 0x01}, []byte{'o', 0x00, 0x02}},
	}
	for _, tt := range tests {
		in := append([]byte(nil), tt.in...)
		got := PrefixEnd(in)
		if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !bytes.Equal(in, tt.in) {
			t.Errorf("PrefixEnd modified its argument")
		}
	}
	// Property: every extension of p sorts below PrefixEnd(p); PrefixEnd(p) is not an
	// extension of p.
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		p := Key(TagObject, randTuple(r)...)
		end := PrefixEnd(p)
		ext := append(append([]byte(nil), p...), Key(0, randTuple(r)...)...)
		if bytes.Compare(ext, end) >= 0 || bytes.HasPrefix(end, p) {
			t.Fatalf("PrefixEnd(%q) = %q fails for %q", p, end, ext)
		}
	}
}

func TestReapKey(t *testing.T) {
	k1 := ReapKey(1_000, []byte("default"), []byte("b"), []byte("k\x00"))
	k2 := ReapKey(2_000, []byte("default"), []byte("a"), []byte("a"))
	k3 := ReapKey(1<<40, nil, nil, nil)
	if bytes.Compare(k1, k2) >= 0 || bytes.Compare(k2, k3) >= 0 {
		t.Fatal("reap keys not in deadline order")
	}
	if bytes.Compare(k2, ReapPrefix(2_001)) >= 0 || bytes.Compare(k2, ReapPrefix(2_000)) <= 0 {
		t.Fatal("ReapPrefix bounds wrong")
	}
	d, typ, b, k, err := DecodeReapKey(k1)
	if err != nil || d != 1_000 || string(typ) != "default" || string(b) != "b" || string(k) != "k\x00" {
		t.Fatalf("DecodeReapKey = %d %q %q %q %v", d, typ, b, k, err)
	}
	if _, _, _, _, err := DecodeReapKey(KeyString(TagObject, "a", "b", "c", "d")); !errors.Is(err, ErrMalformedKey) {
		t.Fatalf("DecodeReapKey(object key) err = %v", err)
	}
}
