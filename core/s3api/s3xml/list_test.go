package s3xml

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

const nsAttr = ` xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`

var (
	t1 = time.Date(2012, 6, 1, 9, 20, 3, 0, time.UTC)
	// t2 is not in UTC and has sub-millisecond digits: written in UTC, truncated.
	t2 = time.Date(2012, 11, 29, 18, 50, 30, 123987654, time.FixedZone("CET", 3600))
)

func TestMarshalBucketsGolden(t *testing.T) {
	owner := s3types.Owner{ID: idAlice, DisplayName: "alice"}
	tests := []struct {
		name    string
		buckets []s3types.BucketInfo
		want    string
	}{
		{"two", []s3types.BucketInfo{{Name: "b1", Created: t1}, {Name: "b2", Created: t2}}, Header + lines(
			`<ListAllMyBucketsResult`+nsAttr+`>`,
			`<Owner><ID>`+idAlice+`</ID><DisplayName>alice</DisplayName></Owner>`,
			`<Buckets>`,
			`<Bucket><Name>b1</Name><CreationDate>2012-06-01T09:20:03.000Z</CreationDate></Bucket>`,
			`<Bucket><Name>b2</Name><CreationDate>2012-11-29T17:50:30.123Z</CreationDate></Bucket>`,
			`</Buckets></ListAllMyBucketsResult>`)},
		{"none", nil, Header + lines(
			`<ListAllMyBucketsResult`+nsAttr+`>`,
			`<Owner><ID>`+idAlice+`</ID><DisplayName>alice</DisplayName></Owner>`,
			`<Buckets></Buckets></ListAllMyBucketsResult>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalBuckets(owner, tt.buckets)
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, got)
		})
	}
}

func sampleListing(truncated bool, next string) *s3types.Listing {
	return &s3types.Listing{
		Objects: []s3types.ObjectInfo{
			{Key: "p/a", Size: 3, ETag: "900150983cd24fb0d6963f7d28e17f72", LastModified: t1, Owner: s3types.Owner{ID: idAlice, DisplayName: "alice"}},
			{Key: "p/b&c", Size: 0, ETag: `"d41d8cd98f00b204e9800998ecf8427e"`, LastModified: t2, Owner: s3types.Owner{ID: idBob, DisplayName: "bob"}},
		},
		CommonPrefixes: []string{"p/sub/"},
		Truncated:      truncated,
		NextMarker:     next,
	}
}

const (
	contentsA = `<Contents><Key>p/a</Key><LastModified>2012-06-01T09:20:03.000Z</LastModified>` +
		`<ETag>"900150983cd24fb0d6963f7d28e17f72"</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass>`
	ownerA    = `<Owner><ID>` + idAlice + `</ID><DisplayName>alice</DisplayName></Owner>`
	contentsB = `<Contents><Key>p/b&amp;c</Key><LastModified>2012-11-29T17:50:30.123Z</LastModified>` +
		`<ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass>`
	ownerB = `<Owner><ID>` + idBob + `</ID><DisplayName>bob</DisplayName></Owner>`
)

func TestMarshalListV1Golden(t *testing.T) {
	tests := []struct {
		name string
		l    ListV1
		want string
	}{
		{"details example", ListV1{Bucket: "bucket", Prefix: "p/", Delimiter: "/", MaxKeys: 1000, Listing: sampleListing(false, "")}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>bucket</Name><Prefix>p/</Prefix><Marker></Marker><MaxKeys>1000</MaxKeys>`,
			`<Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>`,
			contentsA, ownerA, `</Contents>`,
			contentsB, ownerB, `</Contents>`,
			`<CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
		{"empty, nil listing, no delimiter", ListV1{Bucket: "b", Marker: "m<", MaxKeys: 0}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix></Prefix><Marker>m&lt;</Marker><MaxKeys>0</MaxKeys>`,
			`<IsTruncated>false</IsTruncated></ListBucketResult>`)},
		{"truncated with next marker", ListV1{Bucket: "b", Prefix: "p/", MaxKeys: 3, Listing: sampleListing(true, "p/sub/")}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix>p/</Prefix><Marker></Marker><MaxKeys>3</MaxKeys>`,
			`<IsTruncated>true</IsTruncated><NextMarker>p/sub/</NextMarker>`,
			contentsA, ownerA, `</Contents>`,
			contentsB, ownerB, `</Contents>`,
			`<CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
		{"truncated, next marker derived", ListV1{Bucket: "b", MaxKeys: 2, Listing: &s3types.Listing{
			Objects: sampleListing(false, "").Objects, Truncated: true}}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix></Prefix><Marker></Marker><MaxKeys>2</MaxKeys>`,
			`<IsTruncated>true</IsTruncated><NextMarker>p/b&amp;c</NextMarker>`,
			contentsA, ownerA, `</Contents>`,
			contentsB, ownerB, `</Contents>`,
			`</ListBucketResult>`)},
		{"url encoding", ListV1{Bucket: "b", Prefix: "a b+\n", Marker: "a b+/0", Delimiter: "+", MaxKeys: 1000, EncodingURL: true, Listing: &s3types.Listing{
			Objects:        []s3types.ObjectInfo{{Key: "a b+/1%é", Size: 1, ETag: "e", LastModified: t1}},
			CommonPrefixes: []string{"a b++"}, Truncated: true, NextMarker: "a b++"}}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			"<Name>b</Name><Prefix>a b+\n</Prefix><Marker>a%20b%2B/0</Marker><MaxKeys>1000</MaxKeys>",
			`<Delimiter>%2B</Delimiter><EncodingType>url</EncodingType>`,
			`<IsTruncated>true</IsTruncated><NextMarker>a%20b%2B%2B</NextMarker>`,
			`<Contents><Key>a%20b%2B/1%25%C3%A9</Key><LastModified>2012-06-01T09:20:03.000Z</LastModified>`,
			`<ETag>"e"</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass>`,
			`<Owner><ID></ID><DisplayName></DisplayName></Owner></Contents>`,
			`<CommonPrefixes><Prefix>a%20b%2B%2B</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalListV1(tt.l)
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, got)
		})
	}
}

func TestMarshalListV2Golden(t *testing.T) {
	tests := []struct {
		name string
		l    ListV2
		want string
	}{
		{"plain, no owner", ListV2{Bucket: "bucket", Prefix: "p/", Delimiter: "/", MaxKeys: 1000, Listing: sampleListing(false, "")}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>bucket</Name><Prefix>p/</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys>`,
			`<Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>`,
			contentsA, `</Contents>`,
			contentsB, `</Contents>`,
			`<CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
		{"tokens, start-after, fetch-owner", ListV2{Bucket: "b", StartAfter: "p/", ContinuationToken: "tok1", NextContinuationToken: "tok2",
			MaxKeys: 3, FetchOwner: true, Listing: sampleListing(true, "p/sub/")}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix></Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys>`,
			`<IsTruncated>true</IsTruncated>`,
			`<ContinuationToken>tok1</ContinuationToken><NextContinuationToken>tok2</NextContinuationToken>`,
			`<StartAfter>p/</StartAfter>`,
			contentsA, ownerA, `</Contents>`,
			contentsB, ownerB, `</Contents>`,
			`<CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
		{"empty, nil listing, next token ignored when not truncated", ListV2{Bucket: "b", NextContinuationToken: "x"}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix></Prefix><KeyCount>0</KeyCount><MaxKeys>0</MaxKeys>`,
			`<IsTruncated>false</IsTruncated></ListBucketResult>`)},
		{"url encoding", ListV2{Bucket: "b", Prefix: "a b", Delimiter: "/", StartAfter: "a b/%", ContinuationToken: "t+/=", MaxKeys: 5,
			EncodingURL: true, Listing: &s3types.Listing{
				Objects:        []s3types.ObjectInfo{{Key: "a b/c+d", Size: 7, ETag: "e", LastModified: t1}},
				CommonPrefixes: []string{"a b/x y/"}}}, Header + lines(
			`<ListBucketResult`+nsAttr+`>`,
			`<Name>b</Name><Prefix>a%20b</Prefix><KeyCount>2</KeyCount><MaxKeys>5</MaxKeys>`,
			`<Delimiter>/</Delimiter><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>`,
			`<ContinuationToken>t+/=</ContinuationToken><StartAfter>a%20b/%25</StartAfter>`,
			`<Contents><Key>a%20b/c%2Bd</Key><LastModified>2012-06-01T09:20:03.000Z</LastModified>`,
			`<ETag>"e"</ETag><Size>7</Size><StorageClass>STANDARD</StorageClass></Contents>`,
			`<CommonPrefixes><Prefix>a%20b/x%20y/</Prefix></CommonPrefixes>`,
			`</ListBucketResult>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalListV2(tt.l)
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, got)
		})
	}
}

func TestMarshalLocationAndError(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"location", MarshalLocation("eu-west-1"), Header + `<LocationConstraint` + nsAttr + `>eu-west-1</LocationConstraint>`},
		{"empty location", MarshalLocation(""), Header + `<LocationConstraint` + nsAttr + `></LocationConstraint>`},
		{"error", MarshalError("NoSuchKey", "The specified key does not exist.", "/bucket/key", "4442587FB7D0A2F9", "h2"), Header + lines(
			`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>`,
			`<Resource>/bucket/key</Resource><RequestId>4442587FB7D0A2F9</RequestId><HostId>h2</HostId></Error>`)},
		{"error with extras and escaping", MarshalError("InvalidArgument", "a<b & c", "/b/k&", "", "",
			[2]string{"ArgumentName", "x-amz-grant-read"}, [2]string{"ArgumentValue", `id="<x>"`}), Header + lines(
			`<Error><Code>InvalidArgument</Code><Message>a&lt;b &amp; c</Message>`,
			`<Resource>/b/k&amp;</Resource><RequestId></RequestId><HostId></HostId>`,
			`<ArgumentName>x-amz-grant-read</ArgumentName><ArgumentValue>id="&lt;x&gt;"</ArgumentValue></Error>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", tt.got, tt.want)
			}
			wellFormed(t, tt.got)
		})
	}
}

// listDoc is what a client decodes from a listing.
type listDoc struct {
	Prefix, Marker, NextMarker, Delimiter, StartAfter string
	Contents                                          []struct{ Key string }
	CommonPrefixes                                    []struct{ Prefix string }
}

// trickyKeys are keys every byte of which must survive a listing with encoding-type=url.
var trickyKeys = []string{
	"plain", "a b", "a+b", "a%20b", "100%", "%", "+", " ", "a/b/c", "/lead", "trail/",
	"ünïcödé/日本語", "emoji 🙂", "tab\there", "new\nline", "cr\rlf", "\x00nul", "\x01\x1f\x7f",
	"\xff\xfe invalid utf8", "&amp;<>\"'", "?query=1&x=y#frag", "~tilde-_.", "a\u2028b", "\uFFFE\uFFFF",
	"*star(paren)!$,;:@[]{}|\\^`",
}

func TestURLEncodingRoundTrip(t *testing.T) {
	l := &s3types.Listing{Truncated: true}
	for _, k := range trickyKeys {
		l.Objects = append(l.Objects, s3types.ObjectInfo{Key: k})
		l.CommonPrefixes = append(l.CommonPrefixes, k+"/")
	}
	decoders := map[string]func(string) (string, error){
		"QueryUnescape (unquote_plus)": url.QueryUnescape,
		"PathUnescape (unquote)":       url.PathUnescape,
	}
	for _, key := range trickyKeys {
		v1 := MarshalListV1(ListV1{Bucket: "b", Marker: key, Delimiter: key, EncodingURL: true, Listing: l})
		v2 := MarshalListV2(ListV2{Bucket: "b", Prefix: key, Delimiter: key, StartAfter: key, MaxKeys: 1, EncodingURL: true, Listing: l})
		for _, doc := range [][]byte{v1, v2} {
			wellFormed(t, doc)
			var d listDoc
			if err := xml.Unmarshal(doc, &d); err != nil {
				t.Fatal(err)
			}
			for name, dec := range decoders {
				check := func(field, enc, want string) {
					t.Helper()
					got, err := dec(enc)
					if err != nil || got != want {
						t.Fatalf("%s: %s %q decodes to %q (%v), want %q", name, field, enc, got, err, want)
					}
				}
				check("Delimiter", d.Delimiter, key)
				if d.Marker != "" || d.StartAfter != "" {
					check("Marker", d.Marker+d.StartAfter, key)
				}
				if d.NextMarker != "" {
					check("NextMarker", d.NextMarker, trickyKeys[len(trickyKeys)-1]+"/")
				}
				if d.Prefix != "" {
					check("Prefix", d.Prefix, key)
				}
				for i, c := range d.Contents {
					check("Key", c.Key, trickyKeys[i])
				}
				for i, p := range d.CommonPrefixes {
					check("CommonPrefixes", p.Prefix, trickyKeys[i]+"/")
				}
			}
		}
	}
}

func TestAppendText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain text 123", "plain text 123"},
		{`a&b<c>d"e'f`, `a&amp;b&lt;c&gt;d"e'f`},
		{"t\tn\nr\r", "t\tn\nr&#xD;"},
		{"\x00\x01\x1f", "\uFFFD\uFFFD\uFFFD"},
		{"\x7f", "\x7f"},
		{"é日🙂", "é日🙂"},
		{"\xff\xc3", "\uFFFD\uFFFD"},
		{"\uFFFE\uFFFF\uFFFD", "\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		if got := EscapeText(tt.in); got != tt.want {
			t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Whatever goes in, the element parses back to the text (less what XML cannot hold).
	for _, k := range trickyKeys {
		w := NewWriter("R", false, 0)
		w.Elem("K", k)
		var d struct{ K string }
		if err := xml.Unmarshal(w.Bytes(), &d); err != nil {
			t.Fatalf("%q: %v", k, err)
		}
		if want := sanitize(k); d.K != want {
			t.Fatalf("%q came back as %q", k, d.K)
		}
	}
}

// sanitize is what XML can carry of s: runes XML 1.0 cannot hold (and each invalid
// byte) replaced by U+FFFD.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, s)
}

func TestURLEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abcXYZ019-._~/", "abcXYZ019-._~/"},
		{"foo+1/", "foo%2B1/"},
		{"quux ab/", "quux%20ab/"},
		{"100%", "100%25"},
		{"é", "%C3%A9"},
		{"\x00\xff", "%00%FF"},
		{"*?&=#", "%2A%3F%26%3D%23"},
	}
	for _, tt := range tests {
		if got := URLEncode(tt.in); got != tt.want {
			t.Errorf("URLEncode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriterHelpers(t *testing.T) {
	w := NewWriter("R", true, 0)
	w.ElemETag("A", "x")
	w.ElemETag("B", `"y"`)
	w.ElemETag("C", `"`)
	w.ElemTime("T", time.Date(2020, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", -5*3600)))
	w.ElemInt("I", -42)
	w.ElemBool("Z", true)
	w.ElemURL("U", "a b", false)
	got := string(w.Bytes())
	want := Header + `<R` + nsAttr + `><A>"x"</A><B>"y"</B><C>"""</C><T>2020-01-02T08:04:05.006Z</T><I>-42</I><Z>true</Z><U>a b</U></R>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// page builds a 1000-key listing page.
func page() *s3types.Listing {
	l := &s3types.Listing{Truncated: true}
	for i := range 1000 {
		l.Objects = append(l.Objects, s3types.ObjectInfo{
			Key: fmt.Sprintf("photos/2024/%04d/img %d+final.jpg", i/10, i), Size: int64(i * 1000),
			ETag: "d41d8cd98f00b204e9800998ecf8427e", LastModified: t2, Owner: s3types.Owner{ID: idAlice, DisplayName: "alice"},
		})
	}
	l.NextMarker = l.Objects[999].Key
	return l
}

func TestMarshalListPageAllocs(t *testing.T) {
	l := page()
	for _, enc := range []bool{false, true} {
		n := testing.AllocsPerRun(10, func() {
			MarshalListV1(ListV1{Bucket: "b", MaxKeys: 1000, EncodingURL: enc, Listing: l})
		})
		if n > 4 {
			t.Errorf("encoding %v: %v allocations for a 1000-key page", enc, n)
		}
	}
}

func BenchmarkMarshalListV1(b *testing.B) {
	l := page()
	for _, enc := range []bool{false, true} {
		b.Run(fmt.Sprintf("url=%v", enc), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MarshalListV1(ListV1{Bucket: "b", MaxKeys: 1000, EncodingURL: enc, Listing: l})
			}
		})
	}
}

func BenchmarkMarshalListV2(b *testing.B) {
	l := page()
	b.ReportAllocs()
	for b.Loop() {
		MarshalListV2(ListV2{Bucket: "b", MaxKeys: 1000, EncodingURL: true, FetchOwner: true, Listing: l})
	}
}
