// Package index owns Cairn's secondary-index (2i) postings: how an index term is encoded
// so that LevelDB's byte order is the term order, where a posting lives in the keyspace
// (tag 'i': type, bucket, field, encoded term, key), and which postings a write adds and
// removes.
package index

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// Field suffixes.
const (
	SuffixBin = "_bin"
	SuffixInt = "_int"
)

// maxIntBytes bounds the magnitude of an _int term (2040 bits): its length must fit the
// one-byte length prefix of the encoding.
const maxIntBytes = 255

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
	if len(mag) > maxIntBytes {
		return nil, fmt.Errorf("index: integer term too large (%d bytes)", len(mag))
	}
	out := make([]byte, 0, 2+len(mag))
	if n.Sign() >= 0 {
		out = append(out, 0x02, byte(len(mag)))
		return append(out, mag...), nil
	}
	out = append(out, 0x01, byte(maxIntBytes-len(mag)))
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
		if maxIntBytes-int(enc[1]) != len(enc)-2 {
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

// PostingKey returns the storage key of one posting.
func PostingKey(typ, bucket, key string, e core.IndexEntry) ([]byte, error) {
	term, err := EncodeTerm(e.Field, e.Value)
	if err != nil {
		return nil, err
	}
	return storage.Key(storage.TagIndex, []byte(typ), []byte(bucket), []byte(e.Field), term, []byte(key)), nil
}

// FieldPrefix returns the key prefix of every posting of one index field of a bucket.
func FieldPrefix(typ, bucket, field string) []byte {
	return storage.Key(storage.TagIndex, []byte(typ), []byte(bucket), []byte(field))
}

// Posting is a decoded posting key.
type Posting struct {
	Type, Bucket, Field, Value, Key string
}

// DecodePosting parses a posting key produced by PostingKey.
func DecodePosting(k []byte) (Posting, error) {
	tag, comps, err := storage.DecodeKey(k)
	if err != nil {
		return Posting{}, err
	}
	if tag != storage.TagIndex || len(comps) != 5 {
		return Posting{}, fmt.Errorf("index: not a posting key")
	}
	field := string(comps[2])
	v, err := DecodeTerm(field, comps[3])
	if err != nil {
		return Posting{}, err
	}
	return Posting{Type: string(comps[0]), Bucket: string(comps[1]), Field: field, Value: v, Key: string(comps[4])}, nil
}

// Entries returns the index entries of an object: the union over its live siblings,
// de-duplicated and sorted. Tombstones contribute nothing.
func Entries(o *core.Object) []core.IndexEntry {
	var out []core.IndexEntry
	for i := range o.Siblings {
		if o.Siblings[i].Deleted {
			continue
		}
		out = append(out, o.Siblings[i].Indexes...)
	}
	return Normalize(out)
}

// Normalize sorts entries by field, then term order (core.CompareIndexEntries), and
// removes duplicates. It reuses the slice's backing array.
func Normalize(es []core.IndexEntry) []core.IndexEntry {
	if len(es) < 2 {
		return es
	}
	slices.SortFunc(es, core.CompareIndexEntries)
	return slices.Compact(es)
}

// Diff returns the entries in next but not in prev (to add) and in prev but not in next
// (to remove). Both inputs must be normalized.
func Diff(prev, next []core.IndexEntry) (add, remove []core.IndexEntry) {
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && core.CompareIndexEntries(prev[i], next[j]) < 0):
			remove = append(remove, prev[i])
			i++
		case i == len(prev) || core.CompareIndexEntries(next[j], prev[i]) < 0:
			add = append(add, next[j])
			j++
		default:
			i++
			j++
		}
	}
	return add, remove
}
