package cairn

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// appendString appends s as a JSON string. Unlike encoding/json it does not escape <, >
// and &, so outputs stay readable; invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// marshalValue encodes v with encoding/json without HTML escaping and without the
// trailing newline of json.Encoder.
func marshalValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// canonicalInt returns the canonical decimal form of an integer literal ("-007" ->
// "-7", "-0" -> "0") and whether s is one. Any size is allowed.
func canonicalInt(s string) (string, bool) {
	neg := false
	d := s
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		neg = d[0] == '-'
		d = d[1:]
	}
	if d == "" {
		return "", false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return "", false
		}
	}
	for len(d) > 1 && d[0] == '0' {
		d = d[1:]
	}
	if d == "0" {
		return "0", true
	}
	if neg {
		return "-" + d, true
	}
	return d, true
}
