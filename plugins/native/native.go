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
//	riak_kv_mapreduce / store_kv_mapreduce (MapReduce phases, "language": "erlang")
//	    map_identity             map: the object, as the JavaScript object JSON
//	    map_object_value         map: the object's value, as a JSON string
//	    map_object_value_list    map: the elements of the object's value, a JSON list
//	    reduce_identity          reduce: [bucket, key] of each input
//	    reduce_set_union         reduce: the distinct inputs
//	    reduce_sort              reduce: the inputs in Erlang term order
//	    reduce_sum               reduce: [the sum of the numbers]
//	    reduce_plist_sum         reduce: [key, sum] per key of [key, number] pairs
//	    reduce_count_inputs      reduce: [the number of inputs]
//	    reduce_string_to_integer reduce: the inputs as integers
//
// See mapreduce.go for how the MapReduce functions read and write JSON, and
// hooks.MapInput for how a missing input reaches a map function. Adding a function is
// one entry in the module table (see modules below and mapReduceModule).
package native

import (
	"fmt"
	"maps"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
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
// dialect's name; both resolve to the same functions. New adds the MapReduce modules,
// whose map_identity depends on the dialect.
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

// MapReduce module names: the reference's and the store dialect's.
const (
	ModMapReduce      = "riak_kv_mapreduce"
	ModMapReduceStore = "store_kv_mapreduce"
)

// Provider is the native runtime. Its table is fixed when it is built, so a Provider
// is safe for concurrent use without locking. The zero value is not usable; call New.
type Provider struct {
	modules map[string]module
}

// Options configures the native runtime.
type Options struct {
	// Dialect names the metadata of the object JSON that map_identity returns:
	// "store" (X-Store-*, the default, also for "") or "riak" (X-Riak-*). The server
	// passes its --dialect.
	Dialect string
}

// New returns the native runtime with every built-in function. At most one Options
// is read (none: the defaults). New panics on an unknown dialect, which the server's
// configuration has already refused.
func New(opts ...Options) *Provider {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	codec, err := hookjson.NewCodec(o.Dialect)
	if err != nil {
		panic(fmt.Sprintf("native: %v", err))
	}
	mods := maps.Clone(modules)
	mods[ModMapReduce] = mapReduceModule(ModMapReduce, codec)
	mods[ModMapReduceStore] = mapReduceModule(ModMapReduceStore, codec)
	return &Provider{modules: mods}
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
