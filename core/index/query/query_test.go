package query

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
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

func TestNew(t *testing.T) {
	for _, c := range []struct {
		field string
		terms []string
		want  Query
		err   ErrorKind
	}{
		{"Email_BIN", []string{"a@x"}, Query{Field: "email_bin", Start: "a@x", End: "a@x"}, 0},
		{"age_int", []string{"+007", "-0"}, Query{Field: "age_int", Start: "7", End: "0", Range: true}, 0},
		{"$bucket", nil, Query{Field: "$bucket"}, 0},
		{"$BUCKET", []string{"a", "b", "c"}, Query{Field: "$bucket"}, 0},
		{"$key", []string{"a", "z"}, Query{Field: "$key", Start: "a", End: "z", Range: true}, 0},
		{"$key", []string{"k"}, Query{Field: "$key", Start: "k", End: "k"}, 0},
		{"foo", []string{"1"}, Query{}, UnknownFieldType},
		{"_bin", []string{"1"}, Query{}, UnknownFieldType},
		{"_int", []string{"1"}, Query{}, UnknownFieldType},
		{"x_$key", []string{"1"}, Query{}, UnknownFieldType},
		{"age_int", []string{"abc"}, Query{}, FieldParsingFailed},
		{"age_int", []string{"1", "1.5"}, Query{}, FieldParsingFailed},
		{"age_int", []string{""}, Query{}, FieldParsingFailed},
		{"a_bin", nil, Query{}, TooFewArguments},
		{"a_bin", []string{"1", "2", "3"}, Query{}, TooManyArguments},
	} {
		q, err := New(c.field, c.terms)
		if c.err != 0 {
			var qe *Error
			if !errors.As(err, &qe) || qe.Kind != c.err {
				t.Errorf("New(%q, %q) = %v, want kind %d", c.field, c.terms, err, c.err)
			}
			continue
		}
		if err != nil || q.Field != c.want.Field || q.Start != c.want.Start || q.End != c.want.End || q.Range != c.want.Range {
			t.Errorf("New(%q, %q) = %+v, %v; want %+v", c.field, c.terms, q, err, c.want)
		}
	}
}

func TestCursorTokens(t *testing.T) {
	for _, c := range []Cursor{
		{Key: []byte("k")},
		{Key: nil},
		{Key: []byte("\x00\xff/+=")},
		{HasTerm: true, Term: []byte("term"), Key: []byte("key")},
		{HasTerm: true, Term: nil, Key: nil},
		{HasTerm: true, Term: bytes.Repeat([]byte("t"), 300), Key: []byte("k")},
	} {
		tok := c.Token()
		if strings.ContainsAny(tok, "+/=%&") {
			t.Errorf("token %q needs escaping in a URL", tok)
		}
		back, err := ParseCursor(tok)
		if err != nil || back.HasTerm != c.HasTerm || !bytes.Equal(back.Term, c.Term) || !bytes.Equal(back.Key, c.Key) {
			t.Errorf("ParseCursor(Token(%+v)) = %+v, %v", c, back, err)
		}
		if again := back.Token(); again != tok {
			t.Errorf("token not stable: %q then %q", tok, again)
		}
	}
	for _, bad := range []string{"", "!!!", "a2sy=", "eA", "dA", "dAU", "dIABAQ", "a2t"} {
		if c, err := ParseCursor(bad); err == nil {
			t.Errorf("ParseCursor(%q) = %+v, want an error", bad, c)
		}
	}
}
