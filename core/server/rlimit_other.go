//go:build !unix

package server

// openFileLimit returns 0: the limit is not known on this system.
func openFileLimit() int64 { return 0 }
