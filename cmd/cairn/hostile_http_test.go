package main

// The HTTP layer's hostile-input tests: slow bodies, bodies announcing more than they
// send, connection floods, and a shutdown with slow postcommit hooks queued.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowBody is a request body that yields piece bytes every interval, left bytes in all,
// until stop is closed (then it fails).
type slowBody struct {
	left, piece int
	interval    time.Duration
	stop        <-chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	select {
	case <-b.stop:
		return 0, io.ErrClosedPipe
	case <-time.After(b.interval):
	}
	n := min(b.piece, b.left, len(p))
	for i := range n {
		p[i] = 'x'
	}
	b.left -= n
	return n, nil
}

// slowAnswer is the answer to a request whose body trickled in.
type slowAnswer struct {
	*resp
	// closed: the server closed the connection after the answer.
	closed bool
}

// slowExchange sends req over a new connection to addr, its body trickling in piece
// bytes every interval, and returns the answer.
func slowExchange(t *testing.T, addr string, req *http.Request, piece int, interval time.Duration) slowAnswer {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	stop := make(chan struct{})
	defer close(stop)
	req.Body = io.NopCloser(&slowBody{left: int(req.ContentLength), piece: piece, interval: interval, stop: stop})
	go func() { _ = req.Write(c) }() // fails once the server has closed the connection
	br := bufio.NewReader(c)
	hr, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("%s %s with a slow body: %v", req.Method, req.URL, err)
	}
	body, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	_, err = br.ReadByte()
	return slowAnswer{resp: &resp{Response: hr, Body: body}, closed: err != nil}
}

// TestHostileSlowBody reproduces the slow-body attack (one byte every 10 s kept a PUT open
// for minutes) with a 1 s body read timeout and a 1000 B/s minimum rate: the body is cut
// off after about a second, the KV interface answers 408, the object-storage interface
// 400 RequestTimeout, the connection is closed and nothing is stored.
func TestHostileSlowBody(t *testing.T) {
	t.Parallel()
	s := startS3Server(t, "--body-read-timeout", "1s", "--body-min-rate", "1000")
	const interval = 200 * time.Millisecond

	req, _ := http.NewRequest(http.MethodPut, s.URL+"/buckets/slow/keys/k", nil)
	req.Header.Set("Content-Type", "text/plain")
	req.ContentLength = 1000
	start := time.Now()
	a := slowExchange(t, s.Addr, req, 1, interval)
	took := time.Since(start)
	if a.StatusCode != http.StatusRequestTimeout || string(a.Body) != "The request body was not received in time\n" ||
		a.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("KV slow body: want 408 and the text, got\n%s", a.resp)
	}
	if took < 900*time.Millisecond || took > 4*time.Second {
		t.Errorf("KV slow body answered after %v, want about 1s", took)
	}
	if !a.closed {
		t.Error("KV: the connection stayed open after the 408")
	}
	expect(t, s.get(t, "/buckets/slow/keys/k"), http.StatusNotFound, nil)

	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V2}
	admin.mkBucket(t, "slow")
	req = s3Build(t, s, admin.req(http.MethodPut, "slow", "obj", "", hdr{"Content-Type", "text/plain"}, strings.Repeat("x", 1000)))
	start = time.Now()
	a = slowExchange(t, s.S3Addr, req, 1, interval)
	took = time.Since(start)
	expectS3Error(t, a.resp, http.StatusBadRequest, "RequestTimeout")
	if !strings.Contains(string(a.Body), "<Message>Your socket connection to the server was not read from or written to within the timeout period.</Message>") {
		t.Errorf("S3 slow body: message in %s", a.Body)
	}
	if took < 900*time.Millisecond || took > 4*time.Second {
		t.Errorf("S3 slow body answered after %v, want about 1s", took)
	}
	if !a.closed {
		t.Error("S3: the connection stayed open after RequestTimeout")
	}
	admin.must(t, http.StatusNotFound, http.MethodGet, "slow", "obj", "", nil, "")

	// A body at a decent rate (2000 B/s) is not cut off, though it takes longer than the
	// read timeout.
	req, _ = http.NewRequest(http.MethodPut, s.URL+"/buckets/slow/keys/steady", nil)
	req.Header.Set("Content-Type", "text/plain")
	req.ContentLength = 3000
	req.Close = true // the exchange waits for the connection's end
	start = time.Now()
	a = slowExchange(t, s.Addr, req, 100, 50*time.Millisecond)
	if took := time.Since(start); a.StatusCode != http.StatusNoContent || took < time.Second {
		t.Errorf("a steady body after %v: want 204 after more than 1s, got\n%s", took, a.resp)
	}
	assertServing(t, s)
}

// vmRSS returns the resident and peak resident memory of process pid, in bytes.
func vmRSS(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// TestHostileBigDeclaredBody reproduces the declared-length attack (100 connections each
// announcing 50 MiB and sending 8 MiB took the server from 24 MiB to 833 MiB), scaled
// down: 40 connections announcing the largest value (16 MiB here) and sending 8 MiB. The
// server reserves memory only as bytes arrive and holds at most --max-body-memory (32
// MiB) of bodies: the requests beyond get 503, and its memory grows by less than half of
// what was sent (without the budget it grows by all 320 MiB, and more).
func TestHostileBigDeclaredBody(t *testing.T) {
	t.Parallel()
	const budget = 32 << 20
	s := startProcess(t, "--max-body-memory", "32MiB", "--max-object-size", "16MiB") // its memory is measured
	s.mustPut(t, "/buckets/warm/keys/k", strings.Repeat("w", 1<<20))
	before, _ := vmRSS(t, s.cmd.Process.Pid)

	const conns, declared, sent = 40, 16 << 20, 8 << 20
	chunk := make([]byte, 256<<10)
	var cs []net.Conn
	for i := range conns {
		c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "PUT /buckets/big/keys/k%d HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", i, declared)
		for n := 0; n < sent; n += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				break // refused: the server answered and closed
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // let the server read what was sent
	rss, hwm := vmRSS(t, s.cmd.Process.Pid)
	t.Logf("%d connections announcing %d MiB, sending %d MiB: RSS %d MiB before, %d MiB after, peak %d MiB",
		conns, declared>>20, sent>>20, before>>20, rss>>20, hwm>>20)
	// The bodies held stay within the budget; garbage from refused requests and the Go
	// collector's headroom (the heap may reach twice what is live) come on top.
	if grown := hwm - before; grown > conns*sent/2 {
		t.Errorf("the server grew by %d MiB (%d MiB sent) with a %d MiB body budget", grown>>20, conns*sent>>20, budget>>20)
	}
	if used := statsOf(t, s)["kv_body_memory_bytes"].(float64); used > budget {
		t.Errorf("%v bytes of bodies held, over the %d budget", used, budget)
	}
	for _, c := range cs {
		c.Close()
	}
	// The answers to refused requests may be lost in the connection resets: count them
	// on the server's side.
	if refused := countRequests(t, s, `api="kv"`, `code="503"`, `method="PUT"`); refused < conns-budget/sent-1 {
		t.Errorf("%d of %d requests refused with 503, want at least %d", refused, conns, conns-budget/sent-1)
	}
	waitFor(t, 10*time.Second, "the bodies' memory returned", func() bool {
		return statsOf(t, s)["kv_body_memory_bytes"].(float64) == 0
	})
	s.mustPut(t, "/buckets/big/keys/after", strings.Repeat("a", 8<<20))
	assertServing(t, s)
}

// countRequests sums the cairn_http_requests_total series of /metrics whose labels
// include every one of labels.
func countRequests(t *testing.T, s *child, labels ...string) int {
	t.Helper()
	r := s.get(t, "/metrics")
	expect(t, r, http.StatusOK, nil)
	n := 0
	for _, line := range strings.Split(string(r.Body), "\n") {
		if !strings.HasPrefix(line, "cairn_http_requests_total{") {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(line, l)
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); match && err == nil {
			n += int(v)
		}
	}
	return n
}

// statsFrom reads /stats with client c.
func statsFrom(t *testing.T, c *http.Client, s *child) map[string]any {
	t.Helper()
	r, err := c.Get(s.URL + "/stats")
	if err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	defer r.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		t.Fatalf("/stats: %v", err)
	}
	return st
}

// halfSend opens n connections to addr, each sending part of a request's headers.
func halfSend(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dialing %s for the flood: %v", addr, err)
		}
		if _, err := io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs
}

// TestHostileConnectionFlood reproduces the connection flood (1,124 half-sent requests
// stalled /ping until the header timeout) against listeners limited to 64 connections,
// with a header timeout of a minute so that only the limits can help: /ping on a new
// connection answers at once on both interfaces. Then slow bodies from one address at
// its per-address limit: a new connection from there is refused with 503, one from
// another address is served.
func TestHostileConnectionFlood(t *testing.T) {
	t.Parallel()
	t.Run("half-sent requests", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, "--max-connections", "64", "--header-timeout", "60s")
		kv := halfSend(t, s.Addr, 200)
		s3 := halfSend(t, s.S3Addr, 200)
		start := time.Now()
		assertServing(t, s)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("/ping took %v during the flood", took)
		}
		st := statsOf(t, s)
		if open := st["kv_connections"].(float64); open > 64 {
			t.Errorf("%v KV connections open, over the limit of 64", open)
		}
		if d := st["kv_connections_displaced_total"].(float64); d < 200-64 {
			t.Errorf("%v KV connections displaced, want at least %d", d, 200-64)
		}
		for _, c := range append(kv, s3...) {
			c.Close()
		}
		assertServing(t, s)
	})
	t.Run("slow bodies from one address", func(t *testing.T) {
		t.Parallel()
		const perIP = 8
		s := startServer(t, "--max-connections-per-ip", strconv.Itoa(perIP), "--body-read-timeout", "60s")
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); wg.Wait() }()
		for i := range perIP {
			c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "PUT /buckets/b/keys/k%d HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nx", i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ctx.Done()
				c.Close()
			}()
		}
		// The limit is per address: another one is watched and served.
		other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
		// In their handlers, not merely accepted: a connection whose request net/http has
		// not begun to read is still waiting, and the next one may displace it. The stats
		// request's own connection is active too.
		waitFor(t, 5*time.Second, "the slow bodies to be in their handlers", func() bool {
			return statsFrom(t, other, s)["kv_connections_active"].(float64) > perIP
		})
		raw := rawExchange(t, s, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(raw, "HTTP/1.1 503 Service Unavailable\r\n") || !strings.Contains(raw, "<title>503 Service Unavailable</title>") {
			t.Errorf("a connection over the per-address limit got %q, want the 503 page", raw)
		}
		r, err := other.Get(s.URL + "/ping")
		if err != nil || r.StatusCode != http.StatusOK {
			t.Errorf("GET /ping from another address: %v %v", r, err)
		} else {
			r.Body.Close()
		}
		cancel()
		wg.Wait()
		waitFor(t, 5*time.Second, "the slow bodies' connections to end", func() bool {
			return statsFrom(t, other, s)["kv_connections"].(float64) == 1
		})
		assertServing(t, s)
	})
}

// TestHostileShutdownWithQueuedPostcommits reproduces the slow shutdown (400 queued slow
// postcommits took 102 s for a 10 s timeout): 60 writes each queue a WebAssembly
// postcommit that loops until its 1 s deadline (4 workers: 15 s of work); SIGTERM with
// --shutdown-timeout 2s stops the server within the timeout and a bounded margin, and
// logs how many postcommits it dropped.
func TestHostileShutdownWithQueuedPostcommits(t *testing.T) {
	t.Parallel()
	s := startProcess(t, "--shutdown-timeout", "2s") // WebAssembly modules compile slowly under -race in process
	putModule(t, s, "fx", fixtureWASM(t, "hooks.wasm"), http.StatusCreated)
	s.setProps(t, "post", `{"postcommit":[{"mod":"fx","fun":"loop"}]}`)
	for i := range 60 {
		s.mustPut(t, "/buckets/post/keys/k"+strconv.Itoa(i), "v")
	}
	assertServing(t, s)
	start := time.Now()
	s.Stop()
	if took := time.Since(start); took > 4500*time.Millisecond {
		t.Errorf("SIGTERM took %v with --shutdown-timeout 2s", took)
	}
	errOut := s.stderr.String()
	i := strings.Index(errOut, "postcommit hooks not run before the shutdown deadline")
	if i < 0 {
		t.Fatalf("no log of the dropped postcommits\n%s", s.output())
	}
	var dropped int
	if _, err := fmt.Sscanf(errOut[strings.Index(errOut[i:], "writes=")+i:], "writes=%d", &dropped); err != nil || dropped < 40 {
		t.Errorf("dropped %d postcommits (%v), want most of the 60\n%s", dropped, err, errOut)
	}
}
