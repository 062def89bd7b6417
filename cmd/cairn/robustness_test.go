package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMalformedRequestsNeverFailTheServer sends a fixed-seed stream of requests built from
// malformed and unusual parts (methods, paths with odd bytes, quorum words, Link, index,
// vclock and conditional headers, props bodies) and checks that none is answered with a
// 5xx other than 501 for an unknown method, that the server logs no error, and that its
// store is consistent afterwards.
func TestMalformedRequestsNeverFailTheServer(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--log-level", "warn", "--max-object-size", "4096")
	methods := []string{"GET", "PUT", "POST", "DELETE", "HEAD", "PATCH", "OPTIONS"}
	paths := []string{"/buckets/b/keys/k", "/riak/b/k", "/store/b", "/riak/b", "/buckets/b/props",
		"/types/t/props", "/types/default/buckets/b/keys/k", "/buckets/b/keys", "/", "/stats", "/ping",
		"/buckets/%00/keys/%FF", "/buckets/b+c/keys/a%2Fb", "/riak", "/buckets", "/types/default/props",
		"/buckets/b/keys/k/extra", "/buckets//keys/", "/metrics"}
	queries := []string{"", "?r=x", "?w=9999999999999999999999", "?dw=-1", "?returnbody=true", "?vtag=zz",
		"?timeout=0", "?timeout=1", "?keys=true", "?props=false", "?pr=all&pw=all", "?basic_quorum=maybe",
		"?rw=4", "?r=default&notfound_ok=TRUE", "?returnbody=true&dw=all"}
	headers := [][2]string{{"Content-Type", "text/plain"}, {"Content-Type", "bogus"},
		{"Content-Type", "application/json"}, {"Content-Type", "text/plain; charset=\"\""},
		{"Link", `</buckets/b/keys/x>; riaktag="t"`}, {"Link", "<<<>>>"}, {"Link", `</riak/other>; rel="up"`},
		{"X-Riak-Index-age_int", "notanint"}, {"X-Riak-Index-x_bin", "a, b"}, {"X-Riak-Index-bad", "1"},
		{"X-Riak-Index-n_int", "1" + strings.Repeat("0", 700)},
		{"X-Riak-Vclock", "!!!"}, {"X-Riak-Vclock", "AAAA"}, {"X-Store-Vclock", "AQA="},
		{"If-Match", "*"}, {"If-None-Match", "*"}, {"If-Modified-Since", "garbage"},
		{"If-Unmodified-Since", "Mon, 01 Jan 1990 00:00:00 GMT"}, {"Accept", "application/x-nothing"},
		{"Accept", "multipart/mixed"}, {"X-Riak-Meta-A", "b"}, {"Content-Encoding", "gzip"}}
	bodies := []string{"", "hello", `{"props":{"n_val":"x"}}`, `{"props":null}`,
		`{"props":{"allow_mult":true,"precommit":[{"mod":"m","fun":"f"}]}}`, `{`,
		`{"props":{"r":1e400,"linkfun":{"jsanon":1}}}`, `{"props":{"allow_mult":"TRUE","n_val":1}}`,
		strings.Repeat("x", 5000)}
	rng := rand.New(rand.NewPCG(2, 7))
	client := &http.Client{Timeout: 10 * time.Second}
	counts := map[int]int{}
	for i := 0; i < 1500; i++ {
		body := bodies[rng.IntN(len(bodies))]
		url := s.URL + paths[rng.IntN(len(paths))] + queries[rng.IntN(len(queries))]
		req, err := http.NewRequest(methods[rng.IntN(len(methods))], url, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		for j := rng.IntN(5); j > 0; j-- {
			h := headers[rng.IntN(len(headers))]
			req.Header.Add(h[0], h[1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		counts[resp.StatusCode]++
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("%s %s %v: %d\n%s", req.Method, url, req.Header, resp.StatusCode, b)
		}
	}
	t.Logf("statuses: %v", counts)
	if counts[http.StatusOK] == 0 || counts[http.StatusBadRequest] == 0 || counts[http.StatusNoContent] == 0 {
		t.Errorf("the mix did not exercise successes and refusals: %v", counts)
	}
	if strings.Contains(s.stderr.String(), "level=ERROR") {
		t.Errorf("the server logged errors:\n%s", s.output())
	}
	s.Stop()
	if out, err := exec.Command(cairnBin, "check", "--data-dir", s.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("cairn check: %v\n%s", err, out)
	}
}
