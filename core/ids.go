package core

import "math/rand/v2"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n random characters from [0-9A-Za-z]. It uses the runtime's
// per-thread ChaCha8 generator (math/rand/v2), which is safe for concurrent use, not
// predictable from its outputs, and cheap enough for the write path.
func RandomBase62(n int) string {
	b := make([]byte, n)
	var r uint64
	for i := range b {
		if i%10 == 0 {
			r = rand.Uint64()
		}
		b[i] = base62[r%62]
		r /= 62
	}
	return string(b)
}

// NewVTag returns a fresh sibling version tag (22 base62 characters, ~131 bits).
func NewVTag() string { return RandomBase62(22) }

// NewKey returns a fresh server-assigned key (27 base62 characters), as a keyless store
// (POST to a bucket) assigns.
func NewKey() string { return RandomBase62(27) }
