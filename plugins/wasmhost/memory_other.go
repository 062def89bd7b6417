//go:build !linux

package wasmhost

// mapMemory reports false: off Linux, linear memories live on the Go heap.
func mapMemory(uint64) ([]byte, bool) { return nil, false }

// unmapMemory is never called off Linux.
func unmapMemory([]byte) {}
