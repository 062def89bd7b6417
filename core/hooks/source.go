package hooks

import (
	"context"
	"fmt"
)

// SourceProvider is a runtime that also builds functions from source text sent by a
// client: the JavaScript engine, for MapReduce phases written as
// {"language": "javascript", "source": "function(v, kd, arg) {...}"} (and for phases
// whose source is stored in an object, {"bucket": B, "key": K}).
type SourceProvider interface {
	Provider
	// FromSource returns the function that source defines, as an implementation of p's
	// interface (Map for PointMap, Reduce for PointReduce). Compiled sources may be
	// cached by the runtime (keyed by the source's hash). A source that does not compile
	// or does not evaluate to a function is an error wrapping ErrNoFunction whose text
	// says why, for the client. Compiling runs within ctx (its deadline, and the
	// client it names, core.ClientFrom, whose share of the runtime it uses).
	FromSource(ctx context.Context, source string, p Point) (any, error)
}

// FromSource builds a function of the runtime kind (KindJavaScript) from source text.
// It returns ErrNoJavaScript when no such runtime is configured.
func (r *Registry) FromSource(ctx context.Context, kind, source string, p Point) (any, error) {
	if r != nil {
		for _, pr := range r.providers {
			if sp, ok := pr.(SourceProvider); ok && pr.Kind() == kind {
				return sp.FromSource(ctx, source, p)
			}
		}
	}
	if kind == KindJavaScript {
		return nil, ErrNoJavaScript
	}
	return nil, fmt.Errorf("%w: no %s runtime builds functions from source", ErrNoFunction, kind)
}
