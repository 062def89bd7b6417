package s3api

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// TestWriteErrorDiskFull: a write refused because the disk is full (a LevelDB write or
// a blob) answers 503 SlowDown with its XML body, which S3 clients retry with backoff;
// other storage failures stay 500 InternalError.
func TestWriteErrorDiskFull(t *testing.T) {
	a := New(nil, Config{Logger: slog.New(slog.DiscardHandler)})
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"commit", fmt.Errorf("s3: commit b/k: %w", fmt.Errorf("storage: write: %w (%w)", storage.ErrNoSpace, syscall.ENOSPC)),
			http.StatusServiceUnavailable, "SlowDown"},
		{"blob", fmt.Errorf("s3: write data: %w", fmt.Errorf("storage: blobs: write: %w: %w", storage.ErrNoSpace, syscall.ENOSPC)),
			http.StatusServiceUnavailable, "SlowDown"},
		{"other I/O error", fmt.Errorf("s3: commit b/k: %w", storage.ErrWritesSuspended),
			http.StatusInternalServerError, "InternalError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			a.writeError(rec, httptest.NewRequest(http.MethodPut, "/b/k", nil), "/b/k", tt.err)
			var doc struct{ Code, Message string }
			if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || doc.Code != tt.code || doc.Message == "" {
				t.Fatalf("%v → %d %s %q, want %d %s", tt.err, rec.Code, doc.Code, doc.Message, tt.status, tt.code)
			}
		})
	}
}

// TestBusyResponse: the answer to a connection over the limits is a complete 503
// SlowDown whose body's RequestId and HostId are the request-id and id-2 headers, in
// the dialect's names, and a new id each time.
func TestBusyResponse(t *testing.T) {
	for _, tt := range []struct{ dialect, prefix string }{{"store", "X-Obj-"}, {"riak", "X-Amz-"}} {
		t.Run(tt.dialect, func(t *testing.T) {
			a := New(nil, Config{Dialect: tt.dialect, Logger: slog.New(slog.DiscardHandler)})
			seen := map[string]bool{}
			for range 3 {
				hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(a.BusyResponse())), nil)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(hr.Body)
				hr.Body.Close()
				var doc struct{ Code, RequestId, HostId string }
				if err := xml.Unmarshal(body, &doc); err != nil {
					t.Fatalf("body %q: %v", body, err)
				}
				id := hr.Header.Get(tt.prefix + "Request-Id")
				if hr.StatusCode != http.StatusServiceUnavailable || doc.Code != "SlowDown" || id == "" ||
					doc.RequestId != id || doc.HostId != hr.Header.Get(tt.prefix+"Id-2") || !hr.Close {
					t.Errorf("busy response: %d %v %+v", hr.StatusCode, hr.Header, doc)
				}
				if seen[id] {
					t.Errorf("request id %q reused", id)
				}
				seen[id] = true
			}
		})
	}
}

// TestLoggableQuery: a logged query keeps every parameter but shows no credential of a
// presigned URL (V4 or V2).
func TestLoggableQuery(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"attributes", "attributes="},
		{"tagging&X-Amz-Signature=abc&X-Amz-Credential=AK%2F1&X-Amz-Date=1", "X-Amz-Credential=REDACTED&X-Amz-Date=1&X-Amz-Signature=REDACTED&tagging="},
		{"cors&AWSAccessKeyId=AK&Signature=s&Expires=9", "AWSAccessKeyId=REDACTED&Expires=9&Signature=REDACTED&cors="},
		{"a=%zz", "(malformed)"},
	}
	for _, tt := range tests {
		if got := loggableQuery(tt.raw); got != tt.want {
			t.Errorf("loggableQuery(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
