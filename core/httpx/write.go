package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// WriteFull writes a whole response: Content-Type (when contentType is not empty),
// Content-Length, the status and body. Every non-streamed response goes through it, so
// net/http never falls back to chunked encoding for a large body. For statuses that
// cannot have a body (1xx, 204, 304) body and contentType are ignored and no
// Content-Length is sent. For HEAD requests net/http drops the body and keeps the
// Content-Length of the GET. The error is the body write's.
func WriteFull(w http.ResponseWriter, status int, contentType string, body []byte) error {
	h := w.Header()
	if !bodyAllowed(status) {
		delete(h, "Content-Length")
		w.WriteHeader(status)
		return nil
	}
	delete(h, "Transfer-Encoding")
	// One allocation for both header values; the capacity of each is 1, so an append
	// elsewhere cannot overwrite its neighbour.
	vals := make([]string, 2)
	vals[0] = strconv.Itoa(len(body))
	h["Content-Length"] = vals[0:1:1]
	if contentType != "" {
		vals[1] = contentType
		h["Content-Type"] = vals[1:2:2]
	}
	w.WriteHeader(status)
	if len(body) == 0 {
		return nil
	}
	_, err := w.Write(body)
	return err
}

// bodyAllowed reports whether a response with status may have a body.
func bodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// ChunkWriter writes a streamed response one logical piece at a time, each as its own
// HTTP chunk: clients of the reference parse every chunk as a complete JSON document.
// Set the headers (and, if not 200, the status) before the first WriteChunk.
type ChunkWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// NewChunkWriter returns a ChunkWriter on w. It removes any Content-Length header, which
// would stop net/http from chunking the response.
func NewChunkWriter(w http.ResponseWriter) *ChunkWriter {
	w.Header().Del("Content-Length")
	return &ChunkWriter{w: w, rc: http.NewResponseController(w)}
}

// ErrCannotFlush is returned by WriteChunk when the response writer cannot flush, so
// pieces cannot be sent as separate chunks.
var ErrCannotFlush = errors.New("httpx: response writer cannot flush")

// WriteChunk writes p and flushes it, so it reaches the client as one chunk. Empty pieces
// are skipped: an empty chunk would end the body.
func (c *ChunkWriter) WriteChunk(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if _, err := c.w.Write(p); err != nil {
		return fmt.Errorf("httpx: write chunk: %w", err)
	}
	if err := c.rc.Flush(); err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			return ErrCannotFlush
		}
		return fmt.Errorf("httpx: flush chunk: %w", err)
	}
	return nil
}
