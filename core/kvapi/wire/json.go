package wire

import (
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// jsonPlain marks the bytes that stand for themselves in a JSON string as encoding/json
// writes it: printable ASCII except the quote, the backslash and the HTML-sensitive <,
// > and &.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendJSONString appends s (a string or bytes) as a JSON string literal, byte for byte
// what encoding/json.Marshal writes for the string (invalid UTF-8 becomes U+FFFD; <, >,
// &, U+2028 and U+2029 are escaped), without allocating. Listings and index queries write
// every key through it; keys are usually plain ASCII, which a table check copies at once.
func AppendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return appendJSONEscaped(dst, string(s))
}

// appendJSONEscaped is AppendJSONString's general case.
func appendJSONEscaped(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
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
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
