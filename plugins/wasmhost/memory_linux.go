package wasmhost

import "syscall"

// mapMemory reserves n bytes of zeroed private memory with mmap. MAP_NORESERVE keeps
// the reservation out of the kernel's commit accounting: only touched pages count.
// It reports false if it could not.
func mapMemory(n uint64) ([]byte, bool) {
	if n == 0 || n > 1<<32 {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, false
	}
	return b, true
}

// unmapMemory returns a reservation of mapMemory.
func unmapMemory(b []byte) { _ = syscall.Munmap(b) }
