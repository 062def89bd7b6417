package server

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Object cache sizing: when the operator sets no size, the object cache takes
// objectCacheShare of the memory available to the process (the cgroup limit when there
// is one, else the machine's), within [minAutoObjectCache, maxAutoObjectCache]. The
// reference system sizes its LevelDB caches the same way, as a share of memory.
const (
	objectCacheShare   = 16 // one sixteenth
	minAutoObjectCache = 64 << 20
	maxAutoObjectCache = 4 << 30
	// fallbackObjectCache is used when the available memory cannot be read.
	fallbackObjectCache = 128 << 20
)

// AutoObjectCacheSize returns the object cache size used when none is configured.
func AutoObjectCacheSize() int64 {
	m := availableMemory()
	if m <= 0 {
		return fallbackObjectCache
	}
	return min(max(m/objectCacheShare, minAutoObjectCache), maxAutoObjectCache)
}

// availableMemory returns the bytes of memory the process may use, or 0 when unknown.
func availableMemory() int64 {
	total := memTotal()
	if limit := cgroupLimit(); limit > 0 && (total == 0 || limit < total) {
		return limit
	}
	return total
}

// memTotal reads MemTotal from /proc/meminfo (Linux).
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil && kb > 0 {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of the process's cgroup (v2, then v1); 0 when
// there is none or it cannot be read.
func cgroupLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && n < 1<<60 {
			return n
		}
	}
	return 0
}
