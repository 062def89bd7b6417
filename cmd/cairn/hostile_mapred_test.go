package main

// Hostile MapReduce and JavaScript: key filters that would run for hours, job numbers
// out of range, and one client flooding the server with slow jobs.

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostileMapReduceSimilarTo is the reproduction of a 60 KB × 60 KB similar_to key
// filter (18.9 s of one core under a 1 s timeout): the 60 KB string is refused (400)
// before the job starts, and the largest string allowed, over keys of 60 KB whose
// comparison costs some 0.1 s each, ends at the job's 1 s timeout with the reference's
// timeout error.
func TestHostileMapReduceSimilarTo(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	long := strings.Repeat("x", 60<<10)
	for _, c := range "abcdefghijklmnopqrst" { // 20 keys of 60 KB: seconds of comparisons
		s.mustPut(t, "/buckets/sim/keys/"+string(c)+long[1:], "v")
	}

	r := s.mapred(t, `{"inputs":{"bucket":"sim","key_filters":[["similar_to","`+long+`",1000000]]},"timeout":1000,"query":[]}`)
	expect(t, r, 400, ptr("An error occurred parsing the \"inputs\" field.\nkey filter \"similar_to\": the string is 61440 bytes long; at most 1024 are allowed\n"))
	expectHeader(t, r, "Content-Type", "text/plain")

	start := time.Now()
	r = s.mapred(t, `{"inputs":{"bucket":"sim","key_filters":[["similar_to","`+strings.Repeat("y", 1024)+`",61000]]},"timeout":1000,"query":[]}`)
	took := time.Since(start)
	expect(t, r, 503, ptr(`{"error":"timeout"}`))
	if took < time.Second || took > 3*time.Second {
		t.Errorf("the job ended after %v, want about its timeout of 1s", took)
	}
	assertServing(t, s)
}

// TestHostileMapReduceNumbers sends jobs whose numbers are out of range ("timeout": -1
// was accepted): each is a 400 in the reference's text form, and the server runs the
// next job as usual.
func TestHostileMapReduceNumbers(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.mustPut(t, "/buckets/num/keys/k", "v")
	timeoutErr := "An error occurred parsing the \"timeout\" field.\nThe timeout must be a number of milliseconds from 1 to 3600000, not "
	phases := strings.TrimSuffix(strings.Repeat(`{"link":{}},`, 65), ",")
	keys := strings.TrimSuffix(strings.Repeat(`["num","k"],`, 100_001), ",")
	for _, tc := range []struct{ name, body, want string }{
		{"negative timeout", `{"inputs":"num","query":[],"timeout":-1}`, timeoutErr + "-1.\n"},
		{"zero timeout", `{"inputs":"num","query":[],"timeout":0}`, timeoutErr + "0.\n"},
		{"timeout of a year", `{"inputs":"num","query":[],"timeout":31536000000}`, timeoutErr + "31536000000.\n"},
		{"timeout as a string", `{"inputs":"num","query":[],"timeout":"60000"}`, timeoutErr + "\"60000\".\n"},
		{"65 phases", `{"inputs":"num","query":[` + phases + `]}`,
			"An error occurred parsing the \"query\" field.\nThe query has 65 phases; at most 64 are allowed.\n"},
		{"100001 inputs", `{"inputs":[` + keys + `],"query":[]}`,
			"An error occurred parsing the \"inputs\" field.\nThe key list has 100001 inputs; at most 100000 are allowed.\n"},
		{"tokenize 0", `{"inputs":{"bucket":"num","key_filters":[["tokenize","-",0],["eq","k"]]},"query":[]}`,
			"An error occurred parsing the \"inputs\" field.\nkey filter \"tokenize\": the token number must be an integer of 1 or more, not 0\n"},
		{"a costly pattern", `{"inputs":{"bucket":"num","key_filters":[["matches","` + strings.Repeat(`(a|b){999}`, 4) + `"]]},"query":[]}`,
			"An error occurred parsing the \"inputs\" field.\nkey filter \"matches\": the regular expression \"" + strings.Repeat(`(a|b){999}`, 4) +
				"\" is too complex: it compiles to more than 10000 instructions (a counted repetition such as {100} copies what it repeats)\n"},
	} {
		r := s.mapred(t, tc.body)
		if r.StatusCode != http.StatusBadRequest || string(r.Body) != tc.want {
			t.Errorf("%s:\n got %d %q\nwant 400 %q", tc.name, r.StatusCode, r.Body, tc.want)
		}
	}
	mapredOK(t, s, `{"inputs":[["num","k"]],"query":[],"timeout":3600000}`, `[["num","k"]]`)
	assertServing(t, s)
}

// clientAt returns an HTTP client whose connections come from the loopback address ip,
// so that the server sees another client than the harness's 127.0.0.1.
func clientAt(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// postJob posts a MapReduce job with c and returns the status, body and duration.
func postJob(ctx context.Context, c *http.Client, s *child, body string) (int, string, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/mapred", strings.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	r, err := c.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return r.StatusCode, string(b), time.Since(start), err
}

// TestHostileMapReduceFlood is one client flooding the server with slow JavaScript
// jobs: it runs its share of jobs (2 here) on its share of the JavaScript VMs, its
// other jobs wait within their timeout and answer 503 naming the limit, and another
// client's job runs at once meanwhile (without the shares, the flood took every VM and
// the other client's job failed after the pool wait).
func TestHostileMapReduceFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--mapreduce-max-jobs-per-client", "2")
	requireJS(t, s)
	s.mustPut(t, "/buckets/flood/keys/k", `{"n":1}`)
	attacker, other := clientAt("127.0.0.1"), clientAt("127.0.0.2")
	if code, body, _, err := postJob(context.Background(), other, s, `{"inputs":[["flood","k"]],"query":[]}`); err != nil || code != 200 {
		t.Skipf("cannot connect from 127.0.0.2: %d %s %v", code, body, err)
	}

	// Two slow jobs take the client's share; six more queue behind them and give up at
	// their own (shorter) timeout, before the first two end. Without the shares all
	// eight would run, holding the 2 × GOMAXPROCS VMs for 3 s and more.
	slow := func(ms string) string {
		return `{"inputs":[["flood","k"]],"timeout":` + ms + `,"query":[{"map":{"language":"javascript","source":"function(v){ while(true){} }"}}]}`
	}
	type result struct {
		code int
		body string
	}
	results := make(chan result, 8)
	var wg sync.WaitGroup
	flood := func(n int, job string) {
		for range n {
			wg.Go(func() {
				code, body, _, err := postJob(context.Background(), attacker, s, job)
				if err != nil {
					body = err.Error()
				}
				results <- result{code, body}
			})
		}
	}
	flood(2, slow("4000"))
	time.Sleep(300 * time.Millisecond)
	flood(6, slow("3000"))
	time.Sleep(300 * time.Millisecond) // the flood is running and queued

	code, body, took, err := postJob(context.Background(), other, s,
		`{"inputs":[["flood","k"]],"timeout":5000,"query":[{"map":{"language":"javascript","name":"Riak.mapValuesJson"}}]}`)
	if err != nil || code != 200 || body != `[{"n":1}]` {
		t.Errorf("the other client's job: %d %s %v", code, body, err)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("the other client's job took %v during the flood", took)
	}

	wg.Wait()
	close(results)
	timeouts, busy := 0, 0
	for r := range results {
		switch {
		case r.code == 503 && r.body == `{"error":"timeout"}`:
			timeouts++
		case r.code == 503 && r.body == "Too many MapReduce jobs from this client: at most 2 run at once, and none of them ended within this job's timeout of 3s.\n":
			busy++
		default:
			t.Errorf("a flooding job: %d %q", r.code, r.body)
		}
	}
	if timeouts != 2 || busy != 6 {
		t.Errorf("%d jobs ran to their timeout and %d waited for the client's share; want 2 and 6", timeouts, busy)
	}
	assertServing(t, s)
}
