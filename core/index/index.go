// Package index owns Cairn's secondary-index (2i) postings: how an index term is encoded
// so that LevelDB's byte order is the term order, where a posting lives in the keyspace
// (tag 'i': type, bucket, field, encoded term, key), and which postings a write adds and
// removes.
package index

import (
	"fmt"
	"slices"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index/query"
	"github.com/cairnkv/cairn/core/storage"
)

// Field suffixes (query.SuffixBin, query.SuffixInt).
const (
	SuffixBin = query.SuffixBin
	SuffixInt = query.SuffixInt
)

// IsInt reports whether field is an integer index.
func IsInt(field string) bool { return query.IsInt(field) }

// EncodeTerm returns the order-preserving byte form of an index term (query.EncodeTerm).
func EncodeTerm(field, value string) ([]byte, error) { return query.EncodeTerm(field, value) }

// DecodeTerm reverses EncodeTerm, returning the canonical textual term.
func DecodeTerm(field string, enc []byte) (string, error) { return query.DecodeTerm(field, enc) }

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
