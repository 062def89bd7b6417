package s3types

import "time"

// ObjectLockConfig is a lock-enabled bucket's Object Lock configuration: its default
// retention, applied to every new version that names none (Mode "" when there is no
// default rule). Exactly one of Days and Years is positive when Mode is set.
type ObjectLockConfig struct {
	Mode  string `json:"mode,omitempty"`
	Days  int    `json:"days,omitempty"`
	Years int    `json:"years,omitempty"`
}

// Retention is the retention of one object version: its mode (GOVERNANCE or
// COMPLIANCE) and the instant until which it is protected.
type Retention struct {
	Mode  string    `json:"mode"`
	Until time.Time `json:"until"`
}

// Active reports whether r protects its version at now (a nil r protects nothing).
func (r *Retention) Active(now time.Time) bool {
	return r != nil && now.Before(r.Until)
}
