// Command wordcount is an example Cairn process plugin: the classic MapReduce word
// count, as the map function "wordcount" and the reduce function "sum_counts". It is
// the process-plugin twin of the WebAssembly example wasm-examples/go/wordcount-map,
// with the same results, so the two runtimes can be compared on the same job:
//
//	{"inputs": "docs", "query": [
//	  {"map": {"language": "erlang", "module": "wordcount", "function": "wordcount"}},
//	  {"reduce": {"language": "erlang", "module": "wordcount", "function": "sum_counts"}}]}
//
// (A phase names a process plugin as it names a built-in, "language": "erlang" with
// the plugin's configured name as the module.)
//
// The map turns an object (its first sibling that is not a tombstone) into one
// {"word": count, ...} object; a word is a run of letters and digits, lower-cased; the
// argument {"min_length": N} drops shorter words. A missing or deleted object maps to
// nothing. The reduce adds such objects up into one; it is re-reducible.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func main() {
	m := goplugin.NewMux()
	m.Map("wordcount", wordcount)
	m.Reduce("sum_counts", sumCounts)
	goplugin.Serve(m)
}

// mapArg is the optional argument of the map phase.
type mapArg struct {
	// MinLength drops words of fewer letters and digits.
	MinLength int `json:"min_length"`
}

// wordcount counts the words of one input.
func wordcount(_ context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
	var arg mapArg
	if len(in.Arg) > 0 && !bytes.Equal(in.Arg, []byte("null")) {
		if err := json.Unmarshal(in.Arg, &arg); err != nil {
			return nil, fmt.Errorf("the argument is not {\"min_length\": N}: %w", err)
		}
	}
	if in.NotFound || in.Object == nil {
		return nil, nil
	}
	for _, c := range in.Object.Contents {
		if c.Deleted {
			continue
		}
		out, err := json.Marshal(countWords(string(c.Value), arg.MinLength))
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{out}, nil
	}
	return nil, nil // deleted
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

// sumCounts adds up {"word": count} objects into one.
func sumCounts(_ context.Context, values []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
	total := map[string]int64{}
	for i, raw := range values {
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
	out, err := json.Marshal(total)
	if err != nil {
		return nil, err
	}
	return []json.RawMessage{out}, nil
}
