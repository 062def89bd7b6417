package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cairnkv/cairn/core/server"
)

// The Go benchmarks measure one request through Cairn's whole handler (middleware,
// routing, the KV service, LevelDB), in process and without a network, with
// allocations. Compare two builds with benchstat (see docs/benchmarks.md):
//
//	go test -run '^$' -bench Handler -count 10 ./cmd/cairn-bench > new.txt

// benchServer returns a Cairn whose bucket "bench" holds keys k00000000..k(n-1) of
// 1 KiB each (written through the handler with dw=0).
func benchServer(b *testing.B, n int) (*server.Server, []byte) {
	b.Helper()
	cfg := server.DefaultConfig()
	cfg.DataDir = b.TempDir()
	cfg.KVListen = "127.0.0.1:0"
	cfg.S3Listen = ""
	cfg.LogLevel = "error"
	srv, err := server.New(cfg, "bench", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	value := makeValue(1024)
	h := srv.Handler()
	body := &resettableBody{}
	for i := 0; i < n; i++ {
		body.reset(value)
		r := httptest.NewRequest(http.MethodPut, "/buckets/bench/keys/k"+string(appendPadded(nil, uint64(i), 8))+"?dw=0", nil)
		r.Body = body
		r.ContentLength = int64(len(value))
		r.Header.Set("Content-Type", "application/octet-stream")
		w := newDiscardWriter()
		h.ServeHTTP(w, r)
		if w.status != http.StatusNoContent {
			b.Fatalf("populate: status %d", w.status)
		}
	}
	return srv, value
}

// discardWriter is a minimal http.ResponseWriter that keeps only the status, so the
// benchmark's allocations are the handler's.
type discardWriter struct {
	h      http.Header
	status int
}

func newDiscardWriter() *discardWriter { return &discardWriter{h: make(http.Header, 16)} }

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
func (w *discardWriter) reset() {
	clear(w.h)
	w.status = 0
}

// resettableBody is a request body that can be rewound without allocating.
type resettableBody struct {
	b   []byte
	off int
}

func (r *resettableBody) reset(b []byte) { r.b, r.off = b, 0 }
func (r *resettableBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}
func (r *resettableBody) Close() error { return nil }

// request returns a shallow copy of base (the handler may derive requests from it, but
// each iteration starts from the same one).
func request(base *http.Request) *http.Request {
	r := new(http.Request)
	*r = *base
	return r
}

func BenchmarkHandlerGET(b *testing.B) {
	const keys = 10000
	srv, _ := benchServer(b, keys)
	h := srv.Handler()
	bases := make([]*http.Request, 1024)
	for i := range bases {
		bases[i] = httptest.NewRequest(http.MethodGet, "/buckets/bench/keys/k"+string(appendPadded(nil, uint64(i*7919%keys), 8)), nil)
	}
	w := newDiscardWriter()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		w.reset()
		h.ServeHTTP(w, request(bases[i%len(bases)]))
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

func BenchmarkHandlerPUT(b *testing.B) {
	for _, dw := range []int{0, 1} {
		b.Run("dw="+strconv.Itoa(dw), func(b *testing.B) {
			srv, value := benchServer(b, 0)
			h := srv.Handler()
			body := &resettableBody{}
			w := newDiscardWriter()
			// A fresh key per iteration (an insert, like the load benchmark's PUTs) for the
			// first 2^18 iterations; later ones overwrite.
			query := "dw=" + strconv.Itoa(dw)
			paths, uris := make([]string, 1<<18), make([]string, 1<<18)
			for i := range paths {
				paths[i] = "/buckets/bench/keys/p" + string(appendHex16(nil, uint64(i)*0x9e3779b97f4a7c15))
				uris[i] = paths[i] + "?" + query
			}
			base := httptest.NewRequest(http.MethodPut, paths[0]+"?"+query, nil)
			base.Header.Set("Content-Type", "application/octet-stream")
			base.ContentLength = int64(len(value))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				w.reset()
				body.reset(value)
				// The handler is done with the previous request: reuse its URL.
				base.URL.Path, base.RequestURI = paths[i%len(paths)], uris[i%len(paths)]
				r := request(base)
				r.Body = body
				h.ServeHTTP(w, r)
				if w.status != http.StatusNoContent {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// BenchmarkBareGET is the baseline handler of the load benchmark, for scale.
func BenchmarkBareGET(b *testing.B) {
	h := bareHandler(makeValue(1024))
	base := httptest.NewRequest(http.MethodGet, "/buckets/bench/keys/k00000001", nil)
	w := newDiscardWriter()
	b.ReportAllocs()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, request(base))
	}
}
