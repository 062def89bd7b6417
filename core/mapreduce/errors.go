package mapreduce

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/jsonstr"
)

// The errors of a job. The HTTP layer turns each into the reference system's answer:
//
//   - *ParseError: 400, text/plain, Message as the body (an invalid job);
//   - *SetupError: 400, application/json {"phase":N,"error":"..."} (a phase's function
//     cannot be loaded);
//   - *PhaseError: 500, application/json {"phase":N,"error":"...","input":"..."} (a
//     function failed, or a phase went past a limit);
//   - ErrTimeout: 503, application/json {"error":"timeout"};
//   - *BusyError: 503, text/plain, Message and a line break (the client already uses
//     its share of jobs or of a runtime's instances);
//   - *LimitError: 500, application/json {"error":"..."} (the job's results are too
//     large to be returned in one body).
//
// Any other error is the server's own fault (storage) and is reported as such.

// ErrTimeout is the error of a job that ran past its timeout (or waited that long for a
// slot to run in).
var ErrTimeout = errors.New("mapreduce: job timed out")

// ParseError is an invalid job: its Message is the exact response body.
type ParseError struct {
	Message string
}

// Error returns the message.
func (e *ParseError) Error() string { return e.Message }

// SetupError is a job whose phase Phase (0-based, in the query) names a function that
// cannot be loaded: an unknown module or function, JavaScript on a server without a
// JavaScript runtime, source that does not compile, a stored source object that is
// missing.
type SetupError struct {
	Phase   int
	Message string
}

// Error describes the failure.
func (e *SetupError) Error() string {
	return fmt.Sprintf("mapreduce: phase %d: %s", e.Phase, e.Message)
}

// JSON returns the reference's body for the error: {"phase":N,"error":"..."}.
func (e *SetupError) JSON() []byte {
	b := strconv.AppendInt([]byte(`{"phase":`), int64(e.Phase), 10)
	b = jsonstr.AppendNoHTML(append(b, `,"error":`...), e.Message)
	return append(b, '}')
}

// PhaseError is a failure while the job ran: phase Phase's function returned an error
// (Message) for Input (a description of the input, "" when none applies), or the phase
// broke a limit.
type PhaseError struct {
	Phase   int
	Message string
	Input   string
}

// Error describes the failure.
func (e *PhaseError) Error() string {
	s := "mapreduce: phase " + strconv.Itoa(e.Phase) + ": " + e.Message
	if e.Input != "" {
		s += " (input " + e.Input + ")"
	}
	return s
}

// JSON returns the reference's body for the error:
// {"phase":N,"error":"...","input":"..."} ("input" left out when Input is empty).
func (e *PhaseError) JSON() []byte {
	b := strconv.AppendInt([]byte(`{"phase":`), int64(e.Phase), 10)
	b = jsonstr.AppendNoHTML(append(b, `,"error":`...), e.Message)
	if e.Input != "" {
		b = jsonstr.AppendNoHTML(append(b, `,"input":`...), e.Input)
	}
	return append(b, '}')
}

// BusyError is a job refused because its client already used its whole share of a
// resource (Config.MaxJobsPerClient jobs, or a runtime's instances) and none came free
// in time. It wraps core.ErrClientBusy.
type BusyError struct {
	// Message says which share is used up, for the client.
	Message string
}

// Error returns the message.
func (e *BusyError) Error() string { return e.Message }

// Unwrap returns core.ErrClientBusy.
func (e *BusyError) Unwrap() error { return core.ErrClientBusy }

// LimitError is a job whose kept results outgrew the limit of a response that is sent
// whole (see Config.MaxResultBytes). Streamed (chunked) results have no such limit.
type LimitError struct {
	Limit int64
}

// Error describes the limit.
func (e *LimitError) Error() string {
	return fmt.Sprintf("the results exceed %d bytes; ask for them with ?chunked=true", e.Limit)
}

// JSON returns the body for the error: {"error":"..."}.
func (e *LimitError) JSON() []byte { return ErrorJSON(e.Error()) }

// TimeoutJSON is the reference's body for a job that timed out.
const TimeoutJSON = `{"error":"timeout"}`

// ErrorJSON returns {"error": msg}, the reference's body for an error of no phase.
func ErrorJSON(msg string) []byte {
	return append(jsonstr.AppendNoHTML([]byte(`{"error":`), msg), '}')
}

// maxErrorText bounds the error and input texts of a PhaseError, as the reference
// prints at most about 500 characters of each.
const maxErrorText = 500

// truncate shortens s to about maxErrorText bytes (at a UTF-8 boundary), marking the cut.
func truncate(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
