package wire

import (
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// The lower-case header prefixes that carry user metadata; both are accepted whatever
// the server's dialect.
const (
	storeMetaPrefix = "x-store-meta-"
	riakMetaPrefix  = "x-riak-meta-"
)

// ParseMeta extracts user metadata from request headers: every header whose name starts,
// ignoring ASCII case, with "x-store-meta-" or "x-riak-meta-". Name is the rest of the
// header name as it appears in the map, one entry per value. Go's net/http canonicalises
// header names, so "x-riak-meta-details" arrives (and is stored) as "Details", and comes
// back as "X-Riak-Meta-Details": header names are case-insensitive, so clients see the same
// header. Entries are sorted by name (values of one name keep their order), so the
// result does not depend on map iteration; nil when there is none.
func ParseMeta(headers map[string][]string) []core.MetaEntry {
	var out []core.MetaEntry
	for name, vals := range headers {
		var rest string
		switch {
		case hasPrefixFold(name, riakMetaPrefix):
			rest = name[len(riakMetaPrefix):]
		case hasPrefixFold(name, storeMetaPrefix):
			rest = name[len(storeMetaPrefix):]
		default:
			continue
		}
		for _, v := range vals {
			out = append(out, core.MetaEntry{Name: rest, Value: v})
		}
	}
	if len(out) > 1 {
		slices.SortStableFunc(out, func(a, b core.MetaEntry) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// MetaHeaderName returns the response header name of a user-metadata entry, e.g.
// "X-Riak-Meta-Details".
func MetaHeaderName(d Dialect, name string) string {
	return d.HeaderPrefix() + "Meta-" + name
}
