package wire

import (
	"bytes"
	"testing"

	"github.com/cairnkv/cairn/core"
)

var sinkString string

var benchLinks = []core.Link{
	{Bucket: "users", Key: "alice", Tag: "friend"},
	{Bucket: "users", Key: "bob@example.com", Tag: "friend"},
	{Bucket: "posts", Key: "2024/05/01 hello", Tag: "author"},
}

func BenchmarkParseLinks(b *testing.B) {
	h := FormatLinks(benchLinks, APIOld, DialectRiak, core.DefaultType, "users")
	b.SetBytes(int64(len(h)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLinks(h, APIOld, core.DefaultType, "users"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatLinks(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString = FormatLinks(benchLinks, APIOld, DialectRiak, core.DefaultType, "users")
	}
}

func BenchmarkParseIndexHeaders(b *testing.B) {
	headers := map[string][]string{
		"Content-Type":           {"application/json"},
		"X-Riak-Vclock":          {"a85hYGBgzGDKBVIsbLvm1WYwJTLmsTLcjeE5ypcFAA=="},
		"X-Riak-Index-Email_bin": {"alice@example.com, alice@work.example"},
		"X-Riak-Index-Age_int":   {"42"},
		"X-Riak-Index-Tags_bin":  {"a, b, c, d"},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseIndexHeaders(headers, DialectRiak); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUniqueID62(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString = core.NewKey()
	}
}

func BenchmarkUniqueID62Parallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sinkString = core.NewKey()
		}
	})
}

func BenchmarkVTag(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString = core.NewVTag()
	}
}

func BenchmarkNegotiate(b *testing.B) {
	offers := []string{"text/plain", "multipart/mixed"}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Negotiate("multipart/mixed,application/json;q=0.7, */*;q=0.5", offers)
	}
}

func BenchmarkWriteMultipart(b *testing.B) {
	sibs := testSiblings()
	var parts []Part
	for _, s := range sibs {
		parts = append(parts, Part{Headers: SiblingHeaders(&s, APIOld, DialectRiak, core.DefaultType, "b"), Body: s.Value})
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		WriteMultipart(&buf, "BOUNDARY", parts)
	}
}
