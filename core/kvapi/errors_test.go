package kvapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

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
