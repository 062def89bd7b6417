package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// PanicHandler writes the response for a request whose handler panicked with err. Each
// interface supplies its own so the 500 has its error format (HTML or text for KV, XML
// for S3).
type PanicHandler func(w http.ResponseWriter, r *http.Request, err error)

// Recover is a middleware that turns a panic in the handlers below it into a logged error
// (level Error, with the stack, request id, method and path) and a 500 response written
// by onPanic (nil means a plain-text 500). Headers the handler set before panicking are
// dropped, except X-Request-Id, so none of them (Content-Length, ETag...) describe the
// error body. When the handler already sent its header the response can no longer be
// changed: Recover logs the panic and aborts the connection with http.ErrAbortHandler so
// the client sees a broken response rather than a truncated one that looks whole.
// Panics with http.ErrAbortHandler itself are passed on untouched and not logged. A nil
// logger means slog.Default().
func Recover(logger *slog.Logger, onPanic PanicHandler) func(http.Handler) http.Handler {
	if onPanic == nil {
		onPanic = defaultPanicHandler
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := WrapResponseWriter(w)
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(http.ErrAbortHandler)
				}
				err := panicError(v)
				lg := logger
				if lg == nil {
					lg = slog.Default()
				}
				lg.LogAttrs(r.Context(), slog.LevelError, "httpx: handler panic",
					slog.String("request_id", RequestIDFrom(r.Context())),
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.Bool("response_started", rw.Written()),
					slog.String("error", err.Error()),
					slog.String("stack", string(debug.Stack())),
				)
				if rw.Written() {
					panic(http.ErrAbortHandler)
				}
				h := rw.Header()
				for k := range h {
					if k != RequestIDHeader {
						delete(h, k)
					}
				}
				onPanic(rw, r, err)
			}()
			next.ServeHTTP(rw, r)
		})
	}
}

// panicError turns a recovered value into an error, wrapping it if it is one.
func panicError(v any) error {
	if err, ok := v.(error); ok {
		return fmt.Errorf("httpx: panic: %w", err)
	}
	return fmt.Errorf("httpx: panic: %v", v)
}

// defaultPanicHandler writes a plain-text 500 that reveals nothing of the panic.
func defaultPanicHandler(w http.ResponseWriter, _ *http.Request, _ error) {
	_ = WriteFull(w, http.StatusInternalServerError, "text/plain; charset=utf-8",
		[]byte("Internal Server Error\n"))
}
