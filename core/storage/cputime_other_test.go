//go:build !unix

package storage

import "time"

// cpuTime is not measured on this platform; the CPU-normalised metrics are omitted.
func cpuTime() time.Duration { return 0 }
