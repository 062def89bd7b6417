package core

import "context"

// clientKey is the context key of the client identity.
type clientKey struct{}

// WithClient returns ctx carrying the identity of the client a request comes from: the
// authenticated user when the interface authenticates, otherwise the client's IP address.
// Per-client limits (MapReduce and JavaScript concurrency, say) count by it.
func WithClient(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientKey{}, id)
}

// ClientFrom returns the client identity WithClient stored in ctx, or "" when none was.
func ClientFrom(ctx context.Context) string {
	id, _ := ctx.Value(clientKey{}).(string)
	return id
}
