package native

import (
	"context"

	"github.com/cairnkv/cairn/core"
)

// Any is the wildcard of a link spec: it matches every bucket or every tag.
const Any = core.LinkAny

// linkFun adapts a link extractor to hooks.LinkFun.
type linkFun func(obj *core.Object, bucket, tag string) []core.Link

// Links implements hooks.LinkFun; it never fails.
func (f linkFun) Links(_ context.Context, obj *core.Object, bucket, tag string) ([]core.Link, error) {
	return f(obj, bucket, tag), nil
}

// Links is the reference's riak_kv_wm_link_walker:mapreduce_linkfun: the links of obj
// whose bucket equals bucket and whose tag equals tag, Any ("_") matching anything (see
// core.Object.MatchingLinks).
func Links(obj *core.Object, bucket, tag string) []core.Link { return obj.MatchingLinks(bucket, tag) }
