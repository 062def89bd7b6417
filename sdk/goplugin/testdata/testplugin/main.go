// Command testplugin is the plugin process of goplugin's end-to-end test: a Mux with a
// function at most points, served by goplugin.Serve.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func main() {
	m := goplugin.NewMux()
	m.Precommit("check", check)
	m.Precommit("panic", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		panic("deliberate test panic")
	})
	m.Map("size", size)
	m.Reduce("sum", sum)
	goplugin.Serve(m)
}

// check rejects deletes, upper-cases values written to bucket "shout" and accepts the
// rest.
func check(_ context.Context, op goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
	switch {
	case op == goplugin.OpDelete:
		return goplugin.Verdict{Reject: true, Reason: "no deletes of " + obj.Key}, nil
	case obj.Bucket == "shout" && len(obj.Contents) > 0:
		obj.Contents[0].Value = bytes.ToUpper(obj.Contents[0].Value)
		return goplugin.Verdict{Replace: obj}, nil
	}
	return goplugin.Verdict{}, nil
}

// size maps an input to the length of its first value; a missing object fails.
func size(_ context.Context, in goplugin.MapInput) ([]json.RawMessage, error) {
	if in.NotFound || len(in.Object.Contents) == 0 {
		return nil, errors.New("not found: " + in.Object.Key)
	}
	return []json.RawMessage{strconv.AppendInt(nil, int64(len(in.Object.Contents[0].Value)), 10)}, nil
}

// sum adds numbers up.
func sum(_ context.Context, values []json.RawMessage, _ json.RawMessage) ([]json.RawMessage, error) {
	var total int64
	for _, v := range values {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, err
		}
		total += n
	}
	return []json.RawMessage{strconv.AppendInt(nil, total, 10)}, nil
}
