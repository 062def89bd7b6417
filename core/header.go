package core

import "strings"

// The checks below apply to strings that the key-value interface sends back in HTTP
// headers (content type, charset, encoding, user metadata, index fields and terms).
// Clients' headers pass them by construction; values coming back from extension code
// (a precommit's replacement object) are checked with them.

// HeaderSafe reports whether v may be sent in an HTTP header value: no control
// characters other than tab.
func HeaderSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// IsToken reports whether v is an HTTP token (a valid header name, RFC 9110).
func IsToken(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// IsMediaType reports whether v has the shape type/subtype, as Content-Type parsing
// stores it: exactly one '/', both sides non-empty, no separators or spaces.
func IsMediaType(v string) bool {
	t, sub, ok := strings.Cut(v, "/")
	return ok && t != "" && sub != "" && !strings.Contains(sub, "/") && !strings.ContainsAny(v, " \t;,")
}

// ASCIILower lower-cases the ASCII letters of s only; other bytes (including invalid
// UTF-8) are kept, so the result has s's length and the function is idempotent. It
// allocates only when s has an upper-case letter. Header names, index fields and S3
// condition keys compare with it.
func ASCIILower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}
