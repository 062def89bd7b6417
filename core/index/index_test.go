package index

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestIntTermOrder(t *testing.T) {
	vals := []string{"-340282366920938463463374607431768211456", "-65536", "-256", "-255", "-1", "0", "1", "9", "10", "255", "256", "18446744073709551616"}
	for i := 0; i < 200; i++ {
		vals = append(vals, big.NewInt(rand.Int64N(1<<40)-(1<<39)).String())
	}
	encs := make([][]byte, len(vals))
	for i, v := range vals {
		e, err := EncodeTerm("n_int", v)
		if err != nil {
			t.Fatal(err)
		}
		encs[i] = e
		back, err := DecodeTerm("n_int", e)
		if err != nil || back != v {
			t.Fatalf("round trip %s -> %q (%v)", v, back, err)
		}
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bytes.Compare(encs[idx[a]], encs[idx[b]]) < 0 })
	for k := 1; k < len(idx); k++ {
		a, _ := new(big.Int).SetString(vals[idx[k-1]], 10)
		b, _ := new(big.Int).SetString(vals[idx[k]], 10)
		if a.Cmp(b) > 0 {
			t.Fatalf("byte order %s > %s", a, b)
		}
	}
}

func TestDiffAndEntries(t *testing.T) {
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }
	o := &core.Object{Siblings: []core.Sibling{
		{Indexes: []core.IndexEntry{e("b_bin", "x"), e("a_int", "10"), e("a_int", "9")}},
		{Indexes: []core.IndexEntry{e("b_bin", "x"), e("c_bin", "q")}},
		{Deleted: true, Indexes: []core.IndexEntry{e("z_bin", "gone")}},
	}}
	got := Entries(o)
	want := []core.IndexEntry{e("a_int", "9"), e("a_int", "10"), e("b_bin", "x"), e("c_bin", "q")}
	if len(got) != len(want) {
		t.Fatalf("Entries = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Entries = %v, want %v", got, want)
		}
	}
	next := []core.IndexEntry{e("a_int", "10"), e("b_bin", "y"), e("c_bin", "q")}
	add, rm := Diff(got, next)
	if len(add) != 1 || add[0] != e("b_bin", "y") || len(rm) != 2 || rm[0] != e("a_int", "9") || rm[1] != e("b_bin", "x") {
		t.Fatalf("Diff: add %v remove %v", add, rm)
	}
}

func TestPostingKeyRoundTrip(t *testing.T) {
	k, err := PostingKey("default", "b\x00", "k/1", core.IndexEntry{Field: "age_int", Value: "-12"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePosting(k)
	if err != nil || p != (Posting{"default", "b\x00", "age_int", "-12", "k/1"}) {
		t.Fatalf("DecodePosting = %+v, %v", p, err)
	}
	if !bytes.HasPrefix(k, FieldPrefix("default", "b\x00", "age_int")) {
		t.Fatal("posting key outside its field prefix")
	}
}
