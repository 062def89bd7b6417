package gopluginhost

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairnkv/cairn/core/hooks"
)

// Sentinel errors of the package. Call errors are *hooks.CallError.
var (
	// ErrChecksum: a plugin's executable does not have the configured SHA-256 (or
	// cannot be read to check it). New fails with it; after a start it disables the
	// plugin.
	ErrChecksum = errors.New("the plugin executable does not match its sha256")
	// ErrClosed: the host was closed.
	ErrClosed = errors.New("gopluginhost: host closed")
	// ErrStreamClosed: Send or Recv on a map stream after Close.
	ErrStreamClosed = errors.New("gopluginhost: map stream closed")
)

// fatalError is the error of a start that would fail again the same way (the
// executable is missing or does not match its checksum, the plugin speaks another
// ABI): the supervisor disables the plugin instead of retrying.
type fatalError struct{ error }

// Unwrap returns the cause.
func (e fatalError) Unwrap() error { return e.error }

// maxMessage bounds a plugin's reason or error message kept in a verdict or an error.
const maxMessage = 4096

// message turns a plugin's text into a printable message of at most maxMessage bytes
// (plus a marker when cut); invalid UTF-8 becomes U+FFFD.
func message(s string) string {
	cut := ""
	if len(s) > maxMessage {
		s = s[:maxMessage]
		for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
			s = s[:len(s)-1] // do not split a character
		}
		if len(s) > 0 {
			s = s[:len(s)-1]
		}
		cut = "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD") + cut
}

// ctxError is the CallError of a call whose caller gave up.
func ctxError(err error) *hooks.CallError {
	if errors.Is(err, context.DeadlineExceeded) {
		return &hooks.CallError{Kind: hooks.TimedOut, Err: err}
	}
	return &hooks.CallError{Kind: hooks.Unavailable, Err: fmt.Errorf("the call was canceled: %w", err)}
}

func badResult(format string, args ...any) *hooks.CallError {
	return &hooks.CallError{Kind: hooks.BadResult, Err: fmt.Errorf(format, args...)}
}

// callError turns the error of a gRPC call to p at point pt into a *hooks.CallError
// (without module and function). parent is the caller's context: when it ended, the
// call failed because of it. A broken connection means the process died (or is
// dying): the supervisor is told at once.
func (p *plugin) callError(parent context.Context, pt hooks.Point, err error) *hooks.CallError {
	st, ok := status.FromError(err)
	if !ok {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			if perr := parent.Err(); perr != nil {
				return ctxError(perr)
			}
			return ctxError(err)
		}
		p.poke()
		return &hooks.CallError{Kind: hooks.Crashed, Err: err}
	}
	switch st.Code() {
	case codes.Unknown:
		// A plugin's own error: gRPC sends any non-status error as Unknown.
		msg := message(st.Message())
		if msg == "" {
			msg = "failed without a message"
		}
		return &hooks.CallError{Kind: hooks.Failed, Err: errors.New(msg)}
	case codes.DeadlineExceeded:
		return &hooks.CallError{Kind: hooks.TimedOut, Err: fmt.Errorf("no result within the deadline: %w", context.DeadlineExceeded)}
	case codes.Canceled:
		if perr := parent.Err(); perr != nil {
			return ctxError(perr)
		}
		p.poke()
		return &hooks.CallError{Kind: hooks.Crashed, Err: errors.New("the connection to the plugin closed during the call")}
	case codes.Unavailable:
		if perr := parent.Err(); perr != nil {
			return ctxError(perr)
		}
		p.poke()
		return &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("the plugin process died during the call (%s)", message(st.Message()))}
	case codes.Internal:
		return &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("the plugin failed internally: %s", message(st.Message()))}
	case codes.Unimplemented:
		return &hooks.CallError{Kind: hooks.Failed, Err: fmt.Errorf("plugin %s does not implement %s", p.name, pt)}
	case codes.NotFound:
		return &hooks.CallError{Kind: hooks.Failed, Err: fmt.Errorf("plugin %s has no such function at %s: %s", p.name, pt, message(st.Message()))}
	}
	return &hooks.CallError{Kind: hooks.Failed, Err: fmt.Errorf("%s: %s", st.Code(), message(st.Message()))}
}
