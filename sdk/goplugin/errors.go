package goplugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// CallError is a call that failed, as the Harness reports it: the gRPC status the
// plugin's service answered. Code codes.Unknown is the function's own error (Failed);
// every other code is what the server treats as a crash of the call:
// codes.Internal for a panic ("panic: ..."), codes.Unimplemented for a point the
// plugin does not offer, codes.NotFound for a function it does not list,
// codes.InvalidArgument for a malformed request, codes.Canceled and
// codes.DeadlineExceeded for a call whose context ended, codes.Unavailable when the
// connection is gone. An error on the Harness's side that carries no gRPC status is
// codes.Internal (or codes.Canceled or codes.DeadlineExceeded for a context's error):
// never Failed, since the function did not answer it.
type CallError struct {
	Code    codes.Code
	Message string
}

// Error implements error.
func (e *CallError) Error() string {
	return fmt.Sprintf("goplugin: %s: %s", e.Code, e.Message)
}

// Failed reports whether the call failed with the function's own error, rather than
// crashing.
func (e *CallError) Failed() bool {
	return e.Code == codes.Unknown
}

// GRPCStatus returns the error as a gRPC status, so status.FromError and status.Code
// understand it.
func (e *CallError) GRPCStatus() *status.Status {
	return status.New(e.Code, e.Message)
}

// callError converts an error of a gRPC call into a *CallError.
func callError(err error) error {
	if err == nil {
		return nil
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce
	}
	if st, ok := status.FromError(err); ok {
		return &CallError{Code: st.Code(), Message: st.Message()}
	}
	// Not an answer of the plugin's service: status.FromError would call it Unknown,
	// which is the function's own error.
	code := codes.Internal
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = status.FromContextError(err).Code()
	}
	return &CallError{Code: code, Message: err.Error()}
}

// InputError is the failure of one input of a map stream, with the function's message.
type InputError struct {
	// Index is the input's position in the call.
	Index   int
	Message string
}

// MapError reports the inputs of a Harness.Map call for which the function returned
// an error. The stream went on past them: the other inputs' outputs are there.
type MapError struct {
	// Inputs lists the failed inputs in order.
	Inputs []InputError
}

// Error implements error.
func (e *MapError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "goplugin: the map function failed for %d input(s):", len(e.Inputs))
	for i, in := range e.Inputs {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(e.Inputs)-i)
			break
		}
		fmt.Fprintf(&b, " input %d: %s;", in.Index, in.Message)
	}
	return strings.TrimSuffix(b.String(), ";")
}
