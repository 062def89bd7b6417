package gopluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// maxLogLine bounds one logged line of plugin output; longer lines are logged in
// pieces of that size.
const maxLogLine = 64 << 10

// lineWriter logs what a plugin writes to one of its streams, a record per line, with
// the plugin's logger (which carries the "plugin" attribute). go-plugin hands it the
// plugin's raw standard error (which gets panics, the log package's output and the
// JSON of go-plugin's own logger in the plugin), and the plugin's os.Stdout and
// os.Stderr, which go-plugin redirects over gRPC once the plugin serves.
//
// A line starting with "panic: " or "fatal error: " and every line after it are
// logged at error level (a Go runtime crash prints its stack after them). A line of
// go-plugin's JSON log format keeps its level, message and fields; a line starting
// with "[ERROR]", "[WARN]", "[INFO]", "[DEBUG]" or "[TRACE]" takes that level.
// Everything else is logged at info level.
type lineWriter struct {
	logger *slog.Logger
	// attrs are added to every record (the stream, for standard output).
	attrs []slog.Attr

	// mu guards buf and inPanic: go-plugin writes from one goroutine per stream, but
	// Flush comes from the supervisor.
	mu      sync.Mutex
	buf     []byte
	inPanic bool
}

// newLineWriter returns a writer logging with logger and attrs.
func newLineWriter(logger *slog.Logger, attrs ...slog.Attr) *lineWriter {
	return &lineWriter{logger: logger, attrs: attrs}
}

// Write implements io.Writer: it logs every complete line of p and keeps the rest.
func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			for len(w.buf)+len(p) >= maxLogLine {
				k := maxLogLine - len(w.buf)
				w.buf = append(w.buf, p[:k]...)
				w.emit(w.buf)
				w.buf, p = w.buf[:0], p[k:]
			}
			w.buf = append(w.buf, p...)
			break
		}
		line := p[:i]
		if len(w.buf) > 0 {
			w.buf = append(w.buf, line...)
			line = w.buf
		}
		for len(line) > maxLogLine {
			w.emit(line[:maxLogLine])
			line = line[maxLogLine:]
		}
		w.emit(line)
		w.buf, p = w.buf[:0], p[i+1:]
	}
	if cap(w.buf) > maxLogLine {
		w.buf = nil // keep no large buffer after a long line
	}
	return n, nil
}

// Flush logs an unterminated last line.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
}

// levelPrefixes are the level markers go-plugin recognises at the start of a line.
var levelPrefixes = []struct {
	prefix string
	level  slog.Level
}{
	{"[TRACE]", levelTrace}, {"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo},
	{"[WARN]", slog.LevelWarn}, {"[ERROR]", slog.LevelError},
}

// levelTrace is hclog's trace level in slog terms.
const levelTrace = slog.LevelDebug - 4

// emit logs one line (without its newline). mu is held.
func (w *lineWriter) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	ctx := context.Background()
	if bytes.HasPrefix(line, []byte("panic: ")) || bytes.HasPrefix(line, []byte("fatal error: ")) {
		w.inPanic = true
	}
	if w.inPanic {
		w.logger.LogAttrs(ctx, slog.LevelError, string(line), w.attrs...)
		return
	}
	if line[0] == '{' {
		if level, msg, attrs, ok := parseJSONEntry(line); ok {
			if w.logger.Enabled(ctx, level) {
				w.logger.LogAttrs(ctx, level, msg, append(attrs, w.attrs...)...)
			}
			return
		}
	}
	level := slog.LevelInfo
	for _, lp := range levelPrefixes {
		if bytes.HasPrefix(line, []byte(lp.prefix)) {
			level = lp.level
			break
		}
	}
	w.logger.LogAttrs(ctx, level, string(line), w.attrs...)
}

// parseJSONEntry reads a line of hclog's JSON format: "@level", "@message" and any
// other fields ("@timestamp" is dropped: the server's log has its own).
func parseJSONEntry(line []byte) (slog.Level, string, []slog.Attr, bool) {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return 0, "", nil, false
	}
	msg, ok := m["@message"].(string)
	if !ok {
		return 0, "", nil, false
	}
	lvl, _ := m["@level"].(string)
	level := slog.LevelInfo
	switch strings.ToLower(lvl) {
	case "trace":
		level = levelTrace
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		switch k {
		case "@message", "@level", "@timestamp":
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.Any(strings.TrimPrefix(k, "@"), m[k]))
	}
	return level, msg, attrs, true
}

// hclogLogger is the hclog.Logger go-plugin logs its own messages to for one start of
// one plugin: it forwards them to the server's slog logger. Two names are special:
//   - the base name of the plugin's executable: go-plugin's stderr reader logs every
//     line of the plugin's standard error under it, after handing the raw line to the
//     lineWriter. That logger reports level Off, so go-plugin skips its parsing and
//     the lines are not logged twice;
//   - the message "plugin process exited" reports the exit of the process (with its
//     status under "error"): it calls onExit, which wakes the supervisor, and is
//     logged at debug level only (the supervisor logs the exit itself).
type hclogLogger struct {
	logger  *slog.Logger
	name    string
	implied []any
	off     bool
	skip    string
	onExit  func(status string)
	// quiet, when set, turns go-plugin's complaint that a process did not exit
	// gracefully into a debug message: it is cleaning up after a dead process.
	quiet *atomic.Bool
}

var _ hclog.Logger = (*hclogLogger)(nil)

// newHCLogger returns the go-plugin logger of one start; skip is the base name of the
// executable.
func newHCLogger(logger *slog.Logger, skip string, onExit func(string)) *hclogLogger {
	return &hclogLogger{logger: logger, skip: skip, onExit: onExit}
}

// msgProcessExited is the message of go-plugin's client when the plugin process ends.
const msgProcessExited = "plugin process exited"

// msgNotGraceful is the warning of go-plugin's Kill when it has to kill the process.
const msgNotGraceful = "plugin failed to exit gracefully"

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return levelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Log implements hclog.Logger.
func (l *hclogLogger) Log(level hclog.Level, msg string, args ...any) {
	if l.off || level == hclog.Off {
		return
	}
	lvl := slogLevel(level)
	if msg == msgProcessExited && l.onExit != nil {
		status := "exit status 0"
		for i := 0; i+1 < len(args); i += 2 {
			if k, _ := args[i].(string); k == "error" {
				if s, ok := args[i+1].(string); ok {
					status = s
				}
			}
		}
		l.onExit(status)
		lvl = slog.LevelDebug
	}
	if msg == msgNotGraceful && l.quiet != nil && l.quiet.Load() {
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !l.logger.Enabled(ctx, lvl) {
		return
	}
	all := make([]any, 0, len(l.implied)+len(args)+2)
	if l.name != "" {
		all = append(all, "logger", l.name)
	}
	all = append(all, l.implied...)
	all = append(all, args...)
	l.logger.Log(ctx, lvl, msg, all...)
}

// Trace implements hclog.Logger.
func (l *hclogLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (l *hclogLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (l *hclogLogger) Info(msg string, args ...any) { l.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (l *hclogLogger) Warn(msg string, args ...any) { l.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (l *hclogLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *hclogLogger) enabled(level hclog.Level) bool {
	return !l.off && l.logger.Enabled(context.Background(), slogLevel(level))
}

// IsTrace implements hclog.Logger.
func (l *hclogLogger) IsTrace() bool { return l.enabled(hclog.Trace) }

// IsDebug implements hclog.Logger.
func (l *hclogLogger) IsDebug() bool { return l.enabled(hclog.Debug) }

// IsInfo implements hclog.Logger.
func (l *hclogLogger) IsInfo() bool { return l.enabled(hclog.Info) }

// IsWarn implements hclog.Logger.
func (l *hclogLogger) IsWarn() bool { return l.enabled(hclog.Warn) }

// IsError implements hclog.Logger.
func (l *hclogLogger) IsError() bool { return l.enabled(hclog.Error) }

// ImpliedArgs implements hclog.Logger.
func (l *hclogLogger) ImpliedArgs() []any { return slices.Clone(l.implied) }

// With implements hclog.Logger.
func (l *hclogLogger) With(args ...any) hclog.Logger {
	c := *l
	c.implied = append(slices.Clone(l.implied), args...)
	return &c
}

// Name implements hclog.Logger.
func (l *hclogLogger) Name() string { return l.name }

// Named implements hclog.Logger.
func (l *hclogLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	c.off = c.off || name == l.skip
	c.onExit = nil
	return &c
}

// ResetNamed implements hclog.Logger.
func (l *hclogLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	c.off = name == l.skip
	c.onExit = nil
	return &c
}

// SetLevel implements hclog.Logger; the level is the slog handler's, so it does
// nothing.
func (l *hclogLogger) SetLevel(hclog.Level) {}

// GetLevel implements hclog.Logger: the lowest level the slog handler takes, or Off.
func (l *hclogLogger) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if l.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

// StandardLogger implements hclog.Logger.
func (l *hclogLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

// StandardWriter implements hclog.Logger: every line written is logged at
// opts.ForceLevel, or info.
func (l *hclogLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := slog.LevelInfo
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = slogLevel(opts.ForceLevel)
	}
	if l.off {
		return io.Discard
	}
	return &levelWriter{l: l, level: level}
}

// levelWriter logs each line written to it at one level.
type levelWriter struct {
	l     *hclogLogger
	level slog.Level
}

// Write implements io.Writer.
func (w *levelWriter) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			w.l.logger.Log(context.Background(), w.level, string(line), "logger", w.l.name)
		}
	}
	return len(p), nil
}
