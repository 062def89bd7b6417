// Command wordcount-map is the classic MapReduce word count as Cairn map and reduce
// functions, built as a WebAssembly module. The map "wordcount" turns an object into
// one {"word": count, ...} object; the reduce "sum_counts" adds such objects up.
//
// The logic here is portable and unit-tested natively; exports_wasip1.go exports it.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/cairnkv/cairn/sdk/go/cairn"
)

// main is never called: the module is a reactor, and the host calls its exports.
func main() {}

var (
	// wordcountHook is exported as "wordcount".
	wordcountHook = cairn.Map(wordcount)
	// sumCountsHook is exported as "sum_counts".
	sumCountsHook = cairn.Reduce(sumCounts)
)

// mapArg is the optional argument of the map phase.
type mapArg struct {
	// MinLength drops words of fewer letters and digits.
	MinLength int `json:"min_length"`
}

// wordcount counts the words of the object's value: its first sibling that is not a
// tombstone. A word is a run of letters and digits, lower-cased. The result is one
// object, {"word": count, ...} ({} for a value without words); a missing or deleted
// object maps to nothing.
func wordcount(in *cairn.MapInput) ([]any, error) {
	var arg mapArg
	if err := in.DecodeArg(&arg); err != nil {
		return nil, err
	}
	if in.Object == nil {
		return nil, nil // not found
	}
	live := in.Object.Live()
	if len(live) == 0 {
		return nil, nil // deleted
	}
	return []any{countWords(string(live[0].Data), arg.MinLength)}, nil
}

// countWords counts the lower-cased runs of letters and digits in text that have at
// least minLength runes.
func countWords(text string, minLength int) map[string]int64 {
	counts := map[string]int64{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= minLength {
			counts[strings.ToLower(w)]++
		}
	}
	return counts
}

// sumCounts adds up {"word": count} objects into one. Its output has the shape of its
// input, so it can be fed back in with more values: it is re-reducible.
func sumCounts(in *cairn.ReduceInput) ([]any, error) {
	total := map[string]int64{}
	for i, raw := range in.Values {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var counts map[string]json.Number
		if err := dec.Decode(&counts); err != nil || counts == nil {
			return nil, fmt.Errorf("value %d is not a {\"word\": count} object: %s", i, raw)
		}
		for w, n := range counts {
			c, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("value %d: the count of %q is not an integer: %s", i, w, n)
			}
			total[w] += c
		}
	}
	return []any{total}, nil
}
