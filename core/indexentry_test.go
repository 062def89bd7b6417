package core

import "testing"

func TestCompareIntValues(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "2", -1}, {"10", "9", 1}, {"-10", "-9", -1}, {"-1", "0", -1}, {"0", "-0", 0},
		{"007", "7", 0}, {"+3", "3", 0}, {"99999999999999999999", "100000000000000000000", -1},
		{"abc", "5", 1}, {"5", "abc", -1}, {"abc", "abd", -1},
	}
	for _, tt := range tests {
		if got := CompareIntValues(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareIntValues(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCanonicalInt(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"42", "42", true}, {"+42", "42", true}, {"-007", "-7", true}, {"0", "0", true},
		{"abc", "", false}, {"", "", false}, {"1.5", "", false}, {"++1", "", false}, {"0x10", "", false}, {"1_000", "", false},
	}
	for i, tt := range tests {
		got, ok := CanonicalInt(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%d: CanonicalInt(%q) = %q,%v want %q,%v", i, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
