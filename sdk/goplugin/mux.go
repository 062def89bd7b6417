package goplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// PrecommitFunc is a precommit function registered on a Mux.
type PrecommitFunc func(ctx context.Context, op Op, obj *Object) (Verdict, error)

// PostcommitFunc is a postcommit function registered on a Mux.
type PostcommitFunc func(ctx context.Context, op Op, obj *Object) error

// KeyHashFunc is a chash_keyfun function registered on a Mux: 1 to 20 bytes, the
// high-order bytes of a 160-bit big-endian ring position.
type KeyHashFunc func(ctx context.Context, bucketType, bucket, key string) ([]byte, error)

// LinkFunc is a linkfun function registered on a Mux: the links of obj that match
// bucket and tag ("_" matches any).
type LinkFunc func(ctx context.Context, obj *Object, bucket, tag string) ([]Link, error)

// MapFunc is a map function registered on a Mux.
type MapFunc func(ctx context.Context, in MapInput) ([]json.RawMessage, error)

// ReduceFunc is a reduce function registered on a Mux; it must be re-reducible.
type ReduceFunc func(ctx context.Context, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error)

// Mux builds a plugin from plain functions, each registered under the name bucket
// properties and MapReduce phases call it by:
//
//	m := goplugin.NewMux()
//	m.Precommit("quota", checkQuota)
//	m.Map("word_count", countWords)
//	goplugin.Serve(m)
//
// The plugin offers exactly the points something was registered at, and only the
// registered names (Functions lists them). One name may be registered at several
// points (a map and a reduce function both called "count"), but only once at each:
// registering a name twice at one point panics, as does registering an empty name or a
// nil function. Register everything before serving: NewServer (and so Serve and
// NewHarness) seals the Mux, and registering on a sealed Mux panics. A sealed Mux may
// be served any number of times, concurrently.
type Mux struct {
	// sealed is set by NewServer; the maps below never change afterwards, so calls
	// read them without a lock.
	sealed atomic.Bool

	pre     map[string]PrecommitFunc
	post    map[string]PostcommitFunc
	keyHash map[string]KeyHashFunc
	links   map[string]LinkFunc
	mapper  map[string]MapFunc
	reducer map[string]ReduceFunc
}

// NewMux returns an empty Mux.
func NewMux() *Mux {
	return &Mux{}
}

// register adds f to *reg under name, or panics.
func register[F any](m *Mux, reg *map[string]F, p Point, name string, f F, isNil bool) {
	switch {
	case m.sealed.Load():
		panic(fmt.Sprintf("goplugin: Mux: %s function %q registered after the Mux was served", p, name))
	case name == "":
		panic(fmt.Sprintf("goplugin: Mux: %s function registered without a name", p))
	case isNil:
		panic(fmt.Sprintf("goplugin: Mux: nil %s function %q", p, name))
	}
	if _, dup := (*reg)[name]; dup {
		panic(fmt.Sprintf("goplugin: Mux: %s function %q registered twice", p, name))
	}
	if *reg == nil {
		*reg = make(map[string]F)
	}
	(*reg)[name] = f
}

// Precommit registers a precommit function.
func (m *Mux) Precommit(name string, f PrecommitFunc) {
	register(m, &m.pre, PointPrecommit, name, f, f == nil)
}

// Postcommit registers a postcommit function.
func (m *Mux) Postcommit(name string, f PostcommitFunc) {
	register(m, &m.post, PointPostcommit, name, f, f == nil)
}

// KeyHash registers a chash_keyfun function.
func (m *Mux) KeyHash(name string, f KeyHashFunc) {
	register(m, &m.keyHash, PointKeyFun, name, f, f == nil)
}

// Links registers a linkfun function.
func (m *Mux) Links(name string, f LinkFunc) {
	register(m, &m.links, PointLinkFun, name, f, f == nil)
}

// Map registers a map function.
func (m *Mux) Map(name string, f MapFunc) {
	register(m, &m.mapper, PointMap, name, f, f == nil)
}

// Reduce registers a reduce function.
func (m *Mux) Reduce(name string, f ReduceFunc) {
	register(m, &m.reducer, PointReduce, name, f, f == nil)
}

// Functions lists the registered functions by name, each with its points in the order
// of the extension points' constants.
func (m *Mux) Functions() []Function {
	var fs []Function
	add := func(p Point, names []string) {
		for _, name := range names {
			i, found := slices.BinarySearchFunc(fs, name, func(f Function, name string) int { return strings.Compare(f.Name, name) })
			if !found {
				fs = slices.Insert(fs, i, Function{Name: name})
			}
			fs[i].Points = append(fs[i].Points, p)
		}
	}
	add(PointPrecommit, mapKeys(m.pre))
	add(PointPostcommit, mapKeys(m.post))
	add(PointKeyFun, mapKeys(m.keyHash))
	add(PointLinkFun, mapKeys(m.links))
	add(PointMap, mapKeys(m.mapper))
	add(PointReduce, mapKeys(m.reducer))
	return fs
}

// mapKeys returns the keys of a registry.
func mapKeys[F any](reg map[string]F) []string {
	keys := make([]string, 0, len(reg))
	for k := range reg {
		keys = append(keys, k)
	}
	return keys
}

// seal stops registration and returns the implementation NewServer serves.
func (m *Mux) seal() *muxImpl {
	m.sealed.Store(true)
	return &muxImpl{m: m}
}

// muxImpl is a sealed Mux as an implementation of every extension point. Its functions
// are listed (FunctionLister), so the server offers only the points something was
// registered at and refuses other names before calling in here.
type muxImpl struct {
	m *Mux
}

var (
	_ Precommitter   = (*muxImpl)(nil)
	_ Postcommitter  = (*muxImpl)(nil)
	_ KeyHasher      = (*muxImpl)(nil)
	_ Linker         = (*muxImpl)(nil)
	_ Mapper         = (*muxImpl)(nil)
	_ Reducer        = (*muxImpl)(nil)
	_ FunctionLister = (*muxImpl)(nil)
)

// noFunction is the error of a call to a name that is not registered (the server
// refuses those before they get here).
func noFunction(p Point, fun string) error {
	return fmt.Errorf("goplugin: no %s function %q", p, fun)
}

// Functions implements FunctionLister.
func (x *muxImpl) Functions() []Function { return x.m.Functions() }

// Precommit implements Precommitter.
func (x *muxImpl) Precommit(ctx context.Context, fun string, op Op, obj *Object) (Verdict, error) {
	f, ok := x.m.pre[fun]
	if !ok {
		return Verdict{}, noFunction(PointPrecommit, fun)
	}
	return f(ctx, op, obj)
}

// Postcommit implements Postcommitter.
func (x *muxImpl) Postcommit(ctx context.Context, fun string, op Op, obj *Object) error {
	f, ok := x.m.post[fun]
	if !ok {
		return noFunction(PointPostcommit, fun)
	}
	return f(ctx, op, obj)
}

// KeyHash implements KeyHasher.
func (x *muxImpl) KeyHash(ctx context.Context, fun, bucketType, bucket, key string) ([]byte, error) {
	f, ok := x.m.keyHash[fun]
	if !ok {
		return nil, noFunction(PointKeyFun, fun)
	}
	return f(ctx, bucketType, bucket, key)
}

// Links implements Linker.
func (x *muxImpl) Links(ctx context.Context, fun string, obj *Object, bucket, tag string) ([]Link, error) {
	f, ok := x.m.links[fun]
	if !ok {
		return nil, noFunction(PointLinkFun, fun)
	}
	return f(ctx, obj, bucket, tag)
}

// Map implements Mapper.
func (x *muxImpl) Map(ctx context.Context, fun string, in MapInput) ([]json.RawMessage, error) {
	f, ok := x.m.mapper[fun]
	if !ok {
		return nil, noFunction(PointMap, fun)
	}
	return f(ctx, in)
}

// Reduce implements Reducer.
func (x *muxImpl) Reduce(ctx context.Context, fun string, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	f, ok := x.m.reducer[fun]
	if !ok {
		return nil, noFunction(PointReduce, fun)
	}
	return f(ctx, values, arg)
}
