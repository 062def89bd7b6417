package core

import (
	"context"
	"testing"
)

func TestClientIdentity(t *testing.T) {
	ctx := context.Background()
	if got := ClientFrom(ctx); got != "" {
		t.Fatalf("ClientFrom(empty) = %q, want \"\"", got)
	}
	ctx = WithClient(ctx, "10.0.0.1")
	if got := ClientFrom(ctx); got != "10.0.0.1" {
		t.Fatalf("ClientFrom = %q, want 10.0.0.1", got)
	}
	if got := ClientFrom(WithClient(ctx, "alice")); got != "alice" {
		t.Fatalf("an inner WithClient must win: got %q", got)
	}
}
