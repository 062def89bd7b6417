package index

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index/query"
	"github.com/cairnkv/cairn/core/storage"
)

// The query itself (fields, Query, errors, Cursor) is defined in the leaf package
// core/index/query, so that the HTTP wire package parses queries without linking
// storage; these aliases keep its names here.

// The reference system's built-in query fields (query.FieldBucket, query.FieldKey).
const (
	FieldBucket = query.FieldBucket
	FieldKey    = query.FieldKey
)

// Query is one secondary-index query on a bucket (see query.Query).
type Query = query.Query

// ErrorKind classifies a QueryError.
type ErrorKind = query.ErrorKind

// Kinds of QueryError, named after the reference system's reasons.
const (
	UnknownFieldType    = query.UnknownFieldType
	FieldParsingFailed  = query.FieldParsingFailed
	TooFewArguments     = query.TooFewArguments
	TooManyArguments    = query.TooManyArguments
	InvalidContinuation = query.InvalidContinuation
	RegexOnInteger      = query.RegexOnInteger
)

// QueryError reports a query that cannot run (see query.Error).
type QueryError = query.Error

// NewQuery builds an exact (one term) or range (two terms) query on field (query.New).
func NewQuery(field string, terms []string) (Query, error) { return query.New(field, terms) }

// Cursor is a position in a query's results (see query.Cursor).
type Cursor = query.Cursor

// ErrBadToken is returned by ParseCursor for a string that no cursor produced.
var ErrBadToken = query.ErrBadToken

// ParseCursor decodes a token made by Cursor.Token (query.ParseCursor).
func ParseCursor(token string) (Cursor, error) { return query.ParseCursor(token) }

// Page is what Run reports besides the results.
type Page struct {
	// Count is the number of results given to the callback.
	Count int
	// Continuation is the token of the last result when the page is full (MaxResults
	// results); empty otherwise, including when fewer results remained.
	Continuation string
}

// checkEvery is how many entries a query reads between checks of its context.
const checkEvery = 1024

// Bounds of an _int range whose term does not fit the posting encoding: below every
// negative term (sign byte 0x01), above every positive one (0x02).
var (
	intBelowAll = []byte{0x00}
	intAboveAll = []byte{0x03}
)

// encodeBound encodes a query term; an integer too large to be stored becomes the bound
// beyond every stored term on its side.
func encodeBound(field, term string) []byte {
	enc, err := EncodeTerm(field, term)
	if err == nil {
		return enc
	}
	if strings.HasPrefix(term, "-") {
		return intBelowAll
	}
	return intAboveAll
}

// scan is the plan of one query: the key range to read and how to read an entry.
type scan struct {
	lo, hi []byte
	// skip is the length of the prefix every entry shares; the components after it are
	// the term (withTerm) and the key.
	skip     int
	withTerm bool
	objects  bool // entries are object records ($bucket, $key): check visibility
	intTerms bool
	keyTerm  bool   // the term of a result is its key ($key)
	term     []byte // the fixed term of an exact query
	regex    *regexp.Regexp
}

func plan(typ, bucket string, q *Query) scan {
	var s scan
	switch q.Field {
	case FieldBucket, FieldKey:
		base := storage.KeyString(storage.TagObject, typ, bucket)
		s.objects, s.skip = true, len(base)
		if q.Field == FieldBucket {
			s.lo, s.hi = base, storage.PrefixEnd(base)
			break
		}
		s.keyTerm, s.regex = true, q.TermRegex
		s.lo = storage.AppendComponent(base, []byte(q.Start))
		end := q.Start
		if q.Range {
			end = q.End
		}
		s.hi = storage.PrefixEnd(storage.AppendComponent(append([]byte(nil), base...), []byte(end)))
	default:
		base := FieldPrefix(typ, bucket, q.Field)
		s.intTerms, s.regex = q.IsInteger(), q.TermRegex
		start := encodeBound(q.Field, q.Start)
		if !q.Range {
			s.lo = storage.AppendComponent(base, start)
			s.hi = storage.PrefixEnd(s.lo)
			s.skip = len(s.lo)
			s.term = []byte(q.Start)
			break
		}
		s.withTerm, s.skip = true, len(base)
		s.lo = storage.AppendComponent(append([]byte(nil), base...), start)
		s.hi = storage.PrefixEnd(storage.AppendComponent(base, encodeBound(q.Field, q.End)))
	}
	if q.After != nil {
		// The first key strictly after the cursor's entry: entries are prefix-free, so
		// appending a zero byte gives a bound below every later entry.
		after := append([]byte(nil), s.lo[:s.skip]...)
		if s.withTerm {
			after = storage.AppendComponent(after, q.After.Term)
		}
		after = storage.AppendComponent(after, q.After.Key)
		after = append(after, 0)
		if bytes.Compare(after, s.lo) > 0 {
			s.lo = after
		}
	}
	return s
}

// Run executes q on the bucket typ/bucket of snap and calls fn with each result, in
// order. term and key are only valid during the call (copy them to keep them): term is
// the result's term as text (the key for FieldKey, nil for FieldBucket, the query's
// term for an exact query); the terms of a range query on an _int field are decoded
// only when q.ReturnTerms is set, and are nil otherwise. Run stops at fn's first error
// and returns it unwrapped, returns ctx's error when ctx ends, an *QueryError for an
// invalid query (see Validate), and an error wrapping storage's when the store fails.
//
// For FieldBucket and FieldKey, visible (when not nil) decides from an object record
// whether its key counts; the kv layer passes the same rule as key listing, so a
// tombstone counts while it is still visible to reads. For index fields, live (when not
// nil) decides from a posting's value whether it counts; the kv layer stores an
// expiring object's expiry there, so an expired object's postings are skipped without
// reading the object.
//
// Memory use is constant: entries are decoded in place from the iterator.
func Run(ctx context.Context, snap *storage.Snapshot, typ, bucket string, q Query,
	visible func(record []byte) (bool, error), live func(posting []byte) bool, fn func(term, key []byte) error) (Page, error) {
	var page Page
	if err := q.Validate(); err != nil {
		return page, err
	}
	if err := ctx.Err(); err != nil {
		return page, err
	}
	s := plan(typ, bucket, &q)
	if s.hi != nil && bytes.Compare(s.lo, s.hi) >= 0 {
		return page, nil
	}
	it := snap.Iterate(s.lo, s.hi)
	defer it.Release()
	var termScratch, keyScratch, intBuf []byte
	n := 0
	for it.Next() {
		if n++; n%checkEvery == 0 {
			if err := core.Expired(ctx); err != nil {
				return page, err
			}
		}
		entry := it.Key()
		if len(entry) < s.skip {
			return page, fmt.Errorf("index: query %s/%s: short key %q: %w", typ, bucket, entry, storage.ErrMalformedKey)
		}
		rest := entry[s.skip:]
		var rawTerm, key []byte
		ok := true
		if s.withTerm {
			rawTerm, rest, ok = component(rest, &termScratch)
		}
		if ok {
			key, rest, ok = component(rest, &keyScratch)
		}
		if !ok || len(rest) != 0 {
			return page, fmt.Errorf("index: query %s/%s: malformed key %q: %w", typ, bucket, entry, storage.ErrMalformedKey)
		}
		term := s.term
		if !s.objects && live != nil && !live(it.Value()) {
			continue
		}
		switch {
		case s.objects:
			if visible != nil {
				vis, err := visible(it.Value())
				if err != nil {
					return page, fmt.Errorf("index: query %s/%s/%s: %w", typ, bucket, key, err)
				}
				if !vis {
					continue
				}
			}
			if s.keyTerm {
				term = key
			}
		case s.withTerm && s.intTerms && !q.ReturnTerms:
			term = nil // decoded only when asked for: no regular expression applies to it
		case s.withTerm && s.intTerms:
			intBuf, ok = appendIntTerm(intBuf[:0], q.Field, rawTerm)
			if !ok {
				return page, fmt.Errorf("index: query %s/%s: bad integer term in %q: %w", typ, bucket, entry, storage.ErrMalformedKey)
			}
			term = intBuf
		case s.withTerm:
			term = rawTerm
		}
		if s.regex != nil && !s.regex.Match(term) {
			continue
		}
		if err := fn(term, key); err != nil {
			return page, err
		}
		page.Count++
		if q.MaxResults > 0 && page.Count == q.MaxResults {
			page.Continuation = Cursor{HasTerm: s.withTerm, Term: rawTerm, Key: key}.Token()
			return page, nil
		}
	}
	if err := it.Err(); err != nil {
		return page, fmt.Errorf("index: query %s/%s: %w", typ, bucket, err)
	}
	return page, nil
}

// component splits the first key component (see storage.Key) off b. The component
// aliases b unless it holds an escaped zero byte; then it is unescaped into *scratch,
// which is reused across calls.
func component(b []byte, scratch *[]byte) (c, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || i+1 >= len(b) {
		return nil, nil, false
	}
	if b[i+1] == 0x01 {
		return b[:i], b[i+2:], true
	}
	out := (*scratch)[:0]
	from := 0
	for {
		switch b[i+1] {
		case 0xFF:
			out = append(out, b[from:i]...)
			out = append(out, 0)
			from = i + 2
		case 0x01:
			out = append(out, b[from:i]...)
			*scratch = out
			return out, b[i+2:], true
		default:
			return nil, nil, false
		}
		j := bytes.IndexByte(b[from:], 0)
		if j < 0 || from+j+1 >= len(b) {
			return nil, nil, false
		}
		i = from + j
	}
}

// appendIntTerm appends the decimal text of an encoded _int term (see EncodeTerm) to
// dst. Terms of up to 64 bits are decoded without allocating.
func appendIntTerm(dst []byte, field string, enc []byte) ([]byte, bool) {
	if len(enc) < 2 {
		return dst, false
	}
	mag := enc[2:]
	switch {
	case enc[0] == 0x02 && int(enc[1]) == len(mag):
	case enc[0] == 0x01 && query.MaxIntBytes-int(enc[1]) == len(mag):
	default:
		return dst, false
	}
	if len(mag) > 8 {
		s, err := DecodeTerm(field, enc)
		if err != nil {
			return dst, false
		}
		return append(dst, s...), true
	}
	var u uint64
	for _, b := range mag {
		if enc[0] == 0x01 {
			b = ^b
		}
		u = u<<8 | uint64(b)
	}
	if enc[0] == 0x01 {
		dst = append(dst, '-')
	}
	return strconv.AppendUint(dst, u, 10), true
}
