package sig

import (
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxSkew is the largest difference between a request's time and the server's clock that
// Verify accepts (S3's 15 minutes).
const MaxSkew = 15 * time.Minute

// Time layouts. ISO8601Basic is V4's X-Amz-Date form; httpTimeFormat is the RFC 1123 form
// HTTP servers and botocore write.
const (
	ISO8601Basic   = "20060102T150405Z"
	httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"
	scopeDate      = "20060102"
)

// dateLayouts are the forms a Date or x-amz-date header may take: RFC 1123 with a zone name
// (GMT) or a numeric zone (s3cmd's +0000), RFC 850, asctime, and ISO 8601 basic.
var dateLayouts = []string{
	time.RFC1123,
	time.RFC1123Z,
	time.RFC850,
	time.ANSIC,
	ISO8601Basic,
}

// ParseDate parses a Date or x-amz-date header value in any of the forms S3 accepts.
func ParseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseISO8601 parses the V4 X-Amz-Date form only.
func parseISO8601(v string) (time.Time, bool) {
	t, err := time.Parse(ISO8601Basic, strings.TrimSpace(v))
	return t, err == nil
}

// checkTime refuses a request time before 1970 (S3 treats it as no valid date) or more
// than MaxSkew away from now. It never subtracts far-apart times, which could overflow.
func checkTime(t, now time.Time) error {
	if t.Before(time.Unix(0, 0)) {
		return errAccessDenied(msgNoDate)
	}
	if t.After(now.Add(MaxSkew)) || t.Before(now.Add(-MaxSkew)) {
		return &s3types.Error{Code: s3types.RequestTimeTooSkewed, Message: msgSkew}
	}
	return nil
}
