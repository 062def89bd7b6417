package main

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBuiltinTimed(t *testing.T) {
	value := makeValue(1024)
	srv := httptest.NewServer(bareHandler(value))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, w := range []workload{
		{Method: http.MethodGet, Bucket: "b", KeyPrefix: "k", Keys: 100, DW: -1},
		{Method: http.MethodPut, Bucket: "b", KeyPrefix: "p", DW: 0, Bodies: [][]byte{value}},
	} {
		t.Run(w.Method, func(t *testing.T) {
			r := Builtin{Addr: addr, Conns: 4, Build: w.raw(addr), Seed: 1}.Start()
			time.Sleep(50 * time.Millisecond)
			t1 := r.SetEpoch(1)
			time.Sleep(150 * time.Millisecond)
			t2 := r.SetEpoch(2)
			r.Stop()
			st := r.Stats(1)
			if st.Requests < 10 || st.Errors != 0 {
				t.Fatalf("%d requests, %d errors in %v", st.Requests, st.Errors, t2.Sub(t1))
			}
			p50, p99 := st.Hist.quantile(0.5), st.Hist.quantile(0.99)
			if p50 <= 0 || p99 < p50 || p99 > 10*time.Second {
				t.Fatalf("p50 %v p99 %v", p50, p99)
			}
			if r.Stats(0).Requests == 0 {
				t.Fatal("no requests in the warm-up epoch")
			}
		})
	}
}

func TestBuiltinCountBounded(t *testing.T) {
	const total = 300
	var mu sync.Mutex
	seen := map[string]int{}
	value := makeValue(100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || !bytes.Equal(body, value) || r.URL.Query().Get("dw") != "0" ||
			r.Header.Get("Content-Type") != "application/octet-stream" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[r.URL.Path]++
		n := len(seen)
		mu.Unlock()
		if n%50 == 0 { // the generator must follow Connection: close
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	w := workload{Method: http.MethodPut, Bucket: "b", KeyPrefix: "k", Keys: total, Sequential: true, DW: 0, Bodies: [][]byte{value}}
	r := Builtin{Addr: addr, Conns: 8, Build: w.raw(addr), Total: total}.Start()
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		r.Stop()
		t.Fatal("count-bounded run did not finish")
	}
	st := r.Stats(0)
	if st.Requests != total || st.Errors != 0 {
		t.Fatalf("%d requests, %d errors; want %d, 0", st.Requests, st.Errors, total)
	}
	if len(seen) != total {
		t.Fatalf("%d distinct keys, want %d", len(seen), total)
	}
	for i := 0; i < total; i++ {
		p := "/buckets/b/keys/k" + string(appendPadded(nil, uint64(i), 8))
		if seen[p] != 1 {
			t.Fatalf("%s written %d times", p, seen[p])
		}
	}
}

func TestBuiltinCountsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	w := workload{Method: http.MethodGet, Bucket: "b", KeyPrefix: "k", Keys: 10, DW: -1}
	r := Builtin{Addr: addr, Conns: 2, Build: w.raw(addr), Total: 20}.Start()
	<-r.Done()
	if st := r.Stats(0); st.Requests != 0 || st.Errors != 20 {
		t.Fatalf("%d requests, %d errors; want 0, 20", st.Requests, st.Errors)
	}
}

func TestWorkloadRaw(t *testing.T) {
	value := makeValue(1024)
	values := makeValues(2, 100)
	// With several bodies, each request takes one of them.
	w := workload{Method: "PUT", Bucket: "bench", KeyPrefix: "b", DW: 0, Bodies: values}
	build, seen := w.raw("h"), map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 50; i++ {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(build(nil, rng, 0))))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		seen[string(body)] = true
	}
	if len(seen) != 2 || !seen[string(values[0])] || !seen[string(values[1])] {
		t.Fatalf("bodies sent: %d different", len(seen))
	}

	for _, tc := range []struct {
		w        workload
		method   string
		path     string // prefix
		keyLen   int
		dw, body string
	}{
		{workload{Method: "GET", Bucket: "bench", KeyPrefix: "k", Keys: 1000, DW: -1}, "GET", "/buckets/bench/keys/k", 9, "", ""},
		{workload{Method: "PUT", Bucket: "bench", KeyPrefix: "b", DW: 0, Bodies: [][]byte{value}}, "PUT", "/buckets/bench/keys/b", 17, "0", string(value)},
		{workload{Method: "PUT", Bucket: "bench", KeyPrefix: "s", DW: 1, Bodies: [][]byte{value}}, "PUT", "/buckets/bench/keys/s", 17, "1", string(value)},
	} {
		raw := tc.w.raw("127.0.0.1:1")(nil, rng, 7)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%s: %v\n%q", tc.method, err, raw)
		}
		body, _ := io.ReadAll(req.Body)
		key := strings.TrimPrefix(req.URL.Path, "/buckets/bench/keys/")
		if req.Method != tc.method || !strings.HasPrefix(req.URL.Path, tc.path) || len(key) != tc.keyLen ||
			req.URL.Query().Get("dw") != tc.dw || string(body) != tc.body || req.Host != "127.0.0.1:1" {
			t.Fatalf("%s: got %s %s host %q body %d bytes", tc.method, req.Method, req.URL, req.Host, len(body))
		}
		if tc.method == "PUT" && req.Header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("PUT Content-Type %q", req.Header.Get("Content-Type"))
		}
	}
}

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		status    int
		keepAlive bool
		bad       bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, true, false},
		{"lower-case header", "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", 200, true, false},
		{"no content", "HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n", 204, true, false},
		{"not modified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 304, true, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nTrailer: 1\r\n\r\n", 200, true, false},
		{"close", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 503, false, false},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, false, false},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", 200, true, false},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nrest of the stream", 200, false, false},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", 0, false, true},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 200, false, true},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 200, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two responses back to back: the first must be consumed exactly.
			in := tc.in
			if !tc.bad && tc.keepAlive {
				in += "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
			}
			br := bufio.NewReader(strings.NewReader(in))
			status, keepAlive, err := readResponse(br)
			if tc.bad {
				if err == nil {
					t.Fatalf("no error for %q", tc.in)
				}
				return
			}
			if err != nil || status != tc.status || keepAlive != tc.keepAlive {
				t.Fatalf("got %d %v %v; want %d %v", status, keepAlive, err, tc.status, tc.keepAlive)
			}
			if tc.keepAlive {
				if status, _, err := readResponse(br); err != nil || status != 201 {
					t.Fatalf("second response: %d %v", status, err)
				}
			}
		})
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Fatal("empty histogram")
	}
	for i := 0; i < histBuckets; i++ { // bucket bounds are increasing and consistent
		if lo := histLower(i); histIndex(lo) != i {
			t.Fatalf("bucket %d: lower %d maps to %d", i, lo, histIndex(lo))
		}
		if i > 0 && histLower(i) <= histLower(i-1) {
			t.Fatalf("bucket %d not above %d", i, i-1)
		}
	}
	for v := uint64(1); v <= 1000000; v++ {
		h.record(v * 1000) // 1µs .. 1s
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		want := q * 1e9
		got := float64(h.quantile(q))
		if got < want*0.96 || got > want*1.04 {
			t.Errorf("q%.2f = %v, want about %v", q, time.Duration(got), time.Duration(want))
		}
	}
	var m histogram
	m.merge(&h)
	m.merge(&h)
	if m.n != 2*h.n || m.quantile(0.5) != h.quantile(0.5) {
		t.Fatal("merge")
	}
	h.record(1 << 62) // far above the top bucket: clamped, not a panic
}

func TestAppendPadded(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		want string
	}{{0, "00000000"}, {7, "00000007"}, {12345678, "12345678"}, {123456789, "123456789"}} {
		if got := string(appendPadded([]byte("k"), tc.v, 8)); got != "k"+tc.want {
			t.Errorf("%d: %q", tc.v, got)
		}
	}
	if got := string(appendHex16(nil, 0xabc)); got != "0000000000000abc" {
		t.Errorf("hex %q", got)
	}
}
