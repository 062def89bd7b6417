package jsvm

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/quickjs"
)

// logsPerSecond bounds the ejsLog lines logged per second over all VMs; the rest are
// counted and dropped, so a function logging in a loop cannot flood the server's log.
const logsPerSecond = 100

// logLimiter serves ejsLog.
type logLimiter struct {
	log *slog.Logger

	mu      sync.Mutex // guards window, n and skipped
	window  time.Time
	n       int
	skipped int

	dropped atomic.Int64
}

// ejsLog is the reference's ejsLog(file, message): the reference appended the message
// to the file; Cairn writes no files and logs it, with the file name as an attribute.
func (l *logLimiter) ejsLog(args []any) (any, error) {
	now := time.Now()
	l.mu.Lock()
	var skipped int
	if now.Sub(l.window) >= time.Second {
		skipped = l.skipped
		l.window, l.n, l.skipped = now, 0, 0
	}
	l.n++
	ok := l.n <= logsPerSecond
	if !ok {
		l.skipped++
	}
	l.mu.Unlock()
	if skipped > 0 {
		l.log.Warn("ejsLog lines dropped (rate limit)", "dropped", skipped, "limit_per_second", logsPerSecond)
	}
	if !ok {
		l.dropped.Add(1)
		return nil, nil
	}
	l.log.Info("ejsLog", "file", argText(args, 0), "msg", argText(args, 1))
	return nil, nil
}

// argText returns argument i of a JavaScript call as text.
func argText(args []any, i int) string {
	if i >= len(args) {
		return "undefined"
	}
	var s string
	switch x := args[i].(type) {
	case string:
		s = x
	case nil:
		s = "null"
	case *quickjs.Object:
		s = x.String()
	case fmt.Stringer:
		s = x.String()
	default:
		s = fmt.Sprint(x)
	}
	return clip(s)
}
