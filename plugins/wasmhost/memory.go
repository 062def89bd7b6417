package wasmhost

import (
	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one instance's linear memory. Where the platform allows (see
// mapMemory) it is a reservation of the memory's maximum (the module's own maximum or
// Config.MemoryPages) outside the Go heap, made when the instance is created: growing
// never copies, pages are backed by RAM only once the guest touches them, and the
// whole reservation goes back to the system as soon as the instance is closed, rather
// than when a later garbage collection finds it. A host that discards 16 MiB instances
// one after another (a memory bomb) does not accumulate them. Elsewhere it is a Go
// slice that grows by copying, as wazero's own memories do.
type linearMemory struct {
	in  *instance
	max uint64
	// buf is, when mapped, the whole reservation (the memory is buf[:size]); else
	// the memory itself, with room to grow.
	buf    []byte
	mapped bool
}

// allocator returns the memory allocator of in's module instance.
func (in *instance) allocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		m := &linearMemory{in: in, max: max}
		if m.buf, m.mapped = mapMemory(max); !m.mapped {
			m.buf = make([]byte, 0, min(capacity, max))
		}
		return m
	})
}

// Reallocate implements experimental.LinearMemory.
func (m *linearMemory) Reallocate(size uint64) []byte {
	switch {
	case size > m.max:
		return nil
	case m.mapped:
		return m.buf[:size]
	case size > uint64(cap(m.buf)):
		b := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.max))
		copy(b, m.buf)
		m.buf = b
	}
	m.buf = m.buf[:size]
	return m.buf
}

// Free implements experimental.LinearMemory. wazero calls it when the module closes;
// a module may be closed while a call still runs on it (the runtime closing under a
// stuck call), so then the release waits for the call to end (see instance.end).
func (m *linearMemory) Free() {
	m.in.mu.Lock()
	defer m.in.mu.Unlock()
	if m.in.running {
		m.in.freeMem = m
		return
	}
	m.release()
}

// release returns the memory; the caller holds the instance's mu.
func (m *linearMemory) release() {
	if m.mapped && m.buf != nil {
		unmapMemory(m.buf)
	}
	m.buf = nil
}
