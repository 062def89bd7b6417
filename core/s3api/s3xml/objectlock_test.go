package s3xml

import (
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// TestParseObjectLockConfiguration: the forms AWS documents, and what is malformed.
func TestParseObjectLockConfiguration(t *testing.T) {
	for _, tc := range []struct {
		body string
		want s3types.ObjectLockConfig
		bad  bool
	}{
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`},
		{body: `<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
			`<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`,
			want: s3types.ObjectLockConfig{Mode: "GOVERNANCE", Days: 3}},
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
			`<Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years> 2 </Years></DefaultRetention></Rule></ObjectLockConfiguration>`,
			want: s3types.ObjectLockConfig{Mode: "COMPLIANCE", Years: 2}},
		{body: `<ObjectLockConfiguration/>`, bad: true},
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>`, bad: true},
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule/></ObjectLockConfiguration>`, bad: true},
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
			`<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1e3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, bad: true},
		{body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
			`<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>99999999999</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, bad: true},
		{body: `<Other><ObjectLockEnabled>Enabled</ObjectLockEnabled></Other>`, bad: true},
	} {
		got, err := ParseObjectLockConfiguration([]byte(tc.body))
		if tc.bad {
			if !s3types.IsCode(err, s3types.MalformedXML) {
				t.Errorf("%s: %+v, %v; want MalformedXML", tc.body, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.body, got, err, tc.want)
		}
		again, err := ParseObjectLockConfiguration(MarshalObjectLockConfiguration(got))
		if err != nil || again != got {
			t.Errorf("%+v renders back as %+v, %v", got, again, err)
		}
	}
}

// TestParseRetentionAndLegalHold: a retention, its removal, the date forms, and the
// legal hold's two states.
func TestParseRetentionAndLegalHold(t *testing.T) {
	r, err := ParseRetention([]byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-02T03:04:05.678+01:00</RetainUntilDate></Retention>`))
	want := time.Date(2030, 1, 2, 2, 4, 5, 678e6, time.UTC)
	if err != nil || r.Mode != "COMPLIANCE" || !r.Until.Equal(want) {
		t.Fatalf("retention: %+v, %v", r, err)
	}
	again, err := ParseRetention(MarshalRetention(*r))
	if err != nil || *again != *r {
		t.Errorf("retention renders back as %+v, %v", again, err)
	}
	if r, err := ParseRetention([]byte(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`)); r != nil || err != nil {
		t.Errorf("empty retention: %+v, %v", r, err)
	}
	for _, bad := range []string{`<Retention><Mode>GOVERNANCE</Mode></Retention>`,
		`<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>tomorrow</RetainUntilDate></Retention>`,
		`<LegalHold/>`} {
		if _, err := ParseRetention([]byte(bad)); !s3types.IsCode(err, s3types.MalformedXML) {
			t.Errorf("%s: %v, want MalformedXML", bad, err)
		}
	}
	for body, want := range map[string]bool{`<LegalHold><Status>ON</Status></LegalHold>`: true, `<LegalHold><Status>OFF</Status></LegalHold>`: false} {
		if on, err := ParseLegalHold([]byte(body)); err != nil || on != want {
			t.Errorf("%s: %v, %v", body, on, err)
		}
	}
	for _, on := range []bool{true, false} {
		if got, err := ParseLegalHold(MarshalLegalHold(on)); err != nil || got != on {
			t.Errorf("legal hold %v renders back as %v, %v", on, got, err)
		}
	}
	for _, bad := range []string{`<LegalHold/>`, `<LegalHold><Status>on</Status></LegalHold>`, `<Retention/>`} {
		if _, err := ParseLegalHold([]byte(bad)); !s3types.IsCode(err, s3types.MalformedXML) {
			t.Errorf("%s: %v, want MalformedXML", bad, err)
		}
	}
}

// TestDatesPastYear9999: a date an offset pushes past 9999 in UTC is refused (it could
// not be stored), in a Retention body, the lock header's parser and a lifecycle Date.
func TestDatesPastYear9999(t *testing.T) {
	if _, err := ParseLockDate("9999-12-31T23:30:00-01:00"); err == nil {
		t.Error("ParseLockDate took a date in year 10000")
	}
	if _, err := ParseLockDate("9999-12-31T22:30:00-01:00"); err != nil {
		t.Errorf("ParseLockDate refused the last hour of 9999: %v", err)
	}
	body := `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>9999-12-31T23:30:00-01:00</RetainUntilDate></Retention>`
	if _, err := ParseRetention([]byte(body)); !s3types.IsCode(err, s3types.MalformedXML) {
		t.Errorf("Retention in year 10000: %v", err)
	}
	lc := `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter/>` +
		`<Expiration><Date>9999-12-31T23:00:00-01:00</Date></Expiration></Rule></LifecycleConfiguration>`
	if _, err := ParseLifecycle([]byte(lc)); err == nil {
		t.Error("a lifecycle Date in year 10000 was taken")
	}
}
