package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/cairnkv/cairn/core/stats"
)

// logRecords returns a logger writing JSON records into the returned buffer.
func logRecords(level slog.Level) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})), &buf
}

// decodeRecords parses the JSON log lines in buf.
func decodeRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestRequestID(t *testing.T) {
	tests := []struct {
		name   string
		header []string // X-Request-Id values sent; nil sends none
		keep   bool     // the first value is used
	}{
		{"none", nil, false},
		{"sane", []string{"abc-123_XYZ"}, true},
		{"with space", []string{"trace id 7"}, true},
		{"exactly 128", []string{strings.Repeat("a", 128)}, true},
		{"too long", []string{strings.Repeat("a", 129)}, false},
		{"empty", []string{""}, false},
		{"control char", []string{"abc\x01def"}, false},
		{"non-ascii", []string{"idé"}, false},
		{"two values", []string{"first", "second"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = RequestIDFrom(r.Context())
				// Context values survive derived contexts.
				ctx, cancel := context.WithTimeout(r.Context(), time.Second)
				defer cancel()
				if RequestIDFrom(ctx) != seen {
					t.Error("id lost in a derived context")
				}
				_, _ = io.WriteString(w, "ok")
			}))
			req := httptest.NewRequest(http.MethodGet, "/ping", nil)
			if tt.header != nil {
				req.Header[RequestIDHeader] = tt.header
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header().Get(RequestIDHeader)
			if got == "" || got != seen {
				t.Fatalf("response id %q, context id %q", got, seen)
			}
			if tt.keep && got != tt.header[0] {
				t.Fatalf("id %q, want the client's %q", got, tt.header[0])
			}
			if !tt.keep && (len(got) != 13 || strings.Trim(got, idAlphabet) != "") {
				t.Fatalf("generated id %q is not 13 base32 characters", got)
			}
		})
	}
	if RequestIDFrom(context.Background()) != "" {
		t.Fatal("id in a bare context")
	}
}

func TestRequestIDUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 100000 {
		id := newRequestID()
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

func TestRecover(t *testing.T) {
	kvError := func(w http.ResponseWriter, r *http.Request, err error) {
		_ = WriteFull(w, http.StatusInternalServerError, "text/html",
			[]byte("<html>KV: "+err.Error()+"</html>"))
	}
	tests := []struct {
		name      string
		onPanic   PanicHandler
		handler   http.HandlerFunc
		wantCode  int
		wantBody  string
		wantLog   bool
		wantAbort bool // the panic continues as http.ErrAbortHandler
	}{
		{
			name:     "no panic",
			onPanic:  kvError,
			handler:  func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "fine") },
			wantCode: 200, wantBody: "fine",
		},
		{
			name:    "panic before writing uses the caller's 500",
			onPanic: kvError,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "999")
				w.Header().Set("ETag", `"x"`)
				panic("boom")
			},
			wantCode: 500, wantBody: "<html>KV: httpx: panic: boom</html>", wantLog: true,
		},
		{
			name:     "panic with an error",
			onPanic:  kvError,
			handler:  func(w http.ResponseWriter, r *http.Request) { panic(io.ErrUnexpectedEOF) },
			wantCode: 500, wantBody: "<html>KV: httpx: panic: unexpected EOF</html>", wantLog: true,
		},
		{
			name:     "default handler",
			handler:  func(w http.ResponseWriter, r *http.Request) { panic("boom") },
			wantCode: 500, wantBody: "Internal Server Error\n", wantLog: true,
		},
		{
			name:    "panic after writing aborts",
			onPanic: kvError,
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "partial")
				panic("late")
			},
			wantCode: 200, wantBody: "partial", wantLog: true, wantAbort: true,
		},
		{
			name:      "ErrAbortHandler passes through",
			onPanic:   kvError,
			handler:   func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
			wantCode:  200, // the recorder's default: nothing was written
			wantAbort: true,
		},
		{
			name:    "wrapped ErrAbortHandler passes through",
			onPanic: kvError,
			handler: func(w http.ResponseWriter, r *http.Request) {
				panic(fmt.Errorf("stop: %w", http.ErrAbortHandler))
			},
			wantCode: 200, wantAbort: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := logRecords(slog.LevelDebug)
			h := Chain(tt.handler, RequestID, Recover(logger, tt.onPanic))
			req := httptest.NewRequest(http.MethodGet, "/buckets/b/keys/k", nil)
			req.Header.Set(RequestIDHeader, "req-42")
			rec := httptest.NewRecorder()
			var repanic any
			func() {
				defer func() { repanic = recover() }()
				h.ServeHTTP(rec, req)
			}()
			if tt.wantAbort != (repanic != nil) {
				t.Fatalf("re-panic %v, want abort %v", repanic, tt.wantAbort)
			}
			if repanic != nil && repanic != any(http.ErrAbortHandler) { // net/http needs this exact value
				t.Fatalf("re-panicked with %v, want http.ErrAbortHandler", repanic)
			}
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
			if tt.wantCode == 500 {
				if cl := rec.Header().Get("Content-Length"); cl != fmt.Sprint(len(tt.wantBody)) {
					t.Errorf("Content-Length %q for a %d-byte body", cl, len(tt.wantBody))
				}
				if rec.Header().Get("ETag") != "" {
					t.Error("handler's ETag kept on the error response")
				}
				if rec.Header().Get(RequestIDHeader) != "req-42" {
					t.Error("request id dropped from the error response")
				}
			}
			recs := decodeRecords(t, buf)
			if !tt.wantLog {
				if len(recs) != 0 {
					t.Fatalf("unexpected log: %v", recs)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("%d log records, want 1", len(recs))
			}
			r := recs[0]
			if r["level"] != "ERROR" || r["request_id"] != "req-42" || r["path"] != "/buckets/b/keys/k" ||
				!strings.Contains(r["stack"].(string), "runtime/debug.Stack") {
				t.Fatalf("log record %v", r)
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	tests := []struct {
		name      string
		loggerLvl slog.Level
		opts      AccessLogOptions
		status    int
		wantLevel string // "" means no record
	}{
		{"2xx at debug", slog.LevelDebug, AccessLogOptions{}, 200, "DEBUG"},
		{"4xx at debug", slog.LevelDebug, AccessLogOptions{}, 404, "DEBUG"},
		{"5xx at warn", slog.LevelDebug, AccessLogOptions{}, 503, "WARN"},
		{"info logger hides 2xx", slog.LevelInfo, AccessLogOptions{}, 200, ""},
		{"info logger keeps 5xx", slog.LevelInfo, AccessLogOptions{}, 500, "WARN"},
		{"error logger hides all", slog.LevelError, AccessLogOptions{}, 500, ""},
		{"configured levels", slog.LevelInfo,
			AccessLogOptions{Level: slog.LevelInfo, ErrorLevel: slog.LevelError}, 201, "INFO"},
		{"configured error level", slog.LevelInfo,
			AccessLogOptions{Level: slog.LevelInfo, ErrorLevel: slog.LevelError}, 502, "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := logRecords(tt.loggerLvl)
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = WriteFull(w, tt.status, "text/plain", []byte("hello"))
			}), RequestID, AccessLog(logger, tt.opts))
			req := httptest.NewRequest(http.MethodPut, "/buckets/b/keys/k?X-Amz-Signature=secret", nil)
			req.RemoteAddr = "192.0.2.1:5555"
			h.ServeHTTP(httptest.NewRecorder(), req)
			recs := decodeRecords(t, buf)
			if tt.wantLevel == "" {
				if len(recs) != 0 {
					t.Fatalf("unexpected records %v", recs)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			if r["level"] != tt.wantLevel || r["msg"] != "http request" || r["method"] != "PUT" ||
				r["path"] != "/buckets/b/keys/k" || r["status"] != float64(tt.status) ||
				r["bytes"] != float64(5) || r["remote"] != "192.0.2.1:5555" ||
				r["request_id"] == "" || r["duration"] == nil {
				t.Fatalf("record %v", r)
			}
			if strings.Contains(buf.String(), "secret") {
				t.Fatal("query string logged")
			}
		})
	}
}

func TestAccessLogPanicThrough(t *testing.T) {
	logger, buf := logRecords(slog.LevelDebug)
	h := AccessLog(logger, AccessLogOptions{})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	func() {
		defer func() { _ = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}()
	recs := decodeRecords(t, buf)
	if len(recs) != 1 || recs[0]["status"] != float64(500) || recs[0]["level"] != "WARN" {
		t.Fatalf("records %v, want one 500 at WARN", recs)
	}
}

func TestAccessLogDisabledIsFree(t *testing.T) {
	logger, _ := logRecords(slog.LevelError)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(*ResponseWriter); ok {
			t.Error("writer wrapped although nothing can be logged")
		}
	})
	h := AccessLog(logger, AccessLogOptions{})(inner)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{h: http.Header{}}
	if n := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, req) }); n != 0 {
		t.Fatalf("disabled access log allocates %v times", n)
	}
}

// observation is one ObserveHTTP call.
type observation struct {
	api, route, method string
	code               int
}

// fakeObserver records ObserveHTTP calls.
type fakeObserver struct {
	mu  sync.Mutex
	obs []observation
}

func (f *fakeObserver) ObserveHTTP(api, route, method string, code int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.obs = append(f.obs, observation{api, route, method, code})
}

// testRouter returns a router with a named object route, an unnamed ping route and a
// named streaming route, with RouteName installed.
func testRouter() *mux.Router {
	ok := func(w http.ResponseWriter, r *http.Request) { _ = WriteFull(w, 200, "text/plain", []byte("ok")) }
	router := mux.NewRouter()
	router.HandleFunc("/buckets/{bucket}/keys/{key}", ok).Methods(http.MethodGet, http.MethodHead).Name("object")
	router.HandleFunc("/ping", ok)
	router.HandleFunc("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") }).Name("boom")
	router.Use(RouteName)
	return router
}

func TestMetrics(t *testing.T) {
	tests := []struct {
		method, path string
		want         observation
	}{
		{"GET", "/buckets/a/keys/b", observation{"kv", "object", "GET", 200}},
		{"HEAD", "/buckets/other/keys/x-y", observation{"kv", "object", "HEAD", 200}},
		{"GET", "/ping", observation{"kv", RouteUnnamed, "GET", 200}},
		{"GET", "/no/such/path", observation{"kv", RouteUnmatched, "GET", 404}},
		{"DELETE", "/buckets/a/keys/b", observation{"kv", RouteUnmatched, "DELETE", 405}},
		{"GET", "/boom", observation{"kv", "boom", "GET", 500}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			obs := &fakeObserver{}
			h := Chain(testRouter(), RequestID, Metrics(obs, "kv"), Recover(slog.New(slog.DiscardHandler), nil))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if len(obs.obs) != 1 || obs.obs[0] != tt.want {
				t.Fatalf("observed %+v, want %+v (response %d)", obs.obs, tt.want, rec.Code)
			}
		})
	}
}

func TestMetricsInsideRouter(t *testing.T) {
	obs := &fakeObserver{}
	router := mux.NewRouter()
	router.HandleFunc("/x/{id}", func(w http.ResponseWriter, r *http.Request) {}).Name("x")
	router.Use(Metrics(obs, "s3"))
	router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x/1", nil))
	if len(obs.obs) != 1 || obs.obs[0] != (observation{"s3", "x", "GET", 200}) {
		t.Fatalf("observed %+v", obs.obs)
	}
}

func TestMetricsLabelsBounded(t *testing.T) {
	reg := stats.New(stats.Config{})
	var _ HTTPObserver = reg
	h := Chain(testRouter(), RequestID, Metrics(reg, "kv"))
	for i := range 500 {
		paths := []string{
			fmt.Sprintf("/buckets/b%d/keys/k%d", i, i),
			fmt.Sprintf("/random/%d/path", i),
			fmt.Sprintf("/buckets/b%d", i),
		}
		for _, p := range paths {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
		}
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(fmt.Sprintf("M%d", i), "/ping", nil))
	}
	mfs, err := reg.Prometheus().Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != stats.MetricHTTPRequests {
			continue
		}
		for _, m := range mf.GetMetric() {
			var parts []string
			for _, l := range m.GetLabel() {
				parts = append(parts, l.GetName()+"="+l.GetValue())
			}
			series[strings.Join(parts, ",")] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"api=kv,code=200,method=GET,route=object":    500,
		"api=kv,code=404,method=GET,route=unmatched": 1000,
		"api=kv,code=200,method=other,route=unnamed": 500,
	}
	if len(series) != len(want) {
		t.Fatalf("series %v, want %v", series, want)
	}
	for k, v := range want {
		if series[k] != v {
			t.Errorf("%s = %v, want %v", k, series[k], v)
		}
	}
}

// TestRequestIDContextCancel checks that the request context RequestID builds behaves as
// a standard one: cancellation reaches it and its children, and deriving cancellable
// children does not start a goroutine per child (the context package recognises the
// parent's cancelCtx through Value).
func TestRequestIDContextCancel(t *testing.T) {
	done := make(chan error, 1)
	h := RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := runtime.NumGoroutine()
		var cancels []context.CancelFunc
		for range 50 {
			_, cancel := context.WithCancel(r.Context())
			cancels = append(cancels, cancel)
		}
		grown := runtime.NumGoroutine() - before
		for _, c := range cancels {
			c()
		}
		if grown > 5 {
			done <- fmt.Errorf("deriving 50 contexts started %d goroutines", grown)
			return
		}
		child, cancel := context.WithCancel(r.Context())
		defer cancel()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select { // the client goes away: the server cancels the request context
		case <-child.Done():
			done <- nil
		case <-time.After(5 * time.Second):
			done <- errors.New("request context not cancelled when the client left")
		}
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
