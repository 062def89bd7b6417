package wire

import (
	"testing"
	"time"
)

func TestHTTPDate(t *testing.T) {
	ts := time.Date(2010, 3, 10, 18, 11, 41, 999, time.UTC)
	if got := FormatHTTPDate(ts); got != "Wed, 10 Mar 2010 18:11:41 GMT" {
		t.Fatalf("FormatHTTPDate = %q", got)
	}
	if got := FormatHTTPDate(ts.In(time.FixedZone("X", 3600))); got != "Wed, 10 Mar 2010 18:11:41 GMT" {
		t.Fatalf("FormatHTTPDate in another zone = %q", got)
	}
	want := ts.Truncate(time.Second)
	for _, s := range []string{
		"Wed, 10 Mar 2010 18:11:41 GMT",
		" Wed, 10 Mar 2010 18:11:41 GMT ",
		"Wednesday, 10-Mar-10 18:11:41 GMT",
		"Wed Mar 10 18:11:41 2010",
		"Wed, 10 Mar 2010 19:11:41 +0100",
	} {
		got, ok := ParseHTTPDate(s)
		if !ok || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseHTTPDate(%q) = %v, %v", s, got, ok)
		}
	}
	if got, ok := ParseHTTPDate("Wed Mar  3 18:11:41 2010"); !ok || got.Day() != 3 {
		t.Errorf("asctime with padded day: %v, %v", got, ok)
	}
	for _, s := range []string{"", "yesterday", "2010-03-10T18:11:41Z", "Wed, 32 Mar 2010 18:11:41 GMT"} {
		if _, ok := ParseHTTPDate(s); ok {
			t.Errorf("ParseHTTPDate(%q) should fail", s)
		}
	}
}

func TestConditionsEvaluate(t *testing.T) {
	lm := time.Date(2024, 5, 1, 12, 0, 0, 500_000_000, time.UTC) // sub-second part is ignored
	now := lm.Add(time.Hour)
	at := func(d time.Duration) string { return FormatHTTPDate(lm.Add(d)) }
	const etag = "16vic4eU9ny46o4KPiDz1f"
	tests := []struct {
		name   string
		c      Conditions
		exists bool
		get    bool
		want   int
	}{
		{"none", Conditions{}, true, true, 0},
		{"none missing", Conditions{}, false, false, 0},
		{"if-match on missing", Conditions{IfMatch: `"x"`}, false, false, 412},
		{"if-match star on missing", Conditions{IfMatch: "*"}, false, true, 412},
		{"if-none-match star on missing (create only)", Conditions{IfNoneMatch: "*"}, false, false, 0},
		{"dates ignored on missing", Conditions{IfModifiedSince: at(time.Hour)}, false, true, 0},
		{"if-match star", Conditions{IfMatch: "*"}, true, false, 0},
		{"if-match quoted hit", Conditions{IfMatch: `"other", "` + etag + `"`}, true, false, 0},
		{"if-match bare hit", Conditions{IfMatch: etag}, true, false, 0},
		{"if-match weak hit", Conditions{IfMatch: `W/"` + etag + `"`}, true, false, 0},
		{"if-match miss", Conditions{IfMatch: `"other"`}, true, false, 412},
		{"if-match miss on GET", Conditions{IfMatch: `"other"`}, true, true, 412},
		{"if-unmodified-since earlier", Conditions{IfUnmodifiedSince: at(-time.Second)}, true, false, 412},
		{"if-unmodified-since same second", Conditions{IfUnmodifiedSince: at(0)}, true, false, 0},
		{"if-unmodified-since later", Conditions{IfUnmodifiedSince: at(time.Minute)}, true, false, 0},
		{"if-unmodified-since bad date", Conditions{IfUnmodifiedSince: "garbage"}, true, false, 0},
		{"if-none-match star GET", Conditions{IfNoneMatch: "*"}, true, true, 304},
		{"if-none-match star PUT", Conditions{IfNoneMatch: "*"}, true, false, 412},
		{"if-none-match hit GET", Conditions{IfNoneMatch: `"a", "` + etag + `"`}, true, true, 304},
		{"if-none-match hit PUT", Conditions{IfNoneMatch: `"` + etag + `"`}, true, false, 412},
		{"if-none-match miss", Conditions{IfNoneMatch: `"a"`}, true, true, 0},
		{"if-modified-since same second GET", Conditions{IfModifiedSince: at(0)}, true, true, 304},
		{"if-modified-since later PUT (quirk)", Conditions{IfModifiedSince: at(time.Minute)}, true, false, 304},
		{"if-modified-since earlier", Conditions{IfModifiedSince: at(-time.Second)}, true, true, 0},
		{"if-modified-since future ignored", Conditions{IfModifiedSince: at(2 * time.Hour)}, true, true, 0},
		{"if-modified-since bad date", Conditions{IfModifiedSince: "nope"}, true, true, 0},
		{"if-none-match miss then if-modified-since", Conditions{IfNoneMatch: `"a"`, IfModifiedSince: at(0)}, true, true, 304},
		{"if-match wins over if-none-match", Conditions{IfMatch: `"zz"`, IfNoneMatch: "*"}, true, true, 412},
		{"if-match pass then if-none-match", Conditions{IfMatch: "*", IfNoneMatch: "*"}, true, true, 304},
		{"unmodified-since before none-match", Conditions{IfUnmodifiedSince: at(-time.Hour), IfNoneMatch: "*"}, true, true, 412},
		{"comma inside quoted tag", Conditions{IfMatch: `"a,b", "` + etag + `"`}, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Evaluate(tt.exists, etag, lm, tt.get, now); got != tt.want {
				t.Fatalf("Evaluate = %d, want %d", got, tt.want)
			}
		})
	}
	// A quoted current etag is accepted too.
	if got := (Conditions{IfNoneMatch: `"` + etag + `"`}).Evaluate(true, `"`+etag+`"`, lm, true, now); got != 304 {
		t.Fatalf("quoted etag argument: %d", got)
	}
	// Unknown Last-Modified disables the date checks.
	c := Conditions{IfModifiedSince: at(0), IfUnmodifiedSince: at(-time.Hour)}
	if got := c.Evaluate(true, etag, time.Time{}, true, now); got != 0 {
		t.Fatalf("zero last-modified: %d", got)
	}
}
