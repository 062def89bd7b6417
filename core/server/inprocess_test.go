package server_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/coretest"
)

// TestInProcessInterfaces drives both interfaces of a server that core/server built in
// the test's process, over real connections: each answer comes through the interface's
// middleware (request ID, framing) in the interface's own format.
func TestInProcessInterfaces(t *testing.T) {
	t.Parallel()
	s := coretest.Start(t, coretest.Config(t))
	requestID := regexp.MustCompile(`\r\nX-Request-Id: [0-9a-z]+\r\n`)
	cases := []struct {
		name, addr, request string
		wantPrefix          string
		wantBody            string
	}{
		{"kv ping", s.Addr, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			"HTTP/1.1 200 OK\r\n", "\r\n\r\nOK"},
		{"kv unknown method", s.Addr, "PATCH /buckets/b/keys/k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			"HTTP/1.1 501 Not Implemented\r\n", "<title>501 Not Implemented</title>"},
		{"s3 anonymous service", s.S3Addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			"HTTP/1.1 403 Forbidden\r\n", "<Code>AccessDenied</Code>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := coretest.RawExchange(t, c.addr, c.request)
			if !strings.HasPrefix(raw, c.wantPrefix) || !strings.Contains(raw, c.wantBody) || !requestID.MatchString(raw) {
				t.Errorf("got %q, want %q … %q with an X-Request-Id", raw, c.wantPrefix, c.wantBody)
			}
		})
	}
}

// TestInProcessRestart shows that Restart reopens the same store with the same admin
// credential, as a restarted process does.
func TestInProcessRestart(t *testing.T) {
	t.Parallel()
	cfg := coretest.Config(t)
	cfg.Dialect = "riak"
	s := coretest.Start(t, cfg)
	s.CreateType("maps", `{"allow_mult":true}`)
	s.MustPut(t, "/types/maps/buckets/b/keys/k", "kept")
	admin := s.Admin()
	s.Restart()
	if got := s.Admin(); got != admin {
		t.Errorf("admin credential %v after the restart, want %v", got, admin)
	}
	r := s.Do(t, http.MethodGet, "/types/maps/buckets/b/keys/k", nil, "")
	if r.StatusCode != http.StatusOK || string(r.Body) != "kept" {
		t.Errorf("after the restart: %s", r)
	}
	if v := r.Header.Get("X-Riak-Vclock"); v == "" {
		t.Errorf("no X-Riak-Vclock in the riak dialect: %s", r)
	}
}

// TestInProcessConnectionLimit shows that the in-process server has core/server's
// listeners: while one connection from an address is busy, a second one over the
// per-address limit of 1 gets the KV 503 page; once it ends, connections are served.
func TestInProcessConnectionLimit(t *testing.T) {
	t.Parallel()
	cfg := coretest.Config(t)
	cfg.MaxConnectionsPerIP = 1
	s := coretest.Start(t, cfg)
	hold := coretest.Dial(t, s.Addr)
	// A request in its handler, waiting for its body, keeps the connection busy: the
	// 100 Continue shows the handler has begun reading it.
	if _, err := hold.Write([]byte("PUT /buckets/b/keys/k HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = hold.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, len("HTTP/1.1 100 Continue\r\n\r\n"))
	if _, err := io.ReadFull(hold, buf); err != nil || string(buf) != "HTTP/1.1 100 Continue\r\n\r\n" {
		t.Fatalf("the held request: %q, %v", buf, err)
	}
	raw := ping(t, s)
	if !strings.HasPrefix(raw, "HTTP/1.1 503 Service Unavailable\r\n") || !strings.Contains(raw, "<title>503 Service Unavailable</title>") {
		t.Errorf("a connection over the per-address limit got %q, want the 503 page", raw)
	}
	hold.Close()
	coretest.WaitFor(t, "a connection to be served once the busy one ended", func() bool {
		return strings.HasPrefix(ping(t, s), "HTTP/1.1 200 OK\r\n")
	})
}

// ping is a raw GET /ping on a new connection to the KV interface.
func ping(t *testing.T, s *coretest.Server) string {
	t.Helper()
	return coretest.RawExchange(t, s.Addr, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
}
