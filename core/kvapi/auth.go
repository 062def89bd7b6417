package kvapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/security"
)

// Access control (Config.RequireAuth), as Riak's security does it over HTTP:
//
//   - open resources (/ping, /stats, /metrics, the / listing) are served to anyone;
//   - any other request over plain HTTP is refused with 426 unless Config.AllowInsecure;
//   - it needs the HTTP Basic credentials (key id and secret) of an enabled user or of
//     the admin credential: without them, or with wrong ones, 401 with a Basic
//     challenge;
//   - then the permission its resource names for its method, on its bucket (or on its
//     bucket type for type-level resources): without it 403 with Riak's text.
//
// A resource that checks permissions itself (MapReduce, whose need depends on the job;
// the admin routes) only has its caller authenticated here. A method a resource's guard
// does not name needs the admin permission on any, so a route added without a guard is
// closed to users, not open. The authenticated key id becomes the request's client
// identity (core.WithClient), for per-client limits.

// guard is what a resource's requests need under access control.
type guard struct {
	// open resources are served without credentials, over plain HTTP too.
	open bool
	// perm is the permission each method needs.
	perm map[string]security.Permission
	// typeLevel checks perm on the bucket type rather than on the bucket.
	typeLevel bool
	// self: the handler checks permissions itself; the route only authenticates.
	self bool
}

// The guards of the resources.
var (
	openGuard   = guard{open: true}
	selfGuard   = guard{self: true}
	objectGuard = guard{perm: map[string]security.Permission{
		http.MethodGet: security.Get, http.MethodHead: security.Get,
		http.MethodPut: security.Put, http.MethodPost: security.Put,
		http.MethodDelete: security.Delete}}
	readGuard = guard{perm: map[string]security.Permission{
		http.MethodGet: security.Get, http.MethodHead: security.Get, http.MethodPost: security.Get}}
	propsGuard = guard{perm: map[string]security.Permission{
		http.MethodGet: security.Get, http.MethodHead: security.Get,
		http.MethodPut: security.SetProps, http.MethodDelete: security.SetProps}}
	typePropsGuard = guard{typeLevel: true, perm: map[string]security.Permission{
		http.MethodGet: security.Get, http.MethodHead: security.Get, http.MethodPut: security.Admin}}
	keysGuard = guard{perm: map[string]security.Permission{
		http.MethodGet: security.ListKeys, http.MethodHead: security.ListKeys}}
	bucketsGuard = guard{typeLevel: true, perm: map[string]security.Permission{
		http.MethodGet: security.ListBuckets, http.MethodHead: security.ListBuckets}}
	indexGuard = guard{perm: map[string]security.Permission{
		http.MethodGet: security.Index, http.MethodHead: security.Index}}
)

// need returns the permission and scope a request to a resource with guard g at l
// needs.
func (g guard) need(method string, l loc) (security.Permission, security.Scope) {
	perm, ok := g.perm[method]
	switch {
	case !ok:
		return security.Admin, security.AnyScope()
	case g.typeLevel:
		return perm, security.TypeScope(l.typ)
	}
	return perm, security.BucketScope(l.typ, l.bucket)
}

// principalKey is the context key of the authenticated caller.
type principalKey struct{}

// principalFrom returns the caller that access control authenticated (nil when it is
// off or the resource is open).
func principalFrom(ctx context.Context) *security.Principal {
	p, _ := ctx.Value(principalKey{}).(*security.Principal)
	return p
}

// authorize runs access control for a request to a resource with guard g at l. It
// returns the request to serve, carrying the caller, or the error to answer: 426 over
// plain HTTP, 401 with a challenge without valid credentials, 403 for a refusal.
func (a *API) authorize(r *http.Request, g guard, l loc) (*http.Request, error) {
	if r.TLS == nil && !a.cfg.AllowInsecure {
		return nil, statusError(http.StatusUpgradeRequired, "Security is enabled and "+product(l.d)+
			" does not accept credentials over HTTP. Try HTTPS instead.")
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return nil, challenge(l.d)
	}
	p, err := a.cfg.Guard.Authenticate(r.Context(), id, secret)
	if errors.Is(err, security.ErrUnauthenticated) {
		return nil, challenge(l.d)
	}
	if err != nil {
		return nil, fmt.Errorf("kvapi: authenticate %q: %w", id, err)
	}
	ctx := context.WithValue(core.WithClient(r.Context(), p.KeyID), principalKey{}, p)
	r = r.WithContext(ctx)
	if g.self {
		return r, nil
	}
	perm, sc := g.need(r.Method, l)
	if err := p.Check(ctx, perm, sc); err != nil {
		return nil, err // a *security.DeniedError is 403 with Riak's text
	}
	return r, nil
}

// challenge is 401 with a Basic challenge in the realm Riak names (in dialect d).
func challenge(d wire.Dialect) error {
	return statusError(http.StatusUnauthorized, "", [2]string{"Www-Authenticate", `Basic realm="` + product(d) + `"`})
}

// product is the name access control's answers give the server: Riak's own in the riak
// dialect.
func product(d wire.Dialect) string {
	if d == wire.DialectRiak {
		return "Riak"
	}
	return "Cairn"
}

// canRead returns the check a MapReduce job or a link walk runs before it reads an
// object of a bucket (nil when the caller may read everything): perm on that bucket.
func canRead(ctx context.Context, perm security.Permission) func(ctx context.Context, typ, bucket string) error {
	p := principalFrom(ctx)
	if p == nil || p.Admin {
		return nil
	}
	return func(ctx context.Context, typ, bucket string) error {
		return p.Check(ctx, perm, security.BucketScope(typ, bucket))
	}
}

// need is a permission needed on a scope.
type need struct {
	perm security.Permission
	sc   security.Scope
}

// checkJob checks, under access control, that the caller may run job, and makes the job
// check mapreduce on the bucket of every object it reads, since links lead anywhere. It
// returns a *security.DeniedError for the first permission missing.
func checkJob(ctx context.Context, job *mapreduce.Job) error {
	p := principalFrom(ctx)
	if p == nil || p.Admin {
		return nil
	}
	for _, n := range jobNeeds(job) {
		if err := p.Check(ctx, n.perm, n.sc); err != nil {
			return err
		}
	}
	job.CanRead = canRead(ctx, security.MapReduce)
	return nil
}

// jobNeeds returns what a job needs before it starts, as Riak asks it: list_keys and
// mapreduce on the bucket of whole-bucket and key-filter inputs, index and mapreduce on
// the bucket of an index input, mapreduce on each bucket of a key list; and get on the
// objects that hold a phase's JavaScript source.
func jobNeeds(job *mapreduce.Job) []need {
	in := &job.Inputs
	b := security.BucketScope(in.Type, in.Bucket)
	var out []need
	switch in.Kind {
	case mapreduce.InputBucket, mapreduce.InputKeyFilter:
		out = append(out, need{security.ListKeys, b}, need{security.MapReduce, b})
	case mapreduce.InputIndex:
		out = append(out, need{security.Index, b}, need{security.MapReduce, b})
	case mapreduce.InputKeys:
		seen := map[security.Scope]bool{}
		for _, k := range in.Keys {
			sc := security.BucketScope(k.Type, k.Bucket)
			if !seen[sc] {
				seen[sc] = true
				out = append(out, need{security.MapReduce, sc})
			}
		}
	}
	for _, ph := range job.Query {
		if ph.Language == mapreduce.LangJavaScript && !ph.HasSource && ph.SourceBucket != "" {
			out = append(out, need{security.Get, security.BucketScope(core.DefaultType, ph.SourceBucket)})
		}
	}
	return out
}
