package mapreduce

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// KeyFilter reports whether a key passes the key filters of a bucket input
// ({"bucket": B, "key_filters": [...]}). It is safe for concurrent use. Once ctx has
// ended it may stop early and report false: callers check ctx after a key fails.
type KeyFilter func(ctx context.Context, key string) bool

// Limits of a key-filter list, so that the cost of applying it to a key is bounded
// before the job starts (a job checks its deadline between keys, and similar_to within
// a key).
const (
	// kfMaxDepth bounds the nesting of "and", "or" and "not".
	kfMaxDepth = 32
	// kfMaxFilters bounds the filters of a whole list, nested ones included, and the
	// arguments of and/or.
	kfMaxFilters = 1000
	// kfMaxArgs bounds the arguments of one filter (set_member's members).
	kfMaxArgs = 10000
	// kfMaxSimilarTo bounds the string of similar_to, in bytes: a comparison costs at
	// most about kfMaxSimilarTo × the key's length steps.
	kfMaxSimilarTo = 1024
	// kfMaxPattern bounds the regular expression of matches, in bytes, and
	// kfMaxProgram its compiled program, in instructions: a match costs up to about
	// the program's length in steps per byte of the key (some 7 ns each).
	kfMaxPattern = 1024
	kfMaxProgram = 10000
	// kfMatchStringSteps is the most steps (key length × program length) a match may
	// take in one go; a longer one reads the key through a reader that stops it when
	// the job ends.
	kfMatchStringSteps = 1 << 22
)

// ParseKeyFilters compiles a key-filter list (the JSON array of a bucket input's
// "key_filters") into a KeyFilter. It is the reference system's key-filter language:
//
// The list is a pipeline applied left to right to each key (a string). A filter is a
// JSON array [name, arg...]. Transforms change the value: int_to_string,
// string_to_int, float_to_string, string_to_float, to_upper, to_lower,
// ["tokenize", separators, n] (split on any of the separator bytes, skip empty tokens,
// take the n-th token, 1-based, or "" when there are fewer) and urldecode (form
// decoding up to the first '&' or ';'). Predicates turn it into true or false:
// greater_than, less_than, greater_than_eq, less_than_eq, ["between", low, high
// (, inclusive=true)], ["matches", regexp], eq, neq, ["set_member", v...],
// ["similar_to", s, max_distance], starts_with, ends_with, and the logical
// ["and", list...], ["or", list...] and ["not", list], whose arguments are filter
// lists applied to the current value. A key passes when the pipeline yields true.
//
// Values are typed as in the reference: comparisons use Erlang term order (numbers <
// true/false/null < objects < arrays < strings; numbers by value, integers and floats
// exactly; strings bytewise) and eq/neq are type-exact (1 is not 1.0 nor "1").
// set_member, similar_to, starts_with, ends_with, tokenize and the string transforms
// read numbers as the reference prints them (integers in decimal, floats as C's
// "%.20e"). Where the reference deviates from that model these are the decisions:
//
//   - A filter that cannot apply to a key's value (string_to_int on "abc",
//     int_to_string on a string, matches on a number) makes that key not match, even
//     under "not" or inside "or": the reference's filter crashes on that key and the key
//     is dropped.
//   - to_upper and to_lower yield strings, so a following eq compares strings (the
//     reference yields a character list that never equals a JSON string). Valid UTF-8
//     is case-mapped by Unicode, other bytes by ASCII only. tokenize's "fewer tokens"
//     result is likewise the empty string.
//   - matches uses Go's RE2 syntax, not PCRE; a pattern using PCRE-only features
//     (look-around, backreferences, possessive quantifiers, ...) is refused with an
//     error saying so. RE2 matches UTF-8 text by code point where PCRE over a binary
//     matched bytes. similar_to counts the Levenshtein distance in bytes, as the
//     reference does.
//   - Arguments are checked when the list is parsed, not when a key crashes on them:
//     a missing argument, a tokenize index that is not a positive integer, a between
//     flag that is not a boolean, a similar_to distance that is not a number, an array
//     or object where a string is read, a pattern that does not compile, a nested list
//     or an (and, or, not) list that does not end in a predicate, and a whole list
//     that does not end in a predicate (no key could ever pass) are errors. Arguments
//     beyond those a filter reads are ignored, as in the reference.
//   - The cost of a list is bounded when it is parsed: at most 1000 filters in all, and
//     32 levels of and/or/not; a similar_to string of at most 1024 bytes (compared in
//     a band of the maximum distance, so a distance at or above the longer length is
//     true without a comparison); a matches pattern of at most 1024 bytes whose
//     compiled program has at most 10000 instructions. similar_to, and matches on a
//     long key, stop when ctx ends.
//
// Errors: filters that are not a non-empty JSON array; an unknown filter name, whose
// error names it in the reference's form ({bad_filter,<<"name">>}); "sounds_like",
// which the reference names but never implemented. The error text is meant for the
// client.
func ParseKeyFilters(filters json.RawMessage) (KeyFilter, error) {
	if countItems(filters) > kfMaxFilters {
		return nil, errTooManyFilters
	}
	var list []json.RawMessage
	if err := json.Unmarshal(filters, &list); err != nil || list == nil {
		return nil, fmt.Errorf("key_filters must be a list of key filters, not %s", kfExcerpt(filters))
	}
	if len(list) == 0 {
		return nil, errors.New("key_filters must hold at least one key filter")
	}
	count := 0
	p, err := kfParseList(list, 0, &count)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) bool {
		v, ok := p.run(ctx, kfVal{k: kfStr, s: key})
		return ok && v.isTrue()
	}, nil
}

// kfKind is the type of a pipeline value.
type kfKind uint8

// The pipeline value types. Integers outside int64 are kfBig.
const (
	kfStr kfKind = iota
	kfInt
	kfBig
	kfFloat
	kfAtom // true or false
)

// kfVal is a value flowing through a filter pipeline.
type kfVal struct {
	k kfKind
	s string // kfStr: the text; kfAtom: the atom's name
	i int64
	f float64
	n *big.Int
}

var (
	kfTrue  = kfVal{k: kfAtom, s: "true"}
	kfFalse = kfVal{k: kfAtom, s: "false"}
)

func kfBool(b bool) kfVal {
	if b {
		return kfTrue
	}
	return kfFalse
}

func (v kfVal) isTrue() bool  { return v.k == kfAtom && v.s == "true" }
func (v kfVal) isFalse() bool { return v.k == kfAtom && v.s == "false" }

// Ranks of Erlang's term order, for the JSON types as the reference decodes them
// (objects are {struct, Members} tuples, arrays lists, strings binaries).
const (
	kfRankNumber = iota
	kfRankAtom
	kfRankObject
	kfRankArray
	kfRankString
)

func (v kfVal) rank() int {
	switch v.k {
	case kfStr:
		return kfRankString
	case kfAtom:
		return kfRankAtom
	}
	return kfRankNumber
}

// text is the reference's to_string of a value: strings as they are, integers in
// decimal, floats as "%.20e", atoms by name. It allocates for non-strings.
func (v kfVal) text() string {
	switch v.k {
	case kfInt:
		return strconv.FormatInt(v.i, 10)
	case kfBig:
		return v.n.String()
	case kfFloat:
		return strconv.FormatFloat(v.f, 'e', 20, 64)
	}
	return v.s
}

// kfTerm is a filter argument: a JSON value.
type kfTerm struct {
	rank int
	v    kfVal // the number, string or atom; unset for objects and arrays
}

// kfStep is one filter: it maps a value to the next, or reports false when it cannot
// apply (the reference crashes on that key, which drops it) or ctx ended.
type kfStep func(ctx context.Context, v kfVal) (kfVal, bool)

// kfPipeline is a parsed filter list.
type kfPipeline []kfStep

// run applies the filters in order. An empty pipeline yields true (the reference's
// compose([]) is fun(_) -> true).
func (p kfPipeline) run(ctx context.Context, v kfVal) (kfVal, bool) {
	if len(p) == 0 {
		return kfTrue, true
	}
	for _, s := range p {
		var ok bool
		if v, ok = s(ctx, v); !ok {
			return v, false
		}
	}
	return v, true
}

// kfParseList parses a filter list whose elements are given; count is the number of
// filters of the whole list parsed so far.
func kfParseList(list []json.RawMessage, depth int, count *int) (kfPipeline, error) {
	if depth > kfMaxDepth {
		return nil, fmt.Errorf("key filters nested more than %d deep", kfMaxDepth)
	}
	if *count += len(list); *count > kfMaxFilters {
		return nil, errTooManyFilters
	}
	p := make(kfPipeline, 0, len(list))
	pred := false
	var last string
	for _, raw := range list {
		s, name, isPred, err := kfParseFilter(raw, depth, count)
		if err != nil {
			return nil, err
		}
		p = append(p, s)
		pred, last = isPred, name
	}
	if len(p) > 0 && !pred {
		return nil, fmt.Errorf("key filter list ends with the transform %q: a list must end with a predicate (such as eq or less_than), or no key could pass", last)
	}
	return p, nil
}

// errTooManyFilters is a list past kfMaxFilters.
var errTooManyFilters = fmt.Errorf("too many key filters: at most %d in all, nested ones and the arguments of and/or included", kfMaxFilters)

// kfNestedList parses an argument of and/or/not: a filter list.
func kfNestedList(name string, raw json.RawMessage, depth int, count *int) (kfPipeline, error) {
	if countItems(raw)+*count > kfMaxFilters {
		return nil, errTooManyFilters
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, fmt.Errorf("key filter %q: each argument must be a list of key filters, not %s", name, kfExcerpt(raw))
	}
	return kfParseList(list, depth+1, count)
}

// kfParseFilter parses one filter [name, arg...].
func kfParseFilter(raw json.RawMessage, depth int, count *int) (s kfStep, name string, pred bool, err error) {
	if countItems(raw) > kfMaxArgs+1 {
		return nil, "", false, fmt.Errorf("invalid key filter %s: a key filter has at most %d arguments", kfExcerpt(raw), kfMaxArgs)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || len(elems) == 0 {
		return nil, "", false, fmt.Errorf("invalid key filter %s: a key filter is a list [name, arg...]", kfExcerpt(raw))
	}
	if err := json.Unmarshal(elems[0], &name); err != nil {
		return nil, "", false, fmt.Errorf("unknown key filter %s ({bad_filter,%s})", kfExcerpt(elems[0]), kfCompact(elems[0]))
	}
	args := elems[1:]
	switch name {
	case "int_to_string":
		return kfIntToString, name, false, nil
	case "string_to_int":
		return kfStringToInt, name, false, nil
	case "float_to_string":
		return kfFloatToString, name, false, nil
	case "string_to_float":
		return kfStringToFloat, name, false, nil
	case "to_upper":
		return kfCaseMap(true), name, false, nil
	case "to_lower":
		return kfCaseMap(false), name, false, nil
	case "urldecode":
		return kfURLDecode, name, false, nil
	case "tokenize":
		s, err = kfTokenize(args)
		return s, name, false, err
	case "greater_than", "less_than", "greater_than_eq", "less_than_eq", "eq", "neq":
		s, err = kfCompare(name, args)
	case "between":
		s, err = kfBetween(args)
	case "matches":
		s, err = kfMatches(args)
	case "set_member":
		s, err = kfSetMember(args)
	case "similar_to":
		s, err = kfSimilarTo(args)
	case "starts_with", "ends_with":
		s, err = kfAffix(name, args)
	case "and", "or":
		s, err = kfLogical(name, args, depth, count)
	case "not":
		s, err = kfNot(args, depth, count)
	case "sounds_like":
		err = errors.New(`key filter "sounds_like" is not implemented`)
	default:
		err = fmt.Errorf("unknown key filter %q ({bad_filter,<<%s>>})", name, kfErlangBinary(name))
	}
	if err != nil {
		return nil, name, false, err
	}
	return s, name, true, nil
}

// kfNeedArgs checks that a filter has at least n arguments.
func kfNeedArgs(name string, args []json.RawMessage, n int, what string) error {
	if len(args) < n {
		return fmt.Errorf("key filter %q needs %s", name, what)
	}
	return nil
}

// kfParseTerm decodes a JSON argument.
func kfParseTerm(raw json.RawMessage) (kfTerm, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return kfTerm{}, fmt.Errorf("invalid JSON %s", kfExcerpt(raw))
	}
	switch x := x.(type) {
	case string:
		return kfTerm{rank: kfRankString, v: kfVal{k: kfStr, s: x}}, nil
	case json.Number:
		v, err := kfParseNumber(string(x))
		return kfTerm{rank: kfRankNumber, v: v}, err
	case bool:
		return kfTerm{rank: kfRankAtom, v: kfBool(x)}, nil
	case nil:
		return kfTerm{rank: kfRankAtom, v: kfVal{k: kfAtom, s: "null"}}, nil
	case []any:
		return kfTerm{rank: kfRankArray}, nil
	}
	return kfTerm{rank: kfRankObject}, nil
}

// kfParseNumber reads a JSON number as the reference's decoder does: an integer (of any
// size) when it has no fraction and no exponent, a float otherwise.
func kfParseNumber(s string) (kfVal, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return kfVal{k: kfInt, i: i}, nil
		}
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return kfVal{k: kfBig, n: n}, nil
		}
		return kfVal{}, fmt.Errorf("invalid number %s", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
		return kfVal{}, fmt.Errorf("number out of range: %s", s)
	}
	return kfVal{k: kfFloat, f: f}, nil
}

// kfTextArg reads an argument the reference passes through to_string: a string, a
// number or an atom.
func kfTextArg(name string, raw json.RawMessage) (string, error) {
	t, err := kfParseTerm(raw)
	if err != nil {
		return "", fmt.Errorf("key filter %q: %w", name, err)
	}
	if t.rank == kfRankArray || t.rank == kfRankObject {
		return "", fmt.Errorf("key filter %q: %s must be a string or a number", name, kfExcerpt(raw))
	}
	return t.v.text(), nil
}

// Transforms.

func kfIntToString(_ context.Context, v kfVal) (kfVal, bool) {
	switch v.k {
	case kfInt:
		return kfVal{k: kfStr, s: strconv.FormatInt(v.i, 10)}, true
	case kfBig:
		return kfVal{k: kfStr, s: v.n.String()}, true
	}
	return v, false
}

func kfStringToInt(_ context.Context, v kfVal) (kfVal, bool) {
	switch v.k {
	case kfInt, kfBig:
		return v, true
	case kfStr:
		return kfErlangInt(v.s)
	}
	return v, false // a float prints with a '.', an atom has no digits
}

// kfErlangInt parses s as list_to_integer does: an optional sign and decimal digits.
func kfErlangInt(s string) (kfVal, bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return kfVal{}, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return kfVal{}, false
		}
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return kfVal{k: kfInt, i: i}, true
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	return kfVal{k: kfBig, n: n}, ok
}

func kfFloatToString(_ context.Context, v kfVal) (kfVal, bool) {
	if v.k != kfFloat {
		return v, false
	}
	return kfVal{k: kfStr, s: v.text()}, true
}

func kfStringToFloat(_ context.Context, v kfVal) (kfVal, bool) {
	switch v.k {
	case kfFloat:
		return v, true // "%.20e" reads back exactly
	case kfStr:
		return kfErlangFloat(v.s)
	}
	return v, false
}

// kfErlangFloat parses s as list_to_float does: [sign] digits "." digits, then an
// optional exponent; "1", "1e5", ".5" and "5." are not floats.
func kfErlangFloat(s string) (kfVal, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	i, ok := kfDigitRun(s, i)
	if !ok || i >= len(s) || s[i] != '.' {
		return kfVal{}, false
	}
	if i, ok = kfDigitRun(s, i+1); !ok {
		return kfVal{}, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i, ok = kfDigitRun(s, i); !ok {
			return kfVal{}, false
		}
	}
	if i != len(s) {
		return kfVal{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && math.IsInf(f, 0) {
		return kfVal{}, false
	}
	return kfVal{k: kfFloat, f: f}, true
}

// kfDigitRun skips one or more decimal digits from s[i:].
func kfDigitRun(s string, i int) (int, bool) {
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i, i > start
}

func kfCaseMap(upper bool) kfStep {
	return func(_ context.Context, v kfVal) (kfVal, bool) {
		s := v.text()
		if utf8.ValidString(s) {
			if upper {
				return kfVal{k: kfStr, s: strings.ToUpper(s)}, true
			}
			return kfVal{k: kfStr, s: strings.ToLower(s)}, true
		}
		b := []byte(s)
		for i, c := range b {
			switch {
			case upper && c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case !upper && c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
		return kfVal{k: kfStr, s: string(b)}, true
	}
}

// kfURLDecode is the reference's mochiweb_util:parse_qs("x=" ++ V) value: V up to the
// first '&' or ';', with '+' as space and %XX decoded (a '%' not followed by two hex
// digits stays as it is).
func kfURLDecode(_ context.Context, v kfVal) (kfVal, bool) {
	s := v.text()
	if i := strings.IndexAny(s, "&;"); i >= 0 {
		s = s[:i]
	}
	if !strings.ContainsAny(s, "+%") {
		return kfVal{k: kfStr, s: s}, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && kfIsHex(s[i+1]) && kfIsHex(s[i+2]):
			b = append(b, kfUnhex(s[i+1])<<4|kfUnhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return kfVal{k: kfStr, s: string(b)}, true
}

func kfIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func kfUnhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func kfTokenize(args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs("tokenize", args, 2, "2 arguments: the separator characters and the token number"); err != nil {
		return nil, err
	}
	seps, err := kfTextArg("tokenize", args[0])
	if err != nil {
		return nil, err
	}
	t, err := kfParseTerm(args[1])
	var n int64
	switch {
	case err != nil || t.rank != kfRankNumber:
	case t.v.k == kfInt:
		n = t.v.i
	case t.v.k == kfBig && t.v.n.Sign() > 0:
		n = math.MaxInt64 // more tokens than any key has
	}
	if n < 1 {
		return nil, fmt.Errorf("key filter \"tokenize\": the token number must be an integer of 1 or more, not %s", kfExcerpt(args[1]))
	}
	var isSep [256]bool
	for i := 0; i < len(seps); i++ {
		isSep[seps[i]] = true
	}
	return func(_ context.Context, v kfVal) (kfVal, bool) {
		s := v.text()
		var count int64
		for i := 0; i < len(s); {
			for i < len(s) && isSep[s[i]] {
				i++
			}
			if i == len(s) {
				break
			}
			j := i
			for j < len(s) && !isSep[s[j]] {
				j++
			}
			if count++; count == n {
				return kfVal{k: kfStr, s: s[i:j]}, true
			}
			i = j
		}
		return kfVal{k: kfStr}, true
	}, nil
}

// Predicates.

// kfCompareTerm orders a pipeline value against an argument in Erlang term order.
func kfCompareTerm(v kfVal, t kfTerm) int {
	if r := v.rank(); r != t.rank {
		return cmp.Compare(r, t.rank)
	}
	if t.rank == kfRankNumber {
		return kfCompareNum(v, t.v)
	}
	return strings.Compare(v.s, t.v.s)
}

// kfCompareNum orders two numbers by value, exactly, whatever their types.
func kfCompareNum(a, b kfVal) int {
	switch {
	case a.k == kfInt && b.k == kfInt:
		return cmp.Compare(a.i, b.i)
	case a.k == kfFloat && b.k == kfFloat:
		return cmp.Compare(a.f, b.f)
	case a.k == kfFloat:
		return -kfCompareNum(b, a)
	}
	// a is an integer.
	switch b.k {
	case kfInt: // a is big, so beyond int64 on the side of its sign
		return a.n.Sign()
	case kfBig:
		if a.k == kfInt {
			return -b.n.Sign()
		}
		return a.n.Cmp(b.n)
	}
	// b is a float.
	if a.k == kfBig {
		return new(big.Float).SetInt(a.n).Cmp(big.NewFloat(b.f))
	}
	return kfCompareIntFloat(a.i, b.f)
}

// kfCompareIntFloat orders an integer against a float exactly.
func kfCompareIntFloat(i int64, f float64) int {
	const two63 = 9223372036854775808.0
	switch {
	case f >= two63:
		return -1
	case f < -two63:
		return 1
	}
	t := math.Trunc(f)
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	return cmp.Compare(t, f)
}

// kfExactEqual is Erlang's =:= between a pipeline value and an argument.
func kfExactEqual(v kfVal, t kfTerm) bool {
	if v.rank() != t.rank {
		return false
	}
	switch v.k {
	case kfStr, kfAtom:
		return v.s == t.v.s
	case kfInt:
		return t.v.k == kfInt && v.i == t.v.i
	case kfBig:
		return t.v.k == kfBig && v.n.Cmp(t.v.n) == 0
	}
	return t.v.k == kfFloat && v.f == t.v.f
}

func kfCompare(name string, args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs(name, args, 1, "a value to compare with"); err != nil {
		return nil, err
	}
	t, err := kfParseTerm(args[0])
	if err != nil {
		return nil, fmt.Errorf("key filter %q: %w", name, err)
	}
	switch name {
	case "greater_than":
		return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(kfCompareTerm(v, t) > 0), true }, nil
	case "less_than":
		return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(kfCompareTerm(v, t) < 0), true }, nil
	case "greater_than_eq":
		return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(kfCompareTerm(v, t) >= 0), true }, nil
	case "less_than_eq":
		return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(kfCompareTerm(v, t) <= 0), true }, nil
	case "eq":
		return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(kfExactEqual(v, t)), true }, nil
	}
	return func(_ context.Context, v kfVal) (kfVal, bool) { return kfBool(!kfExactEqual(v, t)), true }, nil
}

func kfBetween(args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs("between", args, 2, "2 or 3 arguments: low, high and inclusive (default true)"); err != nil {
		return nil, err
	}
	lo, err := kfParseTerm(args[0])
	if err != nil {
		return nil, fmt.Errorf("key filter \"between\": %w", err)
	}
	hi, err := kfParseTerm(args[1])
	if err != nil {
		return nil, fmt.Errorf("key filter \"between\": %w", err)
	}
	inclusive := true
	if len(args) == 3 {
		if err := json.Unmarshal(args[2], &inclusive); err != nil {
			return nil, fmt.Errorf("key filter \"between\": the third argument (inclusive) must be true or false, not %s", kfExcerpt(args[2]))
		}
	}
	if inclusive {
		return func(_ context.Context, v kfVal) (kfVal, bool) {
			return kfBool(kfCompareTerm(v, lo) >= 0 && kfCompareTerm(v, hi) <= 0), true
		}, nil
	}
	return func(_ context.Context, v kfVal) (kfVal, bool) {
		return kfBool(kfCompareTerm(v, lo) > 0 && kfCompareTerm(v, hi) < 0), true
	}, nil
}

func kfMatches(args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs("matches", args, 1, "a regular expression"); err != nil {
		return nil, err
	}
	var pattern string
	if err := json.Unmarshal(args[0], &pattern); err != nil {
		return nil, fmt.Errorf("key filter \"matches\": the regular expression must be a string, not %s", kfExcerpt(args[0]))
	}
	if len(pattern) > kfMaxPattern {
		return nil, fmt.Errorf("key filter \"matches\": the regular expression is %d bytes long; at most %d are allowed", len(pattern), kfMaxPattern)
	}
	re, err := regexp.Compile(pattern)
	var size int
	if err == nil {
		size, err = kfProgramSize(pattern)
	}
	if err != nil {
		msg := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s: `%s`", se.Code, se.Expr)
		}
		if errors.Is(err, errProgramTooLarge) {
			return nil, fmt.Errorf("key filter \"matches\": the regular expression %q is too complex: it compiles to more than %d instructions (a counted repetition such as {100} copies what it repeats)", pattern, kfMaxProgram)
		}
		return nil, fmt.Errorf("key filter \"matches\": invalid regular expression %q: %s (patterns use RE2 syntax; PCRE-only features such as look-around, backreferences, possessive quantifiers and atomic groups are not supported)", pattern, msg)
	}
	return func(ctx context.Context, v kfVal) (kfVal, bool) {
		if v.k != kfStr {
			return v, false // the reference's re:run refuses numbers and atoms
		}
		if len(v.s)*size <= kfMatchStringSteps || ctx.Done() == nil {
			return kfBool(re.MatchString(v.s)), true
		}
		r := &kfKeyReader{s: v.s, done: ctx.Done()}
		m := re.MatchReader(r)
		if r.stopped {
			return kfFalse, false
		}
		return kfBool(m), true
	}, nil
}

// kfKeyReader reads a key to a regular expression rune by rune, as MatchString
// decodes it (a byte that is not UTF-8 is one U+FFFD), and ends it early, with stopped
// set, once done is closed: the match then finishes at once on the input it has.
type kfKeyReader struct {
	s       string
	i, n    int
	done    <-chan struct{}
	stopped bool
}

// ReadRune implements io.RuneReader.
func (r *kfKeyReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	if r.n++; r.n%256 == 0 {
		select {
		case <-r.done:
			r.stopped = true
			r.i = len(r.s)
			return 0, 0, io.EOF
		default:
		}
	}
	c, w := utf8.DecodeRuneInString(r.s[r.i:])
	r.i += w
	return c, w, nil
}

// errProgramTooLarge is a pattern whose program is longer than kfMaxProgram.
var errProgramTooLarge = errors.New("regular expression program too large")

// kfProgramSize returns the length of the program of a pattern that compiles, and
// refuses one longer than kfMaxProgram: matching costs up to its length per byte.
func kfProgramSize(pattern string) (int, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	if len(prog.Inst) > kfMaxProgram {
		return 0, errProgramTooLarge
	}
	return len(prog.Inst), nil
}

func kfSetMember(args []json.RawMessage) (kfStep, error) {
	set := make(map[string]struct{}, len(args))
	for _, a := range args {
		s, err := kfTextArg("set_member", a)
		if err != nil {
			return nil, err
		}
		set[s] = struct{}{}
	}
	return func(_ context.Context, v kfVal) (kfVal, bool) {
		_, ok := set[v.text()]
		return kfBool(ok), true
	}, nil
}

func kfSimilarTo(args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs("similar_to", args, 2, "2 arguments: a string and the maximum distance"); err != nil {
		return nil, err
	}
	str, err := kfTextArg("similar_to", args[0])
	if err != nil {
		return nil, err
	}
	if len(str) > kfMaxSimilarTo {
		return nil, fmt.Errorf("key filter \"similar_to\": the string is %d bytes long; at most %d are allowed", len(str), kfMaxSimilarTo)
	}
	limit, err := kfParseTerm(args[1])
	if err != nil || limit.rank != kfRankNumber {
		return nil, fmt.Errorf("key filter \"similar_to\": the maximum distance must be a number, not %s", kfExcerpt(args[1]))
	}
	return func(ctx context.Context, v kfVal) (kfVal, bool) {
		key := v.text()
		// The distance is at most the longer length: compare only when the limit is
		// below it, and then within a band of the limit's width.
		longer := max(len(key), len(str))
		if kfCompareNum(kfVal{k: kfInt, i: int64(longer)}, limit.v) <= 0 {
			return kfTrue, true
		}
		if kfCompareNum(kfVal{k: kfInt}, limit.v) > 0 {
			return kfFalse, true // a negative limit
		}
		within, ok := kfWithinDistance(ctx, key, str, kfFloor(limit.v))
		return kfBool(within), ok
	}, nil
}

// kfFloor is the integer part of a non-negative number below an int's range (similar_to
// calls it only for a limit below a string's length).
func kfFloor(v kfVal) int {
	switch v.k {
	case kfInt:
		return int(v.i)
	case kfFloat:
		return int(math.Floor(v.f))
	}
	return int(v.n.Int64())
}

// kfWithinDistance reports whether the Levenshtein distance between a and b, counted in
// bytes, is at most k (0 ≤ k). It walks the longer string a row at a time over the
// shorter one (so it keeps one row of the shorter's length), computing only the cells
// within k of the diagonal: at most max(len) × min(min(len), 2k+1) steps. It stops as
// soon as a row has no cell within k, and when ctx ends (ok false).
func kfWithinDistance(ctx context.Context, a, b string, k int) (within, ok bool) {
	if len(a) < len(b) {
		a, b = b, a
	}
	m, n := len(a), len(b)
	if m-n > k || n == 0 {
		return m-n <= k, true
	}
	inf := k + 1 // any distance above k
	var buf [64]int
	var row []int
	if n+1 <= len(buf) {
		row = buf[:n+1]
	} else {
		row = make([]int, n+1)
	}
	for j := range row {
		row[j] = min(j, inf)
	}
	done := ctx.Done()
	for i := 1; i <= m; i++ {
		if i%256 == 0 && done != nil {
			select {
			case <-done:
				return false, false
			default:
			}
		}
		lo, hi := max(1, i-k), min(n, i+k)
		if lo > hi {
			return false, true // the band left the row: every cell is above k
		}
		diag := row[lo-1] // the previous row's cell left of the band
		row[lo-1] = inf   // this row's cell left of the band is outside it
		if lo == 1 {
			row[0] = min(i, inf)
		}
		best := row[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			up := row[j]
			v := min(up+1, row[j-1]+1, diag+cost, inf)
			diag, row[j] = up, v
			best = min(best, v)
		}
		if best > k {
			return false, true
		}
	}
	return row[n] <= k, true
}

func kfAffix(name string, args []json.RawMessage) (kfStep, error) {
	if err := kfNeedArgs(name, args, 1, "a string"); err != nil {
		return nil, err
	}
	affix, err := kfTextArg(name, args[0])
	if err != nil {
		return nil, err
	}
	if name == "starts_with" {
		return func(_ context.Context, v kfVal) (kfVal, bool) {
			return kfBool(strings.HasPrefix(v.text(), affix)), true
		}, nil
	}
	return func(_ context.Context, v kfVal) (kfVal, bool) {
		return kfBool(strings.HasSuffix(v.text(), affix)), true
	}, nil
}

// kfLogical parses "and" and "or": each argument is a filter list applied to the
// current value. They stop at the first list that decides, as the reference's
// lists:all and lists:any do.
func kfLogical(name string, args []json.RawMessage, depth int, count *int) (kfStep, error) {
	if *count += len(args); *count > kfMaxFilters {
		return nil, errTooManyFilters
	}
	subs := make([]kfPipeline, 0, len(args))
	for _, a := range args {
		p, err := kfNestedList(name, a, depth, count)
		if err != nil {
			return nil, err
		}
		subs = append(subs, p)
	}
	all := name == "and"
	return func(ctx context.Context, v kfVal) (kfVal, bool) {
		for _, p := range subs {
			r, ok := p.run(ctx, v)
			if !ok {
				return r, false
			}
			if r.isTrue() != all {
				return kfBool(!all), true
			}
		}
		return kfBool(all), true
	}, nil
}

func kfNot(args []json.RawMessage, depth int, count *int) (kfStep, error) {
	if err := kfNeedArgs("not", args, 1, "a list of key filters"); err != nil {
		return nil, err
	}
	p, err := kfNestedList("not", args[0], depth, count)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, v kfVal) (kfVal, bool) {
		r, ok := p.run(ctx, v)
		if !ok || !r.isTrue() && !r.isFalse() {
			return r, false
		}
		return kfBool(!r.isTrue()), true
	}, nil
}

// kfErlangBinary writes s as the inside of an Erlang binary literal <<"s">>.
func kfErlangBinary(s string) string {
	return strconv.Quote(s)
}

// kfCompact returns raw JSON without insignificant spaces, shortened for messages.
func kfCompact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return kfExcerpt(raw)
	}
	return kfExcerpt(b.Bytes())
}

// kfExcerpt returns raw JSON for an error message, cut after 100 bytes.
func kfExcerpt(raw []byte) string {
	const limit = 100
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "nothing"
	}
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
