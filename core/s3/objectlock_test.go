package s3

import (
	"errors"
	"testing"
	"time"
)

func codeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		return "?"
	}
	return e.Code
}

// TestCheckLockConfig: a default rule has a known mode and exactly one period within
// AWS's bounds; no rule at all is valid.
func TestCheckLockConfig(t *testing.T) {
	for _, tc := range []struct {
		c    ObjectLockConfig
		code Code
	}{
		{ObjectLockConfig{}, ""},
		{ObjectLockConfig{Mode: LockGovernance, Days: 1}, ""},
		{ObjectLockConfig{Mode: LockCompliance, Years: 100}, ""},
		{ObjectLockConfig{Mode: LockCompliance, Days: MaxRetentionDays}, ""},
		{ObjectLockConfig{Mode: "governance", Days: 1}, MalformedXML},
		{ObjectLockConfig{Days: 1}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance, Days: 1, Years: 1}, MalformedXML},
		{ObjectLockConfig{Mode: LockGovernance, Days: -1}, InvalidArgument},
		{ObjectLockConfig{Mode: LockGovernance, Days: MaxRetentionDays + 1}, InvalidArgument},
		{ObjectLockConfig{Mode: LockGovernance, Years: MaxRetentionYears + 1}, InvalidArgument},
	} {
		if got := codeOf(CheckLockConfig(tc.c)); got != tc.code {
			t.Errorf("CheckLockConfig(%+v) = %q, want %q", tc.c, got, tc.code)
		}
	}
}

// TestDefaultRetention: the default rule's period counts from the write, in days or
// calendar years; no rule gives no retention.
func TestDefaultRetention(t *testing.T) {
	now := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	if r := defaultRetention(nil, now); r != nil {
		t.Errorf("nil config gave %+v", r)
	}
	if r := defaultRetention(&ObjectLockConfig{}, now); r != nil {
		t.Errorf("config without a rule gave %+v", r)
	}
	r := defaultRetention(&ObjectLockConfig{Mode: LockGovernance, Days: 2}, now)
	if r.Mode != LockGovernance || !r.Until.Equal(now.Add(48*time.Hour)) {
		t.Errorf("2 days: %+v", r)
	}
	r = defaultRetention(&ObjectLockConfig{Mode: LockCompliance, Years: 1}, now)
	if want := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC); !r.Until.Equal(want) {
		t.Errorf("1 year from Feb 29: %v, want %v", r.Until, want)
	}
}

// TestRetentionRules: which retention changes and which removals a lock allows.
func TestRetentionRules(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	later, latest, past := now.Add(time.Hour), now.Add(2*time.Hour), now.Add(-time.Hour)
	gov := &Retention{Mode: LockGovernance, Until: later}
	comp := &Retention{Mode: LockCompliance, Until: later}
	expired := &Retention{Mode: LockCompliance, Until: past}
	for _, tc := range []struct {
		name      string
		old, next *Retention
		bypass    bool
		code      Code
	}{
		{"none to governance", nil, gov, false, ""},
		{"governance extended", gov, &Retention{Mode: LockGovernance, Until: latest}, false, ""},
		{"governance to compliance", gov, comp, false, ""},
		{"governance shortened", gov, &Retention{Mode: LockGovernance, Until: now.Add(time.Minute)}, false, AccessDenied},
		{"governance shortened with bypass", gov, &Retention{Mode: LockGovernance, Until: now.Add(time.Minute)}, true, ""},
		{"governance removed", gov, nil, false, AccessDenied},
		{"governance removed with bypass", gov, nil, true, ""},
		{"compliance extended", comp, &Retention{Mode: LockCompliance, Until: latest}, false, ""},
		{"compliance same", comp, comp, false, ""},
		{"compliance to governance", comp, &Retention{Mode: LockGovernance, Until: latest}, true, AccessDenied},
		{"compliance shortened with bypass", comp, &Retention{Mode: LockCompliance, Until: now.Add(time.Minute)}, true, AccessDenied},
		{"compliance removed with bypass", comp, nil, true, AccessDenied},
		{"expired compliance removed", expired, nil, false, ""},
	} {
		if got := codeOf(changeRetention(tc.old, tc.next, now, tc.bypass)); got != tc.code {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.code)
		}
	}
	for _, tc := range []struct {
		name   string
		r      *Retention
		hold   bool
		bypass bool
		code   Code
	}{
		{"unlocked", nil, false, false, ""},
		{"legal hold", nil, true, true, AccessDenied},
		{"governance", gov, false, false, AccessDenied},
		{"governance bypassed", gov, false, true, ""},
		{"governance bypassed under hold", gov, true, true, AccessDenied},
		{"compliance bypassed", comp, false, true, AccessDenied},
		{"expired", expired, false, false, ""},
	} {
		if got := codeOf(lockRefusal(tc.r, tc.hold, now, tc.bypass)); got != tc.code {
			t.Errorf("removal, %s: %q, want %q", tc.name, got, tc.code)
		}
	}
	if got := codeOf(CheckRetention(Retention{Mode: LockGovernance, Until: past}, now)); got != InvalidArgument {
		t.Errorf("retention in the past: %q", got)
	}
	if got := codeOf(CheckRetention(Retention{Mode: "X", Until: later}, now)); got != MalformedXML {
		t.Errorf("unknown mode: %q", got)
	}
}
