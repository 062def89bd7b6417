package goplugin

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// wire encodes and decodes m, as gRPC does between two processes.
func wire[M proto.Message](t *testing.T, m M, into M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
	return into
}

func TestObjectRoundTrip(t *testing.T) {
	const bin = "\x00\xff\xfe\xc3("
	mod := time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC)
	tests := []struct {
		name string
		obj  *Object
	}{
		{"empty", &Object{}},
		{"no contents", &Object{BucketType: "default", Bucket: "b" + bin, Key: bin, VClock: []byte(bin)}},
		{"one content", &Object{Bucket: "b", Key: "k", Contents: []Content{{Value: []byte(bin), ContentType: "text/plain",
			LastModified: mod, UserMeta: []Pair{{Key: "a" + bin, Value: bin}}}}}},
		{"siblings", &Object{Bucket: "b", Key: "k", VClock: []byte{1, 2, 3}, Contents: []Content{
			{Value: []byte("v1"), Charset: "utf-8", ContentEncoding: "gzip", VTag: "t1", LastModified: mod,
				Links:    []Link{{Bucket: bin, Key: "k1", Tag: "t"}},
				UserMeta: []Pair{{Key: "m1", Value: "x"}, {Key: "m2", Value: ""}},
				Indexes:  []Pair{{Key: "i_bin", Value: bin}}},
			{Deleted: true, VTag: "t2"},
			{Value: []byte("v3"), Links: []Link{{Bucket: "b", Key: "k3", Tag: ""}, {Bucket: "c", Key: "k4", Tag: "x"}},
				Indexes: []Pair{{Key: "n_int", Value: "7"}}},
		}}},
	}
	for _, tt := range tests {
		got := objectFromPB(wire(t, objectToPB(tt.obj), &hookspb.Object{}))
		if !reflect.DeepEqual(normalize(got), normalize(tt.obj)) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.obj)
		}
	}
}

// normalize makes empty slices nil, as the protobuf decoder may leave either.
func normalize(o *Object) *Object {
	c := *o
	if len(c.VClock) == 0 {
		c.VClock = nil
	}
	if len(c.Contents) == 0 {
		c.Contents = nil
	}
	c.Contents = append([]Content(nil), c.Contents...)
	for i := range c.Contents {
		ct := &c.Contents[i]
		if len(ct.Value) == 0 {
			ct.Value = nil
		}
	}
	return &c
}

// TestDecodedSharesCapped checks that a content's share of the common arrays cannot
// overwrite the next content's when the function appends to it.
func TestDecodedSharesCapped(t *testing.T) {
	in := &Object{Contents: []Content{
		{UserMeta: []Pair{{Key: "a", Value: "1"}}, Indexes: []Pair{{Key: "i_bin", Value: "x"}}, Links: []Link{{Key: "l1"}}},
		{UserMeta: []Pair{{Key: "b", Value: "2"}}, Links: []Link{{Key: "l2"}}},
	}}
	got := objectFromPB(wire(t, objectToPB(in), &hookspb.Object{}))
	got.Contents[0].UserMeta = append(got.Contents[0].UserMeta, Pair{Key: "new"})
	got.Contents[0].Indexes = append(got.Contents[0].Indexes, Pair{Key: "new"})
	got.Contents[0].Links = append(got.Contents[0].Links, Link{Key: "new"})
	if got.Contents[0].Indexes[0].Key != "i_bin" || got.Contents[1].UserMeta[0].Key != "b" || got.Contents[1].Links[0].Key != "l2" {
		t.Fatalf("an append overwrote another field: %+v", got.Contents)
	}
}

func TestTimes(t *testing.T) {
	tests := []struct {
		t     time.Time
		usecs int64
	}{
		{time.Time{}, 0},
		{time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC), 1893456000000001},
		{time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), -1000000},
	}
	for _, tt := range tests {
		if got := usecsFromTime(tt.t); got != tt.usecs {
			t.Errorf("usecsFromTime(%v) = %d, want %d", tt.t, got, tt.usecs)
		}
		if got := timeFromUsecs(tt.usecs); !got.Equal(tt.t) || got.Location() != time.UTC {
			t.Errorf("timeFromUsecs(%d) = %v, want %v", tt.usecs, got, tt.t)
		}
	}
	// A time in another zone is the same instant.
	local := time.Date(2030, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600))
	if got := timeFromUsecs(usecsFromTime(local)); !got.Equal(local) {
		t.Errorf("got %v, want %v", got, local)
	}
}

func TestOpsAndPoints(t *testing.T) {
	for _, op := range []Op{OpPut, OpDelete} {
		pb, err := opToPB(op)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := opFromPB(pb); err != nil || back != op {
			t.Errorf("%s: got %q, %v", op, back, err)
		}
	}
	if _, err := opToPB("merge"); err == nil {
		t.Error("an unknown operation converted")
	}
	if _, err := opFromPB(hookspb.Op(7)); err == nil {
		t.Error("an unknown protobuf operation converted")
	}
	want := map[Point]hookspb.Point{PointPrecommit: hookspb.Point_PRECOMMIT, PointPostcommit: hookspb.Point_POSTCOMMIT,
		PointKeyFun: hookspb.Point_KEYFUN, PointLinkFun: hookspb.Point_LINKFUN, PointMap: hookspb.Point_MAP, PointReduce: hookspb.Point_REDUCE}
	for p, pb := range want {
		if got := pointToPB(p); got != pb {
			t.Errorf("pointToPB(%s) = %s, want %s", p, got, pb)
		}
		if back, ok := pointFromPB(pb); !ok || back != p {
			t.Errorf("pointFromPB(%s) = %q, %v", pb, back, ok)
		}
	}
	for _, pb := range []hookspb.Point{hookspb.Point_POINT_UNSPECIFIED, hookspb.Point(99)} {
		if p, ok := pointFromPB(pb); ok {
			t.Errorf("pointFromPB(%d) = %q", pb, p)
		}
	}
}

func TestValues(t *testing.T) {
	vals := []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"a"`), nil}
	b := byteValues(vals)
	if len(b) != 3 || string(b[1]) != `"a"` || b[2] != nil {
		t.Fatalf("byteValues: %q", b)
	}
	if back := rawValues(b); !reflect.DeepEqual(back, vals) {
		t.Fatalf("rawValues: %q", back)
	}
	if byteValues(nil) != nil || rawValues(nil) != nil || rawOrNil([]byte{}) != nil {
		t.Fatal("empty values are not nil")
	}
	if s := bytesString([]byte("abc")); s != "abc" || bytesString(nil) != "" {
		t.Fatal("bytesString")
	}
	if b := stringBytes("abc"); string(b) != "abc" || stringBytes("") != nil {
		t.Fatal("stringBytes")
	}
}
