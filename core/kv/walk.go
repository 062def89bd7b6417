package kv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// WalkAny is the wildcard of a walk step: as its bucket or tag it matches anything.
const WalkAny = core.LinkAny

// WalkStep is one step of a link walk: follow the links whose bucket is Bucket and whose
// tag is Tag (WalkAny matching anything) from every object the previous step reached,
// and return the objects reached when Keep is set.
type WalkStep struct {
	Bucket string
	Tag    string
	Keep   bool
}

// Limits of a link walk (see WalkOptions).
const (
	// DefaultWalkMaxObjects bounds the distinct objects one step may reach.
	DefaultWalkMaxObjects = 10_000
	// DefaultWalkMaxBytes bounds the total size of the values a walk returns.
	DefaultWalkMaxBytes = 128 << 20
)

// WalkOptions bound the work and memory of a walk. Zero values take the defaults.
type WalkOptions struct {
	// MaxObjects is the most distinct link targets one step may have
	// (DefaultWalkMaxObjects).
	MaxObjects int
	// MaxBytes is the most value bytes (all siblings of every object returned) a walk
	// may return (DefaultWalkMaxBytes).
	MaxBytes int64
	// CanRead, if set, is asked before the walk reads an object a link leads to: its
	// error ends the walk (returned as it is). The KV interface sets it under access
	// control.
	CanRead func(ctx context.Context, typ, bucket string) error
}

// Walk walks links from typ/bucket/key and returns the objects reached by each kept
// step, one list per kept step in step order.
//
// The first step follows the links of the starting object; each later step follows the
// links of every object the step before it reached, kept or not. An object's links are
// the ones its bucket's linkfun returns for the step's bucket and tag (the stock linkfun,
// and any linkfun when the service has no hook registry, returns the object's stored
// links that match). The targets of one step are de-duplicated by bucket and key and
// fetched in bucket-then-key byte order; targets that are missing or deleted are
// skipped, so a kept step may return no object. Steps after the last kept one are not
// walked.
//
// A missing or deleted starting object is a not-found error. A step with more than
// MaxObjects distinct targets, or returned values above MaxBytes in total, is an
// EINVALID error saying so; a linkfun that cannot be resolved or fails is an EINTERNAL
// error naming it; a walk that outlives ctx is EUNAVAILABLE ("request timed out").
func (s *Service) Walk(ctx context.Context, typ, bucket, key string, steps []WalkStep, opts WalkOptions) ([][]*core.Object, error) {
	if opts.MaxObjects <= 0 {
		opts.MaxObjects = DefaultWalkMaxObjects
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultWalkMaxBytes
	}
	origin, err := s.Get(ctx, typ, bucket, key, GetOptions{})
	if err != nil {
		return nil, err
	}
	if origin.Deleted() {
		return nil, errNotFound()
	}
	last := -1
	for i, st := range steps {
		if st.Keep {
			last = i
		}
	}
	w := walker{s: s, typ: typ, funs: map[string]linkFun{}}
	out := make([][]*core.Object, 0, len(steps))
	cur := []*core.Object{origin}
	var kept int64
	for i, st := range steps[:last+1] {
		targets, err := w.targets(ctx, cur, st, opts.MaxObjects)
		if err != nil {
			return nil, fmt.Errorf("kv: walk %s/%s step %d: %w", bucket, key, i+1, err)
		}
		next := make([]*core.Object, 0, len(targets))
		for _, t := range targets {
			if ctx.Err() != nil {
				return nil, errTimedOut()
			}
			if opts.CanRead != nil {
				if err := opts.CanRead(ctx, typ, t.bucket); err != nil {
					return nil, err
				}
			}
			o, err := s.Get(ctx, typ, t.bucket, t.key, GetOptions{})
			if IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("kv: walk %s/%s step %d: %w", bucket, key, i+1, err)
			}
			if o.Deleted() {
				continue
			}
			if st.Keep {
				for j := range o.Siblings {
					kept += int64(len(o.Siblings[j].Value))
				}
				if kept > opts.MaxBytes {
					return nil, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
						"Link walk too large: its results exceed %d bytes; narrow it with a bucket or tag\n", opts.MaxBytes)}
				}
			}
			next = append(next, o)
		}
		if st.Keep {
			out = append(out, next)
		}
		cur = next
	}
	return out, nil
}

func errTimedOut() error {
	return &core.Error{Code: core.EUNAVAILABLE, Message: "request timed out\n"}
}

// place is a link target.
type place struct{ bucket, key string }

// linkFun returns the links of an object that match a bucket and a tag.
type linkFun struct {
	spec *core.HookSpec // nil: the object's stored links
	impl hooks.LinkFun
}

// walker resolves linkfuns for one walk, once per bucket.
type walker struct {
	s    *Service
	typ  string
	funs map[string]linkFun
}

// targets returns the distinct targets of the links of objs that match st, sorted by
// bucket and key.
func (w *walker) targets(ctx context.Context, objs []*core.Object, st WalkStep, maxObjects int) ([]place, error) {
	seen := map[place]struct{}{}
	for _, o := range objs {
		if ctx.Err() != nil {
			return nil, errTimedOut()
		}
		links, err := w.links(ctx, o, st.Bucket, st.Tag)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			if l.Bucket == "" || l.Key == "" {
				continue // not an address; a linkfun may return anything
			}
			seen[place{l.Bucket, l.Key}] = struct{}{}
		}
		if len(seen) > maxObjects {
			return nil, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
				"Link walk too large: a step reaches more than %d objects; narrow it with a bucket or tag\n", maxObjects)}
		}
	}
	out := make([]place, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b place) int {
		return cmp.Or(strings.Compare(a.bucket, b.bucket), strings.Compare(a.key, b.key))
	})
	return out, nil
}

// links returns the links of o that match bucket and tag, from the linkfun of o's
// bucket (given the data-type view of a data type, see HookView).
func (w *walker) links(ctx context.Context, o *core.Object, bucket, tag string) ([]core.Link, error) {
	f, ok := w.funs[o.Bucket]
	if !ok {
		var err error
		if f, err = w.resolve(ctx, o.Bucket); err != nil {
			return nil, err
		}
		w.funs[o.Bucket] = f
	}
	if f.impl == nil {
		return o.MatchingLinks(bucket, tag), nil
	}
	view, err := w.s.HookView(ctx, o) // a data type's linkfun sees its view, as every hook does
	if err != nil {
		return nil, err
	}
	links, err := f.impl.Links(ctx, view, bucket, tag)
	if err != nil {
		var ce *hooks.CallError
		if errors.As(err, &ce) {
			return nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
				"linkfun %s %s on %s/%s: %v\n", linkfunName(f.spec), ce.Kind, o.Bucket, o.Key, ce.Err)}
		}
		return nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
			"linkfun %s failed on %s/%s: %v\n", linkfunName(f.spec), o.Bucket, o.Key, err)}
	}
	return links, nil
}

// resolve finds the linkfun of a bucket. Without a hook registry, or without a linkfun
// property, an object's links are its stored links; so are they when the registry
// cannot resolve the stock linkfun (which returns just those).
func (w *walker) resolve(ctx context.Context, bucket string) (linkFun, error) {
	p, err := w.s.Props(ctx, w.typ, bucket)
	if err != nil {
		return linkFun{}, err
	}
	if w.s.cfg.Hooks == nil || p.Linkfun == nil {
		return linkFun{}, nil
	}
	spec := p.Linkfun
	impl, err := w.s.cfg.Hooks.LinkFun(*spec)
	if err != nil {
		if isStockLinkfun(spec) {
			return linkFun{}, nil
		}
		return linkFun{}, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
			"linkfun %s cannot run: %v\n", linkfunName(spec), err)}
	}
	return linkFun{spec: spec, impl: impl}, nil
}

// isStockLinkfun reports whether spec names the reference's default linkfun (in either
// dialect, optionally pinned to the native runtime).
func isStockLinkfun(spec *core.HookSpec) bool {
	mod := strings.TrimPrefix(spec.Mod, hooks.KindNative+":")
	return spec.Fun == "mapreduce_linkfun" && (mod == "riak_kv_wm_link_walker" || mod == "store_kv_wm_link_walker")
}

// linkfunName names a linkfun in error messages: mod:fun, a JavaScript function's
// name, or the property as stored.
func linkfunName(spec *core.HookSpec) string {
	if n := hookName(*spec); n != "" {
		return n
	}
	return string(spec.Raw)
}
