package mapreduce

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestKeyFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		filters string
		match   []string
		nomatch []string
	}{
		// The reference's documented example.
		{"tokenize int less_than", `[["tokenize","-",1],["string_to_int"],["less_than",50]]`,
			[]string{"1-a", "49-x-y", "-7-z", "--3", "+5-q", "0049-a"}, []string{"50-a", "abc-1", "", "-", "x", "1.5-a", "99999999999999999999999-a"}},
		// Transforms.
		{"string_to_int eq", `[["string_to_int"],["eq",42]]`, []string{"42", "+42", "042"}, []string{"42.0", "4 2", " 42", "abc", ""}},
		{"string_to_int big", `[["string_to_int"],["greater_than",9223372036854775807]]`,
			[]string{"9223372036854775808", "123456789012345678901234567890"}, []string{"9223372036854775807", "-99999999999999999999"}},
		{"string_to_int big eq", `[["string_to_int"],["eq",123456789012345678901234567890]]`,
			[]string{"123456789012345678901234567890"}, []string{"123456789012345678901234567891"}},
		{"int_to_string round trip", `[["string_to_int"],["int_to_string"],["eq","7"]]`, []string{"7", "007", "+7"}, []string{"8", "x"}},
		{"int_to_string on a string fails", `[["int_to_string"],["eq","7"]]`, nil, []string{"7"}},
		{"string_to_float", `[["string_to_float"],["greater_than_eq",1.5]]`, []string{"1.5", "2.0", "1.5e0", "15.0E-1", "+2.5"}, []string{"1.4", "2", "1e5", ".5", "5.", "1.0e400", "abc"}},
		{"float_to_string", `[["string_to_float"],["float_to_string"],["eq","1.50000000000000000000e+00"]]`, []string{"1.5", "15.0e-1"}, []string{"1.6", "1"}},
		{"float_to_string on int fails", `[["string_to_int"],["float_to_string"],["eq","1"]]`, nil, []string{"1"}},
		{"to_upper eq string", `[["to_upper"],["eq","ABC"]]`, []string{"abc", "ABC", "aBc"}, []string{"abd", "abc "}},
		{"to_lower unicode", `[["to_lower"],["eq","émile"]]`, []string{"ÉMILE", "Émile"}, []string{"emile"}},
		{"to_upper invalid utf8 ascii only", `[["to_upper"],["eq","A\u00ff"]]`, nil, []string{"a\xff"}},
		{"to_upper invalid utf8 bytes kept", `[["to_upper"],["starts_with","AB"]]`, []string{"ab\xff"}, []string{"a\xffb"}},
		{"tokenize third", `[["tokenize","-",3],["eq","2010"]]`, []string{"12-20-2010", "12--20---2010", "-12-20-2010-"}, []string{"12-20", "12-20-2011", "2010"}},
		{"tokenize several seps", `[["tokenize","-/",2],["eq","b"]]`, []string{"a/b", "a-b/c", "//a--b"}, []string{"a/c", "b"}},
		{"tokenize too few is empty", `[["tokenize","-",4],["eq",""]]`, []string{"1-2-3", "x"}, []string{"1-2-3-4"}},
		{"tokenize numeric separator", `[["tokenize",0,2],["eq","5"]]`, []string{"105", "10050"}, []string{"15"}},
		{"tokenize huge index", `[["tokenize","-",99999999999999999999999],["eq",""]]`, []string{"a-b"}, nil},
		{"urldecode", `[["urldecode"],["eq","a b/c"]]`, []string{"a+b%2Fc", "a%20b%2fc", "a b/c", "a+b/c&x=1", "a+b/c;y"}, []string{"a+b%2Gc", "a%2"}},
		{"urldecode bad escapes stay", `[["urldecode"],["eq","100%"]]`, []string{"100%"}, []string{"100"}},
		{"urldecode partial escape", `[["urldecode"],["eq","%4"]]`, []string{"%4"}, nil},
		// Comparisons in Erlang term order.
		{"greater_than string", `[["greater_than","m"]]`, []string{"n", "ma", "z"}, []string{"m", "a", ""}},
		{"less_than_eq string", `[["less_than_eq","m"]]`, []string{"m", "a", ""}, []string{"ma", "n"}},
		{"strings above numbers", `[["greater_than",1000000]]`, []string{"0", "", "a"}, nil},
		{"number below string", `[["string_to_int"],["less_than","0"]]`, []string{"99999", "-1"}, []string{"x"}},
		{"int vs float", `[["string_to_int"],["greater_than",1.5]]`, []string{"2", "100"}, []string{"1", "-3"}},
		{"int vs float equal", `[["string_to_int"],["greater_than_eq",2.0]]`, []string{"2", "3"}, []string{"1"}},
		{"int vs float not =:=", `[["string_to_int"],["eq",2.0]]`, nil, []string{"2"}},
		{"float vs int", `[["string_to_float"],["less_than",2]]`, []string{"1.99", "-5.0"}, []string{"2.0", "2.01"}},
		{"big vs float", `[["string_to_int"],["greater_than",1.0e20]]`, []string{"100000000000000000001"}, []string{"100000000000000000000", "99999999999999999999"}},
		{"int vs huge float", `[["string_to_int"],["less_than",1.0e300]]`, []string{"9223372036854775807", "1"}, nil},
		{"int vs tiny float", `[["string_to_int"],["greater_than",-1.0e300]]`, []string{"-9223372036854775808"}, nil},
		{"atoms between numbers and strings", `[["greater_than",true]]`, []string{"a"}, nil},
		{"number below atom", `[["string_to_int"],["less_than",false]]`, []string{"1"}, nil},
		{"string above arrays and objects", `[["greater_than",["zzz"]],["eq",true]]`, []string{"a"}, nil},
		{"string above object", `[["greater_than",{"a":1}]]`, []string{"a"}, nil},
		{"between inclusive default", `[["string_to_int"],["between",10,20]]`, []string{"10", "15", "20"}, []string{"9", "21"}},
		{"between inclusive true", `[["string_to_int"],["between",10,20,true]]`, []string{"10", "20"}, []string{"21"}},
		{"between exclusive", `[["string_to_int"],["between",10,20,false]]`, []string{"11", "19"}, []string{"10", "20"}},
		{"between strings", `[["between","b","d"]]`, []string{"b", "c", "czzz", "d"}, []string{"a", "da"}},
		{"eq exact", `[["eq","abc"]]`, []string{"abc"}, []string{"ab", "abcd", "ABC"}},
		{"neq", `[["neq","abc"]]`, []string{"ab", "x"}, []string{"abc"}},
		{"eq number never equals a key", `[["eq",1]]`, nil, []string{"1"}},
		{"matches", `[["matches","^user_[0-9]+$"]]`, []string{"user_1", "user_42"}, []string{"user_", "xuser_1", "user_1x"}},
		{"matches anywhere", `[["matches","o+b"]]`, []string{"foobar", "ob"}, []string{"fbar"}},
		{"matches on number fails", `[["string_to_int"],["matches","1"]]`, nil, []string{"1"}},
		{"set_member strings", `[["set_member","a","b","c"]]`, []string{"a", "c"}, []string{"d", "ab"}},
		{"set_member numbers stringified", `[["set_member",1,2,true]]`, []string{"1", "2", "true"}, []string{"3", "1.0"}},
		{"set_member after string_to_int", `[["string_to_int"],["set_member","7"]]`, []string{"7", "007"}, []string{"8"}},
		{"set_member float format", `[["set_member",1.5]]`, []string{"1.50000000000000000000e+00"}, []string{"1.5"}},
		{"set_member empty", `[["set_member"]]`, nil, []string{"a", ""}},
		{"similar_to", `[["similar_to","basho",1]]`, []string{"basho", "baysho", "bash", "basHo"}, []string{"baysho!", "b", "BASHO"}},
		{"similar_to float distance", `[["similar_to","basho",1.5]]`, []string{"baysho"}, []string{"bayshoo"}},
		{"similar_to zero", `[["similar_to","abc",0]]`, []string{"abc"}, []string{"abd", ""}},
		{"similar_to long", `[["similar_to","` + strings.Repeat("a", 100) + `x",2]]`,
			[]string{strings.Repeat("a", 100) + "x", strings.Repeat("a", 100) + "yz", strings.Repeat("a", 99)}, []string{"b", strings.Repeat("a", 97)}},
		{"compose lower similar", `[["to_lower"],["similar_to","basho",3]]`, []string{"BAYSHO"}, []string{"lolcaTS"}},
		{"starts_with", `[["starts_with","12-20"]]`, []string{"12-20-2010", "12-20"}, []string{"11-20-2010", "12-2"}},
		{"ends_with", `[["ends_with","2010"]]`, []string{"12-20-2010", "2010"}, []string{"12-20-2011", "010"}},
		{"starts_with int", `[["string_to_int"],["starts_with",12]]`, []string{"123", "0012"}, []string{"21"}},
		// Logical filters.
		{"and", `[["and",[["to_lower"],["starts_with","hello"]],[["to_lower"],["ends_with","dolly"]]]]`,
			[]string{"hello dolly", "HELLO DOLLY"}, []string{"dolly hello", "hello"}},
		{"or", `[["or",[["to_lower"],["starts_with","hello"]],[["to_lower"],["starts_with","cloned"]]]]`,
			[]string{"hello dolly", "cloned sheep"}, []string{"sheep"}},
		{"not", `[["not",[["ends_with","2010"]]]]`, []string{"12-20-2011"}, []string{"12-20-2010"}},
		{"not of a failing list drops the key", `[["not",[["string_to_int"],["eq",1]]]]`, []string{"2"}, []string{"1", "abc"}},
		{"or stops at first true", `[["or",[["eq","abc"]],[["string_to_int"],["eq",1]]]]`, []string{"abc", "1"}, []string{"2"}},
		{"or failure drops the key", `[["or",[["string_to_int"],["eq",1]],[["eq","abc"]]]]`, []string{"1"}, []string{"abc"}},
		{"and stops at first false", `[["and",[["eq","x"]],[["string_to_int"],["eq",1]]]]`, nil, []string{"abc", "x"}},
		{"and empty is true", `[["and"]]`, []string{"x"}, nil},
		{"or empty is false", `[["or"]]`, nil, []string{"x"}},
		{"nested empty list is true", `[["and",[]]]`, []string{"x"}, nil},
		{"not of empty list", `[["not",[]]]`, nil, []string{"x"}},
		{"predicate on a boolean", `[["eq","a"],["eq",true]]`, []string{"a"}, []string{"b"}},
		{"transform of a boolean", `[["eq","a"],["to_upper"],["eq","TRUE"]]`, []string{"a"}, []string{"b"}},
		{"extra args ignored", `[["eq","a","b"],["neq",false,1]]`, []string{"a"}, []string{"b"}},
		{"between extra args inclusive", `[["between","a","c",false,1]]`, []string{"a", "c"}, nil},
		{"deep nesting", strings.Repeat(`[["not",`, 20) + `[["eq","a"]]` + strings.Repeat(`]]`, 20), []string{"a"}, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := ParseKeyFilters(json.RawMessage(tc.filters))
			if err != nil {
				t.Fatalf("ParseKeyFilters(%s): %v", tc.filters, err)
			}
			for _, k := range tc.match {
				if !f(t.Context(), k) {
					t.Errorf("%s: key %q does not match, want match", tc.filters, k)
				}
			}
			for _, k := range tc.nomatch {
				if f(t.Context(), k) {
					t.Errorf("%s: key %q matches, want no match", tc.filters, k)
				}
			}
		})
	}
}

func TestKeyFilterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		filters string
		want    string // substring of the error
	}{
		{`[]`, "at least one key filter"},
		{`null`, "must be a list"},
		{`{"a":1}`, "must be a list"},
		{`"eq"`, "must be a list"},
		{`[["nope"]]`, `unknown key filter "nope" ({bad_filter,<<"nope">>})`},
		{`[[1,2]]`, "unknown key filter 1 ({bad_filter,1})"},
		{`[[["eq"],2]]`, `({bad_filter,["eq"]})`},
		{`[["and",[["nope",1]]]]`, `unknown key filter "nope"`},
		{`[["sounds_like","x"]]`, `"sounds_like" is not implemented`},
		{`[[]]`, "a key filter is a list"},
		{`["eq"]`, "a key filter is a list"},
		{`[["eq"]]`, `"eq" needs a value`},
		{`[["less_than"]]`, `"less_than" needs a value`},
		{`[["between",1]]`, `"between" needs 2 or 3 arguments`},
		{`[["between",1,2,"yes"]]`, "must be true or false"},
		{`[["tokenize","-"]]`, `"tokenize" needs 2 arguments`},
		{`[["tokenize","-",0],["eq","a"]]`, "integer of 1 or more"},
		{`[["tokenize","-",-99999999999999999999],["eq","a"]]`, "integer of 1 or more"},
		{`[["tokenize","-",1.0],["eq","a"]]`, "integer of 1 or more"},
		{`[["tokenize","-","1"],["eq","a"]]`, "integer of 1 or more"},
		{`[["tokenize",["-"],1],["eq","a"]]`, "must be a string or a number"},
		{`[["matches"]]`, `"matches" needs a regular expression`},
		{`[["matches",1]]`, "must be a string"},
		{`[["matches","(?=a)b"]]`, "invalid or unsupported Perl syntax: `(?=`"},
		{`[["matches","(a)\\1"]]`, "PCRE-only features"},
		{`[["matches","a++"]]`, "PCRE-only features"},
		{`[["matches","(unclosed"]]`, "missing closing )"},
		{`[["set_member","a",["b"]]]`, "must be a string or a number"},
		{`[["similar_to","a"]]`, `"similar_to" needs 2 arguments`},
		{`[["similar_to","a","1"]]`, "maximum distance must be a number"},
		{`[["starts_with"]]`, `"starts_with" needs a string`},
		{`[["ends_with",{"a":1}]]`, "must be a string or a number"},
		{`[["and","x"]]`, "each argument must be a list of key filters"},
		{`[["or",[["eq","a"]],{"x":1}]]`, "each argument must be a list of key filters"},
		{`[["not"]]`, `"not" needs a list of key filters`},
		{`[["not",[["to_upper"]]]]`, `ends with the transform "to_upper"`},
		{`[["to_upper"]]`, `ends with the transform "to_upper"`},
		{`[["eq","a"],["tokenize","-",1]]`, `ends with the transform "tokenize"`},
		{`[["eq",1e999]]`, "number out of range"},
		{strings.Repeat(`[["not",`, 40) + `[["eq","a"]]` + strings.Repeat(`]]`, 40), "nested more than"},
	}
	for _, tc := range tests {
		t.Run(tc.filters, func(t *testing.T) {
			t.Parallel()
			f, err := ParseKeyFilters(json.RawMessage(tc.filters))
			if err == nil {
				t.Fatalf("ParseKeyFilters(%s) succeeded, want error containing %q", tc.filters, tc.want)
			}
			if f != nil {
				t.Errorf("ParseKeyFilters(%s) returned a filter with its error", tc.filters)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseKeyFilters(%s) error %q, want it to contain %q", tc.filters, err, tc.want)
			}
		})
	}
}

// levenshtein is the textbook edit distance in bytes, the reference for
// kfWithinDistance.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestKeyFilterLevenshtein(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 50)
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"abc", "abc", 0},
		{"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"basho", "baysho", 1},
		{"baysho!", "basho", 2}, {"é", "e", 2}, // bytes, as the reference counts
		{long, long + "x", 1}, {long + "x", long, 1}, {long, strings.Repeat("ba", 50), 2},
	}
	for _, tc := range tests {
		if got := levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		for k := range tc.want + 3 {
			if got, ok := kfWithinDistance(t.Context(), tc.a, tc.b, k); !ok || got != (tc.want <= k) {
				t.Errorf("kfWithinDistance(%q, %q, %d) = %v, %v; the distance is %d", tc.a, tc.b, k, got, ok, tc.want)
			}
		}
	}
	// The band gives the textbook answer on random strings of a small alphabet, on
	// both sides of the stack buffer's size.
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(90))
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for range 400 {
		a, b := word(), word()
		d := levenshtein(a, b)
		for _, k := range []int{0, 1, d - 1, d, d + 1, rng.IntN(100)} {
			if k < 0 {
				continue
			}
			if got, ok := kfWithinDistance(t.Context(), a, b, k); !ok || got != (d <= k) {
				t.Fatalf("kfWithinDistance(%q, %q, %d) = %v, %v; the distance is %d", a, b, k, got, ok, d)
			}
		}
	}
}

// TestKeyFilterCostBounded is the attack of a huge similar_to (60 KB × 60 KB, which
// took 18.9 s of one core under a 1 s timeout): the string is refused when the list is
// parsed; the largest string allowed against a 60 KB key stops within moments of its
// context's end; too many filters and a regular expression that compiles to a huge
// program are refused.
func TestKeyFilterCostBounded(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 60<<10)
	if _, err := ParseKeyFilters(json.RawMessage(`[["similar_to","` + big + `",1000000]]`)); err == nil ||
		!strings.Contains(err.Error(), "at most 1024 are allowed") {
		t.Fatalf("a 60 KB similar_to string: err = %v", err)
	}
	f, err := ParseKeyFilters(json.RawMessage(`[["similar_to","` + strings.Repeat("y", kfMaxSimilarTo) + `",61000]]`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	for range 1000 { // 1000 keys of 60 KB: many seconds of work without the deadline
		if f(ctx, big) || ctx.Err() != nil {
			break
		}
	}
	if took := time.Since(start); took > 2*time.Second || ctx.Err() == nil {
		t.Fatalf("the filter ran %v past a 50ms deadline (ctx %v)", took, ctx.Err())
	}
	// A limit at or above the longer length is true without a comparison.
	g, err := ParseKeyFilters(json.RawMessage(`[["similar_to","` + strings.Repeat("y", kfMaxSimilarTo) + `",61440]]`))
	if err != nil {
		t.Fatal(err)
	}
	done, stop := context.WithCancel(t.Context())
	stop()
	if !g(done, big) {
		t.Fatal("a limit of the key's length: want true")
	}

	// A costly regular expression on a long key stops at the deadline too (it takes
	// some 40 s over 1 MB).
	h, err := ParseKeyFilters(json.RawMessage(`[["matches","(a|aa){0,900}b"]]`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	if h(ctx, strings.Repeat("a", 1<<20)) || time.Since(start) > 2*time.Second {
		t.Fatalf("matches over 1 MB: %v", time.Since(start))
	}
	if !h(t.Context(), strings.Repeat("a", 5000)+"b") || h(t.Context(), strings.Repeat("a", 5000)) {
		t.Fatal("matches through the reader answers differently")
	}

	for _, tc := range []struct{ name, filters, want string }{
		{"too many filters", "[" + strings.Repeat(`["eq","a"],`, kfMaxFilters) + `["eq","a"]]`, "too many key filters"},
		{"too many nested", `[["or"` + strings.Repeat(`,[["eq","a"]]`, kfMaxFilters) + `]]`, "too many key filters"},
		{"long pattern", `[["matches","` + strings.Repeat("a", kfMaxPattern+1) + `"]]`, "at most 1024 are allowed"},
		{"huge program", `[["matches","(a|b){999}(a|b){999}(a|b){999}(a|b){999}"]]`, "too complex"},
	} {
		if _, err := ParseKeyFilters(json.RawMessage(tc.filters)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestKeyFilterConcurrent(t *testing.T) {
	t.Parallel()
	f, err := ParseKeyFilters(json.RawMessage(`[["or",[["tokenize","-",2],["string_to_int"],["between",10,20]],[["matches","^z"]]]]`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	for g := range 4 {
		go func() {
			n := 0
			for i := range 1000 {
				if f(context.Background(), fmt.Sprintf("k-%d", (i+g)%40)) {
					n++
				}
			}
			done <- n
		}()
	}
	for range 4 {
		// keys k-0 .. k-39 cycle 25 times; 11 of every 40 are in [10, 20].
		if n := <-done; n != 25*11 {
			t.Errorf("matches = %d, want %d", n, 25*11)
		}
	}
}

// TestKeyFilterNoAllocs checks that the common predicates run without allocating.
// (matches does not either, but Go's regexp keeps its matchers in a sync.Pool, which
// the race detector empties at random, so it is measured by the benchmark instead.)
func TestKeyFilterNoAllocs(t *testing.T) {
	for _, filters := range []string{
		`[["eq","user_500"]]`,
		`[["starts_with","user_"]]`,
		`[["ends_with","9"]]`,
		`[["less_than","user_5"]]`,
		`[["between","user_1","user_3",false]]`,
		`[["set_member","user_1","user_2"]]`,
		`[["similar_to","user_55",2]]`,
		`[["tokenize","_",2],["string_to_int"],["less_than",50]]`,
		`[["tokenize","_",2],["string_to_int"],["between",10,20.5]]`,
		`[["and",[["starts_with","user"]],[["not",[["ends_with","7"]]]]]]`,
	} {
		f, err := ParseKeyFilters(json.RawMessage(filters))
		if err != nil {
			t.Fatalf("%s: %v", filters, err)
		}
		keys := []string{"user_1", "user_55", "user_500", "user_x"}
		ctx := t.Context()
		allocs := testing.AllocsPerRun(100, func() {
			for _, k := range keys {
				f(ctx, k)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run, want 0", filters, allocs)
		}
	}
}

func BenchmarkKeyFilter(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("%d-user-%d", i, i*7)
	}
	for _, bc := range []struct{ name, filters string }{
		{"starts_with", `[["starts_with","5"]]`},
		{"eq", `[["eq","500-user-3500"]]`},
		{"tokenize_int_less_than", `[["tokenize","-",1],["string_to_int"],["less_than",50]]`},
		{"matches", `[["matches","^[0-9]+-user-[0-9]*7$"]]`},
		{"similar_to", `[["similar_to","500-user-3500",2]]`},
		{"and_not", `[["and",[["starts_with","1"]],[["not",[["ends_with","0"]]]]]]`},
		{"to_upper_eq", `[["to_upper"],["eq","1-USER-7"]]`},
	} {
		f, err := ParseKeyFilters(json.RawMessage(bc.filters))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				if f(b.Context(), keys[i%len(keys)]) {
					n++
				}
			}
			_ = n
		})
	}
}

func FuzzParseKeyFilters(f *testing.F) {
	for _, s := range []string{
		`[["tokenize","-",1],["string_to_int"],["less_than",50]]`,
		`[["matches","^a.*b$"]]`,
		`[["and",[["to_lower"],["starts_with","x"]],[["not",[["eq","xy"]]]]]]`,
		`[["or",[["string_to_float"],["between",1.5,2.5,false]],[["set_member","a",1,true,null]]]]`,
		`[["urldecode"],["similar_to","a b",2]]`,
		`[["string_to_int"],["int_to_string"],["ends_with",0]]`,
		`[["string_to_float"],["float_to_string"],["greater_than",[]]]`,
		`[]`, `[[]]`, `[["nope"]]`, `7`,
	} {
		f.Add(s, "12-20-2010")
	}
	f.Fuzz(func(t *testing.T, filters, key string) {
		kf, err := ParseKeyFilters(json.RawMessage(filters))
		if err != nil {
			if kf != nil {
				t.Fatal("filter returned with an error")
			}
			return
		}
		got := kf(t.Context(), key)
		if kf(t.Context(), key) != got {
			t.Fatal("filter is not deterministic")
		}
	})
}
