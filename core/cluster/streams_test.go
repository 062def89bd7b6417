package cluster

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

func TestPlaceOf(t *testing.T) {
	tests := []struct {
		key  []byte
		want placement
	}{
		{storage.KeyString(storage.TagObject, "t", "b", "k"), placePartition},
		{storage.KeyString(storage.TagProps, "t", "b"), placeMeta},
		{storage.KeyString(storage.TagType, "t"), placeMeta},
		{storage.KeyString(storage.TagModule, "m"), placeMeta},
		{storage.KeyString(storage.TagS3, "x"), placeMeta},
		{storage.KeyString(storage.TagGrant, "x"), placeMeta},
		{storage.KeyString(storage.TagChunk, "x"), placeMeta},
		{storage.KeyString(storage.TagIndex, "x"), placeLocal},
		{storage.KeyString(storage.TagReap, "x"), placeLocal},
		{storage.KeyString(storage.TagMeta, "node-id"), placeLocal},
		{nil, placeLocal},
		{[]byte("?"), placeLocal},
	}
	for _, tc := range tests {
		if got := placeOf(tc.key); got != tc.want {
			t.Errorf("placeOf(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestStreamNames(t *testing.T) {
	for _, s := range []streamRef{partitionStream(0, 1), partitionStream(63, 3), partitionStream(1023, 5), {token: metaToken}} {
		got, ok := parseStreamName(s.name())
		if !ok || got.token != s.token {
			t.Errorf("parseStreamName(%q) = %+v, %v", s.name(), got, ok)
		}
	}
	for _, name := range []string{"", "CAIRN_", "CAIRN_P", "CAIRN_P1", "CAIRN_PXR3", "CAIRN_P1R0", "CAIRN_P01R3", "OTHER_META", "CAIRN_P-1R3", "CAIRN_Q1R3"} {
		if got, ok := parseStreamName(name); ok {
			t.Errorf("parseStreamName(%q) = %+v, want not one of Cairn's", name, got)
		}
	}
}

// TestKeySubject: any key, however long or whatever its bytes, makes a valid subject
// of bounded length in its stream's namespace.
func TestKeySubject(t *testing.T) {
	s := partitionStream(7, 3)
	for _, key := range [][]byte{{}, []byte("a.b*c>d e\x00\n"), bytes.Repeat([]byte{0xff}, 1<<16)} {
		subj := s.keySubject(key)
		if !strings.HasPrefix(subj, "cairn.p7r3.") || len(subj) != len("cairn.p7r3.")+43 ||
			strings.ContainsAny(subj[len("cairn.p7r3."):], ".*> \t\r\n") {
			t.Errorf("keySubject(%d bytes) = %q", len(key), subj)
		}
	}
	if s.keySubject([]byte("a")) == s.keySubject([]byte("b")) {
		t.Error("two keys share a subject")
	}
}

func TestPartitionOf(t *testing.T) {
	seen := map[int]bool{}
	for i := range 1000 {
		p := partitionOf([]byte{byte(i), byte(i >> 8)}, 8)
		if p < 0 || p >= 8 {
			t.Fatalf("partition %d of 8", p)
		}
		seen[p] = true
	}
	if len(seen) != 8 {
		t.Fatalf("1000 keys fell in %d of 8 partitions", len(seen))
	}
	if partitionOf([]byte("k"), 1) != 0 {
		t.Fatal("one partition")
	}
}

func TestRecords(t *testing.T) {
	tests := []struct {
		key, value []byte
		del        bool
	}{
		{[]byte("k"), []byte("v"), false},
		{[]byte("k"), []byte{}, false},
		{[]byte("k"), nil, true},
		{bytes.Repeat([]byte("k"), 300), bytes.Repeat([]byte("v"), 1<<16), false},
	}
	for _, tc := range tests {
		r, err := decodeRecord(encodeRecord(tc.key, tc.value, tc.del))
		if err != nil || !bytes.Equal(r.key, tc.key) || (r.kind == kindDelete) != tc.del ||
			!bytes.Equal(r.value, tc.value) || (!tc.del && r.value == nil) {
			t.Errorf("round trip of %q=%q del %v: %+v, %v", tc.key, tc.value, tc.del, r, err)
		}
	}
	for _, body := range [][]byte{nil, {}, {'X'}, {kindPut}, {kindPut, 0}, {kindPut, 5, 'a'}, {kindDelete, 1, 'a', 'b'},
		{kindPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if r, err := decodeRecord(body); !errors.Is(err, errBadRecord) {
			t.Errorf("decodeRecord(%q) = %+v, %v; want errBadRecord", body, r, err)
		}
	}
}

func TestSideEntries(t *testing.T) {
	e := sideEntry{stream: "CAIRN_P3R3", seq: 1 << 40}
	got, err := decodeSideEntry(e.encode())
	if err != nil || got != e {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, v := range [][]byte{nil, {}, {0x80}, {5}} {
		if _, err := decodeSideEntry(v); err == nil {
			t.Errorf("decodeSideEntry(%q) accepted", v)
		}
	}
	k := storage.KeyString(storage.TagObject, "t", "b", "k\x00")
	if !isSideKey(sideKey(k)) || !isSideKey(appliedKey("CAIRN_META")) || isSideKey(k) {
		t.Fatal("isSideKey")
	}
	if got := sideKeyOf(sideKey(k)); !bytes.Equal(got, k) {
		t.Fatalf("sideKeyOf = %q", got)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Name: "c", NodeName: "n1", DataDir: "/d", Listen: "127.0.0.1:7000"}
	tests := []struct {
		name string
		edit func(c *Config)
		want string // "" valid
	}{
		{"valid", func(c *Config) {}, ""},
		{"no name", func(c *Config) { c.Name = "" }, "cluster name is required"},
		{"space in name", func(c *Config) { c.Name = "a b" }, "cluster name"},
		{"dot-star node", func(c *Config) { c.NodeName = "n*" }, "node name"},
		{"partitions 3", func(c *Config) { c.Partitions = 3 }, "power of two"},
		{"partitions too many", func(c *Config) { c.Partitions = 2048 }, "power of two"},
		{"bad listen", func(c *Config) { c.Listen = "x" }, "listen address"},
		{"bad port", func(c *Config) { c.Listen = "h:99999" }, "listen address"},
		{"bad peer", func(c *Config) { c.Peers = []string{"h:1", "nope"} }, "peer"},
		{"nats url needs no listen", func(c *Config) { c.Listen, c.DataDir, c.NATSURLs = "", "", []string{"nats://h:4222"} }, ""},
	}
	for _, tc := range tests {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
