package s3

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A version listing reads six fields of every version record: encoding/json spent
// three quarters of the listing's time validating and skipping the rest (the ACL, the
// metadata, the extents). decodeListed reads the record in one pass, skipping what it
// does not need without decoding it; a record it does not expect (a string it needs
// holds an escape, a malformed document) is decoded by encoding/json instead, so the
// result is always json.Unmarshal's.

// decodeListed decodes the listed fields of the version record v into m.
func decodeListed(v []byte, m *listedVersion) error {
	*m = listedVersion{}
	if fastListed(v, m) {
		return nil
	}
	*m = listedVersion{}
	return json.Unmarshal(v, m)
}

// jsonScan is a cursor over a JSON document written by encoding/json.
type jsonScan struct {
	b []byte
	p int
}

func (s *jsonScan) ws() {
	for s.p < len(s.b) && (s.b[s.p] == ' ' || s.b[s.p] == '\n' || s.b[s.p] == '\t' || s.b[s.p] == '\r') {
		s.p++
	}
}

// eat consumes c (after white space) and reports whether it was there.
func (s *jsonScan) eat(c byte) bool {
	s.ws()
	if s.p < len(s.b) && s.b[s.p] == c {
		s.p++
		return true
	}
	return false
}

// plainString reads a string without escapes, of valid UTF-8 (false otherwise:
// encoding/json would unescape, or replace invalid bytes with U+FFFD).
func (s *jsonScan) plainString() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	end := bytes.IndexByte(s.b[s.p:], '"')
	if end < 0 {
		return nil, false
	}
	str := s.b[s.p : s.p+end]
	if bytes.IndexByte(str, '\\') >= 0 || !utf8.Valid(str) {
		return nil, false
	}
	s.p += end + 1
	return str, true
}

// skip passes over one value of any kind.
func (s *jsonScan) skip() bool {
	s.ws()
	if s.p >= len(s.b) {
		return false
	}
	switch s.b[s.p] {
	case '"':
		return s.skipString()
	case '{', '[':
		return s.skipNested()
	}
	start := s.p
	for ; s.p < len(s.b); s.p++ {
		switch s.b[s.p] {
		case ',', '}', ']', ' ', '\n', '\t', '\r':
			return s.p > start
		}
	}
	return s.p > start
}

// skipString passes over a string, escapes included.
func (s *jsonScan) skipString() bool {
	for s.p++; s.p < len(s.b); s.p++ {
		switch s.b[s.p] {
		case '\\':
			s.p++
		case '"':
			s.p++
			return true
		}
	}
	return false
}

// skipNested passes over an object or array, strings inside included.
func (s *jsonScan) skipNested() bool {
	depth := 0
	for s.p < len(s.b) {
		switch s.b[s.p] {
		case '"':
			if !s.skipString() {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.p++
				return true
			}
		}
		s.p++
	}
	return false
}

// fields reads an object, calling field with each member's name (the cursor then on
// its value, which field must consume); false if the document is not as expected.
func (s *jsonScan) fields(field func(name string) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		name, ok := s.plainString()
		if !ok || !s.eat(':') || !field(string(name)) {
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// literal reads a number or true/false.
func (s *jsonScan) literal() ([]byte, bool) {
	s.ws()
	start := s.p
	if !s.skip() || s.b[start] == '"' || s.b[start] == '{' || s.b[start] == '[' {
		return nil, false
	}
	return s.b[start:s.p], true
}

// fastListed decodes the listed fields of a version record in one pass; false when
// the record is not one it can (the caller then uses encoding/json). It checks the
// structure of what it skips, not every value in it: the records are the service's own
// json.Marshal output, and `cairn check` decodes each one whole.
func fastListed(v []byte, m *listedVersion) bool {
	s := &jsonScan{b: v}
	ok := s.fields(func(name string) bool {
		switch name {
		case "size":
			lit, ok := s.literal()
			n, err := strconv.ParseInt(string(lit), 10, 64)
			m.Size = n
			return ok && err == nil
		case "etag":
			str, ok := s.plainString()
			m.ETag = string(str)
			return ok
		case "version_id":
			str, ok := s.plainString()
			m.VersionID = string(str)
			return ok
		case "last_modified":
			start := s.p
			_, ok := s.plainString()
			return ok && m.LastModified.UnmarshalJSON(bytes.TrimLeft(s.b[start:s.p], " \n\t\r")) == nil
		case "delete_marker":
			lit, ok := s.literal()
			m.DeleteMarker = string(lit) == "true"
			return ok && (m.DeleteMarker || string(lit) == "false")
		case "owner":
			return s.owner(&m.Owner)
		}
		return !foldsTo(name, listedNames) && s.skip()
	})
	s.ws()
	return ok && s.p == len(v)
}

// owner reads an Owner object.
func (s *jsonScan) owner(o *Owner) bool {
	return s.fields(func(name string) bool {
		var dst *string
		switch name {
		case "id":
			dst = &o.ID
		case "display_name":
			dst = &o.DisplayName
		default:
			return !foldsTo(name, ownerNames) && s.skip()
		}
		str, ok := s.plainString()
		*dst = string(str)
		return ok
	})
}

// The member names decodeListed reads, at the top level and in the owner.
var (
	listedNames = []string{"size", "etag", "version_id", "last_modified", "delete_marker", "owner"}
	ownerNames  = []string{"id", "display_name"}
)

// foldsTo reports whether encoding/json could take name for one of names though it is
// not spelled the same (it matches names without regard to case, Unicode folding
// included): such a record is left to encoding/json.
func foldsTo(name string, names []string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return true
		}
	}
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}
