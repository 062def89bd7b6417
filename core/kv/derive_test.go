package kv

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// sib returns a stored sibling modified at t, deleted or with index entries.
func sib(t time.Time, deleted bool, idx ...core.IndexEntry) storedSibling {
	return storedSibling{Sibling: core.Sibling{Value: []byte("v"), Deleted: deleted, LastModified: t, Indexes: idx},
		dot: vclock.Dot{Actor: "n", Counter: 1}}
}

// TestDeriveObject: the store applies the postings and reap entries that derive
// computes from the record committed before and the new one, whoever writes.
func TestDeriveObject(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	t1 := t0.Add(time.Second)
	delay := 3 * time.Second
	a := core.IndexEntry{Field: "a_bin", Value: "x"}
	b := core.IndexEntry{Field: "n_int", Value: "5"}
	c := core.IndexEntry{Field: "a_bin", Value: "y"}
	rec := func(sibs ...storedSibling) []byte {
		return (&record{clock: vclock.VClock{{Actor: "n", Counter: 1}}, siblings: sibs}).encode()
	}
	tests := []struct {
		name          string
		old, new      []byte // nil: absent / a delete
		postings      []core.IndexEntry
		reapDeadlines []time.Time
	}{
		{"create", nil, rec(sib(t0, false, a, b)), []core.IndexEntry{a, b}, nil},
		{"change terms", rec(sib(t0, false, a, b)), rec(sib(t1, false, c, b)), []core.IndexEntry{c, b}, nil},
		{"same terms", rec(sib(t0, false, a)), rec(sib(t1, false, a)), []core.IndexEntry{a}, nil},
		{"delete", rec(sib(t0, false, a)), rec(sib(t1, true)), nil, []time.Time{t1.Add(delay)}},
		{"live sibling next to a tombstone", rec(sib(t0, false, a)), rec(sib(t0, false, a), sib(t1, true)), []core.IndexEntry{a}, nil},
		{"concurrent tombstones", rec(sib(t0, true)), rec(sib(t0, true), sib(t1, true)), nil, []time.Time{t1.Add(delay)}},
		{"write over a tombstone", rec(sib(t0, true)), rec(sib(t1, false, c)), []core.IndexEntry{c}, nil},
		{"reap", rec(sib(t0, true)), nil, nil, nil},
		{"remove a live record", rec(sib(t0, false, a, b)), nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			db.RegisterDerive(storage.TagObject, objectDeriver{reapDelay: delay}.derive)
			k := objectKey(core.DefaultType, "b", "k")
			for _, v := range [][]byte{tc.old, tc.new} {
				var batch storage.Batch
				if v == nil {
					batch.Delete(k)
				} else {
					batch.Put(k, v)
				}
				if err := db.Commit(ctx, &batch, false); err != nil {
					t.Fatal(err)
				}
			}
			var want [][]byte
			for _, e := range index.Normalize(tc.postings) {
				pk, err := index.PostingKey(core.DefaultType, "b", "k", e)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, pk)
			}
			for _, d := range tc.reapDeadlines {
				want = append(want, reapKey(d, core.DefaultType, "b", "k"))
			}
			var got [][]byte
			for _, tag := range []byte{storage.TagIndex, storage.TagReap} {
				it := db.IteratePrefix([]byte{tag})
				for it.Next() {
					got = append(got, slices.Clone(it.Key()))
				}
				it.Release()
			}
			if !slices.EqualFunc(got, want, func(x, y []byte) bool { return string(x) == string(y) }) {
				t.Fatalf("derived keys %q, want %q", got, want)
			}
		})
	}
}

// TestScanDerivedMatchesDecode: scanDerived reads what decodeRecord reads, and refuses
// what it refuses.
func TestScanDerivedMatchesDecode(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 5).UTC()
	a := core.IndexEntry{Field: "a_bin", Value: "x"}
	full := &record{clock: vclock.VClock{{Actor: "n", Counter: 2}}, siblings: []storedSibling{
		{Sibling: core.Sibling{Value: []byte("v1"), ContentType: "text/plain", LastModified: t0, Indexes: []core.IndexEntry{a},
			Meta: []core.MetaEntry{{Name: "m", Value: "1"}}, Links: []core.Link{{Bucket: "b", Key: "k", Tag: "t"}}}},
		{Sibling: core.Sibling{Deleted: true, LastModified: t0.Add(time.Second)}},
	}}
	enc := full.encode()
	for _, data := range [][]byte{enc, (&record{}).encode(), enc[:len(enc)-1], append(slices.Clone(enc), 0), {2}, {}} {
		r, derr := decodeRecord(data)
		info, serr := scanDerived(data, nil)
		if (derr == nil) != (serr == nil) {
			t.Fatalf("%x: decodeRecord %v, scanDerived %v", data, derr, serr)
		}
		if derr != nil {
			if !errors.Is(serr, errCorrupt) {
				t.Fatalf("%x: scanDerived error %v, want errCorrupt", data, serr)
			}
			continue
		}
		want := derivedInfo{present: true, entries: index.Entries(r.object("t", "b", "k")), allDeleted: r.allDeleted(),
			lastMod: r.lastModified()}
		if !info.lastMod.Equal(want.lastMod) || info.allDeleted != want.allDeleted || !slices.Equal(info.entries, want.entries) {
			t.Fatalf("%x: scanDerived %+v, decodeRecord gives %+v", data, info, want)
		}
	}
}
