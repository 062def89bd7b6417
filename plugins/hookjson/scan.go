package hookjson

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of JSON values the scanner accepts, so that hostile input
// cannot make it recurse without limit.
const maxDepth = 512

// errEnd is returned when the input ends inside a value.
var errEnd = errors.New("unexpected end of input")

// scanner is a small strict JSON reader (RFC 8259) over one byte slice. It decodes only
// what the ABI needs (strings, number literals, objects, arrays) and validates and skips
// everything else. Strings must be valid UTF-8.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// syntaxError reports a problem at the scanner's position.
func (s *scanner) syntaxError(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", s.i, fmt.Sprintf(format, args...))
}

// ws skips whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end checks that only whitespace is left.
func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.syntaxError("unexpected %q after the value", s.b[s.i])
	}
	return nil
}

// literal consumes word (true, false, null) if it is next.
func (s *scanner) literal(word string) bool {
	s.ws()
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// null consumes a null if it is next.
func (s *scanner) null() bool { return s.literal("null") }

// kind names the JSON type of the next value, for error messages.
func (s *scanner) kind() string {
	switch c := s.peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || ('0' <= c && c <= '9'):
		return "a number"
	case c == 0:
		return "nothing"
	default:
		return fmt.Sprintf("%q", c)
	}
}

// object reads an object, calling fn for each member with the scanner positioned at the
// member's value; fn must consume the value.
func (s *scanner) object(fn func(key string) error) error {
	if s.peek() != '{' {
		return s.syntaxError("want an object, have %s", s.kind())
	}
	if s.depth++; s.depth > maxDepth {
		return s.syntaxError("nested too deeply")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.syntaxError("want a member name, have %s", s.kind())
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.syntaxError("want ':' after member name %q", key)
		}
		s.i++
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		case 0:
			return errEnd
		default:
			return s.syntaxError("want ',' or '}' in an object, have %q", s.b[s.i])
		}
	}
}

// array reads an array, calling fn for each element with the scanner positioned at it;
// fn must consume the element.
func (s *scanner) array(fn func(i int) error) error {
	if s.peek() != '[' {
		return s.syntaxError("want an array, have %s", s.kind())
	}
	if s.depth++; s.depth > maxDepth {
		return s.syntaxError("nested too deeply")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for n := 0; ; n++ {
		if err := fn(n); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		case 0:
			return errEnd
		default:
			return s.syntaxError("want ',' or ']' in an array, have %q", s.b[s.i])
		}
	}
}

// str reads a string.
func (s *scanner) str() (string, error) {
	start, end, esc, err := s.strSpan()
	if err != nil {
		return "", err
	}
	if !esc {
		return string(s.b[start:end]), nil
	}
	return string(unescape(nil, s.b[start:end])), nil
}

// strBytes reads a string into a new byte slice.
func (s *scanner) strBytes() ([]byte, error) {
	start, end, esc, err := s.strSpan()
	if err != nil {
		return nil, err
	}
	if !esc {
		return append([]byte(nil), s.b[start:end]...), nil
	}
	return unescape(make([]byte, 0, end-start), s.b[start:end]), nil
}

// strSpan validates the string at the scanner and returns the span of its contents
// (between the quotes) and whether it holds escapes.
func (s *scanner) strSpan() (start, end int, esc bool, err error) {
	if s.peek() != '"' {
		return 0, 0, false, s.syntaxError("want a string, have %s", s.kind())
	}
	s.i++
	start = s.i
	b := s.b
	for i := s.i; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return start, i, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.i = i
				return 0, 0, false, errEnd
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					s.i = i
					return 0, 0, false, s.syntaxError("bad \\u escape")
				}
				i += 6
			default:
				s.i = i
				return 0, 0, false, s.syntaxError("bad escape \\%c", b[i+1])
			}
		case c < 0x20:
			s.i = i
			return 0, 0, false, s.syntaxError("control character %#02x in a string", c)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				s.i = i
				return 0, 0, false, s.syntaxError("invalid UTF-8 in a string")
			}
			i += size
		}
	}
	s.i = len(b)
	return 0, 0, false, errEnd
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

func hexVal(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// unescape appends the decoded form of a validated string body to dst. Lone surrogates
// decode to U+FFFD, as encoding/json does.
func unescape(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch b[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(b[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(b[i+2:])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, b[i+1])
		}
		i += 2
	}
	return dst
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// number reads a number and returns its literal text.
func (s *scanner) number() (string, error) {
	s.ws()
	start := s.i
	b := s.b
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return "", s.syntaxError("want a number, have %s", s.kind())
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.i = i
			return "", s.syntaxError("bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.i = i
			return "", s.syntaxError("bad number")
		}
	}
	s.i = i
	return string(b[start:i]), nil
}

// skip validates and consumes one value of any type.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func(string) error { return s.skip() })
	case c == '[':
		return s.array(func(int) error { return s.skip() })
	case c == '"':
		_, _, _, err := s.strSpan()
		return err
	case c == 't':
		if s.literal("true") {
			return nil
		}
	case c == 'f':
		if s.literal("false") {
			return nil
		}
	case c == 'n':
		if s.literal("null") {
			return nil
		}
	case c == '-' || ('0' <= c && c <= '9'):
		_, err := s.number()
		return err
	case c == 0:
		return errEnd
	}
	return s.syntaxError("want a value, have %q", s.b[s.i])
}

// raw validates and consumes one value and returns its bytes (a sub-slice of the input).
func (s *scanner) raw() ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}
