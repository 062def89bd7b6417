package kvapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/security"
	"github.com/cairnkv/cairn/core/storage"
)

// TestWriteErrorDiskFull: a write refused because the disk is full answers 507 with a
// plain-text body in the reference's style, however deeply the storage error is
// wrapped; other storage failures stay a 500 page.
func TestWriteErrorDiskFull(t *testing.T) {
	a := New(nil, Config{Logger: slog.New(slog.DiscardHandler)})
	tests := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"put", fmt.Errorf("kv: put b/k: %w", fmt.Errorf("storage: write: %w (%w)", storage.ErrNoSpace, syscall.ENOSPC)),
			http.StatusInsufficientStorage, "Insufficient storage: the server's disk is full."},
		{"delete", fmt.Errorf("kv: delete b/k: %w", fmt.Errorf("storage: write: %w", storage.ErrNoSpace)),
			http.StatusInsufficientStorage, "writes resume on their own once space is freed"},
		{"other I/O error", fmt.Errorf("kv: put b/k: %w", storage.ErrWritesSuspended),
			http.StatusInternalServerError, "Internal Server Error"},
		{"bare ENOSPC", fmt.Errorf("kv: put b/k: %w", syscall.ENOSPC),
			http.StatusInternalServerError, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			a.writeError(rec, httptest.NewRequest(http.MethodPut, "/buckets/b/keys/k", nil), tt.err)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.status || !strings.Contains(string(body), tt.body) {
				t.Fatalf("%v → %d %q, want %d containing %q", tt.err, rec.Code, body, tt.status, tt.body)
			}
			if tt.status == http.StatusInsufficientStorage {
				if ct := rec.Header().Get("Content-Type"); ct != "text/plain" {
					t.Errorf("Content-Type %q, want text/plain", ct)
				}
				if !errors.Is(tt.err, storage.ErrNoSpace) {
					t.Error("test error does not wrap ErrNoSpace")
				}
			}
		})
	}
}

// TestReplyTo proves the one funnel of the KV interface: every kind of error a handler
// returns maps to the status, headers and body the interface has always sent.
func TestReplyTo(t *testing.T) {
	a := New(nil, Config{Logger: slog.New(slog.DiscardHandler)})
	page := func(status int) string { return statusPage(status) }
	tomb := tombstoneError(loc{d: wire.DialectRiak}, &core.Object{VClock: []byte{1, 2}})
	tests := []struct {
		name      string
		err       error
		status    int
		ctype     string
		body      string // exact, unless contains is set
		contains  bool
		header    [][2]string
		closeConn bool
		none      bool
	}{
		{name: "status page", err: errNotAcceptable, status: 406, ctype: "text/html", body: page(406)},
		{name: "404 page", err: errNotFound, status: 404, ctype: "text/html", body: page(404)},
		{name: "core message", err: badRequest("bad\n"), status: 400, ctype: "text/plain", body: "bad\n"},
		{name: "core reasons", err: &core.Error{Code: core.EINVALID, Reasons: map[string]string{"n_val": "not_integer"}},
			status: 400, ctype: "application/json", body: `{"n_val":"not_integer"}`},
		{name: "wrapped core error", err: fmt.Errorf("kv: put: %w", &core.Error{Code: core.EFORBIDDEN, Message: "no"}),
			status: 403, ctype: "text/plain", body: "no"},
		{name: "unknown code", err: &core.Error{Code: "weird", Message: "m"}, status: 500, ctype: "text/plain", body: "m"},
		{name: "internal", err: errors.New("disk on fire"), status: 500, ctype: "text/html",
			body: "<pre>internal error; request id ", contains: true},
		{name: "405 with Allow", err: statusError(http.StatusMethodNotAllowed, "", [2]string{"Allow", "GET, PUT"}),
			status: 405, ctype: "text/html", body: page(405), header: [][2]string{{"Allow", "GET, PUT"}}},
		{name: "426 text", err: statusError(http.StatusUpgradeRequired, "use TLS"), status: 426, ctype: "text/plain", body: "use TLS"},
		{name: "tombstone", err: tomb, status: 404, ctype: "text/plain", body: "not found\n",
			header: [][2]string{{"X-Riak-Deleted", "true"}, {"X-Riak-Vclock", "AQI="}}},
		{name: "body over the limit", err: &http.MaxBytesError{Limit: 10}, status: 413, ctype: "text/plain",
			body: "Object exceeds the maximum size of 10 bytes\n"},
		{name: "body too slow", err: fmt.Errorf("read: %w", &httpx.BodyTimeoutError{}), status: 408, ctype: "text/plain",
			body: "The request body was not received in time\n", closeConn: true},
		{name: "body memory", err: httpx.ErrBodyMemory, status: 503, ctype: "text/html", body: page(503), closeConn: true},
		{name: "listing timeout", err: errListingTimeout, status: 200, ctype: "application/json", body: `{"error":"timeout"}`},
		{name: "denied", err: &security.DeniedError{User: "u", Permission: security.Get, Scope: security.BucketScope("default", "b")},
			status: 403, ctype: "text/plain", body: `Permission denied: User 'u' does not have 'riak_kv.get' on {<<"default">>,<<"b">>}`},
		{name: "unknown user", err: fmt.Errorf("%w: %q", security.ErrUnknownUser, "x"), status: 404, ctype: "text/plain",
			body: `no such user: "x"` + "\n"},
		{name: "too many grants", err: security.ErrTooManyGrants, status: 400, ctype: "text/plain", body: "too many grants\n"},
		{name: "job parse error", err: &jobError{&mapreduce.ParseError{Message: "bad job"}}, status: 400, ctype: "text/plain", body: "bad job"},
		{name: "job busy", err: &jobError{&mapreduce.BusyError{Message: "busy"}}, status: 503, ctype: "text/plain", body: "busy\n"},
		{name: "job setup error", err: &jobError{&mapreduce.SetupError{Phase: 1, Message: "no fun"}}, status: 400,
			ctype: "application/json", body: `{"phase":1,"error":"no fun"}`},
		{name: "job timeout", err: &jobError{mapreduce.ErrTimeout}, status: 503, ctype: "application/json", body: mapreduce.TimeoutJSON},
		{name: "job cancelled", err: &jobError{context.Canceled}, none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/buckets/b/keys/k", nil)
			rep := a.replyTo(r, tt.err)
			if rep.none != tt.none {
				t.Fatalf("none = %v, want %v", rep.none, tt.none)
			}
			if tt.none {
				return
			}
			bodyOK := string(rep.body) == tt.body || tt.contains && strings.Contains(string(rep.body), tt.body)
			if rep.status != tt.status || rep.ctype != tt.ctype || !bodyOK {
				t.Errorf("%v → %d %s %q, want %d %s %q", tt.err, rep.status, rep.ctype, rep.body, tt.status, tt.ctype, tt.body)
			}
			if (len(rep.header) > 0 || len(tt.header) > 0) && fmt.Sprint(rep.header) != fmt.Sprint(tt.header) {
				t.Errorf("headers %v, want %v", rep.header, tt.header)
			}
			if rep.closeConn != tt.closeConn {
				t.Errorf("closeConn %v, want %v", rep.closeConn, tt.closeConn)
			}
			// writeError sends exactly the reply.
			rec := httptest.NewRecorder()
			a.writeError(rec, r, tt.err)
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.ctype || !bytes.Equal(rec.Body.Bytes(), rep.body) {
				t.Errorf("writeError sent %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
			for _, h := range tt.header {
				if got := rec.Header().Get(h[0]); got != h[1] {
					t.Errorf("header %s = %q, want %q", h[0], got, h[1])
				}
			}
			if got := rec.Header().Get("Connection") == "close"; got != tt.closeConn {
				t.Errorf("Connection: close sent %v, want %v", got, tt.closeConn)
			}
		})
	}
}

// TestNotImplementedLogged: a 501 is logged with the method, path and query that asked
// for the missing feature (a long query cut), and other errors are not.
func TestNotImplementedLogged(t *testing.T) {
	var buf bytes.Buffer
	a := New(nil, Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	long := strings.Repeat("x", 3*maxLoggedQuery)
	for _, tc := range []struct {
		target string
		err    error
	}{
		{"/types/maps/buckets/b/datatypes/k?r=2", statusError(http.StatusNotImplemented, "no data types")},
		{"/buckets/b/keys/k?q=" + long, statusError(http.StatusNotImplemented, "")},
		{"/buckets/b/keys/missing?r=1", &core.Error{Code: core.ENOTFOUND, Message: "not found"}},
	} {
		a.writeError(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.target, nil), tc.err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2 (the 501s only):\n%s", len(lines), buf.String())
	}
	for _, want := range []string{"kv: not implemented", "method=GET", "path=/types/maps/buckets/b/datatypes/k", `query="r=2"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %q lacks %q", lines[0], want)
		}
	}
	if len(lines[1]) > 2*maxLoggedQuery || !strings.Contains(lines[1], "xxx...") {
		t.Errorf("the long query was not cut: %d bytes", len(lines[1]))
	}
}
