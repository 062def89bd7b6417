package kvapi

import (
	"context"
	"net"
	"net/http"
	"net/netip"

	"github.com/cairnkv/cairn/core"
)

// withClient gives every request the identity its per-client limits count by
// (core.WithClient): the client's IP address, or for IPv6 its /64 network, which one
// host usually has whole. A request that already names its client (an authenticated
// user, set by an outer handler) keeps it; an inner handler may replace it.
func withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if core.ClientFrom(r.Context()) == "" {
			r = r.WithContext(core.WithClient(r.Context(), clientAddr(r.RemoteAddr)))
		}
		next.ServeHTTP(w, r)
	})
}

// ConnContext is an http.Server's ConnContext for the KV interface: it names the client
// (as withClient would) once per connection, in the context every request on that
// connection starts from, so that requests on a kept-alive connection do not each parse
// the address and copy the request to carry it. r.RemoteAddr is this address, so the
// identity is the one withClient gives; an authenticated user still replaces it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return core.WithClient(ctx, clientAddr(c.RemoteAddr().String()))
}

// clientAddr is the identity of the client at remote (host:port): its IPv4 address,
// its IPv6 /64 prefix, or remote itself when it is not an IP address and port.
func clientAddr(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}
