package kv

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestDefaultProps(t *testing.T) {
	s := newTestService(t, Config{Dialect: "riak"})
	p, err := s.Props(ctx, core.DefaultType, "users")
	if err != nil {
		t.Fatal(err)
	}
	if p.NVal != 3 || p.AllowMult || p.DVVEnabled || p.R != core.QuorumQuorum || p.PW != (core.Quorum{}) || !p.NotfoundOK || p.SmallVclock != 50 {
		t.Fatalf("defaults: %+v", p)
	}
	b, _ := json.Marshal(p)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["name"] != "users" || m["chash_keyfun"].(map[string]any)["mod"] != "riak_core_util" || m["r"] != "quorum" {
		t.Fatalf("JSON defaults: %s", b)
	}
}

func TestSetPropsValidation(t *testing.T) {
	tests := []struct {
		name    string
		props   string
		reasons map[string]string
	}{
		{"strings for ints and bools", `{"n_val":"3","allow_mult":"maybe"}`, map[string]string{"n_val": "not_integer", "allow_mult": "not_boolean"}},
		{"non-positive n_val", `{"n_val":0,"big_vclock":-1}`, map[string]string{"n_val": "not_integer", "big_vclock": "not_integer"}},
		{"bad quorums", `{"r":0,"w":"default","dw":-1,"pr":"lots"}`, map[string]string{"r": "not_valid_quorum", "w": "not_valid_quorum", "dw": "not_valid_quorum", "pr": "not_valid_quorum"}},
		{"write_once cannot be set", `{"write_once":true}`, map[string]string{"write_once": "cannot update write_once property"}},
		{"lww with dvv", `{"last_write_wins":true,"dvv_enabled":true}`, map[string]string{"dvv_enabled": "If last_write_wins is true, dvv_enabled must be false"}},
		{"hooks shape", `{"precommit":[{"mod":"m"}],"chash_keyfun":{"mod":1,"fun":"f"}}`, nil},
		{"accepted forms", `{"allow_mult":"TRUE","notfound_ok":0,"dw":0,"w":"all","precommit":"none","postcommit":[{"name":"Js.fn"}],"linkfun":{"jsfun":"F"},"custom":{"x":1}}`, map[string]string{}},
	}
	for i, tt := range tests {
		s := newTestService(t, Config{})
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.props), &m); err != nil {
			t.Fatal(err)
		}
		err := s.SetProps(ctx, core.DefaultType, "b", m)
		if len(tt.reasons) == 0 && tt.reasons != nil {
			if err != nil {
				t.Errorf("%d %s: %v", i, tt.name, err)
			}
			continue
		}
		e := core.AsError(err)
		if e == nil || e.Code != core.EINVALID {
			t.Errorf("%d %s: err = %v, want EINVALID", i, tt.name, err)
			continue
		}
		if tt.reasons != nil && !reflect.DeepEqual(e.Reasons, tt.reasons) {
			t.Errorf("%d %s: reasons = %v, want %v", i, tt.name, e.Reasons, tt.reasons)
		}
		if tt.reasons == nil && len(e.Reasons) != 2 {
			t.Errorf("%d %s: reasons = %v, want precommit and chash_keyfun", i, tt.name, e.Reasons)
		}
	}
}

func TestPropsRoundTripAndReset(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "b", `{"allow_mult":true,"custom_prop":[1,2]}`)
	p, _ := s.Props(ctx, core.DefaultType, "b")
	full, _ := json.Marshal(p)
	var m map[string]json.RawMessage
	json.Unmarshal(full, &m)
	if err := s.SetProps(ctx, core.DefaultType, "b", m); err != nil {
		t.Fatalf("round trip of %s refused: %v", full, err)
	}
	p2, _ := s.Props(ctx, core.DefaultType, "b")
	again, _ := json.Marshal(p2)
	if string(again) != string(full) {
		t.Fatalf("round trip changed props:\n%s\n%s", full, again)
	}
	if !p2.AllowMult || string(p2.Raw["custom_prop"]) != "[1,2]" {
		t.Fatalf("props: %s", again)
	}
	if err := s.ResetProps(ctx, core.DefaultType, "b"); err != nil {
		t.Fatal(err)
	}
	if p3, _ := s.Props(ctx, core.DefaultType, "b"); p3.AllowMult {
		t.Fatal("reset kept allow_mult")
	}
}

func TestBucketTypes(t *testing.T) {
	s := newTestService(t, Config{})
	if _, err := s.Props(ctx, "maps", "b"); core.ErrorMessage(err) != "Unknown bucket type: maps" {
		t.Fatalf("unknown type: %v", err)
	}
	if err := s.CreateType(ctx, "maps", map[string]json.RawMessage{"n_val": json.RawMessage("2")}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Props(ctx, "maps", "b")
	if err != nil {
		t.Fatal(err)
	}
	if !p.AllowMult || !p.DVVEnabled || p.NVal != 2 || string(p.Raw["active"]) != "true" {
		t.Fatalf("typed defaults: %+v", p)
	}
	setProps(t, s, "b", `{"n_val":5}`) // default type, same bucket name: independent
	if p, _ := s.Props(ctx, "maps", "b"); p.NVal != 2 {
		t.Fatal("bucket props leaked across types")
	}
}

func TestCreateTypeRefusesBadProps(t *testing.T) {
	s := newTestService(t, Config{})
	err := s.CreateType(ctx, "bad", map[string]json.RawMessage{"n_val": json.RawMessage(`"x"`)})
	if e := core.AsError(err); e == nil || e.Reasons["n_val"] != "not_integer" {
		t.Fatalf("bad type props: %v", err)
	}
	if _, err := s.TypeProps(ctx, "bad"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("a refused type was created: %v", err)
	}
}

func TestTypePropsAreTheTypesOwn(t *testing.T) {
	s := newTestService(t, Config{})
	if err := s.CreateType(ctx, "maps", nil); err != nil {
		t.Fatal(err)
	}
	// A bucket whose name is a NUL byte is an ordinary bucket: its props stay its own.
	if err := s.SetProps(ctx, "maps", "\x00", map[string]json.RawMessage{"n_val": json.RawMessage("7")}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.TypeProps(ctx, "maps"); err != nil || p.NVal != 3 {
		t.Fatalf("type props picked up a bucket's: n_val %d, %v", p.NVal, err)
	}
	if err := s.SetTypeProps(ctx, "nope", map[string]json.RawMessage{"n_val": json.RawMessage("2")}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("setting an unknown type: %v", err)
	}
}

func TestDefaultTypeSettingsReachItsBuckets(t *testing.T) {
	s := newTestService(t, Config{})
	if err := s.SetTypeProps(ctx, core.DefaultType, map[string]json.RawMessage{"allow_mult": json.RawMessage("true")}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Props(ctx, core.DefaultType, "any"); !p.AllowMult {
		t.Fatal("a default-type setting does not reach its buckets")
	}
	if p, _ := s.TypeProps(ctx, core.DefaultType); !p.AllowMult {
		t.Fatal("the default type does not show its own setting")
	}
}
