package query

import (
	"fmt"
	"math/big"
	"strings"
)

// Field suffixes.
const (
	SuffixBin = "_bin"
	SuffixInt = "_int"
)

// MaxIntBytes bounds the magnitude of an _int term (2040 bits): its length must fit the
// one-byte length prefix of the encoding.
const MaxIntBytes = 255

// IsInt reports whether field is an integer index.
func IsInt(field string) bool { return strings.HasSuffix(field, SuffixInt) }

// EncodeTerm returns the order-preserving byte form of an index term. _bin terms are
// their bytes; _int terms are a sign byte (0x01 negative, 0x02 otherwise), a length byte
// and the big-endian magnitude (complemented, with a complemented length, for negative
// numbers), so that byte order equals numeric order for integers of any size.
func EncodeTerm(field, value string) ([]byte, error) {
	if !IsInt(field) {
		return []byte(value), nil
	}
	n, ok := new(big.Int).SetString(value, 10)
	if !ok {
		return nil, fmt.Errorf("index: %q is not an integer", value)
	}
	return encodeInt(n)
}

func encodeInt(n *big.Int) ([]byte, error) {
	mag := new(big.Int).Abs(n).Bytes()
	if len(mag) > MaxIntBytes {
		return nil, fmt.Errorf("index: integer term too large (%d bytes)", len(mag))
	}
	out := make([]byte, 0, 2+len(mag))
	if n.Sign() >= 0 {
		out = append(out, 0x02, byte(len(mag)))
		return append(out, mag...), nil
	}
	out = append(out, 0x01, byte(MaxIntBytes-len(mag)))
	for _, b := range mag {
		out = append(out, ^b)
	}
	return out, nil
}

// DecodeTerm reverses EncodeTerm, returning the canonical textual term.
func DecodeTerm(field string, enc []byte) (string, error) {
	if !IsInt(field) {
		return string(enc), nil
	}
	if len(enc) < 2 {
		return "", fmt.Errorf("index: short integer term")
	}
	switch enc[0] {
	case 0x02:
		if int(enc[1]) != len(enc)-2 {
			return "", fmt.Errorf("index: bad integer term length")
		}
		return new(big.Int).SetBytes(enc[2:]).String(), nil
	case 0x01:
		if MaxIntBytes-int(enc[1]) != len(enc)-2 {
			return "", fmt.Errorf("index: bad integer term length")
		}
		mag := make([]byte, len(enc)-2)
		for i, b := range enc[2:] {
			mag[i] = ^b
		}
		return new(big.Int).Neg(new(big.Int).SetBytes(mag)).String(), nil
	}
	return "", fmt.Errorf("index: bad integer term sign byte %#x", enc[0])
}
