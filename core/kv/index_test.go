package kv

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
)

// query runs an index query on the default type through a fresh view and returns
// "term=key" results joined by spaces.
func query(t testing.TB, s *Service, bucket, field string, terms ...string) string {
	t.Helper()
	out, err := tryQuery(s, core.DefaultType, bucket, field, terms...)
	if err != nil {
		t.Fatalf("query %s %s %q: %v", bucket, field, terms, err)
	}
	return out
}

func tryQuery(s *Service, typ, bucket, field string, terms ...string) (string, error) {
	q, err := index.NewQuery(field, terms)
	if err != nil {
		return "", err
	}
	q.ReturnTerms = true
	v, err := s.View(ctx)
	if err != nil {
		return "", err
	}
	defer v.Close()
	var parts []string
	_, err = v.Index(ctx, typ, bucket, q, func(term, key []byte) error {
		parts = append(parts, string(term)+"="+string(key))
		return nil
	})
	return strings.Join(parts, " "), err
}

func TestIndexQueriesFollowWrites(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now, ReapDelay: 3 * time.Second})
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }

	put(t, s, "b", "k1", "v", nil, e("n_int", "5"), e("n_int", "-3"), e("s_bin", "x"))
	put(t, s, "b", "k2", "v", nil, e("n_int", "5"))
	if got, want := query(t, s, "b", "n_int", "-10", "10"), "-3=k1 5=k1 5=k2"; got != want {
		t.Fatalf("range = %q, want %q", got, want)
	}
	if got, want := query(t, s, "b", "$bucket"), "=k1 =k2"; got != want {
		t.Fatalf("$bucket = %q, want %q", got, want)
	}

	// An update that changes the entries replaces the postings.
	put(t, s, "b", "k1", "v2", get(t, s, "b", "k1").VClock, e("n_int", "7"))
	if got, want := query(t, s, "b", "n_int", "-10", "10"), "5=k2 7=k1"; got != want {
		t.Fatalf("after update = %q, want %q", got, want)
	}
	if got := query(t, s, "b", "s_bin", "x"); got != "" {
		t.Fatalf("removed entry still found: %q", got)
	}

	// A delete removes the postings at once; $bucket and $key list the tombstone while
	// it is visible, as key listing does.
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k2", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := query(t, s, "b", "n_int", "5"), ""; got != want {
		t.Fatalf("after delete = %q, want %q", got, want)
	}
	if got, want := query(t, s, "b", "$key", "k2"), "k2=k2"; got != want {
		t.Fatalf("$key of a fresh tombstone = %q, want %q", got, want)
	}
	clk.Add(3 * time.Second)
	if got, want := query(t, s, "b", "$bucket"), "=k1"; got != want {
		t.Fatalf("$bucket after the reap delay = %q, want %q", got, want)
	}
	if got, want := query(t, s, "b", "$key", "a", "z"), "k1=k1"; got != want {
		t.Fatalf("$key range after the reap delay = %q, want %q", got, want)
	}
}

func TestIndexQueriesSeeEverySibling(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "m", `{"allow_mult":true}`)
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }
	put(t, s, "m", "k", "one", nil, e("c_bin", "red"))
	put(t, s, "m", "k", "two", nil, e("c_bin", "blue"))
	if got, want := query(t, s, "m", "c_bin", "a", "z"), "blue=k red=k"; got != want {
		t.Fatalf("siblings' entries = %q, want %q", got, want)
	}
	put(t, s, "m", "k", "merged", get(t, s, "m", "k").VClock, e("c_bin", "red"))
	if got, want := query(t, s, "m", "c_bin", "a", "z"), "red=k"; got != want {
		t.Fatalf("after resolving = %q, want %q", got, want)
	}
}

func TestIndexUnknownType(t *testing.T) {
	s := newTestService(t, Config{})
	if _, err := tryQuery(s, "nosuchtype", "b", "a_bin", "x"); !IsNotFound(err) {
		t.Fatalf("unknown type: %v", err)
	}
}
