package kvapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/jsonstr"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// Key and bucket listing (details §6). Every listing reads one kv.View snapshot:
// keys=true bodies go through writeProduced (constant memory, Content-Length), streams
// send one JSON object per HTTP chunk.

// listBatch is how many names one streamed chunk carries.
const listBatch = 1000

// listParams are a listing's query parameters.
type listParams struct {
	mode    string // "true", "stream" or "" (no listing asked for)
	props   bool   // old API: include the bucket properties
	timeout time.Duration
}

// parseListParams reads the listing mode from param (keys or buckets), the old API's
// props flag and the timeout, answering the reference's 400 for a bad timeout.
func parseListParams(q *queryArgs, param string) (listParams, error) {
	p := listParams{props: q.get("props") != "false"}
	switch v := q.get(param); v {
	case "true", "stream":
		p.mode = v
	}
	if v, ok := q.lookup("timeout"); ok {
		d, ok := parseTimeout(v, 0)
		if !ok {
			return p, badRequest(wire.TimeoutError(v))
		}
		p.timeout = d
	}
	return p, nil
}

// context bounds ctx by the listing's timeout; 0 means none.
func (p listParams) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.timeout == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.timeout)
}

func (a *API) bucketsResource() resource {
	return resource{name: "kv_wm_buckets", methods: []string{"HEAD", "GET"}, guard: bucketsGuard, handle: a.listBuckets}
}

func (a *API) keysResource() resource {
	return resource{name: "kv_wm_keylist", methods: []string{"HEAD", "GET"}, guard: keysGuard, handle: a.listKeys}
}

// listKeys serves GET /buckets/B/keys?keys=true|stream (and typed), and the old API's
// /store/B?keys=true|stream, whose body also carries the bucket properties unless
// props=false.
func (a *API) listKeys(w http.ResponseWriter, r *http.Request, l loc) error {
	p, err := parseListParams(query(r), "keys")
	if err != nil {
		return err
	}
	if _, ok := negotiate(r, "application/json"); !ok {
		return errNotAcceptable
	}
	var propsJSON []byte
	if l.api == wire.APIOld && p.props {
		bp, err := a.kv.Props(r.Context(), l.typ, l.bucket)
		if err != nil {
			return bodyless(err)
		}
		if propsJSON, err = json.Marshal(bp); err != nil {
			return fmt.Errorf("kvapi: encode props: %w", err)
		}
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	view, err := a.listingView(ctx, l.typ)
	if err != nil {
		return err
	}
	defer view.Close()
	each := func(fn func(string) error) error { return view.Keys(ctx, l.typ, l.bucket, fn) }
	switch p.mode {
	case "stream":
		var first []byte
		if l.api == wire.APIOld {
			first = []byte("{}")
			if propsJSON != nil {
				first = append(append([]byte(`{"props":`), propsJSON...), '}')
			}
		}
		a.streamNames(w, r, first, "keys", each)
		return nil
	case "true":
		head := []byte(`{"keys":[`)
		if propsJSON != nil {
			head = append(append([]byte(`{"props":`), propsJSON...), `,"keys":[`...)
		}
		return a.writeNames(w, r, head, each)
	default:
		_ = httpx.WriteFull(w, http.StatusOK, "application/json", []byte("{}")) // a failed write means the client left
		return nil
	}
}

// listBuckets serves GET /buckets?buckets=true|stream (and typed, and the old API's
// /store?buckets=...). Without the parameter it answers an empty list, which is what the
// reference evidently means to do (it crashes instead).
func (a *API) listBuckets(w http.ResponseWriter, r *http.Request, l loc) error {
	p, err := parseListParams(query(r), "buckets")
	if err != nil {
		return err
	}
	if _, ok := negotiate(r, "application/json"); !ok {
		return errNotAcceptable
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	view, err := a.listingView(ctx, l.typ)
	if err != nil {
		return err
	}
	defer view.Close()
	each := func(fn func(string) error) error { return view.Buckets(ctx, l.typ, fn) }
	switch p.mode {
	case "stream":
		a.streamNames(w, r, nil, "buckets", each)
		return nil
	case "true":
		return a.writeNames(w, r, []byte(`{"buckets":[`), each)
	default:
		_ = httpx.WriteFull(w, http.StatusOK, "application/json", []byte(`{"buckets":[]}`)) // a failed write means the client left
		return nil
	}
}

// listingView opens the snapshot a listing or an index query reads and checks the
// bucket type (unknown: the reference's bodiless 404). On failure it returns the error
// to answer.
func (a *API) listingView(ctx context.Context, typ string) (*kv.View, error) {
	view, err := a.kv.View(ctx)
	if err != nil {
		return nil, err
	}
	if err := view.CheckType(ctx, typ); err != nil {
		view.Close()
		return nil, bodyless(err)
	}
	return view, nil
}

// isTimeout reports whether err is a listing's deadline passing.
func isTimeout(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

// writeNames writes head, the names as a JSON array's elements, and "]}" as one
// non-streamed body. A listing that times out answers 200 {"error":"timeout"}, as the
// reference does.
func (a *API) writeNames(w http.ResponseWriter, r *http.Request, head []byte, each func(func(string) error) error) error {
	var buf []byte
	return a.writeProduced(w, r, http.StatusOK, "application/json", func(emit func([]byte) error) error {
		if err := emit(head); err != nil {
			return err
		}
		first := true
		err := each(func(name string) error {
			buf = buf[:0]
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = jsonstr.Append(buf, name)
			return emit(buf)
		})
		if isTimeout(err) {
			return errListingTimeout
		}
		if err != nil {
			return err
		}
		return emit([]byte("]}"))
	})
}

// errListingTimeout is a non-streamed listing whose timeout passed: writeError answers it
// with the reference's 200 {"error":"timeout"}.
var errListingTimeout = errors.New("kvapi: listing timed out")

// streamNames streams a listing: first (if any) as its own chunk, then {"<field>":[...]}
// chunks of up to listBatch names, then a final {"<field>":[]}; a timeout or failure
// after the first chunk ends the stream with {"error":"..."} instead.
func (a *API) streamNames(w http.ResponseWriter, r *http.Request, first []byte, field string, each func(func(string) error) error) {
	w.Header().Set("Content-Type", "application/json")
	cw := httpx.NewChunkWriter(w)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if first != nil {
		if err := cw.WriteChunk(first); err != nil {
			return
		}
	}
	open := []byte(`{"` + field + `":[`)
	buf := append([]byte(nil), open...)
	n := 0
	flush := func() error {
		buf = append(buf, "]}"...)
		err := cw.WriteChunk(buf)
		buf, n = append(buf[:0], open...), 0
		return err
	}
	err := each(func(name string) error {
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = jsonstr.Append(buf, name)
		if n++; n == listBatch {
			return flush()
		}
		return nil
	})
	if err == nil && n > 0 {
		err = flush()
	}
	switch {
	case err == nil:
		_ = cw.WriteChunk(append(open, "]}"...))
	case isTimeout(err):
		_ = cw.WriteChunk([]byte(`{"error":"timeout"}`))
	case r.Context().Err() != nil:
		// The client went away; there is no one to tell.
	default:
		a.log.Error("kv: listing failed", "path", r.URL.Path, "request_id", httpx.RequestIDFrom(r.Context()), "err", err)
		_ = cw.WriteChunk([]byte(`{"error":"internal error; request id ` + httpx.RequestIDFrom(r.Context()) + `"}`))
	}
}
