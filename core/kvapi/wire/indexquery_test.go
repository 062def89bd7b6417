package wire

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index/query"
)

func TestParseIndexQuery(t *testing.T) {
	termTok := query.Cursor{HasTerm: true, Term: []byte("b"), Key: []byte("k")}.Token()
	keyTok := query.Cursor{Key: []byte("k")}.Token()
	type want struct {
		field, start, end string
		rng, terms        bool
		max               int
		stream            bool
		timeout           time.Duration
		regex             bool
		after             bool
	}
	for _, c := range []struct {
		rest, qs string
		want     want
	}{
		{"email_bin/a%40b.com", "", want{field: "email_bin", start: "a@b.com", end: "a@b.com"}},
		{"Email_BIN/a+b", "", want{field: "email_bin", start: "a b", end: "a b"}},
		{"age_int/-0010/%2B20", "return_terms=TRUE", want{field: "age_int", start: "-10", end: "20", rng: true, terms: true}},
		{"age_int/5", "return_terms=true", want{field: "age_int", start: "5", end: "5"}},
		{"$key/a/z", "return_terms=true", want{field: "$key", start: "a", end: "z", rng: true}},
		{"%24key/k", "", want{field: "$key", start: "k", end: "k"}},
		{"$bucket", "return_terms=true&term_regex=x", want{field: "$bucket"}},
		{"$bucket/_/x/y", "max_results=2&continuation=" + keyTok, want{field: "$bucket", max: 2, after: true}},
		{"a_bin/a/c", "continuation=" + termTok + "&stream=true&timeout=0", want{field: "a_bin", start: "a", end: "c", rng: true, stream: true, after: true}},
		{"a_bin/a", "continuation=" + keyTok + "&timeout=%2B1500", want{field: "a_bin", start: "a", end: "a", timeout: 1500 * time.Millisecond, after: true}},
		{"a_bin/a/b", "stream=TRUE&pagination_sort=False", want{field: "a_bin", start: "a", end: "b", rng: true}},
		{"a_bin/a/b", "term_regex=%5Ea.*&max_results=99999999999999999999", want{field: "a_bin", start: "a", end: "b", rng: true, regex: true, max: 1<<31 - 1}},
	} {
		params, err := url.ParseQuery(c.qs)
		if err != nil {
			t.Fatal(err)
		}
		req, err := ParseIndexQuery(c.rest, params)
		if err != nil {
			t.Errorf("%s?%s: %v", c.rest, c.qs, err)
			continue
		}
		q := req.Query
		got := want{q.Field, q.Start, q.End, q.Range, q.ReturnTerms, q.MaxResults, req.Stream, req.Timeout, q.TermRegex != nil, q.After != nil}
		if got != c.want {
			t.Errorf("%s?%s:\n got %+v\nwant %+v", c.rest, c.qs, got, c.want)
		}
	}
}

func TestParseIndexQueryErrors(t *testing.T) {
	termTok := query.Cursor{HasTerm: true, Term: []byte("b"), Key: []byte("k")}.Token()
	for _, c := range []struct{ rest, qs, body string }{
		{"foo/1", "", "Invalid query: {unknown_field_type,<<\"foo\">>}\n"},
		{"Foo/1", "", "Invalid query: {unknown_field_type,<<\"foo\">>}\n"},
		{"_bin/1", "", "Invalid query: {unknown_field_type,<<\"_bin\">>}\n"},
		{"f%00x/1", "", "Invalid query: {unknown_field_type,<<102,0,120>>}\n"},
		{"age_int/abc", "", "Invalid query: {field_parsing_failed,{<<\"age_int\">>,<<\"abc\">>}}\n"},
		{"age_int/1/x%22y", "", "Invalid query: {field_parsing_failed,{<<\"age_int\">>,<<\"x\\\"y\">>}}\n"},
		{"age_int/1/2/3", "", "Invalid query: {too_many_arguments,[<<\"1\">>,<<\"2\">>,<<\"3\">>]}\n"},
		{"age_int", "", "Invalid query: {too_few_arguments,[]}\n"},
		{"a_bin/a/b", "continuation=!!", "Invalid query: {invalid_continuation,<<\"!!\">>}\n"},
		{"a_bin/a/b", "continuation=", "Invalid query: {invalid_continuation,<<>>}\n"},
		{"a_bin/a", "continuation=" + termTok, "Invalid query: {invalid_continuation,<<\"" + termTok + "\">>}\n"},
		{"a_int/1/2", "continuation=" + termTok, "Invalid query: {invalid_continuation,<<\"" + termTok + "\">>}\n"},
		{"a_bin/a", "return_terms=yes", `Invalid "return_terms". "yes" is not a boolean`},
		{"a_bin/a", "return_terms=", `Invalid "return_terms". "" is not a boolean`},
		{"a_bin/a", "pagination_sort=1", `Invalid "pagination_sort". "1" is not a boolean`},
		{"a_bin/a", "max_results=0", `Invalid "max_results". 0 is not a positive integer`},
		{"a_bin/a", "max_results=-007", `Invalid "max_results". -7 is not a positive integer`},
		{"a_bin/a", "max_results=ten", `Invalid "max_results". "ten" is not a positive integer`},
		{"a_bin/a", "max_results=1.5", `Invalid "max_results". "1.5" is not a positive integer`},
		{"a_int/1/2", "term_regex=1", "Can not use term regular expressions on integer queries"},
		{"a_int/1", "term_regex=1", "Can not use term regular expressions on integer queries"},
		{"a_bin/a/b", "term_regex=(a", "Invalid term regular expression \"(a\" : \"missing closing ): `(a`\""},
		{"a_int/1/2", "term_regex=(a", "Invalid term regular expression \"(a\" : \"missing closing ): `(a`\""},
		{"a_bin/a", "timeout=soon", "Bad timeout value \"soon\". Must be a non-negative integer\n"},
		{"a_bin/a", "timeout=-5", "Bad timeout value -5. Must be a non-negative integer\n"},
		{"a_bin/a", "timeout=", "Bad timeout value \"\". Must be a non-negative integer\n"},
		// The reference's order of precedence.
		{"foo/1", "pagination_sort=x&return_terms=y", `Invalid "pagination_sort". "x" is not a boolean`},
		{"foo/1", "return_terms=y&term_regex=(", `Invalid "return_terms". "y" is not a boolean`},
		{"foo/1", "term_regex=(&max_results=0&timeout=x", "Invalid term regular expression \"(\" : \"missing closing ): `(`\""},
		{"foo/1", "max_results=0&timeout=x", "Invalid query: {unknown_field_type,<<\"foo\">>}\n"},
		{"a_bin/1", "max_results=0&timeout=x", `Invalid "max_results". 0 is not a positive integer`},
		{"a_int/x", "term_regex=1", "Invalid query: {field_parsing_failed,{<<\"a_int\">>,<<\"x\">>}}\n"},
	} {
		params, err := url.ParseQuery(c.qs)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseIndexQuery(c.rest, params)
		if !errors.Is(err, ErrInvalidIndexQuery) || err.Error() != c.body {
			t.Errorf("%s?%s: %q, want %q", c.rest, c.qs, err, c.body)
		}
	}
}

func TestErlangBinary(t *testing.T) {
	for in, want := range map[string]string{"": "<<>>", "abc": `<<"abc">>`, "a\"b\\c\n": `<<"a\"b\\c\n">>`, "é": `<<"é">>`, "a\x80": "<<97,128>>", "\xe9": `<<"` + "\xe9" + `">>`, "[x]": `<<"[x]">>`, "\x00": "<<0>>"} {
		if got := erlangBinary(in); got != want {
			t.Errorf("erlangBinary(%q) = %q, want %q", in, got, want)
		}
	}
}

// knownIndexBodies are the beginnings of every 400 body ParseIndexQuery may give.
var knownIndexBodies = []string{
	`Invalid "pagination_sort". `, `Invalid "return_terms". `, `Invalid "max_results". `,
	"Can not use term regular expressions on integer queries", "Invalid term regular expression ",
	"Invalid query: {", "Bad timeout value ",
}

func FuzzParseIndexQuery(f *testing.F) {
	f.Add("age_int/10/20", "return_terms=true&max_results=5")
	f.Add("$bucket/x", "continuation=a2sy&stream=true")
	f.Add("$key/a/b", "term_regex=^a&timeout=0")
	f.Add("Email_BIN/a%40b/c%2Fd", "pagination_sort=TRUE&continuation=dAFhaw")
	f.Add("x/1", "max_results=-1&timeout=x")
	f.Add("n_int/+1/-1/3", "term_regex=(")
	f.Fuzz(func(t *testing.T, rest, rawQuery string) {
		params, _ := url.ParseQuery(rawQuery)
		req, err := ParseIndexQuery(rest, params)
		if err != nil {
			var ie *IndexQueryError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalidIndexQuery) {
				t.Fatalf("error %T %v is not an *IndexQueryError", err, err)
			}
			known := false
			for _, p := range knownIndexBodies {
				known = known || strings.HasPrefix(ie.Body, p)
			}
			if !known {
				t.Fatalf("unexpected body %q", ie.Body)
			}
			return
		}
		q := req.Query
		if err := q.Validate(); err != nil {
			t.Fatalf("accepted query does not validate: %+v: %v", q, err)
		}
		if q.Field != strings.ToLower(q.Field) && q.Field != core.ASCIILower(q.Field) {
			t.Fatalf("field %q not lower-cased", q.Field)
		}
		if q.ReturnTerms && !q.WantsTerms() {
			t.Fatalf("return_terms on a query without terms: %+v", q)
		}
		if q.MaxResults < 0 || req.Timeout < 0 {
			t.Fatalf("negative max_results or timeout: %+v", req)
		}
		if q.IsInteger() && q.TermRegex != nil {
			t.Fatal("regular expression on an integer query")
		}
	})
}

func FuzzContinuation(f *testing.F) {
	f.Add(true, []byte("term"), []byte("key"), "dAR0ZXJta2V5")
	f.Add(false, []byte(nil), []byte("k\x00"), "a2sy")
	f.Add(true, []byte("\x02\x01\x07"), []byte(""), "")
	f.Add(false, []byte(nil), []byte(nil), "dAA\r0") // the base64 decoder skips CR and LF
	f.Fuzz(func(t *testing.T, hasTerm bool, term, key []byte, token string) {
		c := query.Cursor{HasTerm: hasTerm, Key: key}
		if hasTerm {
			c.Term = term
		}
		tok := c.Token()
		back, err := query.ParseCursor(tok)
		if err != nil || back.HasTerm != c.HasTerm || !bytes.Equal(back.Term, c.Term) || !bytes.Equal(back.Key, c.Key) {
			t.Fatalf("round trip of %+v through %q: %+v, %v", c, tok, back, err)
		}
		if u := url.QueryEscape(tok); u != tok {
			t.Fatalf("token %q needs escaping", tok)
		}
		// Any string either is refused or is the token of the cursor it decodes to.
		if got, err := query.ParseCursor(token); err == nil {
			if again := got.Token(); again != token {
				t.Fatalf("ParseCursor(%q) accepted a non-canonical token (canonical %q)", token, again)
			}
		}
		// As a continuation parameter, a token is accepted exactly when it decodes and
		// its kind fits the query.
		for _, rest := range []string{"a_bin/a/z", "a_bin/a", "$bucket", "$key/a/z", "n_int/1/9"} {
			_, err := ParseIndexQuery(rest, url.Values{"continuation": {token}})
			if err != nil && !strings.HasPrefix(err.Error(), "Invalid query: {invalid_continuation,") {
				t.Fatalf("%s with continuation %q: %v", rest, token, err)
			}
		}
	})
}
