package wire

import (
	"fmt"

	"github.com/cairnkv/cairn/core"
)

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
	switch core.ASCIILower(s) {
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

// RequestDialect returns the names a request is answered in, from the hints its client
// gives (see docs/kv-http.md, "Names"):
//
//  1. the URL: a path under /riak is answered in the riak names, one under /store in the
//     store names (the old API's prefix wins: it is what the client builds its next URLs
//     from);
//  2. the headers: any X-Riak-* header and no X-Store-* one gives riak, any X-Store-* and
//     no X-Riak-* gives store (both together are no hint);
//  3. otherwise def, the server's configured dialect.
//
// path is the request's escaped path; headers its header map.
func RequestDialect(path string, headers map[string][]string, def Dialect) Dialect {
	switch {
	case underPrefix(path, "/riak"):
		return DialectRiak
	case underPrefix(path, "/store"):
		return DialectStore
	}
	riak, store := false, false
	for name := range headers {
		switch {
		case hasPrefixFold(name, "x-riak-"):
			riak = true
		case hasPrefixFold(name, "x-store-"):
			store = true
		}
	}
	switch {
	case riak && !store:
		return DialectRiak
	case store && !riak:
		return DialectStore
	}
	return def
}

// underPrefix reports whether path is prefix or starts with prefix + "/".
func underPrefix(path, prefix string) bool {
	return len(path) >= len(prefix) && path[:len(prefix)] == prefix &&
		(len(path) == len(prefix) || path[len(prefix)] == '/')
}

// VclockHeader returns the vector-clock header's name, "X-Store-Vclock" or
// "X-Riak-Vclock" (a constant: no allocation per response).
func (d Dialect) VclockHeader() string {
	if d.name() == "riak" {
		return "X-Riak-Vclock"
	}
	return "X-Store-Vclock"
}

// DeletedHeader returns the tombstone header's name, "X-Store-Deleted" or
// "X-Riak-Deleted".
func (d Dialect) DeletedHeader() string {
	if d.name() == "riak" {
		return "X-Riak-Deleted"
	}
	return "X-Store-Deleted"
}
