package httpx

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/stats"
)

// discardWriter is a minimal reusable ResponseWriter for allocation counts and
// benchmarks.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) Flush()                      {}

func TestResponseWriter(t *testing.T) {
	tests := []struct {
		name      string
		do        func(w http.ResponseWriter)
		status    int
		bytes     int64
		wantCode  int // as the client sees it
		wantFlush bool
	}{
		{"nothing", func(w http.ResponseWriter) {}, 0, 0, 200, false},
		{"implicit 200", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "abc") }, 200, 3, 200, false},
		{"explicit", func(w http.ResponseWriter) {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, "nope")
		}, 404, 4, 404, false},
		{"first header wins", func(w http.ResponseWriter) {
			w.WriteHeader(201)
			w.WriteHeader(500)
		}, 201, 0, 201, false},
		{"informational not recorded", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(204)
		}, 204, 0, http.StatusEarlyHints, false}, // the recorder keeps the first code it sees
		{"flush sends 200", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }, 200, 0, 200, true},
		{"read from", func(w http.ResponseWriter) {
			_, _ = w.(io.ReaderFrom).ReadFrom(strings.NewReader("0123456789"))
		}, 200, 10, 200, false},
		{"response controller flush", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, "x")
			if err := http.NewResponseController(w).Flush(); err != nil {
				panic(err)
			}
		}, 200, 1, 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rw := WrapResponseWriter(rec)
			if WrapResponseWriter(rw) != rw {
				t.Fatal("wrapping a *ResponseWriter made a new one")
			}
			tt.do(rw)
			if rw.Status() != tt.status || rw.BytesWritten() != tt.bytes || rw.Written() != (tt.status != 0) {
				t.Fatalf("status %d bytes %d written %v, want %d %d", rw.Status(), rw.BytesWritten(), rw.Written(), tt.status, tt.bytes)
			}
			if rec.Code != tt.wantCode || rec.Flushed != tt.wantFlush {
				t.Fatalf("recorder code %d flushed %v, want %d %v", rec.Code, rec.Flushed, tt.wantCode, tt.wantFlush)
			}
			if int64(rec.Body.Len()) != tt.bytes {
				t.Fatalf("recorder has %d bytes", rec.Body.Len())
			}
			if rw.Unwrap() != rec {
				t.Fatal("Unwrap does not return the wrapped writer")
			}
		})
	}
}

// noFlushWriter is a ResponseWriter that cannot flush.
type noFlushWriter struct{ http.ResponseWriter }

func TestFlushUnsupported(t *testing.T) {
	rw := WrapResponseWriter(noFlushWriter{httptest.NewRecorder()})
	if err := rw.FlushError(); !errors.Is(err, http.ErrNotSupported) {
		t.Fatalf("FlushError = %v, want ErrNotSupported", err)
	}
	if rw.Written() {
		t.Fatal("failed flush recorded a status")
	}
	if err := NewChunkWriter(noFlushWriter{httptest.NewRecorder()}).WriteChunk([]byte("x")); !errors.Is(err, ErrCannotFlush) {
		t.Fatalf("WriteChunk = %v, want ErrCannotFlush", err)
	}
}

// fullChain wraps h in every middleware, as the server does.
func fullChain(h http.Handler, obs HTTPObserver) http.Handler {
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return Chain(h,
		RequestID,
		AccessLog(logger, AccessLogOptions{}),
		Metrics(obs, "kv"),
		Recover(logger, nil),
		LimitBody(1<<20),
	)
}

// TestFlusherThroughChain checks over a real connection that each flushed piece reaches
// the client before the handler writes the next one.
func TestFlusherThroughChain(t *testing.T) {
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok {
			t.Error("http.Flusher lost through the chain")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for i := range 3 {
			_, _ = io.WriteString(w, `{"n":`+strconv.Itoa(i)+"}")
			f.Flush()
			select {
			case <-next: // the client read this piece
			case <-time.After(5 * time.Second):
				t.Error("client never received a flushed piece")
				return
			}
		}
	})
	srv := httptest.NewServer(fullChain(h, &fakeObserver{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	for i := range 3 {
		want := `{"n":` + strconv.Itoa(i) + "}"
		if _, err := io.ReadFull(resp.Body, buf[:len(want)]); err != nil {
			t.Fatalf("piece %d: %v", i, err)
		}
		if string(buf[:len(want)]) != want {
			t.Fatalf("piece %d = %q", i, buf[:len(want)])
		}
		next <- struct{}{}
	}
}

func TestResponseControllerThroughChain(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("SetWriteDeadline through the chain: %v", err)
		}
		if err := rc.EnableFullDuplex(); err != nil {
			t.Errorf("EnableFullDuplex through the chain: %v", err)
		}
		_ = WriteFull(w, 200, "text/plain", []byte("ok"))
	})
	srv := httptest.NewServer(fullChain(h, &fakeObserver{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestLimitBody(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		body    string
		tooBig  bool
		wantLen int
	}{
		{"under", 10, "12345", false, 5},
		{"exact", 5, "12345", false, 5},
		{"over", 4, "12345", true, 4},
		{"no limit", 0, strings.Repeat("x", 1000), false, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if IsTooLarge(err) != tt.tooBig || (err != nil && !tt.tooBig) {
					t.Errorf("read error %v, want too large %v", err, tt.tooBig)
				}
				if len(b) != tt.wantLen {
					t.Errorf("read %d bytes, want %d", len(b), tt.wantLen)
				}
				if tt.tooBig {
					_ = WriteFull(w, http.StatusRequestEntityTooLarge, "text/plain", []byte("too large"))
				}
			}), RequestID, Metrics(&fakeObserver{}, "kv"), LimitBody(tt.limit))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PUT", "/", strings.NewReader(tt.body)))
		})
	}
	if IsTooLarge(errors.New("other")) || IsTooLarge(nil) {
		t.Fatal("IsTooLarge on unrelated errors")
	}
	// Over a real connection the server closes the connection after a too-large body,
	// which needs MaxBytesReader to reach net/http's own writer under the wrappers.
	srv := httptest.NewServer(fullChain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		LimitRequestBody(w, r, 3)
		if _, err := io.ReadAll(r.Body); IsTooLarge(err) {
			_ = WriteFull(w, http.StatusRequestEntityTooLarge, "text/plain", []byte("too large"))
		}
	}), &fakeObserver{}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("123456789"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("status %d close %v, want 413 and Connection: close", resp.StatusCode, resp.Close)
	}
}

func TestChain(t *testing.T) {
	var order []string
	mw := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	h := Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { order = append(order, "h") }),
		mw("a"), mw("b"), mw("c"))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := strings.Join(order, ","); got != "a,b,c,h" {
		t.Fatalf("order %s", got)
	}
	if Chain(h) == nil {
		t.Fatal("Chain without middlewares")
	}
}

func TestWriteFull(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 100_000)
	tests := []struct {
		name     string
		method   string
		status   int
		ctype    string
		body     []byte
		wantCL   int64 // -1: none
		wantBody int
	}{
		{"small", "GET", 200, "text/plain", []byte("hello"), 5, 5},
		{"large stays unchunked", "GET", 200, "application/json", big, int64(len(big)), len(big)},
		{"empty", "GET", 404, "text/plain", nil, 0, 0},
		{"no content type", "GET", 200, "", []byte("x"), 1, 1},
		{"204 has no length", "DELETE", 204, "text/plain", []byte("ignored"), -1, 0},
		{"304 has no length", "GET", 304, "", []byte("ignored"), -1, 0},
		{"HEAD keeps the length", "HEAD", 200, "text/plain", []byte("hello"), 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(fullChain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "12345") // stale; WriteFull replaces or drops it
				if err := WriteFull(w, tt.status, tt.ctype, tt.body); err != nil {
					t.Errorf("WriteFull: %v", err)
				}
			}), &fakeObserver{}))
			defer srv.Close()
			req, _ := http.NewRequest(tt.method, srv.URL, nil)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || len(body) != tt.wantBody {
				t.Fatalf("status %d body %d bytes", resp.StatusCode, len(body))
			}
			if len(resp.TransferEncoding) != 0 {
				t.Fatalf("Transfer-Encoding %v on a whole response", resp.TransferEncoding)
			}
			cl := resp.Header.Get("Content-Length")
			if tt.wantCL < 0 {
				if cl != "" {
					t.Fatalf("Content-Length %q, want none", cl)
				}
			} else if cl != strconv.FormatInt(tt.wantCL, 10) {
				t.Fatalf("Content-Length %q, want %d", cl, tt.wantCL)
			}
			if tt.ctype != "" && bodyAllowed(tt.status) && resp.Header.Get("Content-Type") != tt.ctype {
				t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

// readChunks sends a GET for path over a raw connection and returns the sizes of the
// HTTP chunks of the response body and their contents.
func readChunks(t *testing.T, addr, path string) (sizes []int, body string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	chunked := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
		if strings.EqualFold(strings.TrimSpace(line), "Transfer-Encoding: chunked") {
			chunked = true
		}
		if strings.HasPrefix(strings.ToLower(line), "content-length:") {
			t.Fatalf("streamed response has %q", strings.TrimSpace(line))
		}
	}
	if !chunked {
		t.Fatal("streamed response is not chunked")
	}
	var sb strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size line %q", line)
		}
		if n == 0 {
			return sizes, sb.String()
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int(n))
		sb.Write(buf[:n])
	}
}

func TestChunkWriter(t *testing.T) {
	big := strings.Repeat("y", 10_000)
	pieces := []string{`{"phase":0,"data":[1]}`, "", `{"phase":1,"data":[2,3]}`, big, "", "z"}
	srv := httptest.NewServer(fullChain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "5") // must be dropped
		cw := NewChunkWriter(w)
		for _, p := range pieces {
			if err := cw.WriteChunk([]byte(p)); err != nil {
				t.Errorf("WriteChunk: %v", err)
			}
		}
	}), &fakeObserver{}))
	defer srv.Close()
	sizes, body := readChunks(t, srv.Listener.Addr().String(), "/mapred")
	want := []int{22, 24, len(big), 1}
	if len(sizes) != len(want) {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("chunk sizes %v, want %v", sizes, want)
		}
	}
	if body != strings.Join(pieces, "") {
		t.Fatal("streamed body differs")
	}
}

// benchHandler is the trivial handler of the benchmarks: a small whole response.
var benchHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = []string{"text/plain"}
	_, _ = w.Write([]byte("hello"))
})

// benchRecorder serves req with h once per iteration on a fresh httptest recorder.
func benchRecorder(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/buckets/b/keys/k", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// benchDiscard serves req with h on a reused minimal writer, isolating the middleware.
func benchDiscard(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/buckets/b/keys/k", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// benchChain is the server's middleware chain on h, with the access log at Info (so the
// 2xx records are disabled but 5xx would be written) and a real stats.Registry.
func benchChain(h http.Handler) http.Handler {
	return fullChain(h, stats.New(stats.Config{}))
}

func BenchmarkBareRecorder(b *testing.B)  { benchRecorder(b, benchHandler) }
func BenchmarkChainRecorder(b *testing.B) { benchRecorder(b, benchChain(benchHandler)) }
func BenchmarkBareDiscard(b *testing.B)   { benchDiscard(b, benchHandler) }
func BenchmarkChainDiscard(b *testing.B)  { benchDiscard(b, benchChain(benchHandler)) }

func BenchmarkChainMuxDiscard(b *testing.B) {
	router := testRouter()
	router.HandleFunc("/bench/{k}", benchHandler).Name("bench")
	benchDiscard(b, benchChain(router))
}

func BenchmarkBareMuxDiscard(b *testing.B) {
	router := testRouter()
	benchDiscard(b, router)
}

// hello is a body that does not escape per call.
var hello = []byte("hello")

func BenchmarkWrapResponseWriter(b *testing.B) {
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		rw := WrapResponseWriter(w)
		_, _ = rw.Write(hello)
	}
}

// BenchmarkMetricsAlone is Metrics without RequestID: it allocates the wrapper itself.
func BenchmarkMetricsAlone(b *testing.B) {
	benchDiscard(b, Metrics(stats.New(stats.Config{}), "kv")(benchHandler))
}

func BenchmarkRequestID(b *testing.B) { benchDiscard(b, RequestID(benchHandler)) }

func BenchmarkWriteFull(b *testing.B) {
	w := &discardWriter{h: http.Header{}}
	body := []byte("hello world, this is a value")
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		_ = WriteFull(w, 200, "application/json", body)
	}
}
