package s3xml

import (
	"testing"
	"time"
)

func TestAppendTime(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2012, 6, 1, 9, 20, 3, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 1_000_000, time.FixedZone("x", -11*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1700000000, 123456789),
	}
	for _, tm := range times {
		want := tm.UTC().Format(TimeFormat)
		if got := string(AppendTime([]byte("x"), tm)); got != "x"+want {
			t.Errorf("AppendTime(%v) = %q, want %q", tm, got, "x"+want)
		}
	}
}
