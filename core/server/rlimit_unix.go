//go:build unix

package server

import "syscall"

// openFileLimit returns the process's open-file limit (the soft limit, which the Go
// runtime raises to the hard one at start), or 0 when unknown.
func openFileLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<40 {
		return 0
	}
	return int64(rl.Cur)
}
