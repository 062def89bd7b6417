// Command json-linkfun is a Cairn linkfun, built as a WebAssembly module: it reads an
// object's links from its JSON value instead of its link metadata. A value like
//
//	{"name": "Alice", "links": [{"bucket": "people", "key": "bob", "tag": "friend"}]}
//
// links to people/bob with tag "friend". Link walking asks for the links that match a
// bucket and a tag ("_" matches any); the function returns those.
//
// The logic here is portable and unit-tested natively; exports_wasip1.go exports it.
package main

import (
	"encoding/json"
	"fmt"

	"github.com/cairnkv/cairn/sdk/go/cairn"
)

// main is never called: the module is a reactor, and the host calls its exports.
func main() {}

// linksFromJSONHook is exported as "links_from_json".
var linksFromJSONHook = cairn.LinkFun(linksFromJSON)

// jsonLink is one element of a value's "links" array.
type jsonLink struct {
	Bucket *string `json:"bucket"`
	Key    *string `json:"key"`
	Tag    *string `json:"tag"`
}

// linksFromJSON returns the links listed in the "links" field of the object's values
// (every sibling that is not a tombstone, without duplicates) that match the spec.
// Values that are not JSON objects, or have no "links", have no links. A "links" field
// that is not an array of {"bucket", "key", "tag"} objects, with a bucket and a key, is
// an error: the link walk fails and says which object is wrong.
func linksFromJSON(in *cairn.LinkFunInput) ([]cairn.Link, error) {
	var out []cairn.Link
	seen := map[cairn.Link]bool{}
	for _, v := range in.Object.Live() {
		var doc struct {
			Links json.RawMessage `json:"links"`
		}
		if json.Unmarshal(v.Data, &doc) != nil || len(doc.Links) == 0 || string(doc.Links) == "null" {
			continue // not a JSON object, or no links
		}
		links, err := parseLinks(doc.Links)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", in.Object.Bucket, in.Object.Key, err)
		}
		for _, l := range in.Spec.Filter(links) {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// parseLinks decodes a "links" array.
func parseLinks(raw json.RawMessage) ([]cairn.Link, error) {
	var list []jsonLink
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf(`"links" must be an array of {"bucket", "key", "tag"} objects of strings`)
	}
	links := make([]cairn.Link, 0, len(list))
	for i, jl := range list {
		if jl.Bucket == nil || jl.Key == nil || *jl.Bucket == "" || *jl.Key == "" {
			return nil, fmt.Errorf(`"links"[%d] needs a non-empty "bucket" and "key"`, i)
		}
		l := cairn.Link{Bucket: *jl.Bucket, Key: *jl.Key}
		if jl.Tag != nil {
			l.Tag = *jl.Tag
		}
		links = append(links, l)
	}
	return links, nil
}
