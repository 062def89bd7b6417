package s3xml

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxObjectLockBody bounds the bodies of PUT ?object-lock, ?retention and ?legal-hold:
// each is a handful of short elements.
const MaxObjectLockBody = 4 << 10

// lockTime is how retain-until dates are written in answers (ISO 8601, UTC, as AWS).
const lockTime = "2006-01-02T15:04:05.000Z"

// objectLockDoc is an ObjectLockConfiguration request body.
type objectLockDoc struct {
	XMLName xml.Name
	Enabled *string `xml:"ObjectLockEnabled"`
	Rule    *struct {
		DefaultRetention *struct {
			Mode  string  `xml:"Mode"`
			Days  *string `xml:"Days"`
			Years *string `xml:"Years"`
		} `xml:"DefaultRetention"`
	} `xml:"Rule"`
}

// ParseObjectLockConfiguration reads the body of PUT ?object-lock,
//
//	<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>
//	  <Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule>
//	</ObjectLockConfiguration>
//
// into the configuration it sets (the Rule is optional). A body that is not such a
// document, an ObjectLockEnabled other than "Enabled", a Rule without its
// DefaultRetention or a period that is not a decimal integer is 400 MalformedXML; the
// rule's limits are the service's to check (s3.CheckLockConfig).
func ParseObjectLockConfiguration(body []byte) (s3types.ObjectLockConfig, error) {
	var doc objectLockDoc
	var c s3types.ObjectLockConfig
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "ObjectLockConfiguration" ||
		doc.Enabled == nil || strings.TrimSpace(*doc.Enabled) != "Enabled" {
		return c, errMalformedXML()
	}
	if doc.Rule == nil {
		return c, nil
	}
	d := doc.Rule.DefaultRetention
	if d == nil {
		return c, errMalformedXML()
	}
	c.Mode = strings.TrimSpace(d.Mode)
	var err error
	if c.Days, err = lockPeriod(d.Days); err != nil {
		return c, err
	}
	if c.Years, err = lockPeriod(d.Years); err != nil {
		return c, err
	}
	return c, nil
}

// lockPeriod reads a Days or Years element (nil: absent, 0). Its value must be a
// decimal integer that fits in 32 bits; its sign and range are the service's to check.
func lockPeriod(v *string) (int, error) {
	if v == nil {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*v), 10, 32)
	if err != nil {
		return 0, errMalformedXML()
	}
	return int(n), nil
}

// MarshalObjectLockConfiguration renders the answer of GET ?object-lock for a
// lock-enabled bucket with configuration c.
func MarshalObjectLockConfiguration(c s3types.ObjectLockConfig) []byte {
	w := NewWriter("ObjectLockConfiguration", true, 256)
	w.Elem("ObjectLockEnabled", "Enabled")
	if c.Mode != "" {
		w.Open("Rule")
		w.Open("DefaultRetention")
		w.Elem("Mode", c.Mode)
		if c.Days != 0 {
			w.Elem("Days", strconv.Itoa(c.Days))
		}
		if c.Years != 0 {
			w.Elem("Years", strconv.Itoa(c.Years))
		}
		w.Close("DefaultRetention")
		w.Close("Rule")
	}
	return w.Bytes()
}

// retentionDoc is a Retention request body.
type retentionDoc struct {
	XMLName xml.Name
	Mode    *string `xml:"Mode"`
	Until   *string `xml:"RetainUntilDate"`
}

// ParseRetention reads the body of PUT ?retention,
//
//	<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>
//
// into the retention asked for, or nil for an empty <Retention/> (removing the
// version's retention, as AWS takes it). A body that is not such a document, with only
// one of the two elements, or with a date that is not an ISO 8601 timestamp is 400
// MalformedXML; the mode and whether the date is in the future are the service's to
// check.
func ParseRetention(body []byte) (*s3types.Retention, error) {
	var doc retentionDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "Retention" {
		return nil, errMalformedXML()
	}
	if doc.Mode == nil && doc.Until == nil {
		return nil, nil
	}
	if doc.Mode == nil || doc.Until == nil {
		return nil, errMalformedXML()
	}
	until, err := ParseLockDate(*doc.Until)
	if err != nil {
		return nil, errMalformedXML()
	}
	return &s3types.Retention{Mode: strings.TrimSpace(*doc.Mode), Until: until}, nil
}

// ParseLockDate reads a retain-until date, in a Retention body or in the
// x-amz-object-lock-retain-until-date header: an RFC 3339 timestamp (fractional
// seconds allowed), returned in UTC. A date whose UTC year is past 9999 (an offset can
// push 9999-12-31 there) is refused: it could not be stored or written back.
func ParseLockDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, err
	}
	return InRange(t.UTC())
}

// InRange returns t if its year is one ISO 8601 writes in four digits (0 to 9999),
// else an error: the upper bound of every date a request gives.
func InRange(t time.Time) (time.Time, error) {
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("s3xml: year %d out of range", t.Year())
	}
	return t, nil
}

// FormatLockDate writes a retain-until date as answers carry it.
func FormatLockDate(t time.Time) string { return t.UTC().Format(lockTime) }

// MarshalRetention renders the answer of GET ?retention.
func MarshalRetention(r s3types.Retention) []byte {
	w := NewWriter("Retention", true, 160)
	w.Elem("Mode", r.Mode)
	w.Elem("RetainUntilDate", FormatLockDate(r.Until))
	return w.Bytes()
}

// legalHoldDoc is a LegalHold request body.
type legalHoldDoc struct {
	XMLName xml.Name
	Status  *string `xml:"Status"`
}

// ParseLegalHold reads the body of PUT ?legal-hold, <LegalHold><Status>ON</Status>
// </LegalHold> (or OFF), into whether the hold is on. Anything else is 400
// MalformedXML.
func ParseLegalHold(body []byte) (bool, error) {
	var doc legalHoldDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "LegalHold" || doc.Status == nil {
		return false, errMalformedXML()
	}
	switch strings.TrimSpace(*doc.Status) {
	case "ON":
		return true, nil
	case "OFF":
		return false, nil
	}
	return false, errMalformedXML()
}

// MarshalLegalHold renders the answer of GET ?legal-hold.
func MarshalLegalHold(on bool) []byte {
	w := NewWriter("LegalHold", true, 96)
	if on {
		w.Elem("Status", "ON")
	} else {
		w.Elem("Status", "OFF")
	}
	return w.Bytes()
}
