// Package native is the runtime of Cairn's built-in extension functions: Go
// implementations of the reference system's stock functions, named by the reference's
// module and function names (and by their "store_" twins, which the server's store
// dialect writes in default bucket properties). It serves core/hooks as a Provider of
// kind hooks.KindNative.
//
// The functions available are:
//
//	riak_core_util / store_core_util
//	    chash_std_keyfun         chash_keyfun: SHA-1 of the term {Bucket, Key}
//	    chash_bucketonly_keyfun  chash_keyfun: SHA-1 of the term Bucket
//	riak_kv_wm_link_walker / store_kv_wm_link_walker
//	    mapreduce_linkfun        linkfun: the object's links matching bucket and tag
//
// Adding a function is one entry in the module table (see modules below).
package native

import (
	"fmt"

	"github.com/cairnkv/cairn/core/hooks"
)

// function is one built-in: the extension point it serves and its implementation, a
// value of that point's core/hooks interface.
type function struct {
	point hooks.Point
	impl  any
}

// module maps function names to built-ins.
type module map[string]function

// The built-in modules. Each is listed under the reference's name and the store
// dialect's name; both resolve to the same functions.
var (
	coreUtil = module{
		"chash_std_keyfun":        {hooks.PointKeyFun, keyFun(StdKeyHash)},
		"chash_bucketonly_keyfun": {hooks.PointKeyFun, keyFun(BucketOnlyKeyHash)},
	}
	linkWalker = module{
		"mapreduce_linkfun": {hooks.PointLinkFun, linkFun(Links)},
	}
	modules = map[string]module{
		"riak_core_util":          coreUtil,
		"store_core_util":         coreUtil,
		"riak_kv_wm_link_walker":  linkWalker,
		"store_kv_wm_link_walker": linkWalker,
	}
)

// Provider is the native runtime. Its table is fixed at build time, so a Provider is
// safe for concurrent use without locking. The zero value is not usable; call New.
type Provider struct {
	modules map[string]module
}

// New returns the native runtime with every built-in function.
func New() *Provider {
	return &Provider{modules: modules}
}

// Kind returns hooks.KindNative.
func (p *Provider) Kind() string { return hooks.KindNative }

// HasModule reports whether mod is a built-in module name.
func (p *Provider) HasModule(mod string) bool {
	_, ok := p.modules[mod]
	return ok
}

// Lookup returns function fun of module mod as the core/hooks interface of point pt.
// Errors wrap hooks.ErrNoModule when mod is not a built-in module, and
// hooks.ErrNoFunction when the module has no such function or the function serves
// another extension point.
func (p *Provider) Lookup(mod, fun string, pt hooks.Point) (any, error) {
	m, ok := p.modules[mod]
	if !ok {
		return nil, fmt.Errorf("native: %w: %q", hooks.ErrNoModule, mod)
	}
	f, ok := m[fun]
	if !ok {
		return nil, fmt.Errorf("native: %w: %s:%s", hooks.ErrNoFunction, mod, fun)
	}
	if f.point != pt {
		return nil, fmt.Errorf("native: %w: %s:%s is a %s function, not a %s", hooks.ErrNoFunction, mod, fun, f.point, pt)
	}
	return f.impl, nil
}
