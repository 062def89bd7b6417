package kvapi

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/cairnkv/cairn/core/httpx"
)

// bufferedBodyLimit is how much of a listing body is built in memory. A body that stays
// under it is sent from the buffer; a larger one is produced twice (see writeProduced).
const bufferedBodyLimit = 1 << 20

// errBodyLimit stops the first pass of writeProduced when the body outgrows the buffer.
var errBodyLimit = errors.New("kvapi: body over the buffer limit")

// bodyBufs recycles the buffers of writeProduced's first pass (at most
// bufferedBodyLimit each), so a query page does not allocate its body every time.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// produceFunc writes a response body as a sequence of pieces through emit. It must
// produce exactly the same bytes each time it is called (it reads one storage snapshot),
// and return emit's error when emit fails.
type produceFunc func(emit func(piece []byte) error) error

// writeProduced sends a non-streamed body with its Content-Length without holding the
// whole body in memory: the body is buffered up to bufferedBodyLimit; past that, the
// first pass only counts bytes and a second pass writes them. A listing of a million
// keys therefore costs two snapshot iterations and constant memory. An error before
// anything is written is returned, for writeError; an error or a length mismatch after the
// headers are sent cuts the response short, so the client sees a truncated body rather
// than a wrong one.
func (a *API) writeProduced(w http.ResponseWriter, r *http.Request, status int, contentType string, produce produceFunc) error {
	buf := bodyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodyBufs.Put(buf)
	var total int64
	overflow := false
	err := produce(func(p []byte) error {
		total += int64(len(p))
		if overflow {
			return nil
		}
		if buf.Len()+len(p) > bufferedBodyLimit {
			overflow = true
			buf.Reset()
			return nil
		}
		buf.Write(p)
		return nil
	})
	if err != nil {
		return err
	}
	if !overflow {
		_ = httpx.WriteFull(w, status, contentType, buf.Bytes()) // a failed write means the client left
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.FormatInt(total, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	var sent int64
	// Pieces are gathered into writes of about 64 KiB.
	out := make([]byte, 0, 64<<10)
	err = produce(func(p []byte) error {
		sent += int64(len(p))
		if sent > total {
			return errBodyLimit
		}
		if len(out)+len(p) > cap(out) && len(out) > 0 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
		if len(p) > cap(out) {
			_, err := w.Write(p)
			return err
		}
		out = append(out, p...)
		return nil
	})
	if err == nil && len(out) > 0 {
		_, err = w.Write(out)
	}
	if err == nil && sent != total {
		err = errBodyLimit
	}
	if err != nil {
		a.log.Warn("kv: listing body cut short", "path", r.URL.Path, "request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		// Panicking with ErrAbortHandler makes net/http drop the connection, so the
		// client sees a short body instead of a silently wrong one.
		panic(http.ErrAbortHandler)
	}
	return nil
}
