package httpx

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// limitedServer serves a handler behind LimitListener(lim): GET /ping answers 200, GET
// /block waits until unblock is closed.
type limitedServer struct {
	l       *ConnLimiter
	addr    string
	unblock chan struct{}
	started chan struct{}
	cfg     *tls.Config // the client's, when lim.TLS is set
}

var testRefusal = RefusalResponse(http.StatusServiceUnavailable, "text/plain", []byte("busy\n"))

func newLimitedServer(t *testing.T, lim ConnLimits) *limitedServer {
	t.Helper()
	ls := &limitedServer{unblock: make(chan struct{}), started: make(chan struct{}, 64)}
	if lim.Refusal == nil {
		lim.Refusal = testRefusal
	}
	if lim.TLS != nil {
		// Borrow httptest's certificate (valid for 127.0.0.1) and its client's roots.
		ts := httptest.NewTLSServer(http.NotFoundHandler())
		lim.TLS = &tls.Config{Certificates: ts.TLS.Certificates, NextProtos: []string{"http/1.1"}}
		ls.cfg = ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		ls.cfg.ServerName = "127.0.0.1"
		ts.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls.l = LimitListener(ln, lim)
	ls.addr = ln.Addr().String()
	srv := &http.Server{
		ReadHeaderTimeout: time.Minute, // long: the limiter, not the timeout, must save the day
		ConnState:         ls.l.ConnState,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				ls.started <- struct{}{}
				<-ls.unblock
			}
			io.WriteString(w, "ok")
		}),
	}
	go srv.Serve(ls.l)
	t.Cleanup(func() {
		select {
		case <-ls.unblock:
		default:
			close(ls.unblock)
		}
		srv.Close()
	})
	return ls
}

// dial connects from the loopback address from (127.0.0.x).
func (ls *limitedServer) dial(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	if ls.cfg != nil {
		c = tls.Client(c, ls.cfg)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends GET path on a new connection from from and returns the status (0 when the
// connection failed) and how long it took.
func (ls *limitedServer) get(t *testing.T, from, path string) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	c := ls.dial(t, from)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return 0, time.Since(start)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// halfSent opens n connections from from that send part of a request's headers.
func (ls *limitedServer) halfSent(t *testing.T, from string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c := ls.dial(t, from)
		if _, err := io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

// TestConnLimiterHalfSentFlood reproduces the connection flood: more half-sent requests
// than the limit, then a well-behaved request on a fresh connection. It is served at
// once, because it displaces the oldest half-sent request.
func TestConnLimiterHalfSentFlood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lim  ConnLimits
	}{
		{"listener limit", ConnLimits{Max: 8}},
		{"per-address limit", ConnLimits{Max: 100, PerIP: 8}},
		{"listener limit over TLS", ConnLimits{Max: 8, TLS: &tls.Config{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ls := newLimitedServer(t, tc.lim)
			flood := ls.halfSent(t, "127.0.0.1", 30)
			st, took := ls.get(t, "127.0.0.1", "/ping")
			if st != http.StatusOK || took > 2*time.Second {
				t.Fatalf("GET /ping during the flood: status %d after %v, want 200 at once", st, took)
			}
			if open := ls.l.Open(); open > 8 {
				t.Errorf("%d connections open, over the limit of 8", open)
			}
			if d := ls.l.Displaced(); d < 30-8 {
				t.Errorf("%d connections displaced, want at least %d", d, 30-8)
			}
			for _, c := range flood {
				c.Close()
			}
			waitUntil(t, "every slot to be free", func() bool { return ls.l.Open() == 0 })
		})
	}
}

// TestConnLimiterRefusesWhenAllServing: when every connection in scope is serving a
// request, a new one gets the refusal at once; once they finish, connections are served
// again. Another address is not affected by one address's limit.
func TestConnLimiterRefusesWhenAllServing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lim  ConnLimits
		// other is an address whose request must still be served.
		other string
	}{
		{name: "listener limit", lim: ConnLimits{Max: 3}},
		{name: "per-address limit", lim: ConnLimits{Max: 100, PerIP: 3}, other: "127.0.0.2"},
		{name: "listener limit over TLS", lim: ConnLimits{Max: 3, TLS: &tls.Config{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ls := newLimitedServer(t, tc.lim)
			done := make(chan int, 3)
			for range 3 {
				go func() {
					st, _ := ls.get(t, "127.0.0.1", "/block")
					done <- st
				}()
				select {
				case <-ls.started:
				case st := <-done:
					t.Fatalf("GET /block: status %d", st)
				}
			}
			c := ls.dial(t, "127.0.0.1")
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
			raw, _ := io.ReadAll(c)
			if !strings.HasPrefix(string(raw), "HTTP/1.1 503 Service Unavailable\r\n") || !strings.HasSuffix(string(raw), "busy\n") {
				t.Fatalf("a connection over the limit got %q, want the refusal", raw)
			}
			if ls.l.Refused() != 1 {
				t.Errorf("Refused() = %d, want 1", ls.l.Refused())
			}
			if tc.other != "" {
				if st, _ := ls.get(t, tc.other, "/ping"); st != http.StatusOK {
					t.Errorf("another address: status %d, want 200", st)
				}
			}
			close(ls.unblock)
			for range 3 {
				if st := <-done; st != http.StatusOK {
					t.Errorf("a blocked request ended with %d", st)
				}
			}
			if st, _ := ls.get(t, "127.0.0.1", "/ping"); st != http.StatusOK {
				t.Errorf("after the requests ended: status %d, want 200", st)
			}
		})
	}
}

// TestConnLimiterIdleConnectionsAreDisplaced: idle keep-alive connections make room for
// new ones, the oldest first.
func TestConnLimiterIdleConnectionsAreDisplaced(t *testing.T) {
	t.Parallel()
	ls := newLimitedServer(t, ConnLimits{Max: 2})
	var idle []net.Conn
	for range 2 {
		c := ls.dial(t, "127.0.0.1")
		io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		idle = append(idle, c)
		// The response reaches the client a moment before the server marks the
		// connection idle; wait for it, or the oldest may not be the one displaced.
		waitFor(t, "the connection to go idle", func() bool { return ls.l.Active() == 0 })
	}
	if st, _ := ls.get(t, "127.0.0.1", "/ping"); st != http.StatusOK {
		t.Fatalf("with two idle connections at the limit: status %d, want 200", st)
	}
	// The first idle connection was closed by the server; the second still works.
	_ = idle[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); err == nil {
		t.Error("the oldest idle connection is still open")
	}
	io.WriteString(idle[1], "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = idle[1].SetReadDeadline(time.Now().Add(2 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(idle[1]), nil)
	if err != nil {
		t.Fatalf("the younger idle connection: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the younger idle connection: status %d", resp.StatusCode)
	}
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
