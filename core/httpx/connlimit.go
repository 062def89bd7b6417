package httpx

import (
	"container/list"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimits bounds the connections a listener keeps open (see LimitListener).
type ConnLimits struct {
	// Max is the most connections open at once; 0: no limit.
	Max int
	// PerIP is the most connections open at once from one client IP address; 0: no
	// limit.
	PerIP int
	// Refusal is the complete HTTP response written to a connection refused because
	// every connection it could displace is serving a request. It should say
	// "Connection: close".
	Refusal []byte
	// NewRefusal, when set, builds the refusal for each refused connection instead
	// (an interface whose error bodies carry a fresh request id).
	NewRefusal func() []byte
	// TLS, when set, makes the listener's connections TLS server connections (the
	// handshake happens on first use, in the HTTP server's goroutine); a refusal is then
	// written after a handshake.
	TLS *tls.Config
	// IgnoreUnknownExpect sets aside (see ExpectAside) the Expect headers net/http would
	// answer 417 to, on plain HTTP connections (over TLS, net/http must be given the
	// *tls.Conn itself, so they are passed as they are).
	IgnoreUnknownExpect bool
}

// Refusals in flight are bounded (beyond, a refused connection is just closed), each
// within refusalTimeout (handshake, response, and the wait for the client to read it).
const (
	maxRefusing    = 64
	refusalTimeout = time.Second
)

// ConnLimiter is a listener that keeps at most ConnLimits.Max connections open, and at
// most ConnLimits.PerIP from one IP address. A connection that arrives over a limit
// displaces the connection, in the same scope (the whole listener, or that address),
// that has waited longest without a request being served on it: one still sending its
// first request's headers (a half-sent request), or idle between requests. Only when
// every connection in scope is serving a request is the new one refused: it gets
// ConnLimits.Refusal and is closed at once, rather than waiting in the kernel's accept
// queue. So a flood of half-sent requests cannot keep a well-behaved client (which
// sends its request at once) from being served, and the process never runs out of file
// descriptors as long as Max stays below its limit.
//
// The HTTP server must report connection states to ConnState (http.Server.ConnState):
// that is how the limiter knows which connections are serving a request.
type ConnLimiter struct {
	net.Listener
	lim ConnLimits

	mu sync.Mutex // guards open, byIP, waiting, refusing, closed and every tracked conn's fields
	// open counts the connections holding a slot; byIP the same per client address.
	open int
	byIP map[string]*ipConns
	// waiting lists the connections not serving a request, longest waiting first.
	waiting list.List
	// refusing holds the connections being refused, so Close can cut them short.
	refusing map[net.Conn]struct{}
	closed   bool
	// refusers counts the goroutines writing refusals (Close waits for them).
	refusers sync.WaitGroup

	displaced, refused atomic.Int64
}

// ipConns are the connections of one client address.
type ipConns struct {
	open    int
	waiting list.List
}

// trackedConn is a connection holding a slot of its ConnLimiter.
type trackedConn struct {
	net.Conn
	l  *ConnLimiter
	ip string
	// Guarded by l.mu: counted while the connection holds its slot; all and mine are
	// its elements in l.waiting and its address's waiting list while it waits.
	counted   bool
	all, mine *list.Element
}

// ReadFrom hands the copy to the wrapped connection when it can do it itself (a TCP
// connection sends a file with sendfile(2)): net/http's response writer looks for an
// io.ReaderFrom on the connection, and embedding net.Conn would hide it, so every GET
// of a blob went through user-space buffers.
func (c *trackedConn) ReadFrom(r io.Reader) (int64, error) { return readFromConn(c.Conn, r) }

// readFromConn writes r's bytes to c, handing the copy to c when it is an io.ReaderFrom
// (a TCP connection sends a file with sendfile(2)); the connection wrappers call it.
func readFromConn(c net.Conn, r io.Reader) (int64, error) {
	if rf, ok := c.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// LimitListener returns ln limited by lim.
func LimitListener(ln net.Listener, lim ConnLimits) *ConnLimiter {
	return &ConnLimiter{Listener: ln, lim: lim, byIP: map[string]*ipConns{}, refusing: map[net.Conn]struct{}{}}
}

// Accept returns the next connection admitted: it displaces a waiting connection when
// a limit is reached, and refuses (in the background) the connections it cannot admit.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, victim := l.admit(c)
		if victim != nil {
			l.displaced.Add(1)
			_ = victim.Conn.Close() // its server goroutine sees the error and ends
		}
		if tc == nil {
			l.refused.Add(1)
			l.refuse(c)
			continue
		}
		switch {
		case l.lim.TLS != nil:
			return tls.Server(tc, l.lim.TLS), nil
		case l.lim.IgnoreUnknownExpect:
			return newExpectFilter(tc), nil
		}
		return tc, nil
	}
}

// admit gives c a slot, taking it from the longest-waiting connection in the scope of
// the limit reached (returned as victim, already released); nil when c must be refused.
func (l *ConnLimiter) admit(c net.Conn) (tc, victim *trackedConn) {
	ip := remoteIP(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	ipc := l.byIP[ip]
	switch {
	case l.lim.PerIP > 0 && ipc != nil && ipc.open >= l.lim.PerIP:
		if victim = oldest(&ipc.waiting); victim == nil {
			return nil, nil
		}
	case l.lim.Max > 0 && l.open >= l.lim.Max:
		if victim = oldest(&l.waiting); victim == nil {
			return nil, nil
		}
	}
	if victim != nil {
		l.releaseLocked(victim)
	}
	if ipc = l.byIP[ip]; ipc == nil { // the victim may have been the address's last
		ipc = &ipConns{}
		l.byIP[ip] = ipc
	}
	tc = &trackedConn{Conn: c, l: l, ip: ip, counted: true}
	l.open++
	ipc.open++
	l.waitLocked(tc) // a new connection waits for its first request
	return tc, victim
}

func oldest(waiting *list.List) *trackedConn {
	if e := waiting.Front(); e != nil {
		return e.Value.(*trackedConn)
	}
	return nil
}

// waitLocked puts tc at the end of the waiting lists (a no-op if it is on them).
func (l *ConnLimiter) waitLocked(tc *trackedConn) {
	if !tc.counted || tc.all != nil {
		return
	}
	tc.all = l.waiting.PushBack(tc)
	tc.mine = l.byIP[tc.ip].waiting.PushBack(tc)
}

// unwaitLocked takes tc off the waiting lists (a no-op if it is not on them).
func (l *ConnLimiter) unwaitLocked(tc *trackedConn) {
	if tc.all == nil {
		return
	}
	l.waiting.Remove(tc.all)
	l.byIP[tc.ip].waiting.Remove(tc.mine)
	tc.all, tc.mine = nil, nil
}

// releaseLocked frees tc's slot (a no-op if it holds none).
func (l *ConnLimiter) releaseLocked(tc *trackedConn) {
	if !tc.counted {
		return
	}
	l.unwaitLocked(tc)
	tc.counted = false
	l.open--
	ipc := l.byIP[tc.ip]
	if ipc.open--; ipc.open == 0 {
		delete(l.byIP, tc.ip)
	}
}

// ConnState is the http.Server.ConnState hook: a connection serving a request cannot be
// displaced; a new or idle one can; a closed or hijacked one frees its slot.
func (l *ConnLimiter) ConnState(c net.Conn, st http.ConnState) {
	tc := trackedOf(c)
	if tc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew:
		l.waitLocked(tc)
	case http.StateIdle: // waiting again, from now
		l.unwaitLocked(tc)
		l.waitLocked(tc)
	case http.StateActive:
		l.unwaitLocked(tc)
	case http.StateHijacked, http.StateClosed:
		l.releaseLocked(tc)
	}
}

func trackedOf(c net.Conn) *trackedConn {
	switch w := c.(type) {
	case *tls.Conn:
		c = w.NetConn()
	case *expectFilter:
		c = w.Conn
	}
	tc, _ := c.(*trackedConn)
	return tc
}

// Close closes the connection and frees its slot.
func (tc *trackedConn) Close() error {
	err := tc.Conn.Close()
	tc.l.mu.Lock()
	tc.l.releaseLocked(tc)
	tc.l.mu.Unlock()
	return err
}

// refuse writes the refusal to c and closes it, in a goroutine Close waits for; when
// maxRefusing refusals are in flight already, c is closed at once.
func (l *ConnLimiter) refuse(c net.Conn) {
	l.mu.Lock()
	if l.closed || len(l.refusing) >= maxRefusing {
		l.mu.Unlock()
		_ = c.Close()
		return
	}
	l.refusing[c] = struct{}{}
	l.refusers.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.refusers.Done()
		refusal := l.lim.Refusal
		if l.lim.NewRefusal != nil {
			refusal = l.lim.NewRefusal()
		}
		writeRefusal(c, refusal, l.lim.TLS)
		l.mu.Lock()
		delete(l.refusing, c)
		l.mu.Unlock()
	}()
}

// writeRefusal answers c with refusal (after a TLS handshake when cfg is set), lets
// the client read it (closing only our side, then draining a little of what it sent:
// closing with unread data would reset the connection and lose the answer), and closes
// c, all within refusalTimeout.
func writeRefusal(c net.Conn, refusal []byte, cfg *tls.Config) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refusalTimeout))
	rw := io.ReadWriter(c)
	if cfg != nil {
		tc := tls.Server(c, cfg)
		if tc.Handshake() != nil {
			return
		}
		rw = tc
	}
	if _, err := rw.Write(refusal); err != nil {
		return
	}
	if cw, ok := rw.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(rw, 64<<10))
}

// Close stops accepting, cuts the refusals in flight short and waits for them.
func (l *ConnLimiter) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.refusing {
		_ = c.SetDeadline(time.Now())
	}
	l.mu.Unlock()
	l.refusers.Wait()
	return err
}

// Open returns the number of connections holding a slot.
func (l *ConnLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Active returns how many connections are serving a request (holding a slot and not
// waiting for one): those a new connection can never displace.
func (l *ConnLimiter) Active() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open - l.waiting.Len()
}

// Displaced returns how many connections were closed to make room for a new one.
func (l *ConnLimiter) Displaced() int64 { return l.displaced.Load() }

// Refused returns how many connections were refused because every connection they
// could displace was serving a request.
func (l *ConnLimiter) Refused() int64 { return l.refused.Load() }

// remoteIP is the address part of c's remote address (the whole string when it has no
// port).
func remoteIP(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// RefusalResponse builds a complete HTTP/1.1 response for ConnLimits.Refusal: status,
// content type and body, with Content-Length, Connection: close and Retry-After, and
// the extra header lines given as name, value pairs (the caller's constants and ids:
// neither may hold a line break).
func RefusalResponse(status int, contentType string, body []byte, extra ...[2]string) []byte {
	head := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: " + contentType + "\r\n"
	for _, h := range extra {
		head += h[0] + ": " + h[1] + "\r\n"
	}
	head +=
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
			"Retry-After: 1\r\nConnection: close\r\n\r\n"
	return append([]byte(head), body...)
}
