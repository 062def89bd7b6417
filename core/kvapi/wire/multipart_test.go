package wire

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name byte for byte (or rewrites it with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s mismatch\n got: %q\nwant: %q", name, got, want)
	}
}

func date(sec int) time.Time { return time.Date(2010, 3, 10, 18, 11, sec, 0, time.UTC) }

func testSiblings() []core.Sibling {
	return []core.Sibling{
		{
			Value: []byte("hello"), ContentType: "text/plain", Charset: "utf-8",
			VTag: "16vic4eU9ny46o4KPiDz1f", LastModified: date(41),
			Meta:    []core.MetaEntry{{Name: "Details", Value: "d1"}},
			Links:   []core.Link{{Bucket: "b", Key: "k2", Tag: "tag1"}},
			Indexes: []core.IndexEntry{{Field: "email_bin", Value: "b@x"}, {Field: "age_int", Value: "42"}, {Field: "email_bin", Value: "a@x"}},
		},
		{Value: []byte("{}"), ContentType: "application/json", Encoding: "gzip", VTag: "4v5xOg4bVwUYZdMkqf0d6I", LastModified: date(42)},
		{ContentType: "text/plain", VTag: "5tombstone0000000000000", LastModified: date(43), Deleted: true},
	}
}

func TestSiblingsMultipartGolden(t *testing.T) {
	var parts []Part
	for _, s := range testSiblings() {
		parts = append(parts, Part{Headers: SiblingHeaders(&s, APIOld, DialectRiak, core.DefaultType, "b"), Body: s.Value})
	}
	var buf bytes.Buffer
	WriteMultipart(&buf, "B", parts)
	golden(t, "siblings_multipart.golden", buf.Bytes())

	back, err := ParseMultipart(buf.Bytes(), "B")
	if err != nil {
		t.Fatal(err)
	}
	assertPartsEqual(t, back, parts)
	if got := MultipartContentType("B"); got != "multipart/mixed; boundary=B" {
		t.Fatal(got)
	}
}

func TestSiblingHeadersStoreDialect(t *testing.T) {
	s := testSiblings()[2]
	s.Meta = []core.MetaEntry{{Name: "X", Value: "y"}}
	s.Indexes = []core.IndexEntry{{Field: "f_bin", Value: "v"}}
	got := SiblingHeaders(&s, APIBuckets, DialectStore, core.DefaultType, "b")
	want := [][2]string{
		{"Content-Type", "text/plain"},
		{"Link", `</buckets/b>; rel="up"`},
		{"Etag", "5tombstone0000000000000"},
		{"Last-Modified", "Wed, 10 Mar 2010 18:11:43 GMT"},
		{"X-Store-Deleted", "true"},
		{"X-Store-Meta-X", "y"},
		{"x-store-index-f_bin", "v"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestSiblingsTextGolden(t *testing.T) {
	golden(t, "siblings.txt.golden", SiblingsText([]string{"16vic4eU9ny46o4KPiDz1f", "4v5xOg4bVwUYZdMkqf0d6I"}))
	if got := string(SiblingsText(nil)); got != "Siblings:\n" {
		t.Fatal(got)
	}
}

// TestLinkWalkGolden reproduces the reference's link-walk example byte for byte: a
// nested multipart body whose inner body's leading CRLF ends the outer part's headers.
func TestLinkWalkGolden(t *testing.T) {
	s := core.Sibling{
		Value: []byte(`{"riak":"CAP"}`), ContentType: "application/json",
		VTag: "3pvmY35coyWPxh8mh4uBQC", LastModified: time.Date(2010, 3, 10, 20, 14, 13, 0, time.UTC),
		Links: []core.Link{{Bucket: "test", Key: "doc2", Tag: "next"}},
	}
	headers := [][2]string{
		{DialectRiak.Header("Vclock"), "a85hYGBgzGDKBVIsbLvm1WYwJTLmsTLcjeE5ypcFAA=="},
		{"Location", ObjectPath(APIOld, DialectRiak, core.DefaultType, "test", "doc")},
	}
	headers = append(headers, SiblingHeaders(&s, APIOld, DialectRiak, core.DefaultType, "test")...)
	var inner bytes.Buffer
	WriteMultipart(&inner, "INNER", []Part{{Headers: headers, Body: s.Value}})
	var outer bytes.Buffer
	WriteMultipart(&outer, "OUTER", []Part{{
		Headers: [][2]string{{"Content-Type", MultipartContentType("INNER")}},
		Body:    inner.Bytes(),
		Nested:  true,
	}})
	golden(t, "linkwalk_multipart.golden", outer.Bytes())

	// The reader takes it apart again, level by level.
	op, err := ParseMultipart(outer.Bytes(), "OUTER")
	if err != nil || len(op) != 1 {
		t.Fatalf("outer: %v, %d parts", err, len(op))
	}
	ip, err := ParseMultipart(op[0].Body, "INNER")
	if err != nil {
		t.Fatal(err)
	}
	assertPartsEqual(t, ip, []Part{{Headers: headers, Body: s.Value}})
}

func TestStreamGolden(t *testing.T) {
	ct := [][2]string{{"Content-Type", "application/json"}}
	var b []byte
	b = AppendPart(b, "S", Part{Headers: ct, Body: []byte(`{"keys":["k1","k2"]}`)})
	b = AppendPart(b, "S", Part{Headers: ct, Body: []byte(`{"continuation":"g2gC"}`)})
	b = AppendClose(b, "S")
	golden(t, "stream_multipart.golden", b)
	if got := StreamContentType("S"); got != "multipart/mixed;boundary=S" {
		t.Fatal(got)
	}
}

func TestWriteMultipartEmpty(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("prefix:")
	WriteMultipart(&buf, "B", nil)
	if got := buf.String(); got != "prefix:\r\n--B--\r\n" {
		t.Fatalf("%q", got)
	}
}

func TestParseMultipart(t *testing.T) {
	hdr := func(kv ...string) [][2]string {
		var h [][2]string
		for i := 0; i < len(kv); i += 2 {
			h = append(h, [2]string{kv[i], kv[i+1]})
		}
		return h
	}
	tests := []struct {
		name    string
		body    string
		want    []Part
		wantErr bool
	}{
		{name: "riak framing", body: "\r\n--B\r\nA: 1\r\nB:2\r\n\r\nbody one\r\n--B\r\nC: 3\r\n\r\n\r\n--B--\r\n",
			want: []Part{{Headers: hdr("A", "1", "B", "2"), Body: []byte("body one")}, {Headers: hdr("C", "3"), Body: []byte{}}}},
		{name: "mime framing with preamble and epilogue", body: "preamble\r\n--B  \r\nA: 1\r\n\r\nx\r\n--B--\r\nepilogue",
			want: []Part{{Headers: hdr("A", "1"), Body: []byte("x")}}},
		{name: "delimiter at start", body: "--B\r\nA: 1\r\n\r\nx\r\n--B--", want: []Part{{Headers: hdr("A", "1"), Body: []byte("x")}}},
		{name: "no headers", body: "\r\n--B\r\n\r\nraw\r\n--B--\r\n", want: []Part{{Body: []byte("raw")}}},
		{name: "headers without blank line", body: "\r\n--B\r\nA: 1\r\n\r\n--B--\r\n", want: []Part{{Headers: hdr("A", "1")}}},
		{name: "lookalike boundary in body", body: "\r\n--B\r\n\r\nx\r\n--Bz\r\n--B--", want: []Part{{Body: []byte("x\r\n--Bz")}}},
		{name: "crlf in body", body: "\r\n--B\r\n\r\n\r\nx\r\n\r\n\r\n--B--", want: []Part{{Body: []byte("\r\nx\r\n\r\n")}}},
		{name: "no parts", body: "\r\n--B--\r\n"},
		{name: "no delimiter", body: "hello", wantErr: true},
		{name: "unterminated", body: "\r\n--B\r\nA: 1\r\n\r\nx", wantErr: true},
		{name: "header without colon", body: "\r\n--B\r\nnocolon\r\n\r\nx\r\n--B--", wantErr: true},
		{name: "part without line end", body: "\r\n--B\r\nA: 1\r\n--B--", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMultipart([]byte(tt.body), "B")
			if tt.wantErr {
				if !errors.Is(err, ErrMalformedMultipart) {
					t.Fatalf("got %v, %v; want ErrMalformedMultipart", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertPartsEqual(t, got, tt.want)
		})
	}
	if _, err := ParseMultipart([]byte("\r\n----\r\n"), ""); err == nil {
		t.Fatal("empty boundary accepted")
	}
}

func assertPartsEqual(t *testing.T, got, want []Part) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d parts, want %d: %v", len(got), len(want), got)
	}
	for i := range got {
		if !slices.Equal(got[i].Headers, want[i].Headers) || !bytes.Equal(got[i].Body, want[i].Body) {
			t.Fatalf("part %d = %q %q, want %q %q", i, got[i].Headers, got[i].Body, want[i].Headers, want[i].Body)
		}
	}
}
