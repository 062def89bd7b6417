// Package core holds Cairn's domain types (objects, siblings, links, index entries,
// bucket properties, hook specs) and its client-facing error type. It imports only the
// standard library; every other package may import it.
package core

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// DefaultType is the name of the bucket type that the /buckets and /store (/riak) URL
// forms address.
const DefaultType = "default"

// Link is a typed pointer from one object to another ("riaktag"/"storetag" on the wire).
type Link struct {
	Bucket string
	Key    string
	Tag    string
}

// IndexEntry is one secondary-index posting of an object. Field is lower-case and ends
// in "_bin" or "_int"; for "_int" fields Value is the canonical decimal form.
type IndexEntry struct {
	Field string
	Value string
}

// MetaEntry is one user-metadata pair; Name is kept exactly as the client sent it
// (without the X-Store-Meta- / X-Riak-Meta- prefix).
type MetaEntry struct {
	Name  string
	Value string
}

// Sibling is one value of an object. An object without conflicts has exactly one.
type Sibling struct {
	Value        []byte
	ContentType  string // media type only, e.g. "application/json"
	Charset      string // the charset parameter of Content-Type, if one was sent
	Encoding     string // Content-Encoding as sent, if any
	VTag         string // random base62 id, assigned on every write
	LastModified time.Time
	Meta         []MetaEntry
	Links        []Link
	Indexes      []IndexEntry
	Deleted      bool // a tombstone: empty value, visible until reaped
}

// Object is an object as clients see it: its place, its causal context and its values.
type Object struct {
	Type   string
	Bucket string
	Key    string
	// VClock is the opaque encoded causal context. Clients receive it base64-encoded and
	// send it back on the next write so that the write supersedes what they read.
	VClock []byte
	// Siblings holds one entry per concurrent value; len > 1 means a conflict.
	Siblings []Sibling
	// Expiry is when the object expires (its TTL ran out); zero when it never does.
	Expiry time.Time
}

// Deleted reports whether every sibling is a tombstone.
func (o *Object) Deleted() bool {
	for i := range o.Siblings {
		if !o.Siblings[i].Deleted {
			return false
		}
	}
	return true
}

// LastModified returns the newest LastModified among the siblings.
func (o *Object) LastModified() time.Time {
	var t time.Time
	for i := range o.Siblings {
		if o.Siblings[i].LastModified.After(t) {
			t = o.Siblings[i].LastModified
		}
	}
	return t
}

// LinkAny is the wildcard of a link spec (link walking, link phases, linkfuns): as the
// bucket or the tag it matches anything.
const LinkAny = "_"

// MatchingLinks returns the links stored with o whose bucket equals bucket and whose
// tag equals tag, LinkAny matching anything: the reference's stock linkfun. Like the
// reference it takes the links of every sibling that is not a tombstone, sorts them by
// bucket, key and tag (byte order) and drops duplicates, so the result does not depend
// on which sibling holds a link. A nil object has no links; the result is never nil.
func (o *Object) MatchingLinks(bucket, tag string) []Link {
	out := []Link{}
	if o == nil {
		return out
	}
	for i := range o.Siblings {
		s := &o.Siblings[i]
		if s.Deleted {
			continue
		}
		for _, l := range s.Links {
			if (bucket == LinkAny || l.Bucket == bucket) && (tag == LinkAny || l.Tag == tag) {
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, func(a, b Link) int {
		return cmp.Or(strings.Compare(a.Bucket, b.Bucket), strings.Compare(a.Key, b.Key), strings.Compare(a.Tag, b.Tag))
	})
	return slices.Compact(out)
}
