package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// The s3 phase's large-object comparison, as the AWS SDKs send requests: signature V4
// made by minio-go's signer with a hex payload hash (x-amz-content-sha256 is the body's
// SHA-256, which the server must check), --s3-v4-conns connections, objects of each
// --s3-v4-sizes size. Each case (PUT or GET of one size) is measured --s3-v4-reps times;
// each repetition sends the same fixed work (--s3-v4-work bytes, at least one object
// per connection) to the bare server and to Cairn, in alternating order, and times it
// from the first request to the last answer. The quoted ratio is the median of the
// repetitions' Cairn/bare throughputs.
//
// The client precomputes the SHA-256 of its s3V4Bodies different bodies, so it hashes
// nothing per request: its CPU per request is the send or receive alone, and the
// ratios measure the servers rather than the client sharing their cores.

// s3V4Bodies is how many different bodies (windows of one pseudo-random pool) a case
// sends, round robin.
const s3V4Bodies = 8

// s3V4GetFactor multiplies a GET case's work: GETs run 5-10 times faster than PUTs, and
// a side that lasts under half a second measures the machine's noise more than the
// server (GETs of 1 GiB of 1 MiB objects took 0.3-0.5 s a side).
const s3V4GetFactor = 4

// Targets of the comparison: Cairn/bare throughput.
const (
	s3V4PutTarget = 0.5
	s3V4GetTarget = 0.8
)

// emptySHA256 is the x-amz-content-sha256 of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// s3V4Case is one operation on one object size, Cairn against the bare server.
type s3V4Case struct {
	Op      string  `json:"op"`
	Size    int64   `json:"size"`
	Conns   int     `json:"conns"`
	Objects int     `json:"objects"` // per side and repetition
	Reps    []s3Rep `json:"reps"`
	// Ratio is the median of the repetitions' ratios.
	Ratio  float64 `json:"ratio"`
	Target float64 `json:"target"`
}

// s3Rep is one repetition of a case: each side's throughput.
type s3Rep struct {
	CairnMiBs float64 `json:"cairn_mib_s"`
	BareMiBs  float64 `json:"bare_mib_s"`
	Ratio     float64 `json:"ratio"`
}

// s3V4Client sends V4-signed requests to one server.
type s3V4Client struct {
	base   string // http://host:port/bucket/
	cred   s3Cred
	region string
	client *http.Client
}

func newS3V4Client(addr string, cred s3Cred, conns int) *s3V4Client {
	return &s3V4Client{base: "http://" + addr + "/" + s3Bucket + "/", cred: cred, region: "us-east-1",
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: conns,
			WriteBufferSize: 256 << 10, ReadBufferSize: 256 << 10}}}
}

// request builds and signs a request on key; body (nil for none) has the SHA-256 sum.
func (c *s3V4Client) request(ctx context.Context, method, key string, body io.Reader, size int64, sum string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+key, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = size
	if body == nil {
		sum = emptySHA256
	} else {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	req.Header.Set("X-Amz-Content-Sha256", sum)
	return signer.SignV4(*req, c.cred.keyID, c.cred.secret, "", c.region), nil
}

// do sends the request and reads the answer's body into discard (with a big buffer, so
// that reads are not cut into io.Discard's 8 KiB); it returns the body's length.
func (c *s3V4Client) do(req *http.Request, buf []byte) (int64, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return io.CopyBuffer(discard{}, resp.Body, buf)
}

// discard is io.Discard without ReadFrom, so io.CopyBuffer uses the buffer it is given.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// s3V4Load is the work of one case: which keys, which bodies.
type s3V4Load struct {
	op      string
	size    int64
	conns   int
	objects int
	keys    int
	prefix  string
	bodies  [][]byte
	sums    []string
}

// newS3V4Load prepares a case's bodies (windows of one pool, with their SHA-256).
func newS3V4Load(op string, size int64, conns int, work int64) s3V4Load {
	objects := int(max(int64(conns), (work+size-1)/size))
	l := s3V4Load{op: op, size: size, conns: conns, objects: objects, keys: min(objects, max(conns, 64)),
		prefix: "v4-" + fmtSize(size) + "-"}
	if op == http.MethodPut {
		step := int64(4096)
		pool := makeValue(int(size + step*s3V4Bodies))
		for i := range int64(s3V4Bodies) {
			body := pool[i*step : i*step+size]
			sum := sha256.Sum256(body)
			l.bodies = append(l.bodies, body)
			l.sums = append(l.sums, hex.EncodeToString(sum[:]))
		}
	}
	return l
}

// run sends the load's objects to c from its connections and returns the bytes moved
// per second, from the first request to the last answer.
func (l s3V4Load) run(ctx context.Context, c *s3V4Client) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, l.conns)
	start := time.Now()
	for w := range l.conns {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for {
				i := int(next.Add(1) - 1)
				if i >= l.objects || ctx.Err() != nil {
					return
				}
				if err := l.one(ctx, c, i, buf); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return 0, err
	}
	return mib(l.size*int64(l.objects)) / el.Seconds(), nil
}

// one sends the i-th request of the load.
func (l s3V4Load) one(ctx context.Context, c *s3V4Client, i int, buf []byte) error {
	key := s3Key(l.prefix, i%l.keys)
	var body io.Reader
	var sum string
	var size int64
	if l.op == http.MethodPut {
		b := i % len(l.bodies)
		body, sum, size = bytes.NewReader(l.bodies[b]), l.sums[b], l.size
	}
	req, err := c.request(ctx, l.op, key, body, size, sum)
	if err != nil {
		return err
	}
	n, err := c.do(req, buf)
	if err == nil && l.op == http.MethodGet && n != l.size {
		err = fmt.Errorf("GET %s: %d bytes, want %d", key, n, l.size)
	}
	return err
}

// s3V4Compare runs the V4 cases: for each size, PUT (whose first unmeasured pass
// writes the keys the GETs read) then GET.
func (b *bench) s3V4Compare(ctx context.Context, s *s3Servers) error {
	conns := b.o.S3V4Conns
	bare, cairn := newS3V4Client(s.bareAddr, s.cred, conns), newS3V4Client(s.cairnAddr, s.cred, conns)
	defer bare.client.CloseIdleConnections()
	defer cairn.client.CloseIdleConnections()
	for _, size := range b.o.S3V4Sizes {
		put := newS3V4Load(http.MethodPut, size, conns, int64(b.o.S3V4Work))
		// Populate both servers, unmeasured: every key once.
		warm := put
		warm.objects = put.keys
		for _, c := range []*s3V4Client{bare, cairn} {
			if _, err := warm.run(ctx, c); err != nil {
				return fmt.Errorf("s3 v4: populate %s: %w", fmtSize(size), err)
			}
		}
		get := put
		get.op, get.bodies, get.sums = http.MethodGet, nil, nil
		get.objects *= s3V4GetFactor
		for _, l := range []s3V4Load{put, get} {
			c, err := b.s3V4Case(ctx, s, l, bare, cairn)
			if err != nil {
				return err
			}
			b.s3.V4 = append(b.s3.V4, c)
			name := fmt.Sprintf("s3 V4 %s %s cairn/bare (median of %d)", l.op, fmtSize(l.size), len(c.Reps))
			b.ratios = append(b.ratios, ratioResult{Name: name, Num: "s3v4-" + strings.ToLower(l.op) + "-" + fmtSize(l.size) + "-cairn",
				Den: "s3v4-" + strings.ToLower(l.op) + "-" + fmtSize(l.size) + "-bare", Value: c.Ratio, Target: c.Target, Pass: c.Ratio >= c.Target})
		}
	}
	return nil
}

// s3V4Case measures one load --s3-v4-reps times on both servers, alternating which
// goes first, each side after LevelDB has settled.
func (b *bench) s3V4Case(ctx context.Context, s *s3Servers, l s3V4Load, bare, cairn *s3V4Client) (s3V4Case, error) {
	c := s3V4Case{Op: l.op, Size: l.size, Conns: l.conns, Objects: l.objects, Target: s3V4GetTarget}
	if l.op == http.MethodPut {
		c.Target = s3V4PutTarget
	}
	name := "s3v4-" + strings.ToLower(l.op) + "-" + fmtSize(l.size)
	for rep := range b.o.S3V4Reps {
		var r s3Rep
		sides := []struct {
			c   *s3V4Client
			out *float64
			who string
		}{{bare, &r.BareMiBs, "bare"}, {cairn, &r.CairnMiBs, "cairn"}}
		if rep%2 == 1 {
			slices.Reverse(sides)
		}
		for _, sd := range sides {
			if err := b.s3Settle(ctx, s); err != nil {
				return c, err
			}
			stop := b.profile(fmt.Sprintf("%s-%s-%d", name, sd.who, rep))
			v, err := l.run(ctx, sd.c)
			stop()
			if err != nil {
				return c, fmt.Errorf("s3 v4: %s on %s: %w", name, sd.who, err)
			}
			*sd.out = v
		}
		if r.BareMiBs > 0 {
			r.Ratio = r.CairnMiBs / r.BareMiBs
		}
		b.logf("%s rep %d: cairn %.0f MiB/s, bare %.0f MiB/s, ratio %.2f", name, rep+1, r.CairnMiBs, r.BareMiBs, r.Ratio)
		c.Reps = append(c.Reps, r)
	}
	c.Ratio = medianRatio(c.Reps)
	return c, nil
}

// medianRatio is the median of the repetitions' ratios (the mean of the middle two
// for an even count).
func medianRatio(reps []s3Rep) float64 {
	if len(reps) == 0 {
		return 0
	}
	v := make([]float64, len(reps))
	for i, r := range reps {
		v[i] = r.Ratio
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// reportS3V4 prints the V4 comparison's table.
func reportS3V4(w io.Writer, cases []s3V4Case) error {
	if len(cases) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n    large objects as the AWS SDKs send them: signature V4 (minio-go's signer), hex payload SHA-256 (checked\n"+
		"    by Cairn, ignored by the bare server), %d connections; each repetition times the same objects on both\n"+
		"    servers (alternating which goes first); MiB/s per repetition, ratio = median Cairn/bare:\n", cases[0].Conns)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\tconns\tobjects\tcairn MiB/s\tbare MiB/s\tratios\tmedian\ttarget\t")
	for _, c := range cases {
		var cm, bm, rs []string
		for _, r := range c.Reps {
			cm = append(cm, fmt.Sprintf("%.0f", r.CairnMiBs))
			bm = append(bm, fmt.Sprintf("%.0f", r.BareMiBs))
			rs = append(rs, fmt.Sprintf("%.2f", r.Ratio))
		}
		verdict := "PASS"
		if c.Ratio < c.Target {
			verdict = "MISS"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%.2f\t>= %.1f %s\t\n", c.Op, fmtSize(c.Size), c.Conns, c.Objects,
			strings.Join(cm, " "), strings.Join(bm, " "), strings.Join(rs, " "), c.Ratio, c.Target, verdict)
	}
	return tw.Flush()
}
