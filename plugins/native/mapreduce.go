package native

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
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
)

// The MapReduce built-ins of the reference's riak_kv_mapreduce module, on JSON.
//
// The reference runs them on Erlang terms; Cairn's phases carry JSON. Values are read
// as the reference's JSON decoder gives them to an Erlang function (numbers are
// integers of any size when written without fraction or exponent and floats
// otherwise; true, false and null are atoms; objects are {struct, Members} tuples;
// arrays are lists; strings are binaries) and written back as its JSON encoder writes
// them (compact; strings ASCII-only with \uXXXX escapes; floats in the shortest form
// that reads back, "1.0", "0.1", "1.0e+21"). A missing input is the JSON object
// {"not_found": {...}} the engine passes on; the reference's {not_found, ...} tuples.
//
// Errors name the Erlang error the reference raises (function_clause, badarith,
// badarg, {unhandled_entry, X}) followed by an explanation; the engine reports them as
// phase errors.

// mapReduceModule returns the functions of riak_kv_mapreduce, reporting errors under
// the module name mod. codec writes the object JSON of map_identity.
func mapReduceModule(mod string, codec hookjson.Codec) module {
	m := func(name string, fn func(context.Context, hooks.MapInput) ([]json.RawMessage, error)) function {
		return function{hooks.PointMap, mapFunc{mod: mod, fun: name, fn: fn}}
	}
	r := func(name string, fn func(context.Context, []json.RawMessage) ([]json.RawMessage, error)) function {
		return function{hooks.PointReduce, reduceFunc{mod: mod, fun: name, fn: fn}}
	}
	return module{
		"map_identity": m("map_identity", func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			return MapIdentity(codec, in), nil
		}),
		"map_object_value": m("map_object_value", func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
			return MapObjectValue(in)
		}),
		"map_object_value_list":    m("map_object_value_list", MapObjectValueList),
		"reduce_identity":          r("reduce_identity", ReduceIdentity),
		"reduce_set_union":         r("reduce_set_union", ReduceSetUnion),
		"reduce_sort":              r("reduce_sort", ReduceSort),
		"reduce_sum":               r("reduce_sum", ReduceSum),
		"reduce_plist_sum":         r("reduce_plist_sum", ReducePlistSum),
		"reduce_count_inputs":      r("reduce_count_inputs", ReduceCountInputs),
		"reduce_string_to_integer": r("reduce_string_to_integer", ReduceStringToInteger),
	}
}

// mapFunc adapts a map built-in to hooks.Map.
type mapFunc struct {
	mod, fun string
	fn       func(context.Context, hooks.MapInput) ([]json.RawMessage, error)
}

// Map implements hooks.Map. Errors are *hooks.CallError of kind hooks.Failed.
func (f mapFunc) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := f.fn(ctx, in)
	if err != nil {
		return nil, builtinError(ctx, f.mod, f.fun, err)
	}
	return out, nil
}

// builtinError is the error of a built-in: the context's own when it ended the call
// (the built-ins look at it every checkEvery values), else a *hooks.CallError of kind
// hooks.Failed.
func builtinError(ctx context.Context, mod, fun string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return &hooks.CallError{Kind: hooks.Failed, Module: mod, Function: fun, Err: err}
}

// checkEvery is how many values (or comparisons) a built-in handles between two looks
// at its context, so that a call over many megabytes of values ends at the job's
// deadline rather than seconds later.
const checkEvery = 1024

// stopped returns ctx's error at every checkEvery-th i, nil otherwise.
func stopped(ctx context.Context, i int) error {
	if i%checkEvery == checkEvery-1 {
		return ctx.Err()
	}
	return nil
}

// reduceFunc adapts a reduce built-in to hooks.Reduce. The built-ins ignore arg, as
// the reference's do.
type reduceFunc struct {
	mod, fun string
	fn       func(context.Context, []json.RawMessage) ([]json.RawMessage, error)
}

// Reduce implements hooks.Reduce. Errors are *hooks.CallError of kind hooks.Failed.
func (f reduceFunc) Reduce(ctx context.Context, values []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := f.fn(ctx, values)
	if err != nil {
		return nil, builtinError(ctx, f.mod, f.fun, err)
	}
	return out, nil
}

// Map phase functions.

// MapIdentity is map_identity: the object itself, as the JavaScript object JSON that
// codec writes (its dialect names the metadata). A missing input gives its not_found
// object (the reference hands back the {error, notfound} it was given, which its JSON
// encoder cannot write).
func MapIdentity(codec hookjson.Codec, in hooks.MapInput) []json.RawMessage {
	if in.Object == nil {
		return []json.RawMessage{notFound(in)}
	}
	return []json.RawMessage{codec.AppendObject(nil, in.Object)}
}

// MapObjectValue is map_object_value: the object's value as a JSON string. An object
// with siblings gives the first sibling's value (the reference fails on siblings); a
// tombstone gives "". Bytes that are not UTF-8 become U+FFFD: lossy, but a value that
// is not text still makes one output, which a following reduce such as
// reduce_count_inputs can use (the reference passes the binary on and fails only if it
// reaches its JSON encoder). A missing input gives what the phase arg asks for (see
// notFoundAction).
func MapObjectValue(in hooks.MapInput) ([]json.RawMessage, error) {
	if in.Object == nil {
		return notFoundAction(in)
	}
	v, err := firstValue(in.Object)
	if err != nil {
		return nil, err
	}
	return []json.RawMessage{appendJSONString(nil, v)}, nil
}

// MapObjectValueList is map_object_value_list: the object's value (of the first
// sibling) must be a JSON array, whose elements are the outputs. A missing input gives
// what the phase arg asks for (see notFoundAction).
func MapObjectValueList(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	if in.Object == nil {
		return notFoundAction(in)
	}
	v, err := firstValue(in.Object)
	if err != nil {
		return nil, err
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil || elems == nil {
		return nil, fmt.Errorf("bad_result: the value of %s/%s is not a JSON list", in.Object.Bucket, in.Object.Key)
	}
	return canonicalAll(ctx, elems)
}

// firstValue returns the value of o's first sibling.
func firstValue(o *core.Object) ([]byte, error) {
	if len(o.Siblings) == 0 {
		return nil, fmt.Errorf("function_clause: the object %s/%s has no value", o.Bucket, o.Key)
	}
	return o.Siblings[0].Value, nil
}

// notFoundAction is what map_object_value and map_object_value_list give for a
// missing input, as the phase arg asks: "filter_notfound" → nothing;
// "include_notfound" → the not_found object; "include_keydata" → the input's key
// data ("undefined" when it had none); {"sub": [X...]} → the elements X. Any other
// arg, or none, is the reference's function_clause error.
func notFoundAction(in hooks.MapInput) ([]json.RawMessage, error) {
	var action string
	if json.Unmarshal(in.Arg, &action) == nil {
		switch action {
		case "filter_notfound":
			return []json.RawMessage{}, nil
		case "include_notfound":
			return []json.RawMessage{notFound(in)}, nil
		case "include_keydata":
			if len(in.KeyData) == 0 {
				return []json.RawMessage{json.RawMessage(`"undefined"`)}, nil
			}
			kd, err := canonical(in.KeyData)
			if err != nil {
				return nil, err
			}
			return []json.RawMessage{kd}, nil
		}
	}
	if len(in.Arg) > 0 {
		if t, err := decodeTerm(in.Arg); err == nil && t.kind == jObject && len(t.mems) == 1 && t.mems[0].key == "sub" {
			sub := t.mems[0].val
			if sub.kind != jArray {
				return nil, fmt.Errorf("bad_result: {\"sub\": X} gives X as the outputs of a missing object, so X must be a list, not %s", appendTerm(nil, sub))
			}
			out := make([]json.RawMessage, len(sub.elems))
			for i := range sub.elems {
				out[i] = appendTerm(nil, sub.elems[i])
			}
			return out, nil
		}
	}
	arg := "none"
	if len(in.Arg) > 0 {
		arg = string(in.Arg)
	}
	return nil, fmt.Errorf(`function_clause: missing object with the phase arg %s; set "arg" to "filter_notfound", "include_notfound", "include_keydata" or {"sub":[...]} to choose what a missing object gives`, arg)
}

// notFound returns the not_found object of a missing input, as the engine writes it:
// {"not_found":{"bucket_type":T (typed buckets only),"bucket":B,"key":K,"keydata":KD}},
// KD being "undefined" when the input had no key data.
func notFound(in hooks.MapInput) json.RawMessage {
	var p hooks.Place
	if in.NotFound != nil {
		p = *in.NotFound
	}
	b := []byte(`{"not_found":{`)
	if p.Type != "" && p.Type != core.DefaultType {
		b = append(b, `"bucket_type":`...)
		b = appendJSONString(b, []byte(p.Type))
		b = append(b, ',')
	}
	b = append(b, `"bucket":`...)
	b = appendJSONString(b, []byte(p.Bucket))
	b = append(b, `,"key":`...)
	b = appendJSONString(b, []byte(p.Key))
	b = append(b, `,"keydata":`...)
	if len(in.KeyData) == 0 {
		b = append(b, `"undefined"`...)
	} else if kd, err := canonical(in.KeyData); err == nil {
		b = append(b, kd...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, "}}"...)
}

// Reduce phase functions. Every one is re-reducible: its output, followed by more
// values, reduces to what reducing all the values at once gives (for reduce_identity
// and reduce_set_union the same elements; their order is unspecified in the
// reference).

// ReduceIdentity is reduce_identity: [Bucket, Key] for each input. The inputs are the
// engine's inputs as JSON, [B, K], [B, K, KeyData] and [B, K, KeyData, Type], or
// earlier outputs, [B, K] (any two-element array passes, as the reference's re-reduce
// clause does). A typed input gives [[Type, B], K] (the typed bucket as the inputs
// write it), the type "default" the plain [B, K]. Anything else is the reference's
// {unhandled_entry, X} error. Like the reference, the output is in reverse order.
func ReduceIdentity(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(values))
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		t, err := decodeTerm(raw)
		if err != nil {
			return nil, err
		}
		var b []byte
		switch e := t.elems; {
		case t.kind == jArray && len(e) == 2:
			b = appendList(nil, e[0], e[1])
		case t.kind == jArray && len(e) == 3 && e[0].kind == jString && e[1].kind == jString:
			b = appendList(nil, e[0], e[1])
		case t.kind == jArray && len(e) == 4 && e[0].kind == jString && e[1].kind == jString && e[3].kind == jString:
			if e[3].str == core.DefaultType {
				b = appendList(nil, e[0], e[1])
			} else {
				b = append(appendList([]byte{'['}, e[3], e[0]), ',')
				b = append(appendTerm(b, e[1]), ']')
			}
		default:
			return nil, fmt.Errorf("{unhandled_entry,%s}: reduce_identity takes [bucket, key] inputs", appendTerm(nil, t))
		}
		out[len(values)-1-i] = b
	}
	return out, nil
}

// ReduceSetUnion is reduce_set_union: the distinct inputs, each once, in the order of
// their first appearance. Inputs are the same when they are the same Erlang term: 1
// and 1.0 differ, {"a":1,"b":2} and {"b":2,"a":1} differ, "\u0041" and "A" do not.
func ReduceSetUnion(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(values))
	seen := make(map[string]struct{}, len(values))
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		c, err := canonical(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := seen[string(c)]; !dup {
			seen[string(c)] = struct{}{}
			out = append(out, c)
		}
	}
	return out, nil
}

// ReduceSort is reduce_sort: the inputs sorted in Erlang term order (numbers <
// false < null < true < objects < arrays < strings; numbers by value, an integer
// before an equal float when it came first; strings bytewise; arrays element by
// element, a prefix first; objects member by member, key then value). The sort is
// stable.
func ReduceSort(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	terms, err := decodeAll(ctx, values)
	if err != nil {
		return nil, err
	}
	if err := sortTerms(ctx, terms); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(terms))
	for i := range terms {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		out[i] = appendTerm(nil, terms[i])
	}
	return out, nil
}

// sortStopped is the panic that ends a sort whose context ended.
type sortStopped struct{ err error }

// sortTerms sorts terms stably in Erlang term order, looking at ctx every checkEvery
// comparisons; it returns ctx's error, with terms in some order, when ctx ends.
func sortTerms(ctx context.Context, terms []jterm) (err error) {
	defer func() {
		if r := recover(); r != nil {
			st, ok := r.(sortStopped)
			if !ok {
				panic(r)
			}
			err = st.err
		}
	}()
	n := 0
	slices.SortStableFunc(terms, func(a, b jterm) int {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				panic(sortStopped{err}) // the only way out of slices.SortStableFunc
			}
		}
		return compareTerms(a, b)
	})
	return nil
}

// ReduceSum is reduce_sum: [the sum of the inputs], 0 for none, skipping not_found
// objects. Integers stay exact integers of any size; a float anywhere makes the sum a
// float. Anything but a number is the reference's badarith error.
func ReduceSum(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	sum := number{}
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		t, err := decodeTerm(raw)
		if err != nil {
			return nil, err
		}
		if isNotFound(t) {
			continue
		}
		if t.kind != jNumber {
			return nil, fmt.Errorf("badarith: reduce_sum cannot add %s", appendTerm(nil, t))
		}
		if sum, err = t.num.add(sum); err != nil {
			return nil, err
		}
	}
	return []json.RawMessage{sum.append(nil)}, nil
}

// ReducePlistSum is reduce_plist_sum: sums the values of a property list by key. JSON
// has no tuples, so a pair {K, V} is a two-element array [K, V] whose V is a number,
// or a member "K": V of an object (an object is a list of pairs). An input is a pair or
// a list of pairs (arrays nest as deep as the reference's lists:flatten goes). The
// output is the list of [K, Sum] pairs in the order keys first appear, keys compared
// as Erlang terms; no inputs give no outputs. A V that is not a number is the
// reference's badarith error, an input that is neither a pair nor a list its
// function_clause.
func ReducePlistSum(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	type entry struct {
		key jterm
		sum number
	}
	var sums []entry
	index := map[string]int{}
	add := func(k, v jterm) error {
		if v.kind != jNumber {
			return fmt.Errorf("badarith: reduce_plist_sum cannot add %s", appendTerm(nil, v))
		}
		c := string(appendTerm(nil, k))
		i, ok := index[c]
		if !ok {
			index[c] = len(sums)
			sums = append(sums, entry{key: k, sum: v.num})
			return nil
		}
		s, err := v.num.add(sums[i].sum)
		sums[i].sum = s
		return err
	}
	var walk func(t jterm) error
	walk = func(t jterm) error {
		switch {
		case t.kind == jArray && len(t.elems) == 2 && t.elems[1].kind == jNumber:
			return add(t.elems[0], t.elems[1])
		case t.kind == jObject:
			for _, m := range t.mems {
				if err := add(jterm{kind: jString, str: m.key}, m.val); err != nil {
					return err
				}
			}
			return nil
		case t.kind == jArray:
			for _, e := range t.elems {
				if err := walk(e); err != nil {
					return err
				}
			}
			return nil
		}
		return fmt.Errorf("function_clause: reduce_plist_sum takes [key, number] pairs or lists of them, not %s", appendTerm(nil, t))
	}
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		t, err := decodeTerm(raw)
		if err != nil {
			return nil, err
		}
		if err := walk(t); err != nil {
			return nil, err
		}
	}
	out := make([]json.RawMessage, len(sums))
	for i, e := range sums {
		b := append(appendTerm([]byte{'['}, e.key), ',')
		out[i] = append(e.sum.append(b), ']')
	}
	return out, nil
}

// ReduceCountInputs is reduce_count_inputs: [the number of inputs], where an integer
// input adds its value (an earlier count, when re-reducing) and anything else counts
// 1. Inputs must therefore not be integers themselves, as in the reference.
func ReduceCountInputs(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	count := number{}
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		n := number{i: 1}
		if s := bytes.TrimSpace(raw); len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			v, err := parseNumber(string(s))
			if err != nil {
				return nil, err
			}
			if v.kind != nFloat {
				n = v
			}
		}
		var err error
		if count, err = n.add(count); err != nil {
			return nil, err
		}
	}
	return []json.RawMessage{count.append(nil)}, nil
}

// ReduceStringToInteger is reduce_string_to_integer: each input as an integer, not_found
// objects dropped. A string must be an optional sign and decimal digits (else the
// reference's badarg error); an integer stays as it is; anything else is its
// function_clause error.
func ReduceStringToInteger(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(values))
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		t, err := decodeTerm(raw)
		if err != nil {
			return nil, err
		}
		switch {
		case isNotFound(t):
			continue
		case t.kind == jNumber && t.num.kind != nFloat:
			out = append(out, t.num.append(nil))
		case t.kind == jString:
			n, ok := parseErlangInt(t.str)
			if !ok {
				return nil, fmt.Errorf("badarg: reduce_string_to_integer cannot read %s as an integer", appendTerm(nil, t))
			}
			out = append(out, n.append(nil))
		default:
			return nil, fmt.Errorf("function_clause: reduce_string_to_integer takes strings and integers, not %s", appendTerm(nil, t))
		}
	}
	return out, nil
}

// isNotFound reports whether t is a not_found object: {"not_found": ...} alone.
func isNotFound(t jterm) bool {
	return t.kind == jObject && len(t.mems) == 1 && t.mems[0].key == "not_found"
}

// JSON terms.

// jkind is the type of a JSON term, in Erlang's term order.
type jkind int

// The JSON types in the order Erlang sorts the terms its JSON decoder gives: numbers,
// atoms, tuples ({struct, Members}), lists, binaries.
const (
	jNumber jkind = iota
	jAtom
	jObject
	jArray
	jString
)

// jterm is a decoded JSON value.
type jterm struct {
	kind  jkind
	num   number    // jNumber
	str   string    // jString: the text; jAtom: true, false or null
	elems []jterm   // jArray
	mems  []jmember // jObject, in order, duplicates kept
}

// jmember is a member of a JSON object.
type jmember struct {
	key string
	val jterm
}

// maxDepth bounds the nesting of the JSON values the built-ins decode.
const maxDepth = 1000

// decodeTerm decodes one JSON value.
func decodeTerm(raw []byte) (jterm, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	t, err := readTerm(dec, 0)
	if err != nil {
		return jterm{}, fmt.Errorf("badarg: invalid JSON value %s: %w", excerpt(raw), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jterm{}, fmt.Errorf("badarg: invalid JSON value %s: data after the value", excerpt(raw))
	}
	return t, nil
}

func readTerm(dec *json.Decoder, depth int) (jterm, error) {
	if depth > maxDepth {
		return jterm{}, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return jterm{}, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '[':
			t := jterm{kind: jArray, elems: []jterm{}}
			for dec.More() {
				e, err := readTerm(dec, depth+1)
				if err != nil {
					return jterm{}, err
				}
				t.elems = append(t.elems, e)
			}
			_, err := dec.Token()
			return t, err
		case '{':
			t := jterm{kind: jObject, mems: []jmember{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jterm{}, err
				}
				v, err := readTerm(dec, depth+1)
				if err != nil {
					return jterm{}, err
				}
				t.mems = append(t.mems, jmember{key: k.(string), val: v})
			}
			_, err := dec.Token()
			return t, err
		}
		return jterm{}, fmt.Errorf("unexpected %v", tok)
	case string:
		return jterm{kind: jString, str: tok}, nil
	case json.Number:
		n, err := parseNumber(string(tok))
		return jterm{kind: jNumber, num: n}, err
	case bool:
		if tok {
			return jterm{kind: jAtom, str: "true"}, nil
		}
		return jterm{kind: jAtom, str: "false"}, nil
	}
	return jterm{kind: jAtom, str: "null"}, nil
}

func decodeAll(ctx context.Context, values []json.RawMessage) ([]jterm, error) {
	terms := make([]jterm, len(values))
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		t, err := decodeTerm(raw)
		if err != nil {
			return nil, err
		}
		terms[i] = t
	}
	return terms, nil
}

// canonical re-encodes a JSON value as the reference's encoder writes the term.
func canonical(raw []byte) (json.RawMessage, error) {
	t, err := decodeTerm(raw)
	if err != nil {
		return nil, err
	}
	return appendTerm(nil, t), nil
}

func canonicalAll(ctx context.Context, values []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(values))
	for i, raw := range values {
		if err := stopped(ctx, i); err != nil {
			return nil, err
		}
		c, err := canonical(raw)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// appendTerm appends t as the reference's JSON encoder (mochijson2) writes it.
func appendTerm(dst []byte, t jterm) []byte {
	switch t.kind {
	case jNumber:
		return t.num.append(dst)
	case jAtom:
		return append(dst, t.str...)
	case jString:
		return appendJSONString(dst, []byte(t.str))
	case jArray:
		dst = append(dst, '[')
		for i := range t.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendTerm(dst, t.elems[i])
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, m := range t.mems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, []byte(m.key))
		dst = append(dst, ':')
		dst = appendTerm(dst, m.val)
	}
	return append(dst, '}')
}

// appendList appends the array [a, b].
func appendList(dst []byte, a, b jterm) []byte {
	dst = appendTerm(append(dst, '['), a)
	return append(appendTerm(append(dst, ','), b), ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way mochijson2 writes a binary:
// ASCII only, with \" \\ \b \f \n \r \t, and \uXXXX (lower-case hex, surrogate pairs
// above U+FFFF) for other control characters and every non-ASCII character. Bytes
// that are not UTF-8 become U+FFFD.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = appendU4(dst, rune(c))
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU4(dst, 0xd800|(r>>10)&0x3ff)
			dst = appendU4(dst, 0xdc00|r&0x3ff)
		} else {
			dst = appendU4(dst, r) // an invalid byte decodes as U+FFFD
		}
		i += size
	}
	return append(dst, '"')
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// compareTerms orders two JSON terms as Erlang orders the terms they decode to.
func compareTerms(a, b jterm) int {
	if a.kind != b.kind {
		return cmp.Compare(a.kind, b.kind)
	}
	switch a.kind {
	case jNumber:
		return a.num.compare(b.num)
	case jAtom, jString:
		return strings.Compare(a.str, b.str)
	case jArray:
		for i := 0; i < len(a.elems) && i < len(b.elems); i++ {
			if c := compareTerms(a.elems[i], b.elems[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.elems), len(b.elems))
	}
	// Objects: {struct, [{K, V}...]}: the member lists, pair by pair.
	for i := 0; i < len(a.mems) && i < len(b.mems); i++ {
		if c := strings.Compare(a.mems[i].key, b.mems[i].key); c != 0 {
			return c
		}
		if c := compareTerms(a.mems[i].val, b.mems[i].val); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.mems), len(b.mems))
}

// Numbers.

// nkind is the representation of a number.
type nkind int

// Number representations: an integer in int64, a larger integer, a float.
const (
	nInt nkind = iota
	nBig
	nFloat
)

// number is an Erlang number: an integer of any size or a float. The zero value is
// the integer 0. Integers that fit int64 are always nInt.
type number struct {
	kind nkind
	i    int64
	b    *big.Int
	f    float64
}

// parseNumber reads a JSON number: an integer when it has no fraction and no exponent.
func parseNumber(s string) (number, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return number{i: i}, nil
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return bigNumber(b), nil
		}
		return number{}, fmt.Errorf("badarg: invalid number %s", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
		return number{}, fmt.Errorf("badarg: number out of range: %s", s)
	}
	return number{kind: nFloat, f: f}, nil
}

// parseErlangInt reads s as list_to_integer does: an optional sign and decimal digits.
func parseErlangInt(s string) (number, bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return number{}, false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{i: i}, true
	}
	b, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !ok {
		return number{}, false
	}
	return bigNumber(b), true
}

// bigNumber returns b as a number, as an nInt when it fits.
func bigNumber(b *big.Int) number {
	if b.IsInt64() {
		return number{i: b.Int64()}
	}
	return number{kind: nBig, b: b}
}

func (n number) bigInt() *big.Int {
	if n.kind == nBig {
		return n.b
	}
	return big.NewInt(n.i)
}

// float converts n to a float, as Erlang does for mixed arithmetic; an integer too
// large for a float is the reference's badarith error.
func (n number) float() (float64, error) {
	switch n.kind {
	case nFloat:
		return n.f, nil
	case nInt:
		return float64(n.i), nil
	}
	f, _ := new(big.Float).SetInt(n.b).Float64()
	if math.IsInf(f, 0) {
		return 0, errors.New("badarith: integer too large to add to a float")
	}
	return f, nil
}

// add returns n + m: exact for integers, a float when either is one. A float result
// out of range is the reference's badarith error.
func (n number) add(m number) (number, error) {
	if n.kind == nFloat || m.kind == nFloat {
		a, err := n.float()
		if err != nil {
			return number{}, err
		}
		b, err := m.float()
		if err != nil {
			return number{}, err
		}
		s := a + b
		if math.IsInf(s, 0) {
			return number{}, errors.New("badarith: float sum out of range")
		}
		return number{kind: nFloat, f: s}, nil
	}
	if n.kind == nInt && m.kind == nInt {
		s := n.i + m.i
		if (s > n.i) == (m.i > 0) {
			return number{i: s}, nil
		}
	}
	return bigNumber(new(big.Int).Add(n.bigInt(), m.bigInt())), nil
}

// compare orders numbers by value, exactly, whatever their representations.
func (n number) compare(m number) int {
	switch {
	case n.kind == nInt && m.kind == nInt:
		return cmp.Compare(n.i, m.i)
	case n.kind == nFloat && m.kind == nFloat:
		return cmp.Compare(n.f, m.f)
	case n.kind != nFloat && m.kind != nFloat:
		return n.bigInt().Cmp(m.bigInt())
	case n.kind == nFloat:
		return -m.compare(n)
	}
	// n is an integer, m a float.
	return new(big.Float).SetInt(n.bigInt()).Cmp(big.NewFloat(m.f))
}

// append writes n as the reference's JSON encoder does: integers in decimal, floats
// as mochinum:digits writes them.
func (n number) append(dst []byte) []byte {
	switch n.kind {
	case nInt:
		return strconv.AppendInt(dst, n.i, 10)
	case nBig:
		return n.b.Append(dst, 10)
	}
	return appendErlangFloat(dst, n.f)
}

// appendErlangFloat writes f as mochinum:digits does: the shortest digits that read
// back as f, in positional notation with at least one digit after the point when the
// decimal exponent allows ("1.0", "0.001", "123456.0", "100000.0"), and as d.ddde±N
// otherwise ("1.0e+6", "1.0e-7").
func appendErlangFloat(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	at := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[at+1:]))
	digits := make([]byte, 0, at)
	for _, c := range e[:at] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	place := exp + 1 // the value is 0.DIGITS × 10^place
	zeros := func(n int) {
		for range n {
			dst = append(dst, '0')
		}
	}
	switch {
	case place == 0:
		dst = append(dst, "0."...)
		return append(dst, digits...)
	case place > 0 && place-len(digits) < 6:
		if place < len(digits) {
			dst = append(dst, digits[:place]...)
			dst = append(dst, '.')
			return append(dst, digits[place:]...)
		}
		dst = append(dst, digits...)
		zeros(place - len(digits))
		return append(dst, ".0"...)
	case place < 0 && place > -6:
		dst = append(dst, "0."...)
		zeros(-place)
		return append(dst, digits...)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	if place < 0 {
		dst = append(dst, "e-"...)
	} else {
		dst = append(dst, "e+"...)
	}
	return strconv.AppendInt(dst, int64(max(place-1, 1-place)), 10)
}

// excerpt returns raw JSON for an error message, cut after 100 bytes.
func excerpt(raw []byte) string {
	const limit = 100
	s := strings.TrimSpace(string(raw))
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
