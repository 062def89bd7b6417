package s3xml

import (
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

func TestParseCreateBucketConfiguration(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty", "", ""},
		{"white space", " \r\n\t", ""},
		{"with namespace", `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>EU</LocationConstraint></CreateBucketConfiguration>`, "EU"},
		{"declaration, no namespace, spaces", `<?xml version="1.0" encoding="UTF-8"?>
<CreateBucketConfiguration>
  <LocationConstraint> eu-west-1 </LocationConstraint>
</CreateBucketConfiguration>`, "eu-west-1"},
		{"no constraint, other children", `<CreateBucketConfiguration><Bucket><Type>Directory</Type></Bucket></CreateBucketConfiguration>`, ""},
		{"empty element", `<CreateBucketConfiguration><LocationConstraint/></CreateBucketConfiguration>`, ""},
		{"us-ascii declared", `<?xml version="1.0" encoding="US-ASCII"?><CreateBucketConfiguration><LocationConstraint>x</LocationConstraint></CreateBucketConfiguration>`, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCreateBucketConfiguration([]byte(tt.body))
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{
		"EU",
		"<CreateBucketConfiguration><LocationConstraint>EU</LocationConstraint>",
		"<Other><LocationConstraint>EU</LocationConstraint></Other>",
		"<CreateBucketConfiguration></CreateBucketConfiguration><CreateBucketConfiguration></CreateBucketConfiguration>",
		"<CreateBucketConfiguration>&bogus;</CreateBucketConfiguration>",
	} {
		_, err := ParseCreateBucketConfiguration([]byte(bad))
		wantCode(t, err, s3types.MalformedXML, msgMalformedXML)
	}
}

func TestDecode(t *testing.T) {
	type del struct {
		Quiet   bool `xml:"Quiet"`
		Objects []struct {
			Key string `xml:"Key"`
		} `xml:"Object"`
	}
	var d del
	body := `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object></Delete>` + "\n"
	if err := Decode([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Quiet || len(d.Objects) != 2 || d.Objects[0].Key != "a&b" || d.Objects[1].Key != "c" {
		t.Fatalf("%+v", d)
	}
	for _, bad := range []string{"", "<Delete>", "<Delete></Delete>x", "<Delete><Quiet>maybe</Quiet></Delete>"} {
		wantCode(t, Decode([]byte(bad), &d), s3types.MalformedXML, "")
	}
}
