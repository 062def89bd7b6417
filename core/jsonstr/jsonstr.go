// Package jsonstr writes JSON string literals without reflection or allocation, for the
// hot paths that emit many names (key listings, index queries, MapReduce inputs).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plainHTML and plain mark the bytes that stand for themselves in a JSON string:
// printable ASCII except the quote and the backslash, and (plainHTML) the HTML-sensitive
// <, > and &.
var plainHTML, plain = func() (h, p [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return h, p
}()

// Append appends s (a string or bytes) as a JSON string literal, byte for byte what
// encoding/json.Marshal writes for the string: invalid UTF-8 becomes U+FFFD; <, >, &,
// U+2028 and U+2029 are escaped. Plain ASCII, the usual case, is copied at once.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if !plainHTML[s[i]] {
			return appendEscaped(dst, string(s), true)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// AppendNoHTML is Append leaving <, > and & as they are, as the reference system's
// encoder (and a json.Encoder with SetEscapeHTML(false)) writes them.
func AppendNoHTML[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			return appendEscaped(dst, string(s), false)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendEscaped is the general case: html says whether <, > and & are escaped.
func appendEscaped(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || (b != '<' && b != '>' && b != '&')) {
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
