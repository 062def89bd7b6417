package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/sdk/go/cairn"
	"github.com/cairnkv/cairn/sdk/go/cairntest"
)

// render joins JSON values with spaces.
func render(vals []json.RawMessage) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(v)
	}
	return strings.Join(parts, " ")
}

func TestWordcount(t *testing.T) {
	t.Parallel()
	text := func(s string) *cairn.Object { return cairn.NewObject("docs", "d1", "text/plain", []byte(s)) }
	deleted := cairntest.Tombstone("default", "docs", "d1")
	siblings := text("first sibling")
	siblings.Values = append([]cairn.Value{{Metadata: cairn.Metadata{Deleted: true}, Data: []byte{}}}, siblings.Values...)
	siblings.Values = append(siblings.Values, cairn.Value{Data: []byte("second")})

	for _, tc := range []struct {
		name string
		obj  *cairn.Object // nil: not found
		arg  any
		want string
		err  string
	}{
		{name: "counts lower-cased words", obj: text("The cat and the hat. THE END!"),
			want: `{"and":1,"cat":1,"end":1,"hat":1,"the":3}`},
		{name: "letters and digits of any script", obj: text("Größe 42, größe 42; 東京-東京 it's"),
			want: `{"42":2,"größe":2,"it":1,"s":1,"東京":2}`},
		{name: "no words", obj: text(" ... !!! "), want: `{}`},
		{name: "empty value", obj: text(""), want: `{}`},
		{name: "min_length", obj: text("a bb ccc bb"), arg: map[string]int{"min_length": 2}, want: `{"bb":2,"ccc":1}`},
		{name: "first live sibling", obj: siblings, want: `{"first":1,"sibling":1}`},
		{name: "deleted object maps to nothing", obj: deleted, want: ``},
		{name: "not found maps to nothing", want: ``},
		{name: "bad argument", obj: text("x"), arg: "long", err: "cairn: arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := cairntest.New(t)
			var got []json.RawMessage
			var err error
			if tc.obj == nil {
				got, err = host.MapNotFound(wordcountHook, cairn.Place{BucketType: "default", Bucket: "docs", Key: "gone"}, nil, tc.arg)
			} else {
				got, err = host.Map(wordcountHook, tc.obj, nil, tc.arg)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if render(got) != tc.want {
				t.Errorf("got %s, want %s", render(got), tc.want)
			}
		})
	}
}

func TestSumCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values []any
		want   string
		err    string
	}{
		{name: "sums", values: []any{json.RawMessage(`{"a":1,"b":2}`), json.RawMessage(`{"b":3,"c":1}`), json.RawMessage(`{}`)},
			want: `{"a":1,"b":5,"c":1}`},
		{name: "nothing", values: nil, want: `{}`},
		{name: "large counts stay exact", values: []any{json.RawMessage(`{"a":9007199254740993}`), json.RawMessage(`{"a":1}`)},
			want: `{"a":9007199254740994}`},
		{name: "not an object", values: []any{json.RawMessage(`[1]`)}, err: `value 0 is not a {"word": count} object: [1]`},
		{name: "null", values: []any{json.RawMessage(`{"a":1}`), nil}, err: `value 1 is not a {"word": count} object: null`},
		{name: "fractional count", values: []any{json.RawMessage(`{"a":1.5}`)}, err: `value 0: the count of "a" is not an integer: 1.5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := cairntest.New(t).Reduce(sumCountsHook, tc.values, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if render(got) != tc.want {
				t.Errorf("got %s, want %s", render(got), tc.want)
			}
		})
	}
}

// TestMapThenReduce runs a whole job by hand: map over documents, reduce in two rounds
// (re-reducing a partial result), and checks the total is the same as in one round.
func TestMapThenReduce(t *testing.T) {
	t.Parallel()
	host := cairntest.New(t)
	var mapped []any
	for i, doc := range []string{"to be or not to be", "be quick", "to the end"} {
		out, err := host.Map(wordcountHook, cairn.NewObject("docs", fmt.Sprint(i), "text/plain", []byte(doc)), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out {
			mapped = append(mapped, v)
		}
	}
	once, err := host.Reduce(sumCountsHook, mapped, nil)
	if err != nil {
		t.Fatal(err)
	}
	partial, err := host.Reduce(sumCountsHook, mapped[:2], nil)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := host.Reduce(sumCountsHook, []any{partial[0], mapped[2]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"be":3,"end":1,"not":1,"or":1,"quick":1,"the":1,"to":3}`
	if render(once) != want || render(twice) != want {
		t.Errorf("one round %s, two rounds %s, want %s", render(once), render(twice), want)
	}
}
