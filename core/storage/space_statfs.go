//go:build linux || darwin

package storage

import "syscall"

// freeSpace returns the bytes an unprivileged process may still write on the device
// of dir, and whether the system could tell.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // the field types differ between systems
}
