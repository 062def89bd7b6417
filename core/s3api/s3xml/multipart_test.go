package s3xml

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

const etagA = "900150983cd24fb0d6963f7d28e17f72"

func TestMarshalInitiateMultipartUploadGolden(t *testing.T) {
	got := string(MarshalInitiateMultipartUpload("bkt", "a&b/c", "VXBsb2FkSUQ"))
	want := Header + `<InitiateMultipartUploadResult` + nsAttr + `><Bucket>bkt</Bucket><Key>a&amp;b/c</Key>` +
		`<UploadId>VXBsb2FkSUQ</UploadId></InitiateMultipartUploadResult>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	wellFormed(t, []byte(got))
}

func TestMarshalCompleteMultipartUploadGolden(t *testing.T) {
	got := string(MarshalCompleteMultipartUpload("http://bkt.s3.localhost:8080/k%20y", "bkt", "k y", "3858f62230ac3c915f300c664312c11f-2"))
	want := Header + `<CompleteMultipartUploadResult` + nsAttr + `><Location>http://bkt.s3.localhost:8080/k%20y</Location>` +
		`<Bucket>bkt</Bucket><Key>k y</Key><ETag>"3858f62230ac3c915f300c664312c11f-2"</ETag></CompleteMultipartUploadResult>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	wellFormed(t, []byte(got))
}

func TestMarshalCopyResultsGolden(t *testing.T) {
	got := string(MarshalCopyObjectResult(t2, etagA))
	want := Header + `<CopyObjectResult` + nsAttr + `><LastModified>2012-11-29T17:50:30.123Z</LastModified>` +
		`<ETag>"` + etagA + `"</ETag></CopyObjectResult>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got = string(MarshalCopyPartResult(t1, `"`+etagA+`"`))
	want = Header + `<CopyPartResult` + nsAttr + `><LastModified>2012-06-01T09:20:03.000Z</LastModified>` +
		`<ETag>"` + etagA + `"</ETag></CopyPartResult>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMarshalListPartsGolden(t *testing.T) {
	alice := s3types.Owner{ID: idAlice, DisplayName: "alice"}
	person := func(name string) string {
		return `<` + name + `><ID>` + idAlice + `</ID><DisplayName>alice</DisplayName></` + name + `>`
	}
	head := `<ListPartsResult` + nsAttr + `><Bucket>bkt</Bucket><Key>k&lt;1&gt;</Key><UploadId>up</UploadId>` +
		person("Initiator") + person("Owner") + `<StorageClass>STANDARD</StorageClass>`
	tests := []struct {
		name string
		l    PartList
		want string
	}{
		{"two parts truncated", PartList{Bucket: "bkt", Key: "k<1>", UploadID: "up", Initiator: alice, Owner: alice,
			PartNumberMarker: 1, MaxParts: 2, Truncated: true, Parts: []Part{
				{Number: 2, ETag: etagA, LastModified: t1, Size: 5 << 20},
				{Number: 7, ETag: etagA, LastModified: t2, Size: 3},
			}}, Header + lines(head,
			`<PartNumberMarker>1</PartNumberMarker><NextPartNumberMarker>7</NextPartNumberMarker>`,
			`<MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>`,
			`<Part><PartNumber>2</PartNumber><LastModified>2012-06-01T09:20:03.000Z</LastModified>`,
			`<ETag>"`+etagA+`"</ETag><Size>5242880</Size></Part>`,
			`<Part><PartNumber>7</PartNumber><LastModified>2012-11-29T17:50:30.123Z</LastModified>`,
			`<ETag>"`+etagA+`"</ETag><Size>3</Size></Part>`,
			`</ListPartsResult>`)},
		{"empty", PartList{Bucket: "bkt", Key: "k<1>", UploadID: "up", Initiator: alice, Owner: alice, MaxParts: 1000},
			Header + lines(head,
				`<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>0</NextPartNumberMarker>`,
				`<MaxParts>1000</MaxParts><IsTruncated>false</IsTruncated></ListPartsResult>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(MarshalListParts(tt.l))
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, []byte(got))
		})
	}
}

func TestMarshalListUploadsGolden(t *testing.T) {
	alice := s3types.Owner{ID: idAlice, DisplayName: "alice"}
	upload := func(key, id, when string) string {
		return `<Upload><Key>` + key + `</Key><UploadId>` + id + `</UploadId>` +
			`<Initiator><ID>` + idAlice + `</ID><DisplayName>alice</DisplayName></Initiator>` +
			`<Owner><ID>` + idAlice + `</ID><DisplayName>alice</DisplayName></Owner>` +
			`<StorageClass>STANDARD</StorageClass><Initiated>` + when + `</Initiated></Upload>`
	}
	listing := &UploadPage{
		Uploads: []Upload{
			{Key: "p/a b", ID: "u1", Owner: alice, Initiated: t1},
			{Key: "p/a+c", ID: "u2", Owner: alice, Initiated: t2},
		},
		CommonPrefixes: []string{"p/d /"},
		Truncated:      true, NextKeyMarker: "p/d /", NextUploadIDMarker: "",
	}
	tests := []struct {
		name string
		l    UploadList
		want string
	}{
		{"plain", UploadList{Bucket: "bkt", Prefix: "p/", Delimiter: "/", KeyMarker: "p/", UploadIDMarker: "u0", MaxUploads: 3, Listing: listing},
			Header + lines(`<ListMultipartUploadsResult`+nsAttr+`><Bucket>bkt</Bucket>`,
				`<KeyMarker>p/</KeyMarker><UploadIdMarker>u0</UploadIdMarker>`,
				`<NextKeyMarker>p/d /</NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker>`,
				`<Delimiter>/</Delimiter><Prefix>p/</Prefix><MaxUploads>3</MaxUploads><IsTruncated>true</IsTruncated>`,
				upload("p/a b", "u1", "2012-06-01T09:20:03.000Z"), upload("p/a+c", "u2", "2012-11-29T17:50:30.123Z"),
				`<CommonPrefixes><Prefix>p/d /</Prefix></CommonPrefixes></ListMultipartUploadsResult>`)},
		{"url encoded", UploadList{Bucket: "bkt", Prefix: "p/", Delimiter: " ", KeyMarker: "a+b", MaxUploads: 1000, EncodingURL: true, Listing: listing},
			Header + lines(`<ListMultipartUploadsResult`+nsAttr+`><Bucket>bkt</Bucket>`,
				`<KeyMarker>a%2Bb</KeyMarker><UploadIdMarker></UploadIdMarker>`,
				`<NextKeyMarker>p/d%20/</NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker>`,
				`<Delimiter>%20</Delimiter><Prefix>p/</Prefix><MaxUploads>1000</MaxUploads>`,
				`<EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>`,
				upload("p/a%20b", "u1", "2012-06-01T09:20:03.000Z"), upload("p/a%2Bc", "u2", "2012-11-29T17:50:30.123Z"),
				`<CommonPrefixes><Prefix>p/d%20/</Prefix></CommonPrefixes></ListMultipartUploadsResult>`)},
		{"nothing", UploadList{Bucket: "bkt", MaxUploads: 1000},
			Header + lines(`<ListMultipartUploadsResult`+nsAttr+`><Bucket>bkt</Bucket>`,
				`<KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>`,
				`<NextKeyMarker></NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker>`,
				`<Prefix></Prefix><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(MarshalListUploads(tt.l))
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, []byte(got))
		})
	}
}

func TestParseCompleteMultipartUpload(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []s3types.CompletePart
	}{
		{"aws example", `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Part><PartNumber>1</PartNumber><ETag>"a54357aff0632cce46d942af68356b38"</ETag></Part>
  <Part><ETag>&quot;0c78aef83f66abc1fa1e8477f296d394&quot;</ETag><PartNumber> 2 </PartNumber><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>
</CompleteMultipartUpload>`, []s3types.CompletePart{
			{Number: 1, ETag: `"a54357aff0632cce46d942af68356b38"`},
			{Number: 2, ETag: `"0c78aef83f66abc1fa1e8477f296d394"`},
		}},
		{"no namespace, declaration, unquoted etag, unordered", `<?xml version="1.0" encoding="UTF-8"?>` +
			`<CompleteMultipartUpload><Part><PartNumber>3</PartNumber><ETag> abc </ETag></Part>` +
			`<Part><PartNumber>1</PartNumber><ETag></ETag></Part></CompleteMultipartUpload>`,
			[]s3types.CompletePart{{Number: 3, ETag: "abc"}, {Number: 1, ETag: ""}}},
		{"numbers outside the range are the service's", `<CompleteMultipartUpload><Part><PartNumber>-4</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>`,
			[]s3types.CompletePart{{Number: -4, ETag: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCompleteMultipartUpload([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseCompleteMultipartUploadMalformed(t *testing.T) {
	many := strings.Repeat(`<Part><PartNumber>1</PartNumber><ETag>e</ETag></Part>`, MaxCompleteParts+1)
	for name, body := range map[string]string{
		"empty":          ``,
		"not xml":        `parts please`,
		"other root":     `<Complete><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part></Complete>`,
		"no parts":       `<CompleteMultipartUpload></CompleteMultipartUpload>`,
		"no number":      `<CompleteMultipartUpload><Part><ETag>e</ETag></Part></CompleteMultipartUpload>`,
		"no etag":        `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>`,
		"bad number":     `<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`,
		"huge number":    `<CompleteMultipartUpload><Part><PartNumber>99999999999999999999999</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>`,
		"unclosed":       `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part>`,
		"trailing":       `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload><x/>`,
		"too many parts": `<CompleteMultipartUpload>` + many + `</CompleteMultipartUpload>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseCompleteMultipartUpload([]byte(body))
			wantCode(t, err, s3types.MalformedXML, msgMalformedXML)
		})
	}
}

func TestParseDelete(t *testing.T) {
	tests := []struct {
		name string
		body string
		want DeleteRequest
	}{
		{"quiet with versions", `<?xml version="1.0" encoding="UTF-8"?>
<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Quiet> true </Quiet>
  <Object><Key>sample1.txt</Key></Object>
  <Object><Key> spaced key </Key><VersionId> null </VersionId></Object>
</Delete>`, DeleteRequest{Quiet: true, Objects: []DeleteObject{{Key: "sample1.txt"}, {Key: " spaced key ", VersionID: "null"}}}},
		{"verbose by default, escaped keys", `<Delete><Object><Key>a&amp;b&lt;c&#xD;</Key></Object><Object><Key></Key></Object></Delete>`,
			DeleteRequest{Objects: []DeleteObject{{Key: "a&b<c\r"}, {Key: ""}}}},
		{"quiet 0 and unknown elements", `<Delete><Quiet>0</Quiet><Object><Key>k</Key><ETag>x</ETag></Object><Extra/></Delete>`,
			DeleteRequest{Objects: []DeleteObject{{Key: "k"}}}},
		{"quiet 1", `<Delete><Quiet>1</Quiet><Object><Key>k</Key></Object></Delete>`,
			DeleteRequest{Quiet: true, Objects: []DeleteObject{{Key: "k"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDelete([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
	var b strings.Builder
	b.WriteString("<Delete>")
	for i := range MaxDeleteObjects {
		fmt.Fprintf(&b, "<Object><Key>k%d</Key></Object>", i)
	}
	b.WriteString("</Delete>")
	got, err := ParseDelete([]byte(b.String()))
	if err != nil || len(got.Objects) != MaxDeleteObjects {
		t.Fatalf("%d objects: %v", MaxDeleteObjects, err)
	}
}

func TestParseDeleteMalformed(t *testing.T) {
	var b strings.Builder
	b.WriteString("<Delete>")
	for i := range MaxDeleteObjects + 1 {
		fmt.Fprintf(&b, "<Object><Key>k%d</Key></Object>", i)
	}
	b.WriteString("</Delete>")
	for name, body := range map[string]string{
		"empty":        ``,
		"other root":   `<DeleteObjects><Object><Key>k</Key></Object></DeleteObjects>`,
		"no objects":   `<Delete><Quiet>true</Quiet></Delete>`,
		"no key":       `<Delete><Object><VersionId>v</VersionId></Object></Delete>`,
		"bad quiet":    `<Delete><Quiet>yes</Quiet><Object><Key>k</Key></Object></Delete>`,
		"unclosed":     `<Delete><Object><Key>k</Key></Object>`,
		"too many":     b.String(),
		"bad encoding": `<?xml version="1.0" encoding="latin1"?><Delete><Object><Key>k</Key></Object></Delete>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseDelete([]byte(body))
			wantCode(t, err, s3types.MalformedXML, msgMalformedXML)
		})
	}
}

func TestMarshalDeleteResultGolden(t *testing.T) {
	outcomes := []DeleteOutcome{
		{Key: "a&b"},
		{Key: "v", VersionID: "null"},
		{Key: "x", Code: s3types.AccessDenied, Message: "Access Denied"},
		{Key: "y", VersionID: "123", Code: "NoSuchVersion", Message: "The specified version does not exist."},
	}
	errs := `<Error><Key>x</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>` +
		`<Error><Key>y</Key><VersionId>123</VersionId><Code>NoSuchVersion</Code><Message>The specified version does not exist.</Message></Error>`
	tests := []struct {
		name     string
		quiet    bool
		outcomes []DeleteOutcome
		want     string
	}{
		{"verbose", false, outcomes, Header + `<DeleteResult` + nsAttr + `>` +
			`<Deleted><Key>a&amp;b</Key></Deleted><Deleted><Key>v</Key><VersionId>null</VersionId></Deleted>` + errs + `</DeleteResult>`},
		{"quiet", true, outcomes, Header + `<DeleteResult` + nsAttr + `>` + errs + `</DeleteResult>`},
		{"quiet, all deleted", true, outcomes[:2], Header + `<DeleteResult` + nsAttr + `></DeleteResult>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(MarshalDeleteResult(tt.quiet, tt.outcomes))
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			wellFormed(t, []byte(got))
		})
	}
}

// representable reports whether s survives AppendText unchanged (so a document built
// with it parses back to s).
func representable(s string) bool {
	return utf8.ValidString(s) && EscapeText(s) == strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;").Replace(s)
}

func FuzzParseCompleteMultipartUpload(f *testing.F) {
	f.Add(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><PartNumber>1</PartNumber><ETag>"a54357aff0632cce46d942af68356b38"</ETag></Part></CompleteMultipartUpload>`)
	f.Add(`<CompleteMultipartUpload><Part><PartNumber> 2 </PartNumber><ETag>&quot;x&quot;</ETag><ChecksumCRC32>A==</ChecksumCRC32></Part><Part><PartNumber>1</PartNumber><ETag/></Part></CompleteMultipartUpload>`)
	f.Add(`<CompleteMultipartUpload><Part><PartNumber>+7</PartNumber><ETag>&#xD;</ETag></Part></CompleteMultipartUpload>`)
	f.Add(`<CompleteMultipartUpload><Part/></CompleteMultipartUpload>`)
	f.Fuzz(func(t *testing.T, body string) {
		parts, err := ParseCompleteMultipartUpload([]byte(body))
		if err != nil {
			wantCode(t, err, s3types.MalformedXML, msgMalformedXML)
			return
		}
		if len(parts) == 0 || len(parts) > MaxCompleteParts {
			t.Fatalf("accepted %d parts", len(parts))
		}
		// The parts written back as a document parse to the same parts.
		var b strings.Builder
		b.WriteString("<CompleteMultipartUpload>")
		for _, p := range parts {
			if trim(p.ETag) != p.ETag {
				t.Fatalf("etag not trimmed: %q", p.ETag)
			}
			if !representable(p.ETag) {
				return
			}
			fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", p.Number, EscapeText(p.ETag))
		}
		b.WriteString("</CompleteMultipartUpload>")
		again, err := ParseCompleteMultipartUpload([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(again, parts) {
			t.Fatalf("re-parse differs:\n%+v\n%+v", again, parts)
		}
	})
}

func FuzzParseDelete(f *testing.F) {
	f.Add(`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>k</Key></Object></Delete>`)
	f.Add(`<Delete><Object><Key> a&amp;b </Key><VersionId>null</VersionId></Object><Object><Key/></Object></Delete>`)
	f.Add(`<Delete><Quiet>maybe</Quiet><Object><Key>k</Key></Object></Delete>`)
	f.Add(`<Delete><Object><Key>&#xD;&#x9;</Key></Object></Delete>`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := ParseDelete([]byte(body))
		if err != nil {
			wantCode(t, err, s3types.MalformedXML, msgMalformedXML)
			return
		}
		if len(req.Objects) == 0 || len(req.Objects) > MaxDeleteObjects {
			t.Fatalf("accepted %d objects", len(req.Objects))
		}
		// The request written back as a document parses to the same request, and the
		// answer to it is well-formed.
		var b strings.Builder
		fmt.Fprintf(&b, "<Delete><Quiet>%t</Quiet>", req.Quiet)
		outcomes := make([]DeleteOutcome, 0, len(req.Objects))
		for i, o := range req.Objects {
			if !representable(o.Key) || !representable(o.VersionID) {
				return
			}
			b.WriteString("<Object><Key>" + EscapeText(o.Key) + "</Key>")
			if o.VersionID != "" {
				b.WriteString("<VersionId>" + EscapeText(o.VersionID) + "</VersionId>")
			}
			b.WriteString("</Object>")
			out := DeleteOutcome{Key: o.Key, VersionID: o.VersionID}
			if i%2 == 1 {
				out.Code, out.Message = s3types.AccessDenied, "Access Denied"
			}
			outcomes = append(outcomes, out)
		}
		b.WriteString("</Delete>")
		again, err := ParseDelete([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(again, req) {
			t.Fatalf("re-parse differs:\n%+v\n%+v", again, req)
		}
		wellFormed(t, MarshalDeleteResult(req.Quiet, outcomes))
	})
}
