package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"net"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// The built-in load generator is a closed loop: each of its connections is one
// goroutine that writes a pre-built raw HTTP/1.1 request on a net.Conn, reads the
// response with a minimal parser (status line, Content-Length, chunked bodies,
// Connection: close) and sends the next request. It costs a small fraction of what
// net/http's client does per request, which matters on a machine whose few cores the
// generator shares with the server under test.

// RequestFunc appends one complete raw HTTP/1.1 request to dst and returns it. seq is
// the request's sequence number: global across connections when the run has a Total
// (so Total requests see seq 0..Total-1 exactly once), per connection otherwise. r is
// the connection's own random source.
type RequestFunc func(dst []byte, r *rand.Rand, seq int64) []byte

// maxEpochs bounds the number of measurement epochs of one run.
const maxEpochs = 8

// Builtin describes a run of the built-in generator.
type Builtin struct {
	// Addr is the host:port to connect to.
	Addr string
	// Conns is the number of persistent connections (and goroutines).
	Conns int
	// Build makes each request.
	Build RequestFunc
	// Total, when positive, stops the run after that many requests in all (count-bounded);
	// zero runs until Stop.
	Total int64
	// Seed seeds the connections' random sources (connection i uses Seed, i).
	Seed uint64
}

// EpochStats are the results of one epoch of a run.
type EpochStats struct {
	Requests int64 // completed requests with a 2xx status
	Errors   int64 // non-2xx statuses and connection errors
	Hist     histogram
}

// Run is a started generator.
type Run struct {
	b       Builtin
	next    atomic.Int64 // next global sequence number (count-bounded runs)
	epoch   atomic.Int32
	stopped atomic.Bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	done    chan struct{}
	workers []*worker

	mu    sync.Mutex            // guards conns
	conns map[net.Conn]struct{} // open connections, to unblock workers on Stop
}

type worker struct {
	run   *Run
	id    int
	rng   *rand.Rand
	conn  net.Conn
	br    *bufio.Reader
	buf   []byte
	seq   int64
	stats [maxEpochs]*EpochStats
}

// Start connects nothing up front: each worker dials its own connection and starts
// sending at once. The goroutines carry the pprof label role=loadgen, so a CPU profile
// of this process can leave them out (go tool pprof -tagignore role=loadgen).
func (b Builtin) Start() *Run {
	if b.Conns < 1 {
		b.Conns = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{b: b, cancel: cancel, done: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	for i := 0; i < b.Conns; i++ {
		w := &worker{run: r, id: i, rng: rand.New(rand.NewPCG(b.Seed, uint64(i))), buf: make([]byte, 0, 4096)}
		for e := range w.stats {
			w.stats[e] = &EpochStats{}
		}
		r.workers = append(r.workers, w)
		r.wg.Add(1)
		go pprof.Do(ctx, pprof.Labels("role", "loadgen"), func(ctx context.Context) {
			defer r.wg.Done()
			w.loop(ctx)
		})
	}
	go func() {
		r.wg.Wait()
		close(r.done)
	}()
	return r
}

// SetEpoch makes requests completing from now on count in epoch e (0 <= e < maxEpochs)
// and returns the time of the switch.
func (r *Run) SetEpoch(e int) time.Time {
	if e < 0 || e >= maxEpochs {
		panic(fmt.Sprintf("loadgen: epoch %d out of range", e))
	}
	t := time.Now()
	r.epoch.Store(int32(e))
	return t
}

// Done is closed when every worker has finished: after Stop, or when a count-bounded
// run has sent its Total requests.
func (r *Run) Done() <-chan struct{} { return r.done }

// Stop ends the run: workers finish their request in flight and exit. A worker whose
// server does not answer within 5 s has its connection closed.
func (r *Run) Stop() {
	r.stopped.Store(true)
	r.cancel()
	select {
	case <-r.done:
		return
	case <-time.After(5 * time.Second):
	}
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	<-r.done
}

// runToEnd runs a count-bounded b until it has sent its Total requests (or ctx ends, which
// stops it) and returns its statistics.
func runToEnd(ctx context.Context, b Builtin) (EpochStats, error) {
	r := b.Start()
	select {
	case <-r.Done():
	case <-ctx.Done():
		r.Stop()
		return EpochStats{}, ctx.Err()
	}
	return r.Stats(0), nil
}

// Stats returns the merged statistics of epoch e. Call it after Done is closed.
func (r *Run) Stats(e int) EpochStats {
	var s EpochStats
	for _, w := range r.workers {
		ws := w.stats[e]
		s.Requests += ws.Requests
		s.Errors += ws.Errors
		s.Hist.merge(&ws.Hist)
	}
	return s
}

func (r *Run) track(c net.Conn, add bool) {
	r.mu.Lock()
	if add {
		r.conns[c] = struct{}{}
	} else {
		delete(r.conns, c)
	}
	r.mu.Unlock()
}

func (w *worker) dial(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", w.run.b.Addr)
	if err != nil {
		return err
	}
	w.run.track(c, true)
	if w.run.stopped.Load() { // Stop may have closed the tracked set already
		w.closeConn()
		return net.ErrClosed
	}
	w.conn = c
	if w.br == nil {
		w.br = bufio.NewReaderSize(c, 32<<10)
	} else {
		w.br.Reset(c)
	}
	return nil
}

func (w *worker) closeConn() {
	if w.conn != nil {
		w.run.track(w.conn, false)
		w.conn.Close()
		w.conn = nil
	}
}

// maxRetries is how many times a request that failed on the connection (not with an
// HTTP status) is sent again on a new connection before it counts as an error.
const maxRetries = 3

func (w *worker) loop(ctx context.Context) {
	defer w.closeConn()
	r := w.run
	total := r.b.Total
	retries := 0
	var seq int64
	for !r.stopped.Load() {
		if retries == 0 {
			if total > 0 {
				seq = r.next.Add(1) - 1
				if seq >= total {
					return
				}
			} else {
				seq = w.seq
				w.seq++
			}
		}
		if w.conn == nil {
			if err := w.dial(ctx); err != nil {
				if r.stopped.Load() {
					return
				}
				w.fail(&retries)
				time.Sleep(20 * time.Millisecond)
				continue
			}
		}
		w.buf = r.b.Build(w.buf[:0], w.rng, seq)
		start := time.Now()
		_, err := w.conn.Write(w.buf)
		var status int
		keepAlive := true
		if err == nil {
			status, keepAlive, err = readResponse(w.br)
		}
		lat := time.Since(start)
		if err != nil {
			w.closeConn()
			if r.stopped.Load() {
				return
			}
			w.fail(&retries)
			continue
		}
		retries = 0
		st := w.stats[r.epoch.Load()]
		if status >= 200 && status < 300 {
			st.Requests++
			st.Hist.record(uint64(lat))
		} else {
			st.Errors++
		}
		if !keepAlive {
			w.closeConn()
		}
	}
}

// fail counts a connection-level failure: the same request is retried up to
// maxRetries times, then it is counted as an error and skipped.
func (w *worker) fail(retries *int) {
	*retries++
	if *retries > maxRetries {
		*retries = 0
		w.stats[w.run.epoch.Load()].Errors++
	}
}

var errMalformed = errors.New("loadgen: malformed HTTP response")

// readResponse reads one response from br and discards its body. It returns the
// status code and whether the connection may carry another request. The caller sends
// only GET and PUT, never Expect: 100-continue.
func readResponse(br *bufio.Reader) (status int, keepAlive bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.x NNN ..."
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, errMalformed
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, errMalformed
		}
		status = status*10 + int(c-'0')
	}
	keepAlive = line[7] == '1'
	length := int64(-1)
	chunked := false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				err = errMalformed
			}
			return status, false, err
		}
		if len(line) <= 2 { // the blank line ending the header
			break
		}
		switch line[0] | 0x20 {
		case 'c':
			if v, ok := headerValue(line, "content-length:"); ok {
				n, ok := parseDecimal(v)
				if !ok {
					return status, false, errMalformed
				}
				length = n
			} else if v, ok := headerValue(line, "connection:"); ok {
				if containsFold(v, "close") {
					keepAlive = false
				} else if containsFold(v, "keep-alive") {
					keepAlive = true
				}
			}
		case 't':
			if v, ok := headerValue(line, "transfer-encoding:"); ok && containsFold(v, "chunked") {
				chunked = true
			}
		}
	}
	switch {
	case status/100 == 1 || status == 204 || status == 304:
	case chunked:
		err = discardChunked(br)
	case length >= 0:
		_, err = br.Discard(int(length))
	default: // delimited by the end of the connection
		_, err = io.Copy(io.Discard, br)
		keepAlive = false
	}
	return status, keepAlive, err
}

// headerValue returns the trimmed value of a header line whose name (with the colon)
// is name, compared without case.
func headerValue(line []byte, name string) ([]byte, bool) {
	if len(line) < len(name) {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		c := line[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return nil, false
		}
	}
	return bytes.TrimSpace(line[len(name):]), true
}

func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		match := true
		for j := 0; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

// discardChunked skips a chunked body and its trailer.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 { // chunk extensions
			line = line[:i]
		}
		n, ok := parseHex(line)
		if !ok {
			return errMalformed
		}
		if n == 0 {
			for { // trailer fields, then the blank line
				line, err = br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(n) + 2); err != nil { // data and its CRLF
			return err
		}
	}
}

// histogram is a log-linear latency histogram of nanosecond values: exact below
// histLinear, then histSub buckets per power of two (relative error under 3.2%).
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
}

const (
	histSub     = 32
	histLinear  = 2 * histSub
	histBuckets = histLinear + 48*histSub
)

func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	shift := bits.Len64(v) - 6 // v>>shift is in [32, 64)
	i := histLinear + (shift-1)*histSub + int(v>>shift) - histSub
	if i >= histBuckets {
		i = histBuckets - 1
	}
	return i
}

// histLower returns the smallest value of bucket i.
func histLower(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	i -= histLinear
	shift := i/histSub + 1
	return uint64(i%histSub+histSub) << shift
}

func (h *histogram) record(v uint64) {
	h.counts[histIndex(v)]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the value at quantile q (0..1), the middle of its bucket; 0 when
// the histogram is empty.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			lo := histLower(i)
			if i+1 < histBuckets {
				return time.Duration(lo + (histLower(i+1)-lo)/2)
			}
			return time.Duration(lo)
		}
	}
	return 0
}
