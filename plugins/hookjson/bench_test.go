package hookjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// putObject is what a precommit sees on a typical put: one value of about 300 bytes of
// JSON, one user metadata entry, two index entries and a link.
func putObject() *core.Object {
	value := `{"name":"alice","email":"alice@example.com","tags":["a","b","c"],"bio":"` + strings.Repeat("lorem ipsum ", 20) + `"}`
	return &core.Object{
		Type: "default", Bucket: "users", Key: "alice", VClock: []byte("a85hYGBgzGDKBVIcypz/fgaUHjmdwZTImMfKwNR1/gxfFgA="),
		Siblings: []core.Sibling{{
			Value: []byte(value), ContentType: "application/json",
			Meta:    []core.MetaEntry{{Name: "Owner", Value: "bob"}},
			Indexes: []core.IndexEntry{{Field: "age_int", Value: "42"}, {Field: "email_bin", Value: "alice@example.com"}},
			Links:   []core.Link{{Bucket: "users", Key: "bob", Tag: "friend"}},
		}},
	}
}

func BenchmarkAppendCommitInput(b *testing.B) {
	o := putObject()
	buf := Codec{}.AppendCommitInput(nil, hooks.OpPut, o)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = Codec{}.AppendCommitInput(buf[:0], hooks.OpPut, o)
	}
}

func BenchmarkDecodeObject(b *testing.B) {
	in := Codec{}.AppendObject(nil, putObject())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Codec{}).DecodeObject(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeObjectStdlib is the same decode with encoding/json into generic values,
// for comparison.
func BenchmarkDecodeObjectStdlib(b *testing.B) {
	in := Codec{}.AppendObject(nil, putObject())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(in, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeValues(b *testing.B) {
	in := []byte(`[{"name":"alice","n":1},{"name":"bob","n":2},3,"four",[5,6]]`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeValues(in); err != nil {
			b.Fatal(err)
		}
	}
}
