// Command benchplugin is the process plugin of cairn-bench's plugin phase: functions
// that do as little as the WebAssembly fixtures they are compared with, so the
// comparison measures the runtimes, not the functions. "accept" is a precommit that
// accepts every write (like the C example's "ok"); "values" is a map that answers
// [1,"two",{"three":3}] for every input (like the "values" entry point of
// plugins/wasmhost/testdata/hooks.wat).
package main

import (
	"context"
	"encoding/json"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

var values = []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"two"`), json.RawMessage(`{"three":3}`)}

func main() {
	m := goplugin.NewMux()
	m.Precommit("accept", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, nil
	})
	m.Map("values", func(context.Context, goplugin.MapInput) ([]json.RawMessage, error) {
		return values, nil
	})
	goplugin.Serve(m)
}
