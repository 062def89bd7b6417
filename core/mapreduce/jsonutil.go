package mapreduce

import (
	"bytes"
	"encoding/json"

	"github.com/cairnkv/cairn/core/jsonstr"
)

// The job is read the way the reference reads it: object members in document order,
// the first of duplicate names winning (Erlang's proplists), any JSON value allowed
// wherever a field's presence is all that matters (null included).

// member is one member of a JSON object.
type member struct {
	key string
	val json.RawMessage
}

// maxMembers bounds the members of any object of a job that is decoded member by
// member (the job itself, an object input, a phase's spec, a reduce argument).
const maxMembers = 1000

// members returns the members of a JSON object in document order; ok is false when raw
// is not an object or has more than limit members (which are then not decoded).
func members(raw []byte, limit int) (ms []member, ok bool) {
	if jsonKind(raw) != '{' || countItems(raw) > limit {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, isStr := tok.(string)
		if !isStr {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{k, v})
	}
	return ms, true
}

// get returns the value of the first member named key.
func get(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// elements returns the elements of a JSON array; ok is false when raw is not an array
// or has more than limit elements (which are then not decoded).
func elements(raw []byte, limit int) ([]json.RawMessage, bool) {
	if jsonKind(raw) != '[' || countItems(raw) > limit {
		return nil, false
	}
	var es []json.RawMessage
	if err := json.Unmarshal(raw, &es); err != nil {
		return nil, false
	}
	return es, true
}

// countItems returns the number of elements of a JSON array or members of a JSON
// object, scanning raw without decoding it (so that a job's sizes are checked before
// anything is allocated for them); -1 when raw is neither. raw is valid JSON.
func countItems(raw []byte) int {
	start := bytes.IndexAny(raw, "[{")
	if start < 0 || jsonKind(raw) != raw[start] {
		return -1
	}
	depth, n := 1, 0
	inString, seen := false, false
	for i := start + 1; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				if seen {
					n++
				}
				return n
			}
		case ',':
			if depth == 1 {
				n++
			}
		}
		seen = true // something inside the outer brackets
	}
	return n
}

// jsonKind returns the first byte of a JSON value: '{', '[', '"', 't', 'f', 'n', or a
// number's first byte ('-' or a digit); 0 for empty input.
func jsonKind(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// isNumber reports whether raw is a JSON number.
func isNumber(raw []byte) bool {
	c := jsonKind(raw)
	return c == '-' || (c >= '0' && c <= '9')
}

// str returns the string raw holds; ok is false when raw is not a JSON string.
func str(raw []byte) (string, bool) {
	if jsonKind(raw) != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// compact returns raw without insignificant whitespace, as the reference re-encodes a
// value it quotes in an error message.
func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// jsonString returns s as a JSON string.
func jsonString(s string) json.RawMessage { return jsonstr.AppendNoHTML(nil, s) }
