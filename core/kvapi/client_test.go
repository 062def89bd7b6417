package kvapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairnkv/cairn/core"
)

// clientIdentityCases are remote addresses, the identity an outer handler (an
// authenticated user) gave, and the identity a request must carry.
var clientIdentityCases = []struct{ remote, outer, want string }{
	{"192.0.2.7:5555", "", "192.0.2.7"},
	{"[::ffff:192.0.2.7]:5555", "", "192.0.2.7"},
	{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:80", "", "2001:db8:1:2::/64"},
	{"[2001:db8:1:2::9]:80", "", "2001:db8:1:2::/64"}, // the same host's network
	{"[fe80::1%eth0]:80", "", "fe80::/64"},
	{"@", "", "@"}, // a unix socket has no address
	{"192.0.2.7:5555", "alice", "alice"},
}

// clientSeen serves req (whose context starts from base) through withClient and
// returns the client identity the handler behind it saw.
func clientSeen(base context.Context, remote, outer string) string {
	var got string
	h := withClient(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = core.ClientFrom(r.Context()) }))
	req := httptest.NewRequest("GET", "/ping", nil).WithContext(base)
	req.RemoteAddr = remote
	if outer != "" {
		req = req.WithContext(core.WithClient(req.Context(), outer))
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
	return got
}

func TestClientIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range clientIdentityCases {
		if got := clientSeen(context.Background(), tc.remote, tc.outer); got != tc.want {
			t.Errorf("%s (outer %q): client %q, want %q", tc.remote, tc.outer, got, tc.want)
		}
	}
}

// remoteConn is a connection that only knows its remote address.
type remoteConn struct {
	net.Conn
	remote string
}

func (c remoteConn) RemoteAddr() net.Addr { return remoteAddr(c.remote) }

// remoteAddr is an address as its String gives it.
type remoteAddr string

func (a remoteAddr) Network() string { return "tcp" }
func (a remoteAddr) String() string  { return string(a) }

// TestConnContextIdentity: the identity ConnContext puts in a connection's context is
// the one withClient gives each request, and an outer handler's still replaces it.
func TestConnContextIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range clientIdentityCases {
		base := ConnContext(context.Background(), remoteConn{remote: tc.remote})
		if tc.outer == "" {
			if got := core.ClientFrom(base); got != tc.want {
				t.Errorf("%s: connection context names client %q, want %q", tc.remote, got, tc.want)
			}
		}
		// The request's own remote address is left out: the connection's context decides.
		if got := clientSeen(base, "198.51.100.1:1", tc.outer); got != tc.want {
			t.Errorf("%s (outer %q): client %q, want %q", tc.remote, tc.outer, got, tc.want)
		}
	}
}
