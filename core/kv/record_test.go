package kv

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// testRecords are records of the shapes a write produces: no clock, one actor, many
// actors with long ids, siblings with headers, a tombstone.
func testRecords() map[string]*record {
	at := time.Unix(1700000000, 123).UTC()
	long := strings.Repeat("a", vclock.MaxActorLen)
	many := vclock.VClock{}
	for _, a := range []string{"n1", "n2", long} {
		many, _ = many.Increment(a, at)
	}
	val := core.Sibling{Value: []byte("v"), ContentType: "text/plain", VTag: "t1", LastModified: at,
		Meta:    []core.MetaEntry{{Name: "m", Value: "1"}},
		Links:   []core.Link{{Bucket: "b", Key: "k", Tag: "t"}},
		Indexes: []core.IndexEntry{{Field: "f_bin", Value: "x"}}}
	return map[string]*record{
		"empty":     {},
		"no clock":  {siblings: []storedSibling{{Sibling: val}}},
		"one actor": {clock: vclock.VClock{{Actor: "n1", Counter: 1, Timestamp: 1700000000}}, siblings: []storedSibling{{Sibling: val, dot: vclock.Dot{Actor: "n1", Counter: 1}}}},
		"siblings":  {clock: many, siblings: []storedSibling{{Sibling: val, dot: vclock.Dot{Actor: "n1", Counter: 1}}, {Sibling: val, dot: vclock.Dot{Actor: long, Counter: 1}}}},
		"tombstone": {clock: many, siblings: []storedSibling{{Sibling: core.Sibling{Deleted: true, LastModified: at}, dot: vclock.Dot{Actor: "n2", Counter: 1}}}},
	}
}

// TestRecordEncodeSetsRawClock: after encode, the record's client view carries the
// clock's canonical encoding (what Encode gives), and decoding the record gives the
// same clock bytes and siblings back.
func TestRecordEncodeSetsRawClock(t *testing.T) {
	for name, r := range testRecords() {
		t.Run(name, func(t *testing.T) {
			want := r.clock.Encode()
			enc := r.encode()
			if got := r.object("default", "b", "k").VClock; !bytes.Equal(got, want) {
				t.Fatalf("object clock %x, want %x", got, want)
			}
			d, err := decodeRecord(enc)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !bytes.Equal(d.rawClock, want) {
				t.Fatalf("decoded clock %x, want %x", d.rawClock, want)
			}
			if len(d.siblings) != len(r.siblings) {
				t.Fatalf("decoded %d siblings, want %d", len(d.siblings), len(r.siblings))
			}
			if _, err := d.clockValue(); err != nil {
				t.Fatalf("decoded clock: %v", err)
			}
			if again := d.encode(); !bytes.Equal(again, enc) {
				t.Fatalf("re-encoding the decoded record differs:\n%x\n%x", again, enc)
			}
		})
	}
}

// TestPutRecord: putRecord stores the record's encoding, and the record keeps its
// clock bytes after its recycled buffer has encoded other records.
func TestPutRecord(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs := testRecords()
	for name, r := range recs {
		t.Run(name, func(t *testing.T) {
			want := r.encode()
			k := objectKey("default", "b", name)
			var b storage.Batch
			putRecord(&b, k, r)
			for _, other := range recs { // reuses the pool's buffers
				var ob storage.Batch
				putRecord(&ob, k, &record{clock: other.clock, siblings: other.siblings})
			}
			if got, clk := r.object("default", "b", name).VClock, r.clock.Encode(); !bytes.Equal(got, clk) {
				t.Fatalf("clock after the buffer was reused %x, want %x", got, clk)
			}
			if err := db.Write(&b, false); err != nil {
				t.Fatal(err)
			}
			if got, err := db.Get(k); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("stored %x (%v), want %x", got, err, want)
			}
		})
	}
}

// BenchmarkRecordEncode is a write's encoding work: the stored form and the client view
// of a one-sibling record with a 1 KiB value.
func BenchmarkRecordEncode(b *testing.B) {
	r := testRecords()["one actor"]
	r.siblings[0].Value = bytes.Repeat([]byte{'x'}, 1024)
	b.ReportAllocs()
	for b.Loop() {
		r.rawClock = nil
		_ = r.encode()
		_ = r.object("default", "b", "k")
	}
}

// TestDeriveDecodesKeyOnlyWhenNeeded: a record without index entries or tombstones has
// no derived writes, and derive does not decode its key; one that has derived writes
// still refuses a key that does not decode. It commits through a store that runs the
// deriver and counts the keys each commit adds besides the object.
func TestDeriveDecodesKeyOnlyWhenNeeded(t *testing.T) {
	recs := testRecords()
	plain := &record{clock: recs["one actor"].clock, siblings: []storedSibling{{Sibling: core.Sibling{Value: []byte("v")}}}}
	good, bad := objectKey("default", "b", "k"), []byte{storage.TagObject, 0xff}
	for _, tc := range []struct {
		name    string
		key     []byte
		old     *record
		next    *record
		wantErr bool
		wantNew int // keys added besides the object's
	}{
		{"plain record, bad key", bad, nil, plain, false, 0},
		{"plain over plain, bad key", bad, plain, plain, false, 0},
		{"indexed record, bad key", bad, nil, recs["one actor"], true, 0},
		{"indexed record", good, nil, recs["one actor"], false, 1},
		{"tombstone over indexed", good, recs["one actor"], recs["tombstone"], false, 0}, // posting removed, reap entry added
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.RegisterDerive(storage.TagObject, objectDeriver{reapDelay: time.Second}.derive)
			if tc.old != nil {
				if err := db.Put(tc.key, tc.old.encode(), false); err != nil {
					t.Fatal(err)
				}
			}
			before := countKeys(t, db)
			err = db.Put(tc.key, tc.next.encode(), false)
			if (err != nil) != tc.wantErr {
				t.Fatalf("commit: %v, want an error: %v", err, tc.wantErr)
			}
			added := countKeys(t, db) - before
			if tc.old == nil && err == nil {
				added-- // the object itself
			}
			if err == nil && added != tc.wantNew {
				t.Fatalf("%d derived keys added, want %d", added, tc.wantNew)
			}
		})
	}
}

func countKeys(t *testing.T, db *storage.DB) int {
	t.Helper()
	it := db.Iterate(nil, nil)
	defer it.Release()
	n := 0
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
