package httpx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// bodyServer serves, under GuardBody(lim), a handler that reads the body with ReadBody
// (limit 64 MiB) and answers 200 with its length, 408 (closing) when it was too slow,
// 503 when over the memory budget, 413 when too large, 400 otherwise. held, when set,
// receives the length of each body read whole, and the handler then waits on release
// before answering.
type bodyServer struct {
	*httptest.Server
	mem     *BodyMemory
	held    chan int
	release chan struct{}
}

func newBodyServer(t *testing.T, lim BodyLimits, hold bool) *bodyServer {
	t.Helper()
	bs := &bodyServer{mem: lim.Memory}
	if hold {
		bs.held, bs.release = make(chan int, 16), make(chan struct{})
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := ReadBody(w, r, 64<<20)
		if bs.held != nil && err == nil {
			bs.held <- len(b)
			<-bs.release
		}
		switch {
		case err == nil:
			fmt.Fprintf(w, "%d", len(b))
		case IsBodyTimeout(err):
			w.Header().Set("Connection", "close")
			http.Error(w, err.Error(), http.StatusRequestTimeout)
		case errors.Is(err, ErrBodyMemory):
			w.Header().Set("Connection", "close")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case IsTooLarge(err):
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		default:
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	bs.Server = httptest.NewServer(Chain(h, RequestID, GuardBody(lim)))
	t.Cleanup(bs.Close)
	return bs
}

// dial opens a raw connection to the server.
func (bs *bodyServer) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", bs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readStatus reads one response's status code from c.
func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGuardBodySlowBodies reproduces the slow-body attack (a PUT sending one byte at a
// time keeps its connection for ever) and checks that honest bodies, however long they
// take at a decent rate, get through.
func TestGuardBodySlowBodies(t *testing.T) {
	t.Parallel()
	lim := BodyLimits{ReadTimeout: 400 * time.Millisecond, MinRate: 2000}
	for _, tc := range []struct {
		name    string
		chunked bool
		// pieces of the body, each sent after pause.
		pieces, size int
		pause        time.Duration
		want         int
		// within bounds the whole exchange.
		within time.Duration
	}{
		{name: "one byte every 150ms (Content-Length)", pieces: 40, size: 1, pause: 150 * time.Millisecond, want: 408, within: 2 * time.Second},
		{name: "one byte every 150ms (chunked)", chunked: true, pieces: 40, size: 1, pause: 150 * time.Millisecond, want: 408, within: 2 * time.Second},
		{name: "ten bytes then silence", pieces: 2, size: 10, pause: 3 * time.Second, want: 408, within: 2 * time.Second},
		{name: "steady 10 kB/s for 1.2s, past the read timeout", pieces: 12, size: 1000, pause: 100 * time.Millisecond, want: 200, within: 5 * time.Second},
		{name: "steady 10 kB/s (chunked)", chunked: true, pieces: 12, size: 1000, pause: 100 * time.Millisecond, want: 200, within: 5 * time.Second},
		{name: "all at once", pieces: 1, size: 100000, want: 200, within: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bs := newBodyServer(t, lim, false)
			c := bs.dial(t)
			total := tc.pieces * tc.size
			head := "PUT /k HTTP/1.1\r\nHost: x\r\n"
			if tc.chunked {
				head += "Transfer-Encoding: chunked\r\n\r\n"
			} else {
				head += fmt.Sprintf("Content-Length: %d\r\n\r\n", total)
			}
			start := time.Now()
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			status := make(chan int, 1)
			go func() { status <- readStatus(t, c) }()
			go func() {
				piece := bytes.Repeat([]byte("x"), tc.size)
				for i := range tc.pieces {
					if i > 0 {
						time.Sleep(tc.pause)
					}
					out := piece
					if tc.chunked {
						out = append([]byte(fmt.Sprintf("%x\r\n", tc.size)), append(piece, "\r\n"...)...)
					}
					if _, err := c.Write(out); err != nil {
						return // the server answered and closed
					}
				}
				if tc.chunked {
					_, _ = io.WriteString(c, "0\r\n\r\n")
				}
			}()
			var got int
			select {
			case got = <-status:
			case <-time.After(tc.within + time.Second):
				t.Fatalf("no answer within %v", tc.within+time.Second)
			}
			if took := time.Since(start); got != tc.want || took > tc.within {
				t.Fatalf("status %d after %v, want %d within %v", got, took, tc.want, tc.within)
			}
			if tc.want == 408 {
				// The connection is closed: what is left of the body is never parsed.
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				if n, err := c.Read(make([]byte, 1)); err == nil {
					t.Errorf("the connection stayed open after the 408 (read %d bytes)", n)
				}
			}
		})
	}
}

// TestReadBodyReservesOnlyWhatArrives reproduces the declared-length attack: a body
// announcing 50 MiB that sends a few bytes must not make the server reserve 50 MiB.
func TestReadBodyReservesOnlyWhatArrives(t *testing.T) {
	t.Parallel()
	mem := NewBodyMemory(0)
	bs := newBodyServer(t, BodyLimits{ReadTimeout: 5 * time.Second, Memory: mem}, false)
	for _, sent := range []int{10, 100 << 10, 3 << 20} {
		c := bs.dial(t)
		fmt.Fprintf(c, "PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 50<<20)
		if _, err := c.Write(bytes.Repeat([]byte("x"), sent)); err != nil {
			t.Fatal(err)
		}
		// The handler reads what was sent, then waits for more: what it holds then is
		// what it reserved for the bytes received.
		var used int64
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if used = mem.Used(); used >= int64(sent) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if max := 2*int64(sent) + firstBodyChunk; used < int64(sent) || used > max {
			t.Errorf("sent %d of 50 MiB: %d bytes reserved, want between %d and %d", sent, used, sent, max)
		}
		c.Close()
		waitUntil(t, "the request's memory returned", func() bool { return mem.Used() == 0 })
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReadBody checks what ReadBody returns for bodies of every shape.
func TestReadBody(t *testing.T) {
	t.Parallel()
	bs := newBodyServer(t, BodyLimits{ReadTimeout: 5 * time.Second, Memory: NewBodyMemory(0)}, false)
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		// declared overrides Content-Length when not 0.
		declared int64
		want     int
	}{
		{name: "empty", size: 0, want: 200},
		{name: "one byte", size: 1, want: 200},
		{name: "first chunk exactly", size: firstBodyChunk, want: 200},
		{name: "first chunk and one", size: firstBodyChunk + 1, want: 200},
		{name: "several chunks", size: 3<<20 + 7, want: 200},
		{name: "several chunks, chunked", size: 3<<20 + 7, chunked: true, want: 200},
		{name: "declared over the limit", size: 10, declared: 64<<20 + 1, want: 413},
		{name: "chunked over the limit", size: 64<<20 + 1, chunked: true, want: 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("abcdefgh"), tc.size/8+1)[:tc.size]
			var rd io.Reader = bytes.NewReader(body)
			if tc.chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPut, bs.URL, rd)
			if tc.declared != 0 {
				req.ContentLength = tc.declared
				req.Body = io.NopCloser(bytes.NewReader(body))
			}
			resp, err := bs.Client().Do(req)
			if tc.declared != 0 && err != nil {
				return // the client may fail writing the body the server refused: fine
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || tc.want == 200 && string(got) != fmt.Sprint(tc.size) {
				t.Fatalf("status %d %q, want %d (%d bytes)", resp.StatusCode, got, tc.want, tc.size)
			}
		})
	}
	// A body shorter than its Content-Length is an error, not a truncated value.
	c := bs.dial(t)
	fmt.Fprintf(c, "PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort")
	c.(*net.TCPConn).CloseWrite()
	if st := readStatus(t, c); st != 400 {
		t.Errorf("short body: status %d, want 400", st)
	}
	if u := bs.mem.Used(); u != 0 {
		t.Errorf("%d bytes still charged after the requests", u)
	}
}

// TestBodyMemoryBudget checks that request bodies held at once stay within the budget:
// a request that would go over is refused, and the memory comes back when requests end.
func TestBodyMemoryBudget(t *testing.T) {
	t.Parallel()
	const budget = 1 << 20
	bs := newBodyServer(t, BodyLimits{ReadTimeout: 5 * time.Second, Memory: NewBodyMemory(budget)}, true)
	put := func(size int) (int, error) {
		resp, err := bs.Client().Post(bs.URL, "text/plain", bytes.NewReader(make([]byte, size)))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	first := make(chan int, 1)
	go func() {
		st, err := put(700 << 10)
		if err != nil {
			t.Error(err)
		}
		first <- st
	}()
	if n := <-bs.held; n != 700<<10 {
		t.Fatalf("the first request read %d bytes", n)
	}
	if u := bs.mem.Used(); u > budget || u < 700<<10 {
		t.Fatalf("%d bytes charged for a 700 KiB body under a 1 MiB budget", u)
	}
	// A second body that does not fit beside the first is refused.
	if st, err := put(700 << 10); err != nil || st != http.StatusServiceUnavailable {
		t.Fatalf("second body over the budget: status %d (%v), want 503", st, err)
	}
	bs.release <- struct{}{}
	if st := <-first; st != 200 {
		t.Fatalf("first body: status %d", st)
	}
	waitUntil(t, "the budget to be free again", func() bool { return bs.mem.Used() == 0 })
	go func() { <-bs.held; bs.release <- struct{}{} }() // lets the third request answer
	if st, err := put(700 << 10); err != nil || st != 200 {
		t.Fatalf("a body after the others ended: status %d (%v), want 200", st, err)
	}
}

// TestBodyDeadline checks the deadline arithmetic: ReadTimeout from now, or earlier
// when the body has used the wait its size earns at MinRate.
func TestBodyDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		lim      BodyLimits
		received int64
		waited   time.Duration
		want     time.Duration // after now
	}{
		{"no rate", BodyLimits{ReadTimeout: 30 * time.Second}, 0, time.Hour, 30 * time.Second},
		{"fresh body", BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1000}, 0, 0, 30 * time.Second},
		{"grace partly used", BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1000}, 0, 20 * time.Second, 10 * time.Second},
		{"bytes earn time", BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1000}, 5000, 30 * time.Second, 5 * time.Second},
		{"earned more than the timeout", BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1000}, 1 << 30, time.Minute, 30 * time.Second},
		{"below the rate", BodyLimits{ReadTimeout: 30 * time.Second, MinRate: 1000}, 3, 40 * time.Second, 0},
		{"a huge body does not overflow", BodyLimits{ReadTimeout: time.Second, MinRate: 1}, 1 << 62, 0, time.Second},
	} {
		g := &guardedBody{lim: &tc.lim, received: tc.received, waited: tc.waited}
		if got := g.deadline(now).Sub(now); got != tc.want {
			t.Errorf("%s: deadline in %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRearm: a deadline is set again when it would move earlier, or later by more than
// 1/64 of the timeout; otherwise the one already set (at most that much earlier) stays.
func TestRearm(t *testing.T) {
	t.Parallel()
	armed := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	const timeout = 30 * time.Second
	slack := timeout / rearmSlack
	for _, tc := range []struct {
		name string
		dl   time.Time
		want bool
	}{
		{"the same deadline", armed, false},
		{"a moment later", armed.Add(time.Millisecond), false},
		{"later by the slack", armed.Add(slack), false},
		{"later by more than the slack", armed.Add(slack + 1), true},
		{"earlier (MinRate)", armed.Add(-time.Nanosecond), true},
		{"much earlier", armed.Add(-timeout), true},
	} {
		if got := rearm(armed, tc.dl, timeout); got != tc.want {
			t.Errorf("%s: rearm %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGuardBodyLeavesBodilessRequestsAlone: a request without a body is not wrapped (a
// deadline set now would cut net/http's background read of the connection).
func TestGuardBodyLeavesBodilessRequestsAlone(t *testing.T) {
	t.Parallel()
	var wrapped bool
	h := GuardBody(BodyLimits{ReadTimeout: time.Second})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, wrapped = r.Body.(*guardedBody)
	}))
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if wrapped {
		t.Error("a GET without a body was wrapped")
	}
	resp, err = ts.Client().Post(ts.URL, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !wrapped {
		t.Error("a POST with a body was not wrapped")
	}
}
