package s3

import (
	"hash"
	"sync"

	md5simd "github.com/minio/md5-simd"
)

// md5Hashers hands out the MD5 (ETag) hashers of large bodies. A body hashed while
// others are being hashed gets an md5-simd hasher: its server hashes up to 16 bodies
// at once on one core with AVX-512 (8 with AVX2, crypto/md5 without either), about 5x
// crypto/md5's throughput with 16 uploads of 64 KiB writes measured here. A body hashed
// alone gets crypto/md5: md5-simd is about half as fast on a single stream.
//
// The md5-simd server (and its goroutine) is started by the first concurrent body and
// stopped by close once its last hasher is released.
type md5Hashers struct {
	// mu guards the fields below.
	mu sync.Mutex
	// active counts the bodies being hashed; simd those with an md5-simd hasher.
	active, simd int
	srv          md5simd.Server // nil until needed, and after close
	closed       bool
}

// get returns a hasher for one body and the function that releases it (after Sum).
func (m *md5Hashers) get() (hash.Hash, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active++
	if m.active < 2 || m.closed {
		h := md5simd.StdlibHasher()
		return h, func() { m.release(h, false) }
	}
	if m.srv == nil {
		m.srv = md5simd.NewServer()
	}
	m.simd++
	h := m.srv.NewHash()
	return h, func() { m.release(h, true) }
}

func (m *md5Hashers) release(h md5simd.Hasher, simd bool) {
	h.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active--
	if simd {
		m.simd--
	}
	m.stopIdle()
}

// close stops the md5-simd server now, or when its last hasher is released; later
// bodies get crypto/md5.
func (m *md5Hashers) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.stopIdle()
}

// stopIdle stops the server once closed and unused (m.mu held).
func (m *md5Hashers) stopIdle() {
	if m.closed && m.simd == 0 && m.srv != nil {
		m.srv.Close()
		m.srv = nil
	}
}
