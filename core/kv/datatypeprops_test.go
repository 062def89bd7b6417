package kv

import (
	"encoding/json"
	"reflect"
	"testing"
)

// props parses a JSON object of properties for a test.
func props(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDatatypeProperty: the datatype property is validated when a type is created and
// fixed afterwards, with Riak's reasons.
func TestDatatypeProperty(t *testing.T) {
	s := newTestService(t, Config{})
	if err := s.CreateType(ctx, "maps", props(t, `{"datatype":"map"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateType(ctx, "plain", nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.Props(ctx, "maps", "b")
	if err != nil || p.Datatype != "map" || string(p.Raw["datatype"]) != `"map"` {
		t.Fatalf("props of a map type: %+v, %v", p, err)
	}
	tests := []struct {
		name string
		do   func() error
		want map[string]string
	}{
		{"unknown datatype", func() error { return s.CreateType(ctx, "x", props(t, `{"datatype":"flag"}`)) },
			map[string]string{"datatype": `"flag" not supported for bucket datatype property`}},
		{"not a string", func() error { return s.CreateType(ctx, "x", props(t, `{"datatype":1}`)) },
			map[string]string{"datatype": `1 not supported for bucket datatype property`}},
		{"allow_mult false", func() error { return s.CreateType(ctx, "x", props(t, `{"datatype":"set","allow_mult":false}`)) },
			map[string]string{"allow_mult": reasonDatatypeAllowMult}},
		{"every kind", func() error {
			for _, k := range []string{"counter", "set", "map", "hll", "gset"} {
				if err := s.CreateType(ctx, "t"+k, props(t, `{"datatype":"`+k+`"}`)); err != nil {
					return err
				}
			}
			return nil
		}, nil},
		{"change type's datatype", func() error { return s.SetTypeProps(ctx, "maps", props(t, `{"datatype":"set"}`)) },
			map[string]string{"datatype": reasonDatatypeUpdate}},
		{"add to a plain type", func() error { return s.SetTypeProps(ctx, "plain", props(t, `{"datatype":"set"}`)) },
			map[string]string{"datatype": reasonDatatypeAdd}},
		{"add to a bucket", func() error { return s.SetProps(ctx, "plain", "b", props(t, `{"datatype":"set"}`)) },
			map[string]string{"datatype": reasonDatatypeAdd}},
		{"change a bucket's", func() error { return s.SetProps(ctx, "maps", "b", props(t, `{"datatype":"counter"}`)) },
			map[string]string{"datatype": reasonDatatypeUpdate}},
		{"same datatype again", func() error { return s.SetProps(ctx, "maps", "b", props(t, `{"datatype":"map","n_val":2}`)) }, nil},
		{"allow_mult off", func() error { return s.SetProps(ctx, "maps", "b", props(t, `{"allow_mult":false}`)) },
			map[string]string{"allow_mult": reasonDatatypeMultUpdate}},
		{"plain allow_mult off", func() error { return s.SetProps(ctx, "plain", "b", props(t, `{"allow_mult":false}`)) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if tt.want == nil && err != nil {
				t.Fatalf("error %v", err)
			}
			if got := reasonsOf(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reasons %v, want %v", got, tt.want)
			}
		})
	}
	if p, _ := s.Props(ctx, "maps", "b"); p.Datatype != "map" || !p.AllowMult || p.NVal != 2 {
		t.Errorf("after the changes: datatype %q allow_mult %v n_val %d", p.Datatype, p.AllowMult, p.NVal)
	}
}
