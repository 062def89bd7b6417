package server

import (
	"strings"
	"testing"
	"time"
)

// TestFitConnections: the connection limit never lets the listeners exhaust the
// open-file limit (the cause of the reported stall: with 1024 descriptors, 1,124
// half-sent requests made accept fail and /ping wait for the header timeout).
func TestFitConnections(t *testing.T) {
	for _, tc := range []struct {
		max, n      int
		files       int64
		want        int
		wantLowered bool
	}{
		{max: 4096, n: 2, files: 0, want: 4096},                      // unknown limit
		{max: 4096, n: 2, files: 20000, want: 4096},                  // fits
		{max: 4096, n: 2, files: 1024, want: 256, wantLowered: true}, // half of a small limit
		{max: 4096, n: 1, files: 1024, want: 512, wantLowered: true},
		{max: 4096, n: 2, files: 4096, want: 1420, wantLowered: true}, // beside the reserve
		{max: 0, n: 2, files: 20000, want: (20000 - fdReserve) / 2, wantLowered: true},
		{max: 100, n: 2, files: 10, want: 2, wantLowered: true},
	} {
		got, lowered := fitConnections(tc.max, tc.n, tc.files)
		if got != tc.want || lowered != tc.wantLowered {
			t.Errorf("fitConnections(%d, %d, %d) = %d, %v; want %d, %v", tc.max, tc.n, tc.files, got, lowered, tc.want, tc.wantLowered)
		}
		if tc.files > 0 && int64(got*tc.n) > tc.files {
			t.Errorf("fitConnections(%d, %d, %d) = %d: over the open-file limit", tc.max, tc.n, tc.files, got)
		}
	}
}

// TestValidateHTTPLimits checks the HTTP settings' validation.
func TestValidateHTTPLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string // "" valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no header timeout", func(c *Config) { c.HeaderTimeout = 0 }, "header-timeout"},
		{"negative body timeout", func(c *Config) { c.BodyReadTimeout = -time.Second }, "body-read-timeout"},
		{"negative rate", func(c *Config) { c.BodyMinRate = -1 }, "body-min-rate"},
		{"body memory below the object size", func(c *Config) { c.MaxBodyMemory = 1 << 20 }, "max-body-memory"},
		{"body memory of the object size", func(c *Config) { c.MaxBodyMemory = c.MaxObjectSize }, ""},
		{"negative connections", func(c *Config) { c.MaxConnections = -1 }, "max-connections"},
		{"negative per address", func(c *Config) { c.MaxConnectionsPerIP = -1 }, "max-connections-per-ip"},
		{"kv cert without key", func(c *Config) { c.KVTLSCert = "c.pem" }, "kv-tls-cert and kv-tls-key"},
		{"s3 key without cert", func(c *Config) { c.S3TLSKey = "k.pem" }, "s3-tls-cert and s3-tls-key"},
		{"no shutdown timeout", func(c *Config) { c.ShutdownTimeout = 0 }, "shutdown-timeout"},
	} {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.want)
		}
	}
}
