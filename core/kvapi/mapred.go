package kvapi

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/security"
)

// mapredResource serves MapReduce jobs: POST /mapred[?chunked=true]. GET and HEAD answer
// 400 with the usage text, as the reference does.
func (a *API) mapredResource() resource {
	return resource{name: "kv_wm_mapred", methods: []string{"GET", "HEAD", "POST"}, guard: selfGuard, handle: a.mapred}
}

// mapred checks the request in webmachine's order (the body is parsed, 400, before the
// media type is checked, 415, before content negotiation, 406), starts the job (a
// function that cannot be loaded: 400 JSON) and answers with its results: whole
// (application/json with Content-Length) or, with chunked=true, streamed as
// multipart/mixed parts, one HTTP chunk per batch of results.
func (a *API) mapred(w http.ResponseWriter, r *http.Request, _ loc) error {
	svc := a.cfg.MapReduce
	if svc == nil {
		return errNotFound
	}
	if r.Method != http.MethodPost {
		return badRequest(mapreduce.Usage)
	}
	body, err := httpx.ReadBody(w, r, svc.MaxJobBytes())
	if err != nil {
		switch {
		case httpx.IsTooLarge(err):
			return &core.Error{Code: core.ETOOLARGE, Message: "The job exceeds the maximum size of " + strconv.FormatInt(svc.MaxJobBytes(), 10) + " bytes.\n"}
		case httpx.IsBodyTimeout(err), errors.Is(err, httpx.ErrBodyMemory):
			return err
		}
		return nil // the client went away mid-body: no one to answer
	}
	job, err := mapreduce.ParseJob(body)
	if err != nil {
		return &jobError{err}
	}
	if err := checkJob(r.Context(), job); err != nil {
		return err
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return errMediaType
	}
	if _, ok := negotiate(r, "application/json"); !ok {
		return errNotAcceptable
	}
	exec, err := svc.Start(r.Context(), job)
	if err != nil {
		return &jobError{err}
	}
	defer exec.Close()
	// A client that stops reading must not hold the job (and its slot) for ever.
	_ = http.NewResponseController(w).SetWriteDeadline(exec.Deadline().Add(mapredWriteGrace))
	if r.URL.Query().Get("chunked") == "true" {
		a.streamMapred(w, r, exec)
		return nil
	}
	coll := mapreduce.NewCollector(job, svc.MaxResultBytes())
	err = exec.Run(coll.Add)
	exec.Close() // the job's slot is free while the answer is written
	if err != nil {
		return &jobError{err}
	}
	_ = httpx.WriteFull(w, http.StatusOK, "application/json", coll.Body()) // a failed write means the client left
	return nil
}

// mapredWriteGrace is how long after a job's deadline its answer may still take to be
// written.
const mapredWriteGrace = 10 * time.Second

// streamMapred sends the results as they come: each batch is a part
// "\r\n--B\r\nContent-Type: application/json\r\n\r\n{"phase":N,"data":[...]}" in its own
// HTTP chunk, and the closing "\r\n--B--\r\n" ends the body. An error after the start
// is written as its JSON object, without framing, and ends the body.
func (a *API) streamMapred(w http.ResponseWriter, r *http.Request, exec *mapreduce.Execution) {
	boundary := wire.NewBoundary()
	w.Header()["Content-Type"] = []string{"multipart/mixed;boundary=" + boundary}
	cw := httpx.NewChunkWriter(w)
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush() // the headers go out before the first result
	var buf []byte
	var writeErr error
	err := exec.Run(func(phase int, values []json.RawMessage) error {
		buf = append(buf[:0], "\r\n--"...)
		buf = append(buf, boundary...)
		buf = append(buf, "\r\nContent-Type: application/json\r\n\r\n"...)
		buf = mapreduce.AppendPhaseData(buf, phase, values)
		writeErr = cw.WriteChunk(buf)
		return writeErr
	})
	switch {
	case err == nil:
		_ = cw.WriteChunk([]byte("\r\n--" + boundary + "--\r\n"))
		return
	case writeErr != nil && errors.Is(err, writeErr):
		return // the client went away
	}
	if _, body, ok := a.mapredErrorBody(r, err); ok {
		_ = cw.WriteChunk(body)
	}
}

// mapredErrorBody returns the status and JSON body of a job's error: a function that
// cannot be loaded 400 {"phase":N,"error":E}; a failed function 500
// {"phase":N,"error":E,"input":I}; a timeout 503 {"error":"timeout"}; results too
// large 500 {"error":E}; the client's share of a runtime used up 503 {"error":E}; a
// bucket the caller may not read 403 {"error":E}; an internal error, which is logged,
// 500 {"error":E} naming the request id. ok is false when the client has gone (nothing
// to write).
func (a *API) mapredErrorBody(r *http.Request, err error) (status int, body []byte, ok bool) {
	var (
		se *mapreduce.SetupError
		fe *mapreduce.PhaseError
		le *mapreduce.LimitError
		pe *mapreduce.ParseError
		be *mapreduce.BusyError
		de *security.DeniedError
	)
	switch {
	case errors.As(err, &de):
		return http.StatusForbidden, mapreduce.ErrorJSON(de.Error()), true
	case errors.As(err, &se):
		return http.StatusBadRequest, se.JSON(), true
	case errors.As(err, &fe):
		return http.StatusInternalServerError, fe.JSON(), true
	case errors.Is(err, mapreduce.ErrTimeout):
		return http.StatusServiceUnavailable, []byte(mapreduce.TimeoutJSON), true
	case errors.As(err, &le):
		return http.StatusInternalServerError, le.JSON(), true
	case errors.As(err, &pe):
		return http.StatusBadRequest, mapreduce.ErrorJSON(pe.Message), true
	case errors.As(err, &be):
		return http.StatusServiceUnavailable, mapreduce.ErrorJSON(be.Message), true
	case errors.Is(err, context.Canceled) || errors.Is(err, httpx.ErrCannotFlush) || r.Context().Err() != nil:
		return 0, nil, false
	}
	id := httpx.RequestIDFrom(r.Context())
	a.log.Error("kv: mapreduce job failed", "path", r.URL.Path, "request_id", id, "err", err)
	return http.StatusInternalServerError, mapreduce.ErrorJSON("internal error; request id " + id), true
}
