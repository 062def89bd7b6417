package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestPrecommitClientBusy checks that a precommit hook whose runtime refused the call
// because the client uses its whole share of it (core.ErrClientBusy) makes the write
// 503 EUNAVAILABLE (busy, retry), stores nothing, and names the hook.
func TestPrecommitClientBusy(t *testing.T) {
	prov := &testProvider{mods: map[string]map[string]any{"m": {
		"busy": precommitFunc(func(context.Context, hooks.Op, *core.Object) (hooks.Verdict, error) {
			return hooks.Verdict{}, &hooks.CallError{Kind: hooks.Unavailable, Module: "m", Function: "busy",
				Err: fmt.Errorf("%w (1 of the 2 JavaScript VMs for precommit hooks), and none came free within 2s", core.ErrClientBusy)}
		}),
	}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov)})
	setHooks(t, s, "b", `{"precommit":[{"mod":"m","fun":"busy"}]}`)
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k",
		Value: core.Sibling{Value: []byte("x"), ContentType: "text/plain"}})
	e := core.AsError(err)
	if e == nil || e.Code != core.EUNAVAILABLE || !strings.HasPrefix(e.Message, "precommit hook m:busy cannot run now: this client already uses its share") {
		t.Fatalf("put: %v, want EUNAVAILABLE naming the hook", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("a refused put stored something: %v", err)
	}
}
