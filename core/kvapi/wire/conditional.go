package wire

import (
	"strings"
	"time"
)

// httpDateLayout is the RFC 1123 form the server writes (always GMT).
const httpDateLayout = "Mon, 02 Jan 2006 15:04:05 GMT"

// FormatHTTPDate formats t in RFC 1123 form in GMT, e.g. "Wed, 10 Mar 2010 18:11:41 GMT",
// for Last-Modified, Date and Expires headers.
func FormatHTTPDate(t time.Time) string {
	return t.UTC().Format(httpDateLayout)
}

// httpDateLayouts are the three date forms HTTP/1.1 requires a recipient to accept.
var httpDateLayouts = [...]string{
	httpDateLayout,                     // RFC 1123
	"Monday, 02-Jan-06 15:04:05 GMT",   // RFC 850
	"Mon Jan _2 15:04:05 2006",         // ANSI C asctime
	"Mon, 02 Jan 2006 15:04:05 -0700",  // RFC 1123 with a numeric zone (lenient)
	"Monday, 02-Jan-06 15:04:05 -0700", // RFC 850 with a numeric zone (lenient)
}

// ParseHTTPDate parses an HTTP date in RFC 1123, RFC 850 or ANSI C asctime form (plus
// RFC 1123/850 with a numeric zone) and returns it in UTC; ok is false when s is none of
// these.
func ParseHTTPDate(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// Conditions holds a request's conditional headers, as sent (empty when absent).
type Conditions struct {
	IfMatch           string
	IfNoneMatch       string
	IfModifiedSince   string
	IfUnmodifiedSince string
}

// Evaluate applies the conditional headers to a resource, following webmachine's
// decision flow after resource_exists, and returns 0 to proceed, 304 (Not Modified) or
// 412 (Precondition Failed).
//
// etag is the resource's current entity tag, unquoted (a quoted value is accepted too);
// lastModified its modification time (zero when unknown, which disables the date
// checks); isGetOrHead whether the method is GET or HEAD; now the server's clock.
// Last-Modified has a resolution of one second, so lastModified is truncated to the
// second before comparing.
//
//   - The resource is missing: If-Match present → 412; otherwise proceed.
//   - If-Match "*" passes; a list passes when it contains etag; otherwise 412.
//   - If-Unmodified-Since (a valid date) earlier than lastModified → 412.
//   - If-None-Match "*", or a list containing etag → 304 for GET/HEAD, else 412.
//   - If-Modified-Since (a valid date not in the future) not earlier than lastModified
//     → 304, whatever the method (webmachine's behaviour; RFC 9110 limits it to GET/HEAD).
//
// Unparsable dates are ignored. Weak tags (W/"x") compare by their opaque part.
func (c Conditions) Evaluate(exists bool, etag string, lastModified time.Time, isGetOrHead bool, now time.Time) (status int) {
	if !exists {
		if strings.TrimSpace(c.IfMatch) != "" {
			return 412
		}
		return 0
	}
	etag = unquoteETag(etag)
	lm := lastModified.Truncate(time.Second)
	if im := strings.TrimSpace(c.IfMatch); im != "" && im != "*" {
		if !etagListContains(im, etag) {
			return 412
		}
	}
	if c.IfUnmodifiedSince != "" && !lastModified.IsZero() {
		if t, ok := ParseHTTPDate(c.IfUnmodifiedSince); ok && lm.After(t) {
			return 412
		}
	}
	if inm := strings.TrimSpace(c.IfNoneMatch); inm != "" {
		if inm == "*" || etagListContains(inm, etag) {
			if isGetOrHead {
				return 304
			}
			return 412
		}
	}
	if c.IfModifiedSince != "" && !lastModified.IsZero() {
		if t, ok := ParseHTTPDate(c.IfModifiedSince); ok && !t.After(now) && !lm.After(t) {
			return 304
		}
	}
	return 0
}

// unquoteETag strips an optional W/ prefix and surrounding double quotes.
func unquoteETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s
}

// etagListContains reports whether a comma-separated list of (quoted or bare) entity
// tags contains etag. Commas inside quoted tags are respected.
func etagListContains(list, etag string) bool {
	if etag == "" {
		return false
	}
	for list != "" {
		end := len(list)
		inQuote := false
		for i := 0; i < len(list); i++ {
			if list[i] == '"' {
				inQuote = !inQuote
			} else if list[i] == ',' && !inQuote {
				end = i
				break
			}
		}
		if unquoteETag(list[:end]) == etag {
			return true
		}
		if end == len(list) {
			break
		}
		list = list[end+1:]
	}
	return false
}
