package storage

import (
	"bytes"
	"testing"
)

func FuzzDecodeKey(f *testing.F) {
	f.Add([]byte("odefault\x00\x01b\x00\x01k\x00\x01"))
	f.Add([]byte("ma\x00\xffb\x00\x01"))
	f.Add([]byte("o\x00"))
	f.Add([]byte("o\x00\x02"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, k []byte) {
		tag, cs, err := DecodeKey(k)
		if err != nil {
			return
		}
		if re := Key(tag, cs...); !bytes.Equal(re, k) {
			t.Fatalf("DecodeKey(%q) = %c %q re-encodes to %q", k, tag, cs, re)
		}
	})
}

// splitFuzz turns one fuzz string into up to three components, using '|' as separator.
func splitFuzz(s []byte) [][]byte {
	if len(s) == 0 {
		return nil
	}
	return bytes.SplitN(s, []byte{'|'}, 3)
}

func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte("a|b"), []byte("a\x00|b"))
	f.Add([]byte("a"), []byte("a|"))
	f.Add([]byte("\xff"), []byte("\x00\xff"))
	f.Add([]byte("x\x00\x01"), []byte("x"))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, b := splitFuzz(x), splitFuzz(y)
		ka, kb := Key(TagIndex, a...), Key(TagIndex, b...)
		if got, want := sign(bytes.Compare(ka, kb)), compareTuples(a, b); got != want {
			t.Fatalf("%q vs %q: keys compare %d, tuples %d", a, b, got, want)
		}
		// A key built from a leading subset of components is a prefix, and PrefixEnd
		// bounds it.
		if len(a) > 0 {
			p := Key(TagIndex, a[:len(a)-1]...)
			if !bytes.HasPrefix(ka, p) {
				t.Fatalf("%q is not a prefix of %q", p, ka)
			}
			if end := PrefixEnd(p); end != nil && bytes.Compare(ka, end) >= 0 {
				t.Fatalf("%q not below PrefixEnd %q", ka, end)
			}
		}
		// Prefix exactness: the prefix of a's components matches b only if b has them.
		pa := Key(TagIndex, a...)
		has := len(b) >= len(a)
		for i := 0; has && i < len(a); i++ {
			has = bytes.Equal(a[i], b[i])
		}
		if bytes.HasPrefix(kb, pa) != has {
			t.Fatalf("HasPrefix(Key(%q), Key(%q)) = %v, want %v", b, a, !has, has)
		}
	})
}
