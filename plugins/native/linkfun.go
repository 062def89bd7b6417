package native

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// Any is the wildcard of a link spec: it matches every bucket or every tag.
const Any = "_"

// linkFun adapts a link extractor to hooks.LinkFun.
type linkFun func(obj *core.Object, bucket, tag string) []core.Link

// Links implements hooks.LinkFun; it never fails.
func (f linkFun) Links(_ context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
	return f(obj, bucket, tag), nil
}

// Links is the reference's riak_kv_wm_link_walker:mapreduce_linkfun: the links of obj
// whose bucket equals bucket and whose tag equals tag, Any ("_") matching anything.
//
// Like the reference, it takes the links of every sibling, sorts them by bucket, key
// and tag (byte order) and drops duplicates, so the result is the same whichever
// sibling holds a link. Tombstone siblings are skipped; the reference reads them too,
// but its tombstones (like Cairn's) carry no links, so the result is the same. A nil
// object (not found) has no links. The result is never nil.
func Links(obj *core.Object, bucket, tag string) []core.Link {
	out := []core.Link{}
	if obj == nil {
		return out
	}
	for i := range obj.Siblings {
		s := &obj.Siblings[i]
		if s.Deleted {
			continue
		}
		for _, l := range s.Links {
			if (bucket == Any || l.Bucket == bucket) && (tag == Any || l.Tag == tag) {
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, compareLinks)
	return slices.Compact(out)
}

// compareLinks orders links by bucket, then key, then tag, as the reference sorts its
// [Bucket, Key, Tag] lists of binaries.
func compareLinks(a, b core.Link) int {
	if c := strings.Compare(a.Bucket, b.Bucket); c != 0 {
		return c
	}
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return strings.Compare(a.Tag, b.Tag)
}
