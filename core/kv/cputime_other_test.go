//go:build !unix

package kv

import "time"

// processCPU is not measured on this platform: the per-CPU metrics read 0.
func processCPU() time.Duration { return 0 }
