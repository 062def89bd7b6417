package s3xml

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Namespace is the S3 document namespace, set with xmlns on the root of every result
// document.
const Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// XSINamespace is the XML Schema instance namespace the xsi:type attribute of a
// Grantee belongs to.
const XSINamespace = "http://www.w3.org/2001/XMLSchema-instance"

// Header is the XML declaration and the newline every document starts with.
const Header = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// TimeFormat is the layout of every time in a document (always in UTC, milliseconds).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Writer builds an XML document by appending to a byte slice. Element names are
// written as given (they are constants of the caller, never user data); text is
// escaped. The zero value is not ready: use [NewWriter].
type Writer struct {
	buf  []byte
	root string
}

// NewWriter starts a document: the declaration and the opening tag of root, with
// xmlns set to [Namespace] when withNS. sizeHint pre-allocates the buffer (0 for a
// default).
func NewWriter(root string, withNS bool, sizeHint int) *Writer {
	if sizeHint < 256 {
		sizeHint = 256
	}
	w := &Writer{buf: make([]byte, 0, sizeHint), root: root}
	w.buf = append(w.buf, Header...)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, root...)
	if withNS {
		w.buf = append(w.buf, ` xmlns="`+Namespace+`"`...)
	}
	w.buf = append(w.buf, '>')
	return w
}

// Open writes the opening tag <name>.
func (w *Writer) Open(name string) {
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// Close writes the closing tag </name>.
func (w *Writer) Close(name string) {
	w.buf = append(w.buf, '<', '/')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// Raw appends s unchanged; s must be well-formed markup.
func (w *Writer) Raw(s string) { w.buf = append(w.buf, s...) }

// Elem writes <name>text</name> with text escaped (an empty text gives <name></name>).
func (w *Writer) Elem(name, text string) {
	w.Open(name)
	w.buf = AppendText(w.buf, text)
	w.Close(name)
}

// ElemURL writes <name>text</name> with text URL-encoded by [AppendURLEncoded] when
// encode is set, escaped as plain text otherwise.
func (w *Writer) ElemURL(name, text string, encode bool) {
	if !encode {
		w.Elem(name, text)
		return
	}
	w.Open(name)
	w.buf = AppendURLEncoded(w.buf, text)
	w.Close(name)
}

// ElemInt writes <name>v</name> in decimal.
func (w *Writer) ElemInt(name string, v int64) {
	w.Open(name)
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.Close(name)
}

// ElemBool writes <name>true</name> or <name>false</name>.
func (w *Writer) ElemBool(name string, v bool) {
	w.Open(name)
	w.buf = strconv.AppendBool(w.buf, v)
	w.Close(name)
}

// ElemTime writes <name>t</name> in [TimeFormat], converted to UTC.
func (w *Writer) ElemTime(name string, t time.Time) {
	w.Open(name)
	w.buf = AppendTime(w.buf, t)
	w.Close(name)
}

// AppendTime appends t in [TimeFormat], converted to UTC; it is
// t.UTC().AppendFormat(b, TimeFormat), only faster.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, TimeFormat)
	}
	hour, min, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(b, year/100)
	b = two(b, year%100)
	b = append(b, '-')
	b = two(b, int(month))
	b = append(b, '-')
	b = two(b, day)
	b = append(b, 'T')
	b = two(b, hour)
	b = append(b, ':')
	b = two(b, min)
	b = append(b, ':')
	b = two(b, sec)
	return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// ElemETag writes <name>"etag"</name>: the entity tag in double quotes. An etag that
// is already quoted is written as it is.
func (w *Writer) ElemETag(name, etag string) {
	w.Open(name)
	if len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"' {
		w.buf = AppendText(w.buf, etag)
	} else {
		w.buf = append(w.buf, '"')
		w.buf = AppendText(w.buf, etag)
		w.buf = append(w.buf, '"')
	}
	w.Close(name)
}

// Bytes closes the root element and returns the document. The Writer must not be
// used afterwards.
func (w *Writer) Bytes() []byte {
	w.Close(w.root)
	return w.buf
}

// AppendText appends s escaped as XML character data: & < > become entities, a
// carriage return becomes &#xD;, characters XML 1.0 cannot represent (and invalid
// UTF-8) become U+FFFD. Quotes are left alone (the result is not for attributes).
func AppendText(b []byte, s string) []byte {
	// Fast path: printable ASCII without markup characters is copied as is.
	i := 0
	for i < len(s) {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '&' || c == '<' || c == '>' {
			break
		}
		i++
	}
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b = append(b, "&amp;"...)
			case c == '<':
				b = append(b, "&lt;"...)
			case c == '>':
				b = append(b, "&gt;"...)
			case c == '\r':
				b = append(b, "&#xD;"...)
			case c >= 0x20 || c == '\t' || c == '\n':
				b = append(b, c)
			default:
				b = append(b, "\uFFFD"...)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// EscapeText returns s escaped as by [AppendText].
func EscapeText(s string) string { return string(AppendText(nil, s)) }

// AppendURLEncoded appends s encoded for encoding-type=url listings: every byte other
// than the unreserved characters A-Z a-z 0-9 - . _ ~ and the slash is written as %XX
// (upper-case hex), a space included (as %20, never '+'), so '+' is %2B and '%' is
// %25. The result is plain ASCII with nothing to escape for XML, and decodes back to
// the exact bytes with any of the decoders clients use: Python's unquote_plus
// (botocore) and unquote, Go's url.QueryUnescape and url.PathUnescape (minio-go,
// aws-sdk-go), Java's URLDecoder. It is what S3 conformance tests expect
// (test_bucket_list_encoding_basic: "foo+1/" → "foo%2B1/", "quux ab/" → "quux%20ab/").
func AppendURLEncoded(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if urlSafe(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&0x0F])
		}
	}
	return b
}

// URLEncode returns s encoded as by [AppendURLEncoded].
func URLEncode(s string) string {
	for i := 0; i < len(s); i++ {
		if !urlSafe(s[i]) {
			return string(AppendURLEncoded(make([]byte, 0, len(s)+16), s))
		}
	}
	return s
}

func urlSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '/'
}

// trim removes surrounding XML white space (space, tab, newline, carriage return).
func trim(s string) string { return strings.Trim(s, " \t\r\n") }
