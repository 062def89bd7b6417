package sig

import (
	"net/textproto"
	"net/url"
	"sort"
	"strings"
)

// headerValues returns every value of the header name. Keys are expected in canonical
// MIME form (as net/http stores them); values under other spellings of the name follow,
// in sorted key order so the result never depends on map iteration.
func headerValues(h map[string][]string, name string) []string {
	canonical := textproto.CanonicalMIMEHeaderKey(name)
	var others []string
	for k := range h {
		if k != canonical && strings.EqualFold(k, name) {
			others = append(others, k)
		}
	}
	if len(others) == 0 {
		return h[canonical]
	}
	sort.Strings(others)
	out := append([]string(nil), h[canonical]...)
	for _, k := range others {
		out = append(out, h[k]...)
	}
	return out
}

// hasHeader reports whether the header name is present, even with an empty value.
func hasHeader(h map[string][]string, name string) bool {
	return len(headerValues(h, name)) > 0
}

// firstHeader returns the first value of the header name, trimmed, or "".
func firstHeader(h map[string][]string, name string) string {
	vs := headerValues(h, name)
	if len(vs) == 0 {
		return ""
	}
	return strings.TrimSpace(vs[0])
}

// headerIndex maps lower-cased header names to their values: the values under the
// canonical key first, then those under other spellings in sorted key order. Building it
// once keeps canonicalisation O(n log n) however many headers a request carries.
type headerIndex map[string][]string

func indexHeaders(h map[string][]string) headerIndex {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return headerKeyLess(keys[i], keys[j]) })
	idx := make(headerIndex, len(h))
	for _, k := range keys {
		lk := strings.ToLower(k)
		idx[lk] = append(idx[lk], h[k]...)
	}
	return idx
}

// headerKeyLess orders keys by lower-cased name, the canonical spelling first.
func headerKeyLess(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	if ca := a == textproto.CanonicalMIMEHeaderKey(a); ca != (b == textproto.CanonicalMIMEHeaderKey(b)) {
		return ca
	}
	return a < b
}

// names returns the lower-cased header names, sorted.
func (idx headerIndex) names() []string {
	names := make([]string, 0, len(idx))
	for n := range idx {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// param is one component of a query string, decoded.
type param struct {
	name, value string
}

// parseQuery splits a raw query string into its components in order, decoding names and
// values as form values ("+" is a space). Empty components are skipped; a component that
// does not decode is kept as sent.
func parseQuery(rawQuery string) []param {
	var ps []param
	for _, raw := range strings.Split(rawQuery, "&") {
		if raw == "" {
			continue
		}
		name, value, _ := strings.Cut(raw, "=")
		ps = append(ps, param{name: queryUnescape(name), value: queryUnescape(value)})
	}
	return ps
}

func queryUnescape(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// lookupParam returns the decoded value of the first parameter called name.
func lookupParam(ps []param, name string) (string, bool) {
	for _, p := range ps {
		if p.name == name {
			return p.value, true
		}
	}
	return "", false
}

// uriEncode percent-encodes every byte of s except RFC 3986 unreserved characters
// (A–Z a–z 0–9 - _ . ~), with upper-case hex: the strict encoding V4 canonical forms use.
func uriEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}
