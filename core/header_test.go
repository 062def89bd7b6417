package core

import "testing"

func TestHeaderChecks(t *testing.T) {
	for _, c := range []struct {
		v                  string
		safe, token, ctype bool
	}{
		{"", true, false, false},
		{"text/plain", true, false, true},
		{"application/vnd.api+json", true, false, true},
		{"text/plain; charset=utf-8", true, false, false},
		{"text", true, true, false},
		{"a/b/c", true, false, false},
		{"/b", true, false, false},
		{"a/", true, false, false},
		{"X-Owner", true, true, false},
		{"email_bin", true, true, false},
		{"tab\there", true, false, false},
		{"line\nbreak", false, false, false},
		{"del\x7f", false, false, false},
		{"ünïcode", true, false, false},
		{"a b", true, false, false},
	} {
		if got := HeaderSafe(c.v); got != c.safe {
			t.Errorf("HeaderSafe(%q) = %v, want %v", c.v, got, c.safe)
		}
		if got := IsToken(c.v); got != c.token {
			t.Errorf("IsToken(%q) = %v, want %v", c.v, got, c.token)
		}
		if got := IsMediaType(c.v); got != c.ctype {
			t.Errorf("IsMediaType(%q) = %v, want %v", c.v, got, c.ctype)
		}
	}
}
