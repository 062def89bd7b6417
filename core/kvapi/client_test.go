package kvapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestClientIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ remote, outer, want string }{
		{"192.0.2.7:5555", "", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:5555", "", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:80", "", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::9]:80", "", "2001:db8:1:2::/64"}, // the same host's network
		{"[fe80::1%eth0]:80", "", "fe80::/64"},
		{"@", "", "@"}, // a unix socket has no address
		{"192.0.2.7:5555", "alice", "alice"},
	} {
		var got string
		h := withClient(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = core.ClientFrom(r.Context()) }))
		req := httptest.NewRequest("GET", "/ping", nil)
		req.RemoteAddr = tc.remote
		if tc.outer != "" {
			req = req.WithContext(core.WithClient(req.Context(), tc.outer))
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got != tc.want {
			t.Errorf("%s (outer %q): client %q, want %q", tc.remote, tc.outer, got, tc.want)
		}
	}
}
