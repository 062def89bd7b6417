package httpx

import (
	"log/slog"
	"net/http"
)

// AccessLogOptions configures AccessLog. The zero value logs responses below 500 at
// Debug and 5xx responses at Warn.
type AccessLogOptions struct {
	// Level is the level of responses with status below 500; nil means slog.LevelDebug.
	// A *slog.LevelVar may be used to change it at run time.
	Level slog.Leveler
	// ErrorLevel is the level of 5xx responses; nil means slog.LevelWarn.
	ErrorLevel slog.Leveler
}

// AccessLog is a middleware that logs one "http request" record per request with
// method, path, route, status, bytes, duration, request_id and remote. The query string
// is left out: it may carry credentials (S3 presigned URLs). When the logger enables
// neither level the request passes straight through: no clock reads, no wrapper, no
// attributes. A nil logger means slog.Default().
func AccessLog(logger *slog.Logger, opts AccessLogOptions) func(http.Handler) http.Handler {
	var level, errLevel slog.Leveler = slog.LevelDebug, slog.LevelWarn
	if opts.Level != nil {
		level = opts.Level
	}
	if opts.ErrorLevel != nil {
		errLevel = opts.ErrorLevel
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lg := logger
			if lg == nil {
				lg = slog.Default()
			}
			ctx := r.Context()
			if !lg.Enabled(ctx, level.Level()) && !lg.Enabled(ctx, errLevel.Level()) {
				next.ServeHTTP(w, r)
				return
			}
			rw := WrapResponseWriter(w)
			rw.startTiming()
			returned := false
			defer func() {
				status := finalStatus(rw, returned)
				lv := level.Level()
				if status >= 500 {
					lv = errLevel.Level()
				}
				if !lg.Enabled(ctx, lv) {
					return
				}
				lg.LogAttrs(ctx, lv, "http request",
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.String("route", rw.route),
					slog.Int("status", status),
					slog.Int64("bytes", rw.bytes),
					slog.Duration("duration", rw.duration()),
					slog.String("request_id", RequestIDFrom(ctx)),
					slog.String("remote", r.RemoteAddr),
				)
			}()
			next.ServeHTTP(rw, r)
			returned = true
		})
	}
}
