package kvapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseCounterDelta(t *testing.T) {
	tests := []struct {
		body     string
		want     int64
		ok       bool
		rangeErr bool
	}{
		{"1", 1, true, false},
		{"-2", -2, true, false},
		{"+3", 3, true, false},
		{" 42\n", 42, true, false},
		{"\t-7\r\n", -7, true, false},
		{"0", 0, true, false},
		{"007", 7, true, false},
		{"9223372036854775807", 9223372036854775807, true, false},
		{"-9223372036854775808", -9223372036854775808, true, false},
		{"9223372036854775808", 0, false, true},
		{"-99999999999999999999", 0, false, true},
		{"", 0, false, false},
		{"   ", 0, false, false},
		{"-", 0, false, false},
		{"+", 0, false, false},
		{"abc", 0, false, false},
		{"1.5", 0, false, false},
		{"1e3", 0, false, false},
		{"0x10", 0, false, false},
		{"1_000", 0, false, false},
		{"1 2", 0, false, false},
		{"--1", 0, false, false},
		{"1-", 0, false, false},
		{"١", 0, false, false}, // a non-ASCII digit
	}
	for _, tt := range tests {
		got, err := parseCounterDelta([]byte(tt.body))
		if tt.ok != (err == nil) || (tt.ok && got != tt.want) {
			t.Errorf("parseCounterDelta(%q) = %d, %v; want %d, ok=%v", tt.body, got, err, tt.want, tt.ok)
		}
		if isRange := errors.Is(err, strconv.ErrRange); isRange != tt.rangeErr {
			t.Errorf("parseCounterDelta(%q): range error %v, want %v", tt.body, isRange, tt.rangeErr)
		}
	}
}

func FuzzParseCounterDelta(f *testing.F) {
	for _, s := range []string{"1", "-2", " +3 ", "", "abc", "1.5", "9223372036854775808", "-9223372036854775808"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := parseCounterDelta(body)
		if err != nil {
			return
		}
		// Whatever is accepted is the decimal text of v, up to whitespace, a leading +
		// and leading zeros.
		s := strings.TrimSpace(string(body))
		want, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || want != v {
			t.Fatalf("accepted %q as %d; ParseInt says %d, %v", body, v, want, perr)
		}
		if strings.ContainsAny(s, "_xXeE.") {
			t.Fatalf("accepted %q", body)
		}
	})
}
