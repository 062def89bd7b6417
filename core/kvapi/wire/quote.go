package wire

import "strings"

const upperHex = "0123456789ABCDEF"

// isQuoteSafe reports whether QuotePlus leaves c unchanged (mochiweb's safe set).
func isQuoteSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '.' || c == '-' || c == '~'
}

// QuotePlus encodes s the way mochiweb's quote_plus does: A-Z a-z 0-9 and "_.-~" are
// kept, a space becomes "+", and every other byte becomes %XX with upper-case hex.
// It is used for the bucket, key and tag in Link headers and for Location paths.
func QuotePlus(s string) string {
	if quotedLen(s) == len(s) && strings.IndexByte(s, ' ') < 0 {
		return s
	}
	var b strings.Builder
	writeQuotePlus(&b, s)
	return b.String()
}

// quotedLen returns the length of QuotePlus(s).
func quotedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isQuoteSafe(c) && c != ' ' {
			n += 2
		}
	}
	return n
}

// writeQuotePlus writes QuotePlus(s) to b without an intermediate string.
func writeQuotePlus(b *strings.Builder, s string) {
	b.Grow(quotedLen(s))
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isQuoteSafe(c) {
			continue
		}
		b.WriteString(s[start:i])
		start = i + 1
		if c == ' ' {
			b.WriteByte('+')
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	b.WriteString(s[start:])
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Unquote decodes s the way mochiweb's unquote does: %XX (either hex case) becomes the
// byte, "+" becomes a space, and a "%" not followed by two hex digits is kept as is.
// It never fails. It is the inverse of QuotePlus.
func Unquote(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					b = append(b, hi<<4|lo)
					i += 2
					continue
				}
			}
			b = append(b, c)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// erlangString renders s as Erlang's ~p prints a string (a list of bytes), which is how
// the reference system quotes request values in some error messages: printable text in
// double quotes with \" \\ and control-character escapes, or a list of integers such as
// [104,0] when a byte is neither printable Latin-1 nor a named escape.
func erlangString(s string) string {
	printable := true
	for i := 0; i < len(s); i++ {
		if !isErlangPrintable(s[i]) {
			printable = false
			break
		}
	}
	var b strings.Builder
	if !printable {
		b.WriteByte('[')
		for i := 0; i < len(s); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			writeUint(&b, uint64(s[i]))
		}
		b.WriteByte(']')
		return b.String()
	}
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case 0x1b:
			b.WriteString(`\e`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isErlangPrintable reports whether ~p prints byte c inside a string literal: printable
// Latin-1, or a control character with a named escape.
func isErlangPrintable(c byte) bool {
	return c >= 0x20 && c < 0x7f || c >= 0xa0 || strings.IndexByte("\n\r\t\v\b\f\x1b", c) >= 0
}

func writeUint(b *strings.Builder, v uint64) {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	b.Write(buf[i:])
}
