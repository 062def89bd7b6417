package kvapi

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/jsonstr"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// Streamed 2i results are sent in parts of at most indexBatch results, and a part is
// also closed once it holds indexFlushBytes bytes. A non-streamed body is handed to
// writeProduced in pieces of about indexFlushBytes.
const (
	indexBatch      = 1000
	indexFlushBytes = 32 << 10
)

// indexResource serves secondary-index queries: /buckets/B/index/FIELD/ARG1[/ARG2] and
// the typed form. The reference's decision order: a malformed request (400, text/plain)
// before content negotiation (406) before the bucket type's existence (404, status page).
func (a *API) indexResource() resource {
	return resource{name: "kv_wm_index", methods: []string{"HEAD", "GET"}, guard: indexGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		req, err := wire.ParseIndexQuery(l.rest, r.URL.Query())
		if err != nil {
			return badRequest(err.Error())
		}
		if _, ok := negotiate(r, "application/json"); !ok {
			return errNotAcceptable
		}
		w.Header()["Vary"] = []string{"Accept-Encoding"}
		v, err := a.listingView(r.Context(), l.typ)
		if err != nil {
			return err
		}
		defer v.Close()
		if req.Stream {
			a.streamIndex(w, r, v, l, req)
			return nil
		}
		return a.writeIndex(w, r, v, l, req)
	}}
}

// errIndexTimeout is the reference's answer to a query that outlives its timeout.
var errIndexTimeout = &core.Error{Code: core.EUNAVAILABLE, Message: "request timed out\n"}

// indexBufs recycles the buffers results are encoded into, so that a query allocates
// nothing per result and little per request.
var indexBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, indexFlushBytes+4096)
	return &b
}}

// newIndexWriter returns a writer on a pooled buffer; release returns the buffer.
func newIndexWriter(terms bool) *indexWriter {
	bp := indexBufs.Get().(*[]byte)
	return &indexWriter{buf: (*bp)[:0], terms: terms, pooled: bp}
}

func (iw *indexWriter) release() {
	if cap(iw.buf) <= 4*(indexFlushBytes+4096) { // a buffer grown by a huge result is dropped
		*iw.pooled = iw.buf[:0]
		indexBufs.Put(iw.pooled)
	}
	iw.buf = nil
}

// indexWriter appends results to a JSON array in a reused buffer.
type indexWriter struct {
	pooled *[]byte
	buf    []byte
	terms  bool
	first  bool
}

// begin starts a {"keys":[ or {"results":[ object.
func (iw *indexWriter) begin() {
	iw.first = true
	if iw.terms {
		iw.buf = append(iw.buf, `{"results":[`...)
	} else {
		iw.buf = append(iw.buf, `{"keys":[`...)
	}
}

// add appends one result: "key", or {"term":"key"}.
func (iw *indexWriter) add(term, key []byte) {
	if !iw.first {
		iw.buf = append(iw.buf, ',')
	}
	iw.first = false
	if iw.terms {
		iw.buf = append(iw.buf, '{')
		iw.buf = jsonstr.Append(iw.buf, term)
		iw.buf = append(iw.buf, ':')
		iw.buf = jsonstr.Append(iw.buf, key)
		iw.buf = append(iw.buf, '}')
		return
	}
	iw.buf = jsonstr.Append(iw.buf, key)
}

// indexContext bounds ctx by the request's timeout, if it has one.
func indexContext(ctx context.Context, req wire.IndexRequest) (context.Context, context.CancelFunc) {
	if req.Timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, req.Timeout)
}

// indexError maps a query's failure: its own deadline is the reference's timeout; a
// client that has gone gets a bare 503 nobody reads (rather than a logged 500).
func indexError(r *http.Request, err error) error {
	if r.Context().Err() != nil {
		return &core.Error{Code: core.EUNAVAILABLE}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errIndexTimeout
	}
	var qe *index.QueryError
	if errors.As(err, &qe) {
		return badRequest("Invalid query: " + qe.Error() + "\n")
	}
	return err
}

// writeIndex sends the results as one JSON body with its Content-Length. The body may
// be produced twice (see writeProduced); the timeout bounds the first pass only, which
// is the one that decides between the results and an error, and the second pass reads
// the same snapshot, so it produces the same bytes.
func (a *API) writeIndex(w http.ResponseWriter, r *http.Request, v *kv.View, l loc, req wire.IndexRequest) error {
	passes := 0
	produce := func(emit func([]byte) error) error {
		ctx := r.Context()
		if passes++; passes == 1 {
			var cancel context.CancelFunc
			ctx, cancel = indexContext(ctx, req)
			defer cancel()
		}
		iw := newIndexWriter(req.Query.ReturnTerms)
		defer iw.release()
		iw.begin()
		page, err := v.Index(ctx, l.typ, l.bucket, req.Query, func(term, key []byte) error {
			iw.add(term, key)
			if len(iw.buf) < indexFlushBytes {
				return nil
			}
			err := emit(iw.buf)
			iw.buf = iw.buf[:0]
			return err
		})
		if err != nil {
			return indexError(r, err)
		}
		iw.buf = append(iw.buf, ']')
		if page.Continuation != "" {
			iw.buf = append(iw.buf, `,"continuation":`...)
			iw.buf = jsonstr.Append(iw.buf, page.Continuation)
		}
		iw.buf = append(iw.buf, '}')
		return emit(iw.buf)
	}
	return a.writeProduced(w, r, http.StatusOK, "application/json", produce)
}

// streamIndex sends the results as multipart/mixed, one HTTP chunk per part: each part
// is a {"keys":[...]} or {"results":[...]} batch; the last chunk holds the continuation
// part (when the page is full) or an error part, and the closing delimiter.
func (a *API) streamIndex(w http.ResponseWriter, r *http.Request, v *kv.View, l loc, req wire.IndexRequest) {
	boundary := wire.NewBoundary()
	w.Header()["Content-Type"] = []string{wire.StreamContentType(boundary)}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	cw := httpx.NewChunkWriter(w)
	w.WriteHeader(http.StatusOK)
	ctx, cancel := indexContext(r.Context(), req)
	defer cancel()

	partHead := wire.AppendPart(nil, boundary, wire.Part{Headers: [][2]string{{"Content-Type", "application/json"}}})
	iw := newIndexWriter(req.Query.ReturnTerms)
	defer iw.release()
	n := 0
	var writeErr error
	flush := func() error {
		if n == 0 {
			return nil
		}
		iw.buf = append(iw.buf, "]}"...)
		writeErr = cw.WriteChunk(iw.buf)
		iw.buf, n = iw.buf[:0], 0
		return writeErr
	}
	page, err := v.Index(ctx, l.typ, l.bucket, req.Query, func(term, key []byte) error {
		if n == 0 {
			iw.buf = append(iw.buf, partHead...)
			iw.begin()
		}
		iw.add(term, key)
		if n++; n >= indexBatch || len(iw.buf) >= indexFlushBytes {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if writeErr != nil || err != nil && r.Context().Err() != nil {
		return // the client has gone
	}
	var last []byte
	switch {
	case err != nil:
		msg := "timeout"
		if !errors.Is(err, context.DeadlineExceeded) {
			id := httpx.RequestIDFrom(r.Context())
			a.log.Error("kv: index query failed mid-stream", "path", r.URL.Path, "request_id", id, "err", err)
			msg = "internal error; request id " + id
		}
		last = append(last, partHead...)
		last = append(last, `{"error":`...)
		last = jsonstr.Append(last, msg)
		last = append(last, '}')
	case page.Continuation != "":
		last = append(last, partHead...)
		last = append(last, `{"continuation":`...)
		last = jsonstr.Append(last, page.Continuation)
		last = append(last, '}')
	}
	last = wire.AppendClose(last, boundary)
	if err := cw.WriteChunk(last); err != nil {
		a.log.Debug("kv: index stream cut short", "path", r.URL.Path, "err", err)
	}
}
