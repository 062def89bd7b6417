package mapreduce

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnkv/cairn/core/datatype"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/kv"
)

// TestRunDatatypeView: map functions over a datatype bucket get each key's data-type
// view ({"type","value"} as application/json, marked by the Datatype metadata entry),
// not the stored binary, from every kind of input and through a map stream too; plain
// objects beside them are unchanged.
func TestRunDatatypeView(t *testing.T) {
	t.Parallel()
	form := fakeMap(func(_ context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
		if in.Object == nil {
			return nil, nil
		}
		v := in.Object.Siblings[0]
		meta := ""
		for _, m := range v.Meta {
			meta += m.Name + "=" + m.Value
		}
		b, err := json.Marshal([]string{in.Object.Key, v.ContentType, meta})
		return []json.RawMessage{b}, err
	})
	e := newEnvWith(t, Config{}, true, map[string]any{"t:form": form, "s:form": newStreamer(form, streamOpts{})})
	ctx := context.Background()
	if err := e.kv.CreateType(ctx, "sets", map[string]json.RawMessage{"datatype": json.RawMessage(`"set"`)}); err != nil {
		t.Fatal(err)
	}
	for key, body := range map[string]string{"a": `{"add_all":["x","y"]}`, "b": `{"add":"z"}`} {
		op, err := datatype.ParseOp(datatype.Set, []byte(body))
		if err == nil {
			_, err = e.kv.DatatypeUpdate(ctx, "sets", "b", key, op, kv.PutOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	e.put(t, "t", "b", "plain", "v")
	for _, tc := range []struct{ name, body, want string }{
		{"bucket", job(`["sets","b"]`, mapPhase("value")), `["{\"type\":\"set\",\"value\":[\"x\",\"y\"]}","{\"type\":\"set\",\"value\":[\"z\"]}"]`},
		{"keys", job(`[["b","b",null,"sets"],["b","plain",null,"t"]]`, mapPhase("value")), `["{\"type\":\"set\",\"value\":[\"z\"]}","v"]`},
		{"key filter", job(`{"bucket":["sets","b"],"key_filters":[["eq","a"]]}`, mapPhase("form")), `[["a","application/json","Datatype=set"]]`},
		{"stream", `{"inputs":[["b","a",null,"sets"],["b","plain",null,"t"]],"query":[{"map":{"language":"erlang","module":"s","function":"form"}}]}`,
			`[["a","application/json","Datatype=set"],["plain","text/plain",""]]`},
	} {
		t.Run(tc.name, func(t *testing.T) { e.mustRun(t, tc.body, tc.want) })
	}
}
