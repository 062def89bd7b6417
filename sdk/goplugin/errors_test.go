package goplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestCallError(t *testing.T) {
	own := &CallError{Code: codes.NotFound, Message: "mine"}
	for _, tt := range []struct {
		name   string
		err    error
		code   codes.Code
		failed bool
	}{
		{"function's own error", status.Error(codes.Unknown, "boom"), codes.Unknown, true},
		{"panic", status.Error(codes.Internal, "panic: x"), codes.Internal, false},
		{"wrapped status", fmt.Errorf("call: %w", status.Error(codes.Unavailable, "gone")), codes.Unavailable, false},
		{"already a CallError", fmt.Errorf("x: %w", own), codes.NotFound, false},
		{"client side, no status", io.ErrUnexpectedEOF, codes.Internal, false},
		{"plain error", errors.New("harness trouble"), codes.Internal, false},
		{"canceled", fmt.Errorf("send: %w", context.Canceled), codes.Canceled, false},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ce *CallError
			if !errors.As(callError(tt.err), &ce) {
				t.Fatalf("callError(%v) = %T", tt.err, callError(tt.err))
			}
			if ce.Code != tt.code || ce.Failed() != tt.failed {
				t.Errorf("callError(%v) = %v (Failed %v), want code %s (Failed %v)", tt.err, ce, ce.Failed(), tt.code, tt.failed)
			}
		})
	}
	if callError(nil) != nil {
		t.Error("callError(nil) is not nil")
	}
}
