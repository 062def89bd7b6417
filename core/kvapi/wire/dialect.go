package wire

import "fmt"

// Dialect is the naming scheme of the server's output: the neutral "store" names of the
// spec (/store, X-Store-*, storetag, store_kv_wm_*) or the reference system's "riak" names
// (/riak, X-Riak-*, riaktag, riak_kv_wm_*). Input is always accepted in both dialects.
//
// The zero Dialect behaves as DialectStore.
type Dialect struct {
	// Name is "store" or "riak".
	Name string
}

// The two dialects.
var (
	// DialectStore uses the spec's neutral names.
	DialectStore = Dialect{Name: "store"}
	// DialectRiak uses the names real Riak clients expect.
	DialectRiak = Dialect{Name: "riak"}
)

// ParseDialect returns the dialect named s ("store" or "riak", case-insensitive).
func ParseDialect(s string) (Dialect, error) {
	switch asciiLower(s) {
	case "store":
		return DialectStore, nil
	case "riak":
		return DialectRiak, nil
	}
	return Dialect{}, fmt.Errorf("wire: unknown dialect %q (want \"store\" or \"riak\")", s)
}

// String returns the dialect's name.
func (d Dialect) String() string { return d.name() }

func (d Dialect) name() string {
	if d.Name == "riak" {
		return "riak"
	}
	return "store"
}

// Prefix returns the old-API path prefix: "/store" or "/riak".
func (d Dialect) Prefix() string {
	if d.name() == "riak" {
		return "/riak"
	}
	return "/store"
}

// HeaderPrefix returns the prefix of the product-specific headers: "X-Store-" or "X-Riak-".
func (d Dialect) HeaderPrefix() string {
	if d.name() == "riak" {
		return "X-Riak-"
	}
	return "X-Store-"
}

// LinkTag returns the Link header parameter naming a link's tag: "storetag" or "riaktag".
func (d Dialect) LinkTag() string {
	if d.name() == "riak" {
		return "riaktag"
	}
	return "storetag"
}

// Header returns the product-specific header with the given suffix, e.g.
// Header("Vclock") is "X-Riak-Vclock" in the riak dialect.
func (d Dialect) Header(suffix string) string { return d.HeaderPrefix() + suffix }

// Resource returns a resource name as listed by GET / and used as a Link rel, e.g.
// Resource("kv_wm_object") is "riak_kv_wm_object" in the riak dialect.
func (d Dialect) Resource(name string) string { return d.name() + "_" + name }

// asciiLower lower-cases ASCII letters only; other bytes (including invalid UTF-8) are
// kept, so the result has the same length and the function is idempotent.
func asciiLower(s string) string {
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

// hasPrefixFold reports whether s begins with prefix, comparing ASCII letters
// case-insensitively; prefix must be lower-case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
