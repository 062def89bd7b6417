package core

import "math/rand/v2"

// Base62Digits is the base-62 alphabet of the reference system's ids: digits, then
// upper-case, then lower-case letters.
const Base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Lengths of the random identifiers.
const (
	// KeyLen is the length of server-assigned keys (~160 bits).
	KeyLen = 27
	// VTagLen is the length of sibling version tags (~131 bits).
	VTagLen = 22
)

// RandomBase62 returns n uniformly random characters of Base62Digits. It uses 6 bits of
// the runtime's per-thread ChaCha8 generator (math/rand/v2) per digit and rejects the
// values 62 and 63, so there is no modulo bias. The generator is seeded by the operating
// system, safe for concurrent use and unpredictable from its outputs, which suits keys
// and version tags; secrets must use crypto/rand.
func RandomBase62(n int) string {
	b := make([]byte, n)
	var r uint64
	bitsLeft := 0
	for i := 0; i < n; {
		if bitsLeft < 6 {
			r, bitsLeft = rand.Uint64(), 64
		}
		v := r & 63
		r >>= 6
		bitsLeft -= 6
		if v < 62 {
			b[i] = Base62Digits[v]
			i++
		}
	}
	return string(b)
}

// NewVTag returns a fresh sibling version tag.
func NewVTag() string { return RandomBase62(VTagLen) }

// NewKey returns a fresh server-assigned key, as a keyless store (POST to a bucket)
// assigns.
func NewKey() string { return RandomBase62(KeyLen) }
