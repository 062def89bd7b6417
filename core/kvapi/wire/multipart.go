package wire

import (
	"bytes"
	"strings"
)

// Part is one part of a multipart/mixed body.
type Part struct {
	// Headers are written in order, each as "Name: value\r\n".
	Headers [][2]string
	// Body is the part's content, written unchanged.
	Body []byte
	// Nested marks Body as a complete multipart body of its own (as WriteMultipart
	// produces: it begins with "\r\n"). The reference writes such a body straight after
	// the part's header lines, letting its leading CRLF end the header block, so no
	// further blank line is written. Used for link-walk results. ParseMultipart never
	// sets it; the Body it returns for such a part lacks the leading CRLF and can be
	// passed to ParseMultipart as is.
	Nested bool
}

// MultipartContentType returns the Content-Type of a multipart/mixed body with the
// given boundary in the form used for sibling lists and link walking:
// "multipart/mixed; boundary=B".
func MultipartContentType(boundary string) string {
	return "multipart/mixed; boundary=" + boundary
}

// StreamContentType returns the Content-Type of a streamed multipart/mixed body (2i
// stream=true, MapReduce chunked=true), which the reference writes without a space:
// "multipart/mixed;boundary=B".
func StreamContentType(boundary string) string {
	return "multipart/mixed;boundary=" + boundary
}

// AppendPart appends one part with the reference framing to dst:
// "\r\n--B\r\n", each header as "Name: value\r\n", "\r\n" (unless p.Nested), the body.
// A streamed response writes each AppendPart result as one chunk.
func AppendPart(dst []byte, boundary string, p Part) []byte {
	dst = append(dst, "\r\n--"...)
	dst = append(dst, boundary...)
	dst = append(dst, "\r\n"...)
	for _, h := range p.Headers {
		dst = append(dst, h[0]...)
		dst = append(dst, ": "...)
		dst = append(dst, h[1]...)
		dst = append(dst, "\r\n"...)
	}
	if !p.Nested {
		dst = append(dst, "\r\n"...)
	}
	return append(dst, p.Body...)
}

// AppendClose appends the closing delimiter "\r\n--B--\r\n" to dst.
func AppendClose(dst []byte, boundary string) []byte {
	dst = append(dst, "\r\n--"...)
	dst = append(dst, boundary...)
	return append(dst, "--\r\n"...)
}

// WriteMultipart writes a complete multipart/mixed body with the reference system's
// exact framing: for each part "\r\n--B\r\n" + header lines + "\r\n" + body, then
// "\r\n--B--\r\n". With no parts the body is just the closing delimiter.
func WriteMultipart(dst *bytes.Buffer, boundary string, parts []Part) {
	n := len(boundary) + 8
	for _, p := range parts {
		n += len(boundary) + len(p.Body) + 8
		for _, h := range p.Headers {
			n += len(h[0]) + len(h[1]) + 4
		}
	}
	dst.Grow(n)
	buf := dst.AvailableBuffer()
	for _, p := range parts {
		buf = AppendPart(buf, boundary, p)
	}
	buf = AppendClose(buf, boundary)
	dst.Write(buf)
}

// ParseMultipart splits a multipart/mixed body into its parts. It accepts the framing
// WriteMultipart produces and ordinary MIME bodies: a preamble before the first
// delimiter and an epilogue after the closing one are ignored, a delimiter line may
// carry trailing spaces or tabs, and a delimiter is recognised only when followed by
// "--" or a line end. Header lines are "Name: value" separated by CRLF; names and
// values are trimmed; folded lines are not supported. A part with no header block
// starts with an empty line. The returned bodies alias body.
func ParseMultipart(body []byte, boundary string) ([]Part, error) {
	if boundary == "" {
		return nil, ErrMalformedMultipart
	}
	delim := "\r\n--" + boundary
	// Find the first delimiter: at the very start or after a CRLF.
	pos, found := 0, false
	if bytes.HasPrefix(body, []byte(delim[2:])) {
		pos, found = afterDelimiter(body, len(delim)-2)
	}
	if !found {
		if pos, _, found = nextDelimiter(body, 0, delim); !found {
			return nil, ErrMalformedMultipart
		}
	}
	var parts []Part
	for {
		if pos < 0 { // the previous delimiter was the closing one
			return parts, nil
		}
		end, start, ok := nextDelimiter(body, pos, delim)
		if !ok {
			return nil, ErrMalformedMultipart
		}
		p, err := parsePart(body[pos:start])
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
		pos = end
	}
}

// afterDelimiter checks what follows a delimiter ending at i: "--" (closing: returns
// -1) or optional spaces/tabs and a CRLF (returns the index after it).
func afterDelimiter(b []byte, i int) (int, bool) {
	if bytes.HasPrefix(b[i:], []byte("--")) {
		return -1, true
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if bytes.HasPrefix(b[i:], []byte("\r\n")) {
		return i + 2, true
	}
	return 0, false
}

// nextDelimiter finds the next CRLF-prefixed delimiter at or after from and returns the
// index after its line (-1 for the closing delimiter) and the index where it starts.
func nextDelimiter(b []byte, from int, delim string) (end, start int, ok bool) {
	for from <= len(b) {
		j := bytes.Index(b[from:], []byte(delim))
		if j < 0 {
			return 0, 0, false
		}
		start = from + j
		if end, ok := afterDelimiter(b, start+len(delim)); ok {
			return end, start, true
		}
		from = start + 1
	}
	return 0, 0, false
}

// parsePart splits one part's content into headers and body.
func parsePart(c []byte) (Part, error) {
	var p Part
	var head []byte
	switch {
	case len(c) == 0:
		return p, nil
	case bytes.HasPrefix(c, []byte("\r\n")):
		p.Body = c[2:]
		return p, nil
	default:
		if i := bytes.Index(c, []byte("\r\n\r\n")); i >= 0 {
			head, p.Body = c[:i], c[i+4:]
		} else if bytes.HasSuffix(c, []byte("\r\n")) {
			head = c[:len(c)-2]
		} else {
			return Part{}, ErrMalformedMultipart
		}
	}
	for len(head) > 0 {
		line := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			line, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		name, val, ok := bytes.Cut(line, []byte(":"))
		// A header name is a token (RFC 9110): not empty, no spaces, so neither a
		// folded continuation line nor a line like " --B--:" passes for a header.
		if !ok || !isToken(bytes.TrimRight(name, " \t")) {
			return Part{}, ErrMalformedMultipart
		}
		p.Headers = append(p.Headers, [2]string{
			strings.TrimSpace(string(name)),
			strings.TrimSpace(string(val)),
		})
	}
	return p, nil
}

// isToken reports whether b is a non-empty RFC 9110 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}
