package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A report of wrk 4.1 run with --latency (as printed on this project's machines).
const wrkReport = `Running 5s test @ http://127.0.0.1:40123
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.31ms    4.02ms  81.20ms   93.10%
    Req/Sec    18.52k     2.10k   24.01k    71.00%
  Latency Distribution
     50%  812.00us
     75%    2.10ms
     90%    5.33ms
     99%   21.70ms
  184210 requests in 5.00s, 214.51MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 10
Requests/sec:  36837.42
Transfer/sec:     42.90MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := WrkResult{Requests: 184210, Elapsed: 5 * time.Second, RPS: 36837.42, P50: 812 * time.Microsecond,
		P99: 21700 * time.Microsecond, HasLatency: true, Non2xx: 10, SocketErrors: 3}
	if r != want {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}

	// Without --latency, errors or non-2xx lines; a run interrupted after a minute.
	plain := "Running 1m test @ http://x\n  1 threads and 1 connections\n  9000 requests in 1.00m, 1.00MB read\nRequests/sec:    150.00\nTransfer/sec: 1.00KB\n"
	r, err = parseWrk(plain)
	if err != nil || r.RPS != 150 || r.Requests != 9000 || r.Elapsed != time.Minute || r.HasLatency || r.Non2xx != 0 {
		t.Fatalf("plain: %+v %v", r, err)
	}

	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("no error for a report without Requests/sec")
	}
}

func TestWrkScript(t *testing.T) {
	values := makeValues(2, 64)
	s := wrkScript(workload{Method: "PUT", Bucket: "bench", KeyPrefix: "b", DW: 0, Bodies: values})
	for _, want := range []string{`wrk.method = "PUT"`, `"` + string(values[0]) + `",`, `"` + string(values[1]) + `",`,
		`"application/octet-stream"`, `/buckets/bench/keys/b%08x%08x?dw=0`, "function request()",
		"nil, bodies[math.random(1, #bodies)])"} {
		if !strings.Contains(s, want) {
			t.Errorf("PUT script lacks %q:\n%s", want, s)
		}
	}
	s = wrkScript(workload{Method: "GET", Bucket: "bench", KeyPrefix: "k", Keys: 500, DW: -1})
	for _, want := range []string{`wrk.method = "GET"`, `/buckets/bench/keys/k%08d"`, "math.random(0, 499)"} {
		if !strings.Contains(s, want) {
			t.Errorf("GET script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "bodies") || !strings.Contains(s, ", nil, nil)") {
		t.Errorf("GET script sends a body:\n%s", s)
	}
}

// TestWrkRun runs the real wrk when it is installed (1 s, wrk's shortest run).
func TestWrkRun(t *testing.T) {
	path := findWrk()
	if path == "" || testing.Short() {
		t.Skip("wrk not installed, or -short")
	}
	values := makeValues(3, 1024)
	var puts, bad int64
	done := make(chan struct{})
	count := make(chan bool, 1024)
	go func() {
		defer close(done)
		for ok := range count {
			if ok {
				puts++
			} else {
				bad++
			}
		}
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		count <- r.Method == http.MethodPut && len(body) == 1024 && (string(body) == string(values[0]) ||
			string(body) == string(values[1]) || string(body) == string(values[2])) && strings.HasPrefix(r.URL.Path, "/buckets/bench/keys/b") &&
			r.URL.Query().Get("dw") == "1"
		w.WriteHeader(http.StatusNoContent)
	}))
	w := &Wrk{Path: path, Threads: 2, Dir: t.TempDir()}
	res, err := w.Run(context.Background(), WrkRun{URL: srv.URL, Conns: 4, Duration: 200 * time.Millisecond,
		Script: wrkScript(workload{Method: "PUT", Bucket: "bench", KeyPrefix: "b", DW: 1, Bodies: values})})
	srv.Close()
	close(count)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.RPS <= 0 || !res.HasLatency || puts == 0 || bad != 0 {
		t.Fatalf("wrk result %+v; server saw %d good PUTs and %d bad requests", res, puts, bad)
	}

	// Interrupted: wrk reports the time it really ran.
	stop := make(chan struct{})
	srv = httptest.NewServer(bareHandler(values[0]))
	defer srv.Close()
	time.AfterFunc(500*time.Millisecond, func() { close(stop) })
	start := time.Now()
	res, err = w.Run(context.Background(), WrkRun{URL: srv.URL, Conns: 2, Duration: time.Minute, Stop: stop,
		Script: wrkScript(workload{Method: "GET", Bucket: "bench", KeyPrefix: "k", Keys: 10, DW: -1})})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second || res.Requests == 0 || res.Elapsed > 5*time.Second {
		t.Fatalf("interrupted run took %v, result %+v", el, res)
	}
}
