package main

// The bounded mixed load of the cluster fault tests, and the checks of what it leaves.
// Every request goes to one node of the cluster chosen round-robin among the nodes the
// test has not taken down; each attempt is recorded with whether it was acknowledged,
// refused (a known no-op) or left unknown (an error or a timeout: it may or may not have
// applied). The kinds:
//
//   - distinct keys (bucket cl-many): one write each; acknowledged ones must be readable
//     on every node with their bytes;
//   - hot keys (cl-hot, allow_mult): blind writes of unique tokens without a clock, with a
//     resolver that reads the siblings and writes their union with the clock it read.
//     An acknowledged token must survive in some sibling, and the key's final clock must
//     descend from the clock its write answered with;
//   - read-modify-write with the clock and If-Match (cl-cas): every acknowledged token
//     must be in the final value, and no refused (412) one;
//   - counters (cl-cnt): acknowledged increments ≤ final value ≤ acknowledged + unknown;
//   - S3 PUTs (when the cluster serves S3): every acknowledged object readable on every
//     node with its bytes.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/vclock"
)

// Load shape: bounded in time (until stopped) and in count (per worker).
const (
	loadManyWriters = 4
	loadHotWriters  = 4
	loadHotKeys     = 3
	loadCASWriters  = 3
	loadCASKeys     = 2
	loadCounters    = 2
	loadCntWriters  = 2
	loadS3Writers   = 2
	loadMaxOps      = 1200 // per worker
)

// outcome is what became of one attempted write.
type outcome int

const (
	acked   outcome = iota // 2xx (or 300 with returnbody): applied
	refused                // 412 or 409: known not applied
	unknown                // error, timeout or 5xx: may or may not have applied
)

// classify maps a response (or a transport error) to an outcome.
func classify(r *resp, err error) outcome {
	switch {
	case err != nil:
		return unknown
	case r.StatusCode/100 == 2 || r.StatusCode == http.StatusMultipleChoices:
		return acked
	case r.StatusCode == http.StatusPreconditionFailed, r.StatusCode == http.StatusConflict:
		return refused // 412: condition failed; 409: too many siblings. Neither stores.
	}
	return unknown
}

// hotWrite is an acknowledged blind write to a hot key: its token and the clock the
// write answered with.
type hotWrite struct {
	token string
	clock string
}

// clusterLoad drives the load and keeps its record.
type clusterLoad struct {
	t      testing.TB
	c      *testCluster
	client *http.Client
	down   []atomic.Bool // per node: the test took it down; not a target
	s3     bool          // S3 PUTs are part of the load
	s3cred s3Cred
	stop   chan struct{}
	wg     sync.WaitGroup

	mu          sync.Mutex            // guards the record below
	many        map[string]string     // acknowledged distinct-key writes: key → value
	hot         map[string][]hotWrite // acknowledged blind writes per hot key
	casAcked    map[string][]string   // acknowledged tokens per CAS key
	casRefused  map[string][]string   // refused (412) tokens per CAS key
	cntAcked    map[string]int64      // acknowledged increments per counter
	cntUnknown  map[string]int64      // increments of unknown outcome per counter
	s3Objects   map[string]string     // acknowledged S3 PUTs: key → body
	ops, errors int
}

// newClusterLoad prepares the buckets of the load on c.
func newClusterLoad(t testing.TB, c *testCluster) *clusterLoad {
	t.Helper()
	c.setProps("cl-hot", `{"allow_mult":true}`, `"allow_mult":true`)
	c.setProps("cl-cnt", `{"allow_mult":true}`, `"allow_mult":true`)
	return &clusterLoad{
		t: t, c: c,
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 32}, Timeout: 5 * time.Second},
		down:   make([]atomic.Bool, len(c.nodes)),
		stop:   make(chan struct{}),
		many:   map[string]string{}, hot: map[string][]hotWrite{},
		casAcked: map[string][]string{}, casRefused: map[string][]string{},
		cntAcked: map[string]int64{}, cntUnknown: map[string]int64{},
		s3Objects: map[string]string{},
	}
}

// target is the node the i-th operation of worker w goes to: round-robin among the
// nodes not down.
func (l *clusterLoad) target(w, i int) *clusterNode {
	n := len(l.c.nodes)
	for j := 0; j < n; j++ {
		k := (w + i + j) % n
		if !l.down[k].Load() {
			return l.c.nodes[k]
		}
	}
	return l.c.nodes[(w+i)%n]
}

// request sends one KV request to nd and reads the whole response.
func (l *clusterLoad) request(nd *clusterNode, method, path string, h hdr, body string) (*resp, error) {
	req, err := http.NewRequest(method, nd.kvURL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	return doRequest(l.client, req)
}

// count records one operation's outcome.
func (l *clusterLoad) count(o outcome) {
	l.mu.Lock()
	l.ops++
	if o == unknown {
		l.errors++
	}
	l.mu.Unlock()
}

// record counts an operation and, if it was acknowledged, runs onAck under l.mu. It
// says whether the outcome is known.
func (l *clusterLoad) record(o outcome, onAck func()) bool {
	l.count(o)
	if o == acked {
		l.mu.Lock()
		onAck()
		l.mu.Unlock()
	}
	return o != unknown
}

// start starts the workers.
func (l *clusterLoad) start() {
	spawn := func(n int, f func(w, i int) bool) {
		for w := 0; w < n; w++ {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				for i := 0; i < loadMaxOps; i++ {
					select {
					case <-l.stop:
						return
					default:
					}
					if !f(w, i) {
						time.Sleep(50 * time.Millisecond) // a failure: do not spin
					}
				}
			}()
		}
	}
	spawn(loadManyWriters, l.manyOp)
	spawn(loadHotWriters, l.hotOp)
	spawn(1, l.resolveOp)
	spawn(loadCASWriters, l.casOp)
	spawn(loadCntWriters, l.counterOp)
	if l.s3 {
		spawn(loadS3Writers, l.s3Op)
	}
}

// finish stops the workers and waits for them.
func (l *clusterLoad) finish() {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Logf("load: %d operations, %d of unknown outcome; %d distinct keys, %d S3 objects acknowledged",
		l.ops, l.errors, len(l.many), len(l.s3Objects))
}

func (l *clusterLoad) manyOp(w, i int) bool {
	key := fmt.Sprintf("k%d-%05d", w, i)
	val := fmt.Sprintf("%s:%s", key, strings.Repeat(string(rune('a'+(w+i)%26)), 20+i%300))
	r, err := l.request(l.target(w, i), http.MethodPut, "/buckets/cl-many/keys/"+key+"?w=quorum", hdr{"Content-Type", "text/plain"}, val)
	return l.record(classify(r, err), func() { l.many[key] = val })
}

func (l *clusterLoad) hotOp(w, i int) bool {
	time.Sleep(10 * time.Millisecond) // let the resolver keep the siblings few
	key := fmt.Sprintf("h%d", i%loadHotKeys)
	token := fmt.Sprintf("t%d.%d", w, i)
	r, err := l.request(l.target(w, i), http.MethodPut, "/buckets/cl-hot/keys/"+key+"?returnbody=true", hdr{"Content-Type", "text/plain"}, token)
	return l.record(classify(r, err), func() { l.hot[key] = append(l.hot[key], hotWrite{token, respClock(r)}) })
}

// resolveOp reads a hot key's siblings and writes their union with the clock read.
func (l *clusterLoad) resolveOp(w, i int) bool {
	time.Sleep(20 * time.Millisecond)
	nd := l.target(w, i)
	key := fmt.Sprintf("h%d", i%loadHotKeys)
	tokens, clock, err := l.readTokens(nd, "cl-hot", key, "quorum")
	if err != nil || clock == "" {
		return err == nil
	}
	r, err := l.request(nd, http.MethodPut, "/buckets/cl-hot/keys/"+key, hdr{"Content-Type", "text/plain", "X-Riak-Vclock", clock}, strings.Join(tokens, " "))
	o := classify(r, err)
	l.count(o)
	return o != unknown
}

// casOp appends a token to a CAS key: read with r=quorum, write back with the clock and
// If-Match (If-None-Match: * on a missing key).
func (l *clusterLoad) casOp(w, i int) bool {
	nd := l.target(w, i)
	key := fmt.Sprintf("c%d", w%loadCASKeys)
	token := fmt.Sprintf("t%d.%d", w, i)
	r, err := l.request(nd, http.MethodGet, "/buckets/cl-cas/keys/"+key+"?r=quorum", nil, "")
	if err != nil || (r.StatusCode != http.StatusOK && r.StatusCode != http.StatusNotFound) {
		l.count(unknown)
		return false
	}
	h := hdr{"Content-Type", "text/plain"}
	body := token
	if r.StatusCode == http.StatusOK {
		h = append(h, "X-Riak-Vclock", respClock(r), "If-Match", r.Header.Get("ETag"))
		body = string(r.Body) + " " + token
	} else {
		h = append(h, "If-None-Match", "*")
	}
	r, err = l.request(nd, http.MethodPut, "/buckets/cl-cas/keys/"+key+"?w=quorum", h, body)
	o := classify(r, err)
	l.count(o)
	l.mu.Lock()
	switch o {
	case acked:
		l.casAcked[key] = append(l.casAcked[key], token)
	case refused:
		l.casRefused[key] = append(l.casRefused[key], token)
	}
	l.mu.Unlock()
	return o != unknown
}

func (l *clusterLoad) counterOp(w, i int) bool {
	key := fmt.Sprintf("n%d", i%loadCounters)
	inc := int64(1 + (w+i)%5)
	r, err := l.request(l.target(w, i), http.MethodPost, "/buckets/cl-cnt/counters/"+key, hdr{"Content-Type", "text/plain"}, strconv.FormatInt(inc, 10))
	o := classify(r, err)
	l.count(o)
	l.mu.Lock()
	if o == acked {
		l.cntAcked[key] += inc
	} else {
		l.cntUnknown[key] += inc
	}
	l.mu.Unlock()
	return o != unknown
}

func (l *clusterLoad) s3Op(w, i int) bool {
	nd := l.target(w, i)
	key := fmt.Sprintf("o%d-%05d", w, i)
	body := key + ":" + strings.Repeat("s3", 100+i%2000)
	req := s3Build(l.t, nd.view(), s3Req{method: http.MethodPut, bucket: "cl-s3", key: key, body: body, sign: s3V4, cred: l.s3cred})
	r, err := doRequest(l.client, req)
	return l.record(classify(r, err), func() { l.s3Objects[key] = body })
}

// doRequest sends req with client and reads the whole response.
func doRequest(client *http.Client, req *http.Request) (*resp, error) {
	hr, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, err
	}
	return &resp{Response: hr, Body: b}, nil
}

// view is a child value addressing nd's listeners that goroutines may use while the test
// restarts nd (the ports do not change).
func (nd *clusterNode) view() *child {
	return &child{t: nd.t, URL: nd.kvURL, Addr: strings.TrimPrefix(nd.kvURL, "http://"),
		S3URL: nd.s3URL, S3Addr: strings.TrimPrefix(nd.s3URL, "http://")}
}

// respClock is the vector clock header of a response, in either dialect's name.
func respClock(r *resp) string {
	if v := r.Header.Get("X-Riak-Vclock"); v != "" {
		return v
	}
	return r.Header.Get("X-Store-Vclock")
}

// readTokens reads a key with every sibling (r as given) and returns the sorted union
// of the space-separated tokens of its values, and its clock. A missing key is no
// tokens and no clock.
func (l *clusterLoad) readTokens(nd *clusterNode, bucket, key, r string) ([]string, string, error) {
	rr, err := l.request(nd, http.MethodGet, "/buckets/"+bucket+"/keys/"+key+"?r="+r, hdr{"Accept", "multipart/mixed, */*;q=0.5"}, "")
	if err != nil {
		return nil, "", err
	}
	var values []string
	switch rr.StatusCode {
	case http.StatusNotFound:
		return nil, "", nil
	case http.StatusOK:
		values = []string{string(rr.Body)}
	case http.StatusMultipleChoices:
		if values, err = multipartValues(rr); err != nil {
			return nil, "", fmt.Errorf("%s/%s on %s: %w", bucket, key, nd.name, err)
		}
	default:
		return nil, "", fmt.Errorf("GET %s/%s on %s: status %d: %s", bucket, key, nd.name, rr.StatusCode, rr.Body)
	}
	set := map[string]bool{}
	for _, v := range values {
		for _, tok := range strings.Fields(v) {
			set[tok] = true
		}
	}
	tokens := make([]string, 0, len(set))
	for tok := range set {
		tokens = append(tokens, tok)
	}
	sort.Strings(tokens)
	return tokens, respClock(rr), nil
}

// multipartValues is the sibling values of a multipart/mixed 300 response.
func multipartValues(r *resp) ([]string, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("siblings: Content-Type %q: %w", r.Header.Get("Content-Type"), err)
	}
	if params["boundary"] == "" {
		return nil, fmt.Errorf("siblings: Content-Type %q without a boundary", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	var values []string
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, fmt.Errorf("siblings: %w", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("siblings: %w", err)
		}
		values = append(values, string(b))
	}
}

// decodeClock decodes a wire vector clock.
func decodeClock(s string) (vclock.VClock, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("clock %q: %w", s, err)
	}
	return vclock.Decode(b)
}

// verify checks the record against every node (after the load stopped and every node
// caught up). Reads use r=1: each node's own replica must hold everything.
func (l *clusterLoad) verify(ctx context.Context) {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, nd := range l.c.nodes {
		l.verifyMany(ctx, nd)
		l.verifyHot(nd)
		l.verifyCAS(nd)
		l.verifyCounters(nd)
		if l.s3 {
			l.verifyS3(nd)
		}
	}
}

func (l *clusterLoad) verifyMany(ctx context.Context, nd *clusterNode) {
	keys := make(chan string)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range keys {
				r, err := l.request(nd, http.MethodGet, "/buckets/cl-many/keys/"+key+"?r=1", nil, "")
				if err != nil || r.StatusCode != http.StatusOK || string(r.Body) != l.many[key] {
					if bad.Add(1) <= 5 {
						l.t.Errorf("node %s: acknowledged write of cl-many/%s: %v %s", nd.name, key, err, r)
					}
				}
			}
		}()
	}
	for key := range l.many {
		if ctx.Err() != nil {
			break
		}
		keys <- key
	}
	close(keys)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		l.t.Errorf("node %s: %d of %d acknowledged distinct-key writes missing or wrong", nd.name, n, len(l.many))
	}
}

func (l *clusterLoad) verifyHot(nd *clusterNode) {
	for key, writes := range l.hot {
		tokens, clockStr, err := l.readTokens(nd, "cl-hot", key, "1")
		if err != nil {
			l.t.Errorf("node %s: %v", nd.name, err)
			continue
		}
		final, err := decodeClock(clockStr)
		if err != nil {
			l.t.Errorf("node %s: cl-hot/%s: %v", nd.name, key, err)
			continue
		}
		have := map[string]bool{}
		for _, tok := range tokens {
			have[tok] = true
		}
		for _, w := range writes {
			if !have[w.token] {
				l.t.Errorf("node %s: cl-hot/%s: acknowledged blind write %s lost", nd.name, key, w.token)
			}
			wc, err := decodeClock(w.clock)
			if err != nil || !final.Descends(wc) {
				l.t.Errorf("node %s: cl-hot/%s: final clock %v does not descend from %s's %v (%v)", nd.name, key, final, w.token, wc, err)
			}
		}
	}
}

func (l *clusterLoad) verifyCAS(nd *clusterNode) {
	for key, tokens := range l.casAcked {
		got, _, err := l.readTokens(nd, "cl-cas", key, "1")
		if err != nil {
			l.t.Errorf("node %s: %v", nd.name, err)
			continue
		}
		have := map[string]bool{}
		for _, tok := range got {
			have[tok] = true
		}
		for _, tok := range tokens {
			if !have[tok] {
				l.t.Errorf("node %s: cl-cas/%s: acknowledged conditional write %s lost (lost update)", nd.name, key, tok)
			}
		}
		for _, tok := range l.casRefused[key] {
			if have[tok] {
				l.t.Errorf("node %s: cl-cas/%s: write %s answered 412 but applied", nd.name, key, tok)
			}
		}
	}
}

func (l *clusterLoad) verifyCounters(nd *clusterNode) {
	for key, want := range l.cntAcked {
		r, err := l.request(nd, http.MethodGet, "/buckets/cl-cnt/counters/"+key+"?r=1", nil, "")
		if err != nil || r.StatusCode != http.StatusOK {
			l.t.Errorf("node %s: counter %s: %v %v", nd.name, key, err, r)
			continue
		}
		got, err := strconv.ParseInt(strings.TrimSpace(string(r.Body)), 10, 64)
		if err != nil || got < want || got > want+l.cntUnknown[key] {
			l.t.Errorf("node %s: counter %s = %q, want between %d (acknowledged) and %d (+ unknown)", nd.name, key, r.Body, want, want+l.cntUnknown[key])
		}
	}
}

func (l *clusterLoad) verifyS3(nd *clusterNode) {
	bad := 0
	for key, body := range l.s3Objects {
		req := s3Build(l.t, nd.view(), s3Req{method: http.MethodGet, bucket: "cl-s3", key: key, sign: s3V4, cred: l.s3cred})
		r, err := doRequest(l.client, req)
		if err != nil || r.StatusCode != http.StatusOK || string(r.Body) != body {
			if bad++; bad <= 5 {
				l.t.Errorf("node %s: acknowledged S3 PUT %s: %v %v", nd.name, key, err, r)
			}
		}
	}
}

// prober measures how long a node stops answering: one goroutine per node writes
// (w=quorum) and reads (r=quorum) a key of its own in a loop; the longest time between
// two successes of each is the node's longest unavailability.
type prober struct {
	wg      sync.WaitGroup
	stop    chan struct{}
	mu      sync.Mutex                  // guards longest
	longest map[string][2]time.Duration // node → longest write gap, read gap
}

// startProbers starts a prober on each node of nodes.
func startProbers(l *clusterLoad, nodes []*clusterNode) *prober {
	p := &prober{stop: make(chan struct{}), longest: map[string][2]time.Duration{}}
	for _, nd := range nodes {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.run(l, nd)
		}()
	}
	return p
}

func (p *prober) run(l *clusterLoad, nd *clusterNode) {
	last := [2]time.Time{time.Now(), time.Now()}
	var gaps [2]time.Duration
	path := "/buckets/cl-probe/keys/" + nd.name
	for i := 0; ; i++ {
		select {
		case <-p.stop:
			for k := range gaps { // a node still not answering at the end counts too
				gaps[k] = max(gaps[k], time.Since(last[k]))
			}
			p.mu.Lock()
			p.longest[nd.name] = gaps
			p.mu.Unlock()
			return
		case <-time.After(20 * time.Millisecond):
		}
		ops := [2]func() (*resp, error){
			func() (*resp, error) {
				return l.request(nd, http.MethodPut, path+"?w=quorum", hdr{"Content-Type", "text/plain"}, strconv.Itoa(i))
			},
			func() (*resp, error) { return l.request(nd, http.MethodGet, path+"?r=quorum", nil, "") },
		}
		for k, op := range ops {
			r, err := op()
			if err == nil && (r.StatusCode/100 == 2 || r.StatusCode == http.StatusNotFound) {
				now := time.Now()
				gaps[k] = max(gaps[k], now.Sub(last[k]))
				last[k] = now
			}
		}
	}
}

// finish stops the probers and returns the longest write and read gaps over the nodes.
func (p *prober) finish() (write, read time.Duration, per map[string][2]time.Duration) {
	close(p.stop)
	p.wg.Wait()
	for _, g := range p.longest {
		write, read = max(write, g[0]), max(read, g[1])
	}
	return write, read, p.longest
}
