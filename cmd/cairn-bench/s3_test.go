package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3api/sig"
)

// TestS3PhaseTiny runs the s3 phase end to end (both servers, both sizes, the big
// object) with tiny sizes and durations: a smoke test of the orchestration.
func TestS3PhaseTiny(t *testing.T) {
	args := []string{"--phases", "s3", "--loadgen", "builtin", "--keys", "20", "--conns", "2", "--settle-max", "1ms",
		"--warmup", "20ms", "--slices", "2", "--s3-duration", "400ms",
		"--s3-small", "1KiB", "--s3-small-conns", "3", "--s3-large", "1536KiB", "--s3-large-conns", "2", "--s3-big", "3MiB",
		"--s3-multipart", "11MiB", "--s3-part-size", "5MiB", "--s3-part-conns", "2",
		"--s3-v4-sizes", "300KiB,2MiB", "--s3-v4-conns", "3", "--s3-v4-work", "1MiB", "--s3-v4-reps", "2", "--s3-versions", "2345"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"s3-put-1KiB-cairn", "s3-get-1536KiB-bare", "cairn/bare", "one 3MiB object",
		"MD5 verified", "RSS above idle during one 3MiB S3 PUT", "targets met:",
		"one 11MiB multipart upload (3 parts of 5MiB, 2 at a time)", "every part read back verified",
		"RSS above idle during one 11MiB S3 multipart upload", "large objects as the AWS SDKs send them",
		"s3 V4 PUT 300KiB cairn/bare (median of 2)", "s3 V4 GET 2MiB cairn/bare (median of 2)", "VmHWM",
		"s3-versioned-put-1KiB-on", "GET ?versions: 2345 versions (10 per key"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "s3-big-put: 3MiB in") {
		t.Errorf("log lacks the big PUT:\n%s", &stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line is not the JSON result: %v", err)
	}
	if res.S3 == nil || len(res.S3.Cases) != 4 || res.S3.Big == nil || !res.S3.Big.Verified || res.S3.Multipart == nil || !res.S3.Multipart.Verified || len(res.Limits) != 2 || len(res.Phases) != 12 {
		t.Fatalf("result: %+v", res)
	}
	for _, p := range res.Phases {
		if p.Requests == 0 || p.RPS <= 0 || p.Errors != 0 {
			t.Errorf("phase %+v", p)
		}
	}
	for _, c := range res.S3.Cases {
		if c.Ratio <= 0 || c.CairnMiBs <= 0 || c.BareMiBs <= 0 {
			t.Errorf("case %+v", c)
		}
	}
	if v := res.S3.Versioned; v == nil || len(v.Cases) != 2 || v.Cases[0].Ratio <= 0 || v.Cases[1].Ratio <= 0 ||
		v.Versions != 2345 || v.Pages != 3 || v.Rate <= 0 {
		t.Errorf("versioned: %+v", v)
	}
	if g := res.S3.Big; g.Size != 3<<20 || g.Put.Seconds <= 0 || g.Get.Samples < 1 {
		t.Errorf("big: %+v", g)
	}
	// The V4 cases: PUT and GET of each size, 2 repetitions each, both servers measured,
	// and one ratio per case in the ratios list.
	if len(res.S3.V4) != 4 || len(res.Ratios) != 4 {
		t.Fatalf("v4: %+v, ratios %+v", res.S3.V4, res.Ratios)
	}
	for i, c := range res.S3.V4 {
		want := []struct {
			op   string
			size int64
		}{{"PUT", 300 << 10}, {"GET", 300 << 10}, {"PUT", 2 << 20}, {"GET", 2 << 20}}[i]
		if c.Op != want.op || c.Size != want.size || c.Conns != 3 || c.Objects != max(3, int((1<<20+c.Size-1)/c.Size))*map[string]int{"PUT": 1, "GET": s3V4GetFactor}[c.Op] || len(c.Reps) != 2 || c.Ratio <= 0 {
			t.Errorf("v4 case %d: %+v", i, c)
		}
		for _, r := range c.Reps {
			if r.CairnMiBs <= 0 || r.BareMiBs <= 0 {
				t.Errorf("v4 case %d: rep %+v", i, r)
			}
		}
	}
}

func TestMedianRatio(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{0.4}, 0.4}, {[]float64{0.9, 0.1, 0.5}, 0.5}, {[]float64{0.2, 0.8, 0.4, 0.6}, 0.5}} {
		var reps []s3Rep
		for _, v := range c.in {
			reps = append(reps, s3Rep{Ratio: v})
		}
		if got := medianRatio(reps); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("medianRatio(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSizeList(t *testing.T) {
	var l sizeList
	if err := l.Set("1MiB, 64MiB,,4096"); err != nil || len(l) != 3 || l[0] != 1<<20 || l[1] != 64<<20 || l[2] != 4096 || l.String() != "1MiB,64MiB,4KiB" {
		t.Fatalf("%v %v", l, err)
	}
	if err := l.Set(""); err != nil || len(l) != 0 {
		t.Fatalf("empty: %v %v", l, err)
	}
	if err := l.Set("1MiB,x"); err == nil {
		t.Fatal("a bad size was accepted")
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true}, {"4KiB", 4 << 10, true}, {"4k", 4 << 10, true}, {"4 MiB", 4 << 20, true},
		{"1GiB", 1 << 30, true}, {"1.5MiB", 3 << 19, true}, {"12B", 12, true}, {"0", 0, true},
		{"", 0, false}, {"-1", 0, false}, {"4XiB", 0, false}, {"1e9GiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	for n, want := range map[int64]string{4096: "4KiB", 4 << 20: "4MiB", 1 << 30: "1GiB", 1536 << 10: "1536KiB", 1000: "1000B"} {
		if got := fmtSize(n); got != want {
			t.Errorf("fmtSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestS3Flags(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "--s3-small", "2KiB"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Phases["s3"] || !o.Phases["query"] || o.S3Small != 2<<10 || o.S3Large != 4<<20 || o.S3Big != 256<<20 || o.S3Duration != time.Second {
		t.Fatalf("%+v", o)
	}
	o, err = parseFlags([]string{"--phases", "s3", "--s3-big", "1GiB"}, &bytes.Buffer{})
	if err != nil || !o.Phases["s3"] || o.S3Big != 1<<30 || o.S3SmallConns != 16 || o.S3LargeConns != 4 {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range [][]string{{"--s3-small", "0"}, {"--s3-big", "lots"}, {"--s3-large-conns", "0"}, {"--s3-duration", "0s"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestS3WorkloadSigned checks that the generator's raw requests parse and carry a V2
// signature that sig.Verify accepts, and that PUT bodies are windows of the pool.
func TestS3WorkloadSigned(t *testing.T) {
	cred := s3Cred{keyID: "AKIDBENCH", secret: "s3cr3t"}
	pool := makeValue(300)
	for _, method := range []string{http.MethodPut, http.MethodGet} {
		w := s3Workload{method: method, prefix: "o1KiB-", keys: 10, size: 200, pool: pool, cred: cred, date: &httpDate{}}
		build := w.raw("127.0.0.1:9")
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 20; i++ {
			raw := build(nil, rng, int64(i))
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("%s: %v\n%q", method, err, raw)
			}
			if !strings.HasPrefix(req.URL.Path, "/"+s3Bucket+"/o1KiB-000000") {
				t.Fatalf("path %q", req.URL.Path)
			}
			res, err := sig.Verify(&sig.Request{Method: req.Method, Host: req.Host, RawPath: req.URL.EscapedPath(),
				RawQuery: req.URL.RawQuery, Header: req.Header}, func(string) (string, error) { return cred.secret, nil }, time.Now())
			if err != nil || res.KeyID != cred.keyID || res.Version != 2 {
				t.Fatalf("%s: verify: %+v %v\n%q", method, res, err, raw)
			}
			body, _ := io.ReadAll(req.Body)
			if method == http.MethodPut && (len(body) != 200 || !bytes.Contains(pool, body)) {
				t.Fatalf("PUT body of %d bytes not from the pool", len(body))
			}
			if method == http.MethodGet && len(body) != 0 {
				t.Fatalf("GET with a body")
			}
		}
	}
	// Sequential keys follow the sequence number.
	w := s3Workload{method: http.MethodGet, prefix: "k", keys: 5, sequential: true, cred: cred, date: &httpDate{}}
	if raw := w.raw("h")(nil, nil, 3); !bytes.HasPrefix(raw, []byte("GET /"+s3Bucket+"/k00000003 HTTP/1.1\r\n")) {
		t.Fatalf("%q", raw)
	}
}

func TestS3BareHandler(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(s3BareHandler(dir))
	defer srv.Close()
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do(http.MethodGet, "/b/k1", ""); code != http.StatusNotFound {
		t.Errorf("GET of an absent object: %d", code)
	}
	for _, body := range []string{"first version", "v2"} { // the second replaces the first
		if code, _ := do(http.MethodPut, "/b/k1", body); code != http.StatusOK {
			t.Fatalf("PUT: %d", code)
		}
		if code, got := do(http.MethodGet, "/b/k1", ""); code != http.StatusOK || got != body {
			t.Fatalf("GET: %d %q, want %q", code, got, body)
		}
	}
	for _, p := range []string{"/b", "/b/", "/b/a/c", "/b/..x", "/b/%20"} {
		if code, _ := do(http.MethodPut, p, "x"); code != http.StatusBadRequest {
			t.Errorf("PUT %s: %d", p, code)
		}
	}
	if code, _ := do(http.MethodDelete, "/b/k1", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d", code)
	}
	// Each PUT wrote a temporary file and renamed it: none is left.
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 1 || filepath.Base(names[0]) != "b.k1" {
		t.Errorf("files left: %v", names)
	}
}

func TestGenReader(t *testing.T) {
	const n = 3<<20 + 123
	g := newGenReader(n, 7)
	var data bytes.Buffer
	if _, err := io.CopyBuffer(&data, g, make([]byte, 100_000)); err != nil || data.Len() != n {
		t.Fatalf("%d bytes, %v", data.Len(), err)
	}
	if sum := md5.Sum(data.Bytes()); !bytes.Equal(sum[:], g.sum.Sum(nil)) {
		t.Fatal("the running MD5 differs from the data's")
	}
	again, _ := io.ReadAll(newGenReader(n, 7))
	other, _ := io.ReadAll(io.LimitReader(newGenReader(n, 8), 64))
	if !bytes.Equal(again, data.Bytes()) || bytes.Equal(other, data.Bytes()[:64]) {
		t.Fatal("the generator is not deterministic per seed")
	}
}
