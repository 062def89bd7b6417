package goplugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

// requireJSON is a precommit that rejects JSON objects whose value does not parse.
func requireJSON(_ context.Context, op goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
	if op == goplugin.OpDelete {
		return goplugin.Verdict{}, nil
	}
	for _, c := range obj.Contents {
		if c.ContentType == "application/json" && !json.Valid(c.Value) {
			return goplugin.Verdict{Reject: true, Reason: "the value is not valid JSON"}, nil
		}
	}
	return goplugin.Verdict{}, nil
}

// valueSize is a map function: the size of an object's first value.
func valueSize(_ context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
	if in.NotFound || len(in.Object.Contents) == 0 {
		return nil, nil
	}
	return []json.RawMessage{strconv.AppendInt(nil, int64(len(in.Object.Contents[0].Value)), 10)}, nil
}

// The main function of a plugin: a Mux with a precommit hook and a map function,
// served as a plugin process. Built with `go build -o validate .` and configured under
// the name "validate", bucket properties call the hook as
// {"precommit": [{"mod": "validate", "fun": "require_json"}]}.
func Example() {
	m := goplugin.NewMux()
	m.Precommit("require_json", requireJSON)
	m.Map("value_size", valueSize)
	goplugin.Serve(m) // returns when the server stops the plugin
}

// A plugin's test: the Harness serves the Mux in process, through the same gRPC
// service as the plugin process, and calls its functions.
func ExampleHarness() {
	m := goplugin.NewMux()
	m.Precommit("require_json", requireJSON)
	m.Map("value_size", valueSize)
	h, err := goplugin.NewHarness(m)
	if err != nil {
		panic(err)
	}
	defer h.Close()
	ctx := context.Background()

	bad := &goplugin.Object{Bucket: "users", Key: "u1",
		Contents: []goplugin.Content{{Value: []byte("{oops"), ContentType: "application/json"}}}
	v, err := h.Precommit(ctx, "require_json", goplugin.OpPut, bad)
	fmt.Println(v.Reject, v.Reason, err)

	out, err := h.Map(ctx, "value_size", nil,
		goplugin.MapInput{Object: &goplugin.Object{Key: "a", Contents: []goplugin.Content{{Value: bytes.Repeat([]byte("x"), 5)}}}},
		goplugin.MapInput{Object: &goplugin.Object{Key: "b"}, NotFound: true})
	fmt.Printf("%s %v\n", out, err)

	_, err = h.Precommit(ctx, "nope", goplugin.OpPut, bad)
	fmt.Println(err)
	// Output:
	// true the value is not valid JSON <nil>
	// [[5] []] <nil>
	// goplugin: NotFound: no function "nope" at point precommit
}
