package cairn

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cairnkv/cairn/sdk/abi"
)

// The SDK decodes the host's inputs with this small single-pass JSON reader rather than
// encoding/json: Go code compiled to WebAssembly is slow per byte, and encoding/json
// scans a value again at every level that has its own UnmarshalJSON, which made a 1 MB
// value cost several passes.

// maxDepth bounds the nesting the reader accepts.
const maxDepth = 1000

// errEOF is returned when the input ends inside a value.
var errEOF = errors.New("unexpected end of JSON input")

// scanner reads JSON (RFC 8259) from one byte slice.
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", s.i, fmt.Sprintf(format, args...))
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end checks that nothing but whitespace is left.
func (s *scanner) end() error {
	if s.peek(); s.i < len(s.b) {
		return s.errorf("unexpected %q after the value", s.b[s.i])
	}
	return nil
}

// what describes the next value for error messages.
func (s *scanner) what() string {
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
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c == 0:
		return "the end of the input"
	default:
		return fmt.Sprintf("%q", c)
	}
}

// literal consumes word if it comes next.
func (s *scanner) literal(word string) bool {
	s.peek()
	if strings.HasPrefix(string(s.b[s.i:min(len(s.b), s.i+len(word))]), word) {
		s.i += len(word)
		return true
	}
	return false
}

// null consumes a null if it comes next.
func (s *scanner) null() bool { return s.peek() == 'n' && s.literal("null") }

// object reads an object and calls fn for each member, positioned at its value; fn
// must consume the value.
func (s *scanner) object(fn func(key string) error) error {
	if s.peek() != '{' {
		return s.errorf("want an object, have %s", s.what())
	}
	if s.depth++; s.depth > maxDepth {
		return s.errorf("nested too deeply")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errorf("want a member name, have %s", s.what())
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.errorf("want ':' after %q", key)
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
			return errEOF
		default:
			return s.errorf("want ',' or '}', have %q", s.b[s.i])
		}
	}
}

// array reads an array and calls fn for each element, positioned at it; fn must
// consume the element.
func (s *scanner) array(fn func() error) error {
	if s.peek() != '[' {
		return s.errorf("want an array, have %s", s.what())
	}
	if s.depth++; s.depth > maxDepth {
		return s.errorf("nested too deeply")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := fn(); err != nil {
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
			return errEOF
		default:
			return s.errorf("want ',' or ']', have %q", s.b[s.i])
		}
	}
}

// str reads a string. Invalid UTF-8 becomes U+FFFD, as with encoding/json.
func (s *scanner) str() (string, error) {
	if start, end, ok := s.plainString(); ok {
		if v, ok := knownNames[string(s.b[start:end])]; ok {
			return v, nil // a member name of the ABI: no allocation
		}
		return string(s.b[start:end]), nil
	}
	b, err := s.strBytes()
	return string(b), err
}

// plainString consumes a string without escapes or non-ASCII bytes, the common case,
// and returns the span of its contents; it consumes nothing and returns false for any
// other string.
func (s *scanner) plainString() (start, end int, ok bool) {
	if s.peek() != '"' {
		return 0, 0, false
	}
	for i := s.i + 1; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			start, end = s.i+1, i
			s.i = i + 1
			return start, end, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// knownNames holds the member names of the ABI, so that reading them allocates
// nothing.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		abi.ObjBucketType, abi.ObjBucket, abi.ObjKey, abi.ObjVClock, abi.ObjValues, abi.ObjMetadata,
		abi.ObjData, abi.ObjDataB64, abi.MetaContentType, abi.MetaCharset, abi.MetaContentEncoding,
		abi.MetaLinks, abi.MetaIndex, abi.InputOp, abi.InputObject, abi.InputSpec, abi.InputNotFound,
		abi.InputKeyData, abi.InputArg, abi.InputValues, "tag", abi.OpPut, abi.OpDelete, abi.Wildcard,
	} {
		m[n] = n
	}
	for _, p := range []string{PrefixStore, PrefixRiak} {
		for _, suffix := range []string{abi.MetaVTagSuffix, abi.MetaLastModifiedSuffix, abi.MetaUserSuffix, abi.MetaDeletedSuffix} {
			m[p+suffix] = p + suffix
		}
	}
	return m
}()

// strBytes reads a string into a new byte slice.
func (s *scanner) strBytes() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.errorf("want a string, have %s", s.what())
	}
	start := s.i + 1
	i := start
	high := false
	for ; i < len(s.b); i++ {
		c := s.b[i]
		if c == '"' {
			out := append([]byte(nil), s.b[start:i]...)
			s.i = i + 1
			if high && !utf8.Valid(out) {
				out = fixUTF8(out)
			}
			return out, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			high = true
		}
	}
	// Slow path: escapes (or an error) from i on.
	out := append([]byte(nil), s.b[start:i]...)
	for i < len(s.b) {
		c := s.b[i]
		switch {
		case c == '"':
			s.i = i + 1
			if !utf8.Valid(out) {
				out = fixUTF8(out)
			}
			return out, nil
		case c < 0x20:
			s.i = i
			return nil, s.errorf("control character %#02x in a string", c)
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s.b) {
			return nil, errEOF
		}
		switch e := s.b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s.b[i+2:])
			if !ok {
				s.i = i
				return nil, s.errorf(`bad \u escape`)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s.b[min(i+2, len(s.b)):]); ok && i+1 < len(s.b) && s.b[i] == '\\' && s.b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			s.i = i
			return nil, s.errorf("bad escape \\%c", e)
		}
		i += 2
	}
	s.i = len(s.b)
	return nil, errEOF
}

// fixUTF8 replaces each byte of b that is not part of valid UTF-8 with U+FFFD, as
// encoding/json does.
func fixUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// hex4 decodes four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number and returns its literal text.
func (s *scanner) number() (string, error) {
	s.peek()
	start, i, b := s.i, s.i, s.b
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return "", s.errorf("want a number, have %s", s.what())
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			s.i = i
			return "", s.errorf("bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			s.i = i
			return "", s.errorf("bad number")
		}
	}
	s.i = i
	return string(b[start:i]), nil
}

// skip reads and discards one value of any type.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func(string) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		return s.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	case c == 0 && s.i >= len(s.b):
		return errEOF
	case s.literal("true"), s.literal("false"), s.literal("null"):
		return nil
	}
	return s.errorf("want a value, have %q", s.b[s.i])
}

// skipString validates a string without decoding it.
func (s *scanner) skipString() error {
	for i := s.i + 1; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(s.b) {
				s.i = len(s.b)
				return errEOF
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(s.b[i+2:]); !ok {
					s.i = i
					return s.errorf(`bad \u escape`)
				}
				i += 5
			default:
				s.i = i
				return s.errorf("bad escape \\%c", s.b[i+1])
			}
		case c < 0x20:
			s.i = i
			return s.errorf("control character %#02x in a string", c)
		}
	}
	s.i = len(s.b)
	return errEOF
}

// raw reads one value and returns a copy of its JSON text.
func (s *scanner) raw() ([]byte, error) {
	s.peek()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return append([]byte(nil), s.b[start:s.i]...), nil
}

// optStr reads a string or null ("").
func (s *scanner) optStr() (string, error) {
	if s.null() {
		return "", nil
	}
	return s.str()
}
