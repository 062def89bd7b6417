package gopluginhost

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// TestEncodeMapRequest checks the hand encoding of map inputs against the protobuf
// runtime's encoding of the same message built with toPBObject.
func TestEncodeMapRequest(t *testing.T) {
	full := sampleObject()
	multi := sampleObject()
	multi.Siblings = append(multi.Siblings,
		core.Sibling{Deleted: true, VTag: "vt2", LastModified: time.UnixMicro(-5).UTC()},
		core.Sibling{Value: []byte("x"), ContentType: "text/\xff", LastModified: time.Unix(0, 0)},
		core.Sibling{})
	long := &core.Object{Type: "t", Key: string(bytes.Repeat([]byte("k"), 300)),
		Siblings: []core.Sibling{{Value: bytes.Repeat([]byte("v"), 70_000)}}}
	for _, tt := range []struct {
		name  string
		fun   string
		arg   json.RawMessage
		input hooks.MapInput
	}{
		{"first, full object", "fun", json.RawMessage(`{"a":1}`), hooks.MapInput{Object: full, KeyData: json.RawMessage(`[1,2]`)}},
		{"later, full object", "", nil, hooks.MapInput{Object: full}},
		{"siblings", "f", nil, hooks.MapInput{Object: multi}},
		{"long fields", "f", nil, hooks.MapInput{Object: long}},
		{"empty object", "f", nil, hooks.MapInput{Object: &core.Object{}}},
		{"not found", "f\xff", json.RawMessage(`"x"`), hooks.MapInput{NotFound: &hooks.Place{Type: "default", Bucket: "b", Key: "gone"}}},
		{"not found, empty place", "", nil, hooks.MapInput{NotFound: &hooks.Place{}}},
		{"nothing", "", nil, hooks.MapInput{KeyData: json.RawMessage(`null`)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := encodeMapRequest(tt.fun, tt.arg, &tt.input)
			if len(got) != cap(got) {
				t.Errorf("%d bytes in a buffer of %d: the size is wrong", len(got), cap(got))
			}
			want := &hookspb.MapRequest{Fun: utf8String(tt.fun), ArgJson: tt.arg, KeydataJson: tt.input.KeyData}
			switch {
			case tt.input.Object != nil:
				want.Object = toPBObject(tt.input.Object)
			case tt.input.NotFound != nil:
				want.Object, want.NotFound = placeObject(tt.input.NotFound), true
			default:
				want.NotFound = true
			}
			wantBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantBytes) {
				dec := &hookspb.MapRequest{}
				derr := proto.Unmarshal(got, dec)
				t.Fatalf("encoding differs from the protobuf runtime's\n got %x\nwant %x\ndecoded: %v %v", got, wantBytes, dec, derr)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	enc := func(m *hookspb.ValuesResponse) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withUnknown := enc(&hookspb.ValuesResponse{ValuesJson: [][]byte{[]byte("1")}})
	withUnknown = protowire.AppendTag(withUnknown, 9, protowire.VarintType)
	withUnknown = protowire.AppendVarint(withUnknown, 300)
	withUnknown = protowire.AppendTag(withUnknown, 10, protowire.BytesType)
	withUnknown = protowire.AppendString(withUnknown, "skip me")
	withUnknown = append(withUnknown, enc(&hookspb.ValuesResponse{ValuesJson: [][]byte{[]byte("2")}})...)
	for _, tt := range []struct {
		name    string
		in      []byte
		want    []string
		wantErr string
		bad     bool
	}{
		{"empty", nil, []string{}, "", false},
		{"values", enc(&hookspb.ValuesResponse{ValuesJson: [][]byte{[]byte(`{"a":1}`), []byte(`"s"`), {}}}), []string{`{"a":1}`, `"s"`, ""}, "", false},
		{"error", enc(&hookspb.ValuesResponse{Error: "it broke"}), []string{}, "it broke", false},
		{"unknown fields", withUnknown, []string{"1", "2"}, "", false},
		{"truncated", enc(&hookspb.ValuesResponse{ValuesJson: [][]byte{[]byte("12345")}})[:4], nil, "", true},
		{"bad tag", []byte{0xff}, nil, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vals, e, err := parseValues(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("no error for %x", tt.in)
				}
				return
			}
			if err != nil || e != tt.wantErr {
				t.Fatalf("err %v, error field %q", err, e)
			}
			got := []string{}
			for _, v := range vals {
				got = append(got, string(v))
				if len(v) != cap(v) {
					t.Errorf("value %q has spare capacity", v)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzParseValues checks that the parser never panics and agrees with the protobuf
// runtime wherever that accepts the bytes.
func FuzzParseValues(f *testing.F) {
	for _, m := range []*hookspb.ValuesResponse{{}, {ValuesJson: [][]byte{[]byte("1"), {}}}, {Error: "x"}} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x08, 0x01, 0x0a, 0x01, '1'})
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, e, err := parseValues(b)
		var m hookspb.ValuesResponse
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		if err != nil || e != m.GetError() || len(vals) != len(m.GetValuesJson()) {
			t.Fatalf("parse %x: %q %q %v; protobuf: %v", b, vals, e, err, &m)
		}
		for i := range vals {
			if !bytes.Equal(vals[i], m.GetValuesJson()[i]) {
				t.Fatalf("value %d: %q, protobuf %q", i, vals[i], m.GetValuesJson()[i])
			}
		}
	})
}

// placeObject is the object of a map input that was not found: its place only (as
// encodeMapRequest encodes it).
func placeObject(p *hooks.Place) *hookspb.Object {
	return &hookspb.Object{BucketType: bytesOf(p.Type), Bucket: bytesOf(p.Bucket), Key: bytesOf(p.Key)}
}

// fromPBObject converts an object from a plugin without checking it, for the round
// trip test (the host only takes replacements, through replacement).
func fromPBObject(o *hookspb.Object) *core.Object {
	if o == nil {
		return nil
	}
	out := &core.Object{Type: string(o.BucketType), Bucket: string(o.Bucket), Key: string(o.Key), VClock: o.Vclock}
	for _, c := range o.Contents {
		if c == nil {
			continue
		}
		s := core.Sibling{
			Value: c.Value, ContentType: c.ContentType, Charset: c.Charset, Encoding: c.ContentEncoding,
			VTag: c.Vtag, Deleted: c.Deleted, Links: fromPBLinks(c.Links),
		}
		if c.LastModUsecs != 0 {
			s.LastModified = time.UnixMicro(c.LastModUsecs).UTC()
		}
		for _, m := range c.Usermeta {
			s.Meta = append(s.Meta, core.MetaEntry{Name: string(m.GetKey()), Value: string(m.GetValue())})
		}
		for _, e := range c.Indexes {
			s.Indexes = append(s.Indexes, core.IndexEntry{Field: string(e.GetKey()), Value: string(e.GetValue())})
		}
		out.Siblings = append(out.Siblings, s)
	}
	return out
}
