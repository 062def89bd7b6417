package s3xml

import (
	"reflect"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

func lcRule(body string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>` + body + `</Rule></LifecycleConfiguration>`
}

func ptr[T any](v T) *T { return &v }

// lifecycleForms are valid rules, each with what it parses to.
var lifecycleForms = []struct {
	name string
	body string
	want s3types.LifecycleRule
}{
	{"legacy prefix", lcRule(`<ID>a</ID><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>3</Days></Expiration>`),
		s3types.LifecycleRule{ID: "a", Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterLegacyPrefix, Prefix: "logs/"},
			Expiration: &s3types.LifecycleExpiration{Days: 3}}},
	{"no filter, disabled", lcRule(`<Status>Disabled</Status><Expiration><Days>1</Days></Expiration>`),
		s3types.LifecycleRule{Expiration: &s3types.LifecycleExpiration{Days: 1}}},
	{"empty filter", lcRule(`<ID>b</ID><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T00:00:00.000Z</Date></Expiration>`),
		s3types.LifecycleRule{ID: "b", Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterSingle},
			Expiration: &s3types.LifecycleExpiration{Date: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}}},
	{"filter prefix, date only", lcRule(`<Filter><Prefix>p</Prefix></Filter><Status>Enabled</Status><Expiration><Date>2030-01-02</Date></Expiration>`),
		s3types.LifecycleRule{Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterSingle, Prefix: "p", HasPrefix: true},
			Expiration: &s3types.LifecycleExpiration{Date: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}}},
	{"filter tag", lcRule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days> 7 </Days></Expiration>`),
		s3types.LifecycleRule{Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterSingle, Tags: []s3types.Tag{{Key: "k", Value: "v"}}},
			Expiration: &s3types.LifecycleExpiration{Days: 7}}},
	{"filter size", lcRule(`<Filter><ObjectSizeGreaterThan>1024</ObjectSizeGreaterThan></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`),
		s3types.LifecycleRule{Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterSingle, SizeGreaterThan: ptr(int64(1024))},
			Expiration: &s3types.LifecycleExpiration{Days: 1}}},
	{"and", lcRule(`<ID>c</ID><Filter><And><Prefix>x/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value></Value></Tag>` +
		`<ObjectSizeGreaterThan>1</ObjectSizeGreaterThan><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter><Status>Enabled</Status>` +
		`<Expiration><Days>2</Days></Expiration>`),
		s3types.LifecycleRule{ID: "c", Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterAnd, Prefix: "x/", HasPrefix: true,
			Tags: []s3types.Tag{{Key: "a", Value: "1"}, {Key: "b"}}, SizeGreaterThan: ptr(int64(1)), SizeLessThan: ptr(int64(9))},
			Expiration: &s3types.LifecycleExpiration{Days: 2}}},
	{"versioned actions and abort", lcRule(`<ID>d</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status>` +
		`<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>` +
		`<NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>` +
		`<AbortIncompleteMultipartUpload><DaysAfterInitiation>5</DaysAfterInitiation></AbortIncompleteMultipartUpload>`),
		s3types.LifecycleRule{ID: "d", Enabled: true, Filter: s3types.LifecycleFilter{Form: s3types.FilterSingle, HasPrefix: true},
			Expiration:           &s3types.LifecycleExpiration{DeleteMarker: ptr(true)},
			NoncurrentExpiration: &s3types.NoncurrentExpiration{NoncurrentDays: 30, NewerVersions: 2},
			AbortUpload:          &s3types.AbortIncompleteUpload{DaysAfterInitiation: 5}}},
}

// TestParseLifecycleForms: each form of rule parses to what it says, and renders back
// (MarshalLifecycle) to a document that parses to the same rule.
func TestParseLifecycleForms(t *testing.T) {
	for _, c := range lifecycleForms {
		lc, err := ParseLifecycle([]byte(c.body))
		if err != nil || len(lc.Rules) != 1 {
			t.Errorf("%s: %+v %v", c.name, lc, err)
			continue
		}
		if !reflect.DeepEqual(lc.Rules[0], c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, lc.Rules[0], c.want)
		}
		again, err := ParseLifecycle(MarshalLifecycle(lc))
		if err != nil || !reflect.DeepEqual(again, lc) {
			t.Errorf("%s: round trip gives %+v %v", c.name, again, err)
		}
	}
}

// TestMarshalLifecycleGolden: GET ?lifecycle's document.
func TestMarshalLifecycleGolden(t *testing.T) {
	lc, err := ParseLifecycle([]byte(lifecycleForms[6].body))
	if err != nil {
		t.Fatal(err)
	}
	want := Header + `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>c</ID>` +
		`<Filter><And><Prefix>x/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value></Value></Tag>` +
		`<ObjectSizeGreaterThan>1</ObjectSizeGreaterThan><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter>` +
		`<Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule></LifecycleConfiguration>`
	if got := string(MarshalLifecycle(lc)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestMarshalLifecycleFilterForms: GET ?lifecycle writes a rule's filter back as its
// PUT wrote it: no Filter, an empty Filter, a Filter (or And) with an empty Prefix and
// one without a Prefix are four documents, though the first three select the same.
func TestMarshalLifecycleFilterForms(t *testing.T) {
	const exp = `<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`
	for _, c := range []struct {
		name, filter string
	}{
		{"no filter", ``},
		{"empty filter", `<Filter></Filter>`},
		{"empty prefix", `<Filter><Prefix></Prefix></Filter>`},
		{"prefix", `<Filter><Prefix>a/</Prefix></Filter>`},
		{"legacy empty prefix", `<Prefix></Prefix>`},
		{"and with an empty prefix", `<Filter><And><Prefix></Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter>`},
		{"and without a prefix", `<Filter><And><Tag><Key>k</Key><Value>v</Value></Tag><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter>`},
	} {
		lc, err := ParseLifecycle([]byte(lcRule(`<ID>r</ID>` + c.filter + exp)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := Header + lcRule(`<ID>r</ID>`+c.filter+exp)
		if got := string(MarshalLifecycle(lc)); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

// TestParseLifecycleErrors: what the schema refuses is MalformedXML; a transition is
// NotImplemented.
func TestParseLifecycleErrors(t *testing.T) {
	exp := `<Expiration><Days>1</Days></Expiration>`
	for _, c := range []struct {
		name, body string
		want       s3types.Code
	}{
		{"not XML", "<", s3types.MalformedXML},
		{"other root", `<Lifecycle><Rule><Status>Enabled</Status>` + exp + `</Rule></Lifecycle>`, s3types.MalformedXML},
		{"no rule", `<LifecycleConfiguration/>`, s3types.MalformedXML},
		{"no status", lcRule(exp), s3types.MalformedXML},
		{"lower-case status", lcRule(`<Status>enabled</Status>` + exp), s3types.MalformedXML},
		{"prefix and filter", lcRule(`<Prefix>a</Prefix><Filter/><Status>Enabled</Status>` + exp), s3types.MalformedXML},
		{"two conditions outside And", lcRule(`<Filter><Prefix>a</Prefix><ObjectSizeLessThan>3</ObjectSizeLessThan></Filter><Status>Enabled</Status>` + exp), s3types.MalformedXML},
		{"two tags outside And", lcRule(`<Filter><Tag><Key>a</Key><Value/></Tag><Tag><Key>b</Key><Value/></Tag></Filter><Status>Enabled</Status>` + exp), s3types.MalformedXML},
		{"tag without key", lcRule(`<Filter><Tag><Value>v</Value></Tag></Filter><Status>Enabled</Status>` + exp), s3types.MalformedXML},
		{"size not a number", lcRule(`<Filter><ObjectSizeLessThan>3k</ObjectSizeLessThan></Filter><Status>Enabled</Status>` + exp), s3types.MalformedXML},
		{"empty expiration", lcRule(`<Status>Enabled</Status><Expiration/>`), s3types.MalformedXML},
		{"days and date", lcRule(`<Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01</Date></Expiration>`), s3types.MalformedXML},
		{"days not a number", lcRule(`<Status>Enabled</Status><Expiration><Days>one</Days></Expiration>`), s3types.MalformedXML},
		{"days beyond 32 bits", lcRule(`<Status>Enabled</Status><Expiration><Days>2147483648</Days></Expiration>`), s3types.MalformedXML},
		{"date not ISO 8601", lcRule(`<Status>Enabled</Status><Expiration><Date>20200101</Date></Expiration>`), s3types.MalformedXML},
		{"delete marker not a boolean", lcRule(`<Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker></Expiration>`), s3types.MalformedXML},
		{"noncurrent without days", lcRule(`<Status>Enabled</Status><NoncurrentVersionExpiration/>`), s3types.MalformedXML},
		{"abort without days", lcRule(`<Status>Enabled</Status><AbortIncompleteMultipartUpload/>`), s3types.MalformedXML},
		{"transition", lcRule(`<Status>Enabled</Status><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`), s3types.NotImplemented},
		{"noncurrent transition", lcRule(`<Status>Enabled</Status>` + exp + `<NoncurrentVersionTransition><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionTransition>`), s3types.NotImplemented},
	} {
		_, err := ParseLifecycle([]byte(c.body))
		if !s3types.IsCode(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
