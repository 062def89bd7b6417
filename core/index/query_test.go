package index

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// testStore is a store holding postings and object records written straight to storage.
type testStore struct {
	db *storage.DB
}

func newTestStore(t testing.TB) *testStore {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &testStore{db: db}
}

// posting is one (field, term, key) entry of bucket "b" of the default type.
type posting struct{ field, term, key string }

func (s *testStore) add(t testing.TB, typ, bucket string, ps ...posting) {
	t.Helper()
	b := s.db.NewBatch()
	for _, p := range ps {
		k, err := PostingKey(typ, bucket, p.key, core.IndexEntry{Field: p.field, Value: p.term})
		if err != nil {
			t.Fatal(err)
		}
		b.Put(k, nil)
	}
	if err := s.db.Write(b, false); err != nil {
		t.Fatal(err)
	}
}

// object writes an object record; its value is what the test's visibility rule reads.
func (s *testStore) object(t testing.TB, typ, bucket, key, record string) {
	t.Helper()
	if err := s.db.Put(storage.KeyString(storage.TagObject, typ, bucket, key), []byte(record), false); err != nil {
		t.Fatal(err)
	}
}

// visibleRule is the test's stand-in for kv's: a record "dead" is not visible.
func visibleRule(rec []byte) (bool, error) {
	if string(rec) == "corrupt" {
		return false, errors.New("corrupt record")
	}
	return string(rec) != "dead", nil
}

type result struct{ term, key string }

// run runs q and collects its results.
func (s *testStore) run(t testing.TB, typ, bucket string, q Query) ([]result, Page, error) {
	t.Helper()
	snap, err := s.db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	q.ReturnTerms = true // every result's term, for the comparisons
	var out []result
	page, err := Run(context.Background(), snap, typ, bucket, q, visibleRule, nil, func(term, key []byte) error {
		out = append(out, result{string(term), string(key)})
		return nil
	})
	return out, page, err
}

func mustQuery(t testing.TB, field string, terms ...string) Query {
	t.Helper()
	q, err := NewQuery(field, terms)
	if err != nil {
		t.Fatalf("NewQuery(%q, %q): %v", field, terms, err)
	}
	return q
}

func fmtResults(rs []result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.term + "=" + r.key
	}
	return strings.Join(parts, " ")
}

func TestQueryForms(t *testing.T) {
	s := newTestStore(t)
	s.add(t, "default", "b",
		posting{"name_bin", "alice", "k1"},
		posting{"name_bin", "bob", "k2"},
		posting{"name_bin", "bob", "k3"},
		posting{"name_bin", "carol", "k4"},
		posting{"name_bin", "with\x00zero", "k\x00z"},
		posting{"name_bin", "", "empty"},
		posting{"age_int", "-5", "k1"},
		posting{"age_int", "7", "k1"},
		posting{"age_int", "7", "k2"},
		posting{"age_int", "10", "k2"},
		posting{"age_int", "123456789012345678901234567890", "big"},
		posting{"age_int", "-123456789012345678901234567890", "small"},
		posting{"other_bin", "bob", "x"},
	)
	s.add(t, "default", "other", posting{"name_bin", "bob", "elsewhere"})
	s.add(t, "T", "b", posting{"name_bin", "bob", "typed"})
	for _, k := range []string{"a", "b", "c", "d\x00e", "zz"} {
		s.object(t, "default", "b", k, "live")
	}
	s.object(t, "default", "b", "gone", "dead")
	s.object(t, "default", "b2", "a", "live")

	re := regexp.MustCompile
	for _, c := range []struct {
		name string
		typ  string
		q    Query
		want string
	}{
		{"exact bin", "", mustQuery(t, "name_bin", "bob"), "bob=k2 bob=k3"},
		{"exact bin typed", "T", mustQuery(t, "name_bin", "bob"), "bob=typed"},
		{"exact bin missing", "", mustQuery(t, "name_bin", "bo"), ""},
		{"exact empty term", "", mustQuery(t, "name_bin", ""), "=empty"},
		{"exact zero byte", "", mustQuery(t, "name_bin", "with\x00zero"), "with\x00zero=k\x00z"},
		{"range bin", "", mustQuery(t, "name_bin", "b", "c"), "bob=k2 bob=k3"},
		{"range bin inclusive", "", mustQuery(t, "name_bin", "alice", "carol"), "alice=k1 bob=k2 bob=k3 carol=k4"},
		{"range bin all", "", mustQuery(t, "name_bin", "", "\xff"), "=empty alice=k1 bob=k2 bob=k3 carol=k4 with\x00zero=k\x00z"},
		{"range reversed", "", mustQuery(t, "name_bin", "z", "a"), ""},
		{"exact int", "", mustQuery(t, "age_int", "7"), "7=k1 7=k2"},
		{"exact int non-canonical", "", mustQuery(t, "age_int", "+0007"), "7=k1 7=k2"},
		{"range int numeric", "", mustQuery(t, "age_int", "-10", "9"), "-5=k1 7=k1 7=k2"},
		{"range int keeps duplicates", "", mustQuery(t, "age_int", "0", "100"), "7=k1 7=k2 10=k2"},
		{"range int big", "", mustQuery(t, "age_int", "-1"+strings.Repeat("0", 40), "1"+strings.Repeat("0", 40)),
			"-123456789012345678901234567890=small -5=k1 7=k1 7=k2 10=k2 123456789012345678901234567890=big"},
		{"range int beyond encoding", "", mustQuery(t, "age_int", "-1"+strings.Repeat("0", 700), "1"+strings.Repeat("0", 700)),
			"-123456789012345678901234567890=small -5=k1 7=k1 7=k2 10=k2 123456789012345678901234567890=big"},
		{"range int above encoding", "", mustQuery(t, "age_int", "1"+strings.Repeat("0", 700), "2"+strings.Repeat("0", 700)), ""},
		{"regex bin", "", withRegex(mustQuery(t, "name_bin", "a", "z"), re("^[ab]")), "alice=k1 bob=k2 bob=k3"},
		{"regex bin exact", "", withRegex(mustQuery(t, "name_bin", "bob"), re("x")), ""},
		{"bucket", "", mustQuery(t, "$bucket"), "=a =b =c =d\x00e =zz"},
		{"bucket ignores regex", "", withRegex(mustQuery(t, "$bucket"), re("^a$")), "=a =b =c =d\x00e =zz"},
		{"bucket empty", "", mustQuery(t, "$bucket"), "=a =b =c =d\x00e =zz"},
		{"key exact", "", mustQuery(t, "$key", "c"), "c=c"},
		{"key exact tombstone", "", mustQuery(t, "$key", "gone"), ""},
		{"key range", "", mustQuery(t, "$key", "b", "d\x00e"), "b=b c=c d\x00e=d\x00e"},
		{"key range regex", "", withRegex(mustQuery(t, "$key", "a", "zz"), re("^[^b]$")), "a=a c=c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			typ := c.typ
			if typ == "" {
				typ = "default"
			}
			got, page, err := s.run(t, typ, "b", c.q)
			if err != nil {
				t.Fatal(err)
			}
			if fmtResults(got) != c.want {
				t.Errorf("got  %q\nwant %q", fmtResults(got), c.want)
			}
			if page.Count != len(got) || page.Continuation != "" {
				t.Errorf("page %+v for %d results", page, len(got))
			}
		})
	}
}

func withRegex(q Query, re *regexp.Regexp) Query {
	q.TermRegex = re
	return q
}

func TestIntTermsOnlyWhenAsked(t *testing.T) {
	s := newTestStore(t)
	s.add(t, "default", "b", posting{"n_int", "7", "k"})
	snap, err := s.db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	for _, rt := range []bool{false, true} {
		q := mustQuery(t, "n_int", "0", "9")
		q.ReturnTerms = rt
		var got []string
		if _, err := Run(context.Background(), snap, "default", "b", q, nil, nil, func(term, key []byte) error {
			got = append(got, fmt.Sprintf("%v:%q=%s", term == nil, term, key))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := "true:\"\"=k"
		if rt {
			want = "false:\"7\"=k"
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("ReturnTerms=%v: %q, want %q", rt, got, want)
		}
	}
}

func TestQueryRefusals(t *testing.T) {
	s := newTestStore(t)
	intQ := mustQuery(t, "n_int", "1", "2")
	intQ.TermRegex = regexp.MustCompile("1")
	keyCursor := &Cursor{Key: []byte("k")}
	termCursor := &Cursor{HasTerm: true, Term: []byte("t"), Key: []byte("k")}
	rangeWithKeyCursor := mustQuery(t, "a_bin", "a", "b")
	rangeWithKeyCursor.After = keyCursor
	exactWithTermCursor := mustQuery(t, "a_bin", "a")
	exactWithTermCursor.After = termCursor
	intBadTerm := mustQuery(t, "n_int", "1", "2")
	intBadTerm.After = &Cursor{HasTerm: true, Term: []byte("t"), Key: []byte("k")}
	for name, c := range map[string]struct {
		q    Query
		kind ErrorKind
	}{
		"regex on int":               {intQ, RegexOnInteger},
		"unknown field":              {Query{Field: "nope"}, UnknownFieldType},
		"bad int term":               {Query{Field: "n_int", Start: "x", End: "1"}, FieldParsingFailed},
		"range with a key cursor":    {rangeWithKeyCursor, InvalidContinuation},
		"exact with a term cursor":   {exactWithTermCursor, InvalidContinuation},
		"int cursor with a bad term": {intBadTerm, InvalidContinuation},
	} {
		_, _, err := s.run(t, "default", "b", c.q)
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Kind != c.kind {
			t.Errorf("%s: %v, want kind %d", name, err, c.kind)
		}
		if err != nil && err.Error() == "" {
			t.Errorf("%s: empty error text", name)
		}
	}
}

// TestPagination walks every query form page by page and checks that the pages
// concatenate to the unpaged results, that only full pages carry a continuation, and
// that tokens are stable.
func TestPagination(t *testing.T) {
	s := newTestStore(t)
	var ps []posting
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("k%02d", i)
		ps = append(ps, posting{"n_int", strconv.Itoa(i%7 - 3), k}, posting{"n_int", strconv.Itoa(i % 5), k},
			posting{"s_bin", string(rune('a' + i%4)), k})
		s.object(t, "default", "b", k, "live")
	}
	s.object(t, "default", "b", "k05", "dead")
	s.add(t, "default", "b", ps...)
	queries := map[string]Query{
		"int range": mustQuery(t, "n_int", "-2", "3"),
		"int exact": mustQuery(t, "n_int", "1"),
		"bin range": mustQuery(t, "s_bin", "a", "c"),
		"bucket":    mustQuery(t, "$bucket"),
		"key range": mustQuery(t, "$key", "k03", "k33"),
		"regex":     withRegex(mustQuery(t, "s_bin", "a", "d"), regexp.MustCompile("[bd]")),
	}
	for name, q := range queries {
		for _, size := range []int{1, 3, 7, 1000} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				all, _, err := s.run(t, "default", "b", q)
				if err != nil {
					t.Fatal(err)
				}
				var walked []result
				pq := q
				pq.MaxResults = size
				for pages := 0; ; pages++ {
					if pages > len(all)+1 {
						t.Fatal("pagination does not end")
					}
					got, page, err := s.run(t, "default", "b", pq)
					if err != nil {
						t.Fatal(err)
					}
					walked = append(walked, got...)
					if len(got) > size {
						t.Fatalf("page of %d results, max %d", len(got), size)
					}
					if (page.Continuation != "") != (len(got) == size) {
						t.Fatalf("page of %d (max %d) with continuation %q", len(got), size, page.Continuation)
					}
					if page.Continuation == "" {
						break
					}
					if _, again, _ := s.run(t, "default", "b", pq); again.Continuation != page.Continuation {
						t.Fatalf("continuation not stable: %q then %q", page.Continuation, again.Continuation)
					}
					c, err := ParseCursor(page.Continuation)
					if err != nil {
						t.Fatal(err)
					}
					pq.After = &c
				}
				if fmtResults(walked) != fmtResults(all) {
					t.Fatalf("pages give\n%s\nunpaged\n%s", fmtResults(walked), fmtResults(all))
				}
			})
		}
	}
}

// TestRandomQueries compares Run with a direct evaluation of the definition over random
// postings: every (term, key) entry in the inclusive range (numeric for _int, bytewise
// for _bin), sorted by (term, key).
func TestRandomQueries(t *testing.T) {
	s := newTestStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var ps []posting
	alphabet := []string{"", "a", "b", "\x00", "\xff", "ab", "a\x00", "b\x01"}
	for i := 0; i < 400; i++ {
		k := alphabet[rng.IntN(len(alphabet))] + alphabet[rng.IntN(len(alphabet))]
		ps = append(ps, posting{"t_bin", alphabet[rng.IntN(len(alphabet))] + alphabet[rng.IntN(len(alphabet))], k})
		n := big.NewInt(rng.Int64N(1 << 20))
		n.Lsh(n, uint(rng.IntN(100)))
		if rng.IntN(2) == 0 {
			n.Neg(n)
		}
		ps = append(ps, posting{"t_int", n.String(), k})
	}
	s.add(t, "default", "b", ps...)
	uniq := map[posting]bool{}
	for _, p := range ps {
		uniq[p] = true
	}
	cmpTerm := func(field, a, b string) int {
		if strings.HasSuffix(field, "_int") {
			return core.CompareIntValues(a, b)
		}
		return strings.Compare(a, b)
	}
	for i := 0; i < 300; i++ {
		field := "t_bin"
		var lo, hi string
		if i%2 == 0 {
			field = "t_int"
			x, y := big.NewInt(rng.Int64N(1<<21)-(1<<20)), big.NewInt(rng.Int64N(1<<21)-(1<<20))
			x.Lsh(x, uint(rng.IntN(100)))
			y.Lsh(y, uint(rng.IntN(100)))
			lo, hi = x.String(), y.String()
		} else {
			lo, hi = alphabet[rng.IntN(len(alphabet))], alphabet[rng.IntN(len(alphabet))]+alphabet[rng.IntN(len(alphabet))]
		}
		var want []result
		for p := range uniq {
			if p.field == field && cmpTerm(field, p.term, lo) >= 0 && cmpTerm(field, p.term, hi) <= 0 {
				want = append(want, result{p.term, p.key})
			}
		}
		slices.SortFunc(want, func(a, b result) int {
			if c := cmpTerm(field, a.term, b.term); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		})
		got, _, err := s.run(t, "default", "b", mustQuery(t, field, lo, hi))
		if err != nil {
			t.Fatal(err)
		}
		if fmtResults(got) != fmtResults(want) {
			t.Fatalf("%s %s..%s:\ngot  %q\nwant %q", field, lo, hi, fmtResults(got), fmtResults(want))
		}
	}
}

func TestRunStops(t *testing.T) {
	s := newTestStore(t)
	var ps []posting
	for i := 0; i < 3000; i++ {
		ps = append(ps, posting{"a_bin", "x", fmt.Sprintf("k%05d", i)})
	}
	s.add(t, "default", "b", ps...)
	snap, err := s.db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	q := mustQuery(t, "a_bin", "x")

	stop := errors.New("stop")
	n := 0
	_, err = Run(context.Background(), snap, "default", "b", q, nil, nil, func(_, _ []byte) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Errorf("callback error: %v after %d results", err, n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	_, err = Run(ctx, snap, "default", "b", q, nil, nil, func(_, _ []byte) error {
		if n++; n == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > checkEvery+5 {
		t.Errorf("cancelled: %v after %d results", err, n)
	}

	s.object(t, "default", "c", "k", "corrupt")
	snap2, _ := s.db.NewSnapshot()
	defer snap2.Release()
	if _, err := Run(context.Background(), snap2, "default", "c", mustQuery(t, "$bucket"), visibleRule, nil, func(_, _ []byte) error { return nil }); err == nil {
		t.Error("a record the visibility rule cannot read did not fail the query")
	}
}

func TestComponentAndIntDecoding(t *testing.T) {
	for _, c := range []string{"", "a", "\x00", "a\x00b\x00", "\x00\x00\xff\x01"} {
		enc := storage.AppendComponent(nil, []byte(c))
		enc = append(enc, "tail"...)
		var scratch []byte
		got, rest, ok := component(enc, &scratch)
		if !ok || string(got) != c || string(rest) != "tail" {
			t.Errorf("component(%q) = %q, %q, %v", enc, got, rest, ok)
		}
	}
	for _, bad := range []string{"", "abc", "a\x00", "a\x00\x02", "a\x00\xffb"} {
		var scratch []byte
		if _, _, ok := component([]byte(bad), &scratch); ok {
			t.Errorf("component(%q) accepted", bad)
		}
	}
	for _, v := range []string{"0", "1", "-1", "255", "-256", "18446744073709551615", "-18446744073709551615", "18446744073709551616", "-99999999999999999999999"} {
		enc, err := EncodeTerm("n_int", v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendIntTerm(nil, "n_int", enc)
		if !ok || string(got) != v {
			t.Errorf("appendIntTerm(%s) = %q, %v", v, got, ok)
		}
	}
	for _, bad := range [][]byte{nil, {0x02}, {0x02, 0x02, 0x01}, {0x03, 0x00}, {0x01, 0xff, 0x00}} {
		if got, ok := appendIntTerm(nil, "n_int", bad); ok {
			t.Errorf("appendIntTerm(%x) = %q", bad, got)
		}
	}
	enc, _ := EncodeTerm("n_int", "-123456")
	if n := testing.AllocsPerRun(100, func() {
		var buf [32]byte
		appendIntTerm(buf[:0], "n_int", enc)
	}); n != 0 {
		t.Errorf("appendIntTerm allocates %v times", n)
	}
}

func TestRunDoesNotAllocatePerResult(t *testing.T) {
	s := newTestStore(t)
	var ps []posting
	for i := 0; i < 2000; i++ {
		ps = append(ps, posting{"n_int", strconv.Itoa(i), fmt.Sprintf("key-%05d", i)})
	}
	s.add(t, "default", "b", ps...)
	snap, err := s.db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	measure := func(hi string) float64 {
		q := mustQuery(t, "n_int", "0", hi)
		return testing.AllocsPerRun(20, func() {
			if _, err := Run(context.Background(), snap, "default", "b", q, nil, nil, func(_, _ []byte) error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := measure("10"), measure("1999")
	if large-small > 40 { // iterator block reads may allocate a little; nothing per result
		t.Errorf("allocations grow with results: %v for 11 results, %v for 2000", small, large)
	}
}

// benchPostings is the size of the benchmark index.
const benchPostings = 100_000

// benchStore holds benchPostings _int postings (one per key) in a compacted store.
func benchStore(b *testing.B) *storage.Snapshot {
	s := newTestStore(b)
	batch := s.db.NewBatch()
	for i := 0; i < benchPostings; i++ {
		k, _ := PostingKey("default", "bench", fmt.Sprintf("key-%07d", i), core.IndexEntry{Field: "n_int", Value: strconv.Itoa(i)})
		batch.Put(k, nil)
		if batch.Len() == 10_000 {
			if err := s.db.Write(batch, false); err != nil {
				b.Fatal(err)
			}
			batch = s.db.NewBatch()
		}
	}
	if err := s.db.Write(batch, false); err != nil {
		b.Fatal(err)
	}
	if err := s.db.CompactRange(nil, nil); err != nil {
		b.Fatal(err)
	}
	snap, err := s.db.NewSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(snap.Release)
	return snap
}

// BenchmarkRawIterator reads the benchmark postings with a bare iterator, touching each
// key: the floor a query cannot beat. Compare its ns/entry with BenchmarkRangeQuery's.
func BenchmarkRawIterator(b *testing.B) {
	snap := benchStore(b)
	prefix := FieldPrefix("default", "bench", "n_int")
	b.ResetTimer()
	for range b.N {
		it := snap.IteratePrefix(prefix)
		n, sum := 0, 0
		for it.Next() {
			sum += len(it.Key())
			n++
		}
		it.Release()
		if n != benchPostings || sum == 0 {
			b.Fatalf("%d entries", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchPostings), "ns/entry")
}

// BenchmarkRangeQuery runs a range query over all the benchmark postings in pages of
// 1000, following the continuations, and copies every result into a buffer as JSON-ish
// text; "keys" is a plain query, "terms" one with ReturnTerms (the _int terms decoded).
func BenchmarkRangeQuery(b *testing.B) {
	snap := benchStore(b)
	for _, terms := range []bool{false, true} {
		name := "keys"
		if terms {
			name = "terms"
		}
		b.Run(name, func(b *testing.B) {
			q := mustQuery(b, "n_int", "0", strconv.Itoa(benchPostings))
			q.MaxResults = 1000
			q.ReturnTerms = terms
			buf := make([]byte, 0, 64<<10)
			b.ResetTimer()
			for range b.N {
				pq := q
				n := 0
				for {
					buf = buf[:0]
					page, err := Run(context.Background(), snap, "default", "bench", pq, nil, nil, func(term, key []byte) error {
						buf = append(buf, '{', '"')
						buf = append(buf, term...)
						buf = append(buf, '"', ':', '"')
						buf = append(buf, key...)
						buf = append(buf, '"', '}', ',')
						n++
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					if page.Continuation == "" {
						break
					}
					c, err := ParseCursor(page.Continuation)
					if err != nil {
						b.Fatal(err)
					}
					pq.After = &c
				}
				if n != benchPostings {
					b.Fatalf("%d results", n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchPostings), "ns/entry")
		})
	}
}

// BenchmarkRangeQueryVsRaw alternates a raw iterator pass and a paged range query (1000
// per page, keys only) over the benchmark postings in every iteration and reports both
// costs and their ratio, which stays meaningful on a machine whose load varies.
func BenchmarkRangeQueryVsRaw(b *testing.B) {
	snap := benchStore(b)
	prefix := FieldPrefix("default", "bench", "n_int")
	q := mustQuery(b, "n_int", "0", strconv.Itoa(benchPostings))
	q.MaxResults = 1000
	buf := make([]byte, 0, 64<<10)
	var raw, query time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		it := snap.IteratePrefix(prefix)
		sum := 0
		for it.Next() {
			sum += len(it.Key())
		}
		it.Release()
		raw += time.Since(start)

		start = time.Now()
		pq := q
		for {
			buf = buf[:0]
			page, err := Run(context.Background(), snap, "default", "bench", pq, nil, nil, func(term, key []byte) error {
				buf = append(buf, '"')
				buf = append(buf, key...)
				buf = append(buf, '"', ',')
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if page.Continuation == "" {
				break
			}
			c, _ := ParseCursor(page.Continuation)
			pq.After = &c
		}
		query += time.Since(start)
		if sum == 0 {
			b.Fatal("empty")
		}
	}
	per := float64(b.N * benchPostings)
	b.ReportMetric(float64(raw.Nanoseconds())/per, "raw-ns/entry")
	b.ReportMetric(float64(query.Nanoseconds())/per, "query-ns/entry")
	b.ReportMetric(float64(query)/float64(raw), "query/raw")
}
