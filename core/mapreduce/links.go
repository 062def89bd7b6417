package mapreduce

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/kv"
)

// bucketKey names a bucket of a bucket type.
type bucketKey struct{ typ, bucket string }

// linkFun is a bucket's linkfun: impl nil means the object's stored links.
type linkFun struct {
	spec *core.HookSpec
	impl hooks.LinkFun
}

// linkResolver finds the linkfun of each bucket a link phase meets, once per bucket.
type linkResolver struct {
	e    *Execution
	mu   sync.Mutex // guards funs
	funs map[bucketKey]*linkFun
}

// follow reads an input's object and returns the places its links point to, for the
// links that match the phase's bucket and tag ("_" matching anything), as the bucket's
// linkfun finds them. Each output carries the link's tag as its key data; a missing
// object has no links.
func (r *linkResolver) follow(ctx context.Context, st *stage, it item) ([]item, error) {
	in, err := st.input(it)
	if err != nil {
		return nil, err
	}
	obj, err := r.e.fetch(ctx, in)
	if err != nil || obj == nil {
		return nil, err
	}
	f, err := r.fun(ctx, st, in)
	if err != nil {
		return nil, err
	}
	var links []core.Link
	if f.impl == nil {
		links = obj.MatchingLinks(st.p.LinkBucket, st.p.LinkTag)
	} else {
		err = r.e.call(ctx, func(ctx context.Context) error {
			var err error
			links, err = f.impl.Links(ctx, obj, st.p.LinkBucket, st.p.LinkTag)
			return err
		})
		if err != nil {
			return nil, r.e.phaseError(ctx, st, fmt.Errorf("linkfun %s: %s", specName(f.spec), callMessage(err)), string(in.json()))
		}
	}
	out := make([]item, 0, len(links))
	for _, l := range links {
		if l.Bucket == "" || l.Key == "" {
			continue // not a place; a linkfun may return anything
		}
		out = append(out, item{isKey: true, key: Input{Type: in.Type, Bucket: l.Bucket, Key: l.Key, Typed: in.Typed,
			KeyData: jsonString(l.Tag)}})
	}
	return out, nil
}

// fun returns the linkfun of the input's bucket. Without a hook registry, or without a
// linkfun property, links are the stored ones; so are they when the stock linkfun
// (which returns just those) cannot be resolved. Another linkfun that cannot be
// resolved fails the phase.
func (r *linkResolver) fun(ctx context.Context, st *stage, in Input) (*linkFun, error) {
	k := bucketKey{in.Type, in.Bucket}
	r.mu.Lock()
	f, ok := r.funs[k]
	r.mu.Unlock()
	if ok {
		return f, nil
	}
	f = &linkFun{}
	p, err := r.e.s.kv.Props(ctx, in.Type, in.Bucket)
	switch {
	case kv.IsNotFound(err): // an unknown bucket type: the object was not found either
	case err != nil:
		return nil, fmt.Errorf("mapreduce: props of %s/%s: %w", in.Type, in.Bucket, err)
	case r.e.s.hooks != nil && p.Linkfun != nil:
		impl, err := r.e.s.hooks.LinkFun(*p.Linkfun)
		switch {
		case err == nil:
			f = &linkFun{spec: p.Linkfun, impl: impl}
		case !isStockLinkfun(p.Linkfun):
			return nil, &PhaseError{Phase: st.idx, Input: truncate(string(in.json())),
				Message: fmt.Sprintf("the linkfun %s of bucket %s cannot run: %v", specName(p.Linkfun), in.Bucket, err)}
		}
	}
	r.mu.Lock()
	r.funs[k] = f
	r.mu.Unlock()
	return f, nil
}

// isStockLinkfun reports whether spec names the reference's default linkfun (either
// dialect, optionally pinned to the native runtime).
func isStockLinkfun(spec *core.HookSpec) bool {
	mod := strings.TrimPrefix(spec.Mod, hooks.KindNative+":")
	return spec.Fun == "mapreduce_linkfun" && (mod == "riak_kv_wm_link_walker" || mod == "store_kv_wm_link_walker")
}

// specName names a hook spec in messages.
func specName(spec *core.HookSpec) string {
	switch {
	case spec == nil:
		return "(stored links)"
	case spec.Mod == "" && spec.Name != "":
		return spec.Name
	case spec.Mod != "":
		return spec.Mod + ":" + spec.Fun
	}
	return string(spec.Raw)
}
