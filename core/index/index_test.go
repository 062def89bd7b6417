package index

import (
	"bytes"
	"testing"

	"github.com/cairnkv/cairn/core"
)

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
