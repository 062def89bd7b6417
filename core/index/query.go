package index

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// The reference system's built-in query fields. Neither is stored as postings: both read
// the keys of the bucket's objects.
const (
	// FieldBucket matches every key of the bucket; its terms are ignored.
	FieldBucket = "$bucket"
	// FieldKey matches keys by value: exactly, or bytewise within an inclusive range.
	FieldKey = "$key"
)

// Query is one secondary-index query on a bucket. Build it with NewQuery, then set the
// options; Run checks it again (see Validate) before it reads anything.
//
// Results come out in storage order, which is the order the reference system gives when
// it sorts: by (term, key) for range queries on an index field, by key otherwise (exact
// queries, FieldKey, FieldBucket). _int terms sort numerically, _bin terms and keys
// bytewise. So a query is always "pagination sorted", with or without MaxResults.
type Query struct {
	// Field is the index: a lower-case field name ending in "_bin" or "_int" (and
	// longer than the suffix), FieldBucket or FieldKey.
	Field string
	// Start and End are the inclusive bounds of a range query, as text (_int terms in
	// canonical decimal form). An exact query uses Start only. FieldBucket ignores both.
	Start, End string
	// Range is set for a range query (two terms), clear for an exact one (one term).
	Range bool
	// ReturnTerms asks for each result's term as well as its key. It only applies to
	// range queries on index fields (NewQuery leaves it to the caller; see WantsTerms).
	ReturnTerms bool
	// Sorted records that the client asked for sorted results (pagination_sort). Results
	// are always sorted; the field is informational.
	Sorted bool
	// MaxResults, when positive, is the page size: Run stops after that many results
	// and returns a continuation.
	MaxResults int
	// After, when set, is the continuation of the previous page: results start strictly
	// after it.
	After *Cursor
	// TermRegex, when set, keeps only the results whose term it matches (the key, for
	// FieldKey). It is refused on _int fields and ignored by FieldBucket.
	TermRegex *regexp.Regexp
}

// ErrorKind classifies a QueryError.
type ErrorKind int

// Kinds of QueryError, named after the reference system's reasons.
const (
	// UnknownFieldType: the field is neither FieldBucket, FieldKey, "*_bin" nor "*_int".
	UnknownFieldType ErrorKind = iota + 1
	// FieldParsingFailed: a term of an _int field is not an integer.
	FieldParsingFailed
	// TooFewArguments: no term for a field that needs one.
	TooFewArguments
	// TooManyArguments: more than two terms.
	TooManyArguments
	// InvalidContinuation: the continuation does not belong to this kind of query.
	InvalidContinuation
	// RegexOnInteger: a term regular expression on an _int field.
	RegexOnInteger
)

// QueryError reports a query that cannot run. The HTTP layer turns it into the
// reference system's 400 text.
type QueryError struct {
	Kind ErrorKind
	// Field is the (lower-cased) field.
	Field string
	// Value is the term that failed to parse (FieldParsingFailed).
	Value string
	// Args are the terms given (TooFewArguments, TooManyArguments).
	Args []string
}

// Error describes the problem in plain words.
func (e *QueryError) Error() string {
	switch e.Kind {
	case UnknownFieldType:
		return fmt.Sprintf("index: unknown field type for field %q", e.Field)
	case FieldParsingFailed:
		return fmt.Sprintf("index: field %q: %q is not an integer", e.Field, e.Value)
	case TooFewArguments:
		return fmt.Sprintf("index: field %q needs a term", e.Field)
	case TooManyArguments:
		return fmt.Sprintf("index: field %q: %d terms, at most 2", e.Field, len(e.Args))
	case InvalidContinuation:
		return "index: the continuation does not belong to this query"
	case RegexOnInteger:
		return "index: term regular expressions do not apply to integer fields"
	}
	return "index: invalid query"
}

// asciiLower lower-cases ASCII letters only, as the index headers' field names are.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// fieldKind classifies a lower-case field name.
type fieldKind int

const (
	kindUnknown fieldKind = iota
	kindBucket
	kindKey
	kindBin
	kindInt
)

func kindOf(field string) fieldKind {
	switch {
	case field == FieldBucket:
		return kindBucket
	case field == FieldKey:
		return kindKey
	case len(field) > len(SuffixBin) && strings.HasSuffix(field, SuffixBin):
		return kindBin
	case len(field) > len(SuffixInt) && strings.HasSuffix(field, SuffixInt):
		return kindInt
	}
	return kindUnknown
}

// NewQuery builds an exact (one term) or range (two terms) query on field, which is
// ASCII lower-cased first. FieldBucket takes any number of terms and ignores them. _int
// terms are checked and stored in canonical form. Errors are *QueryError.
func NewQuery(field string, terms []string) (Query, error) {
	field = asciiLower(field)
	kind := kindOf(field)
	if kind == kindUnknown {
		return Query{}, &QueryError{Kind: UnknownFieldType, Field: field}
	}
	q := Query{Field: field}
	if kind == kindBucket {
		return q, nil
	}
	switch len(terms) {
	case 0:
		return Query{}, &QueryError{Kind: TooFewArguments, Field: field, Args: terms}
	case 1, 2:
	default:
		return Query{}, &QueryError{Kind: TooManyArguments, Field: field, Args: terms}
	}
	canon := make([]string, len(terms))
	for i, t := range terms {
		canon[i] = t
		if kind == kindInt {
			c, ok := core.CanonicalInt(t)
			if !ok {
				return Query{}, &QueryError{Kind: FieldParsingFailed, Field: field, Value: t}
			}
			canon[i] = c
		}
	}
	q.Start, q.End = canon[0], canon[0]
	if len(canon) == 2 {
		q.End, q.Range = canon[1], true
	}
	return q, nil
}

// WantsTerms reports whether the query's results carry terms a client may ask for: a
// range query on an index field. Exact queries, FieldKey and FieldBucket give keys only.
func (q *Query) WantsTerms() bool {
	k := kindOf(q.Field)
	return q.Range && (k == kindBin || k == kindInt)
}

// IsInteger reports whether the query is on an _int field.
func (q *Query) IsInteger() bool { return kindOf(q.Field) == kindInt }

// cursorHasTerm reports whether the query's continuation carries a term as well as a
// key: range queries on index fields do, as their order is (term, key).
func (q *Query) cursorHasTerm() bool { return q.WantsTerms() }

// Validate checks a query built by hand: the field, the terms, the continuation's kind
// and the term regular expression. Errors are *QueryError.
func (q *Query) Validate() error {
	kind := kindOf(q.Field)
	if kind == kindUnknown {
		return &QueryError{Kind: UnknownFieldType, Field: q.Field}
	}
	if kind == kindInt {
		for _, t := range []string{q.Start, q.End} {
			if _, ok := core.CanonicalInt(t); !ok {
				return &QueryError{Kind: FieldParsingFailed, Field: q.Field, Value: t}
			}
		}
		if q.TermRegex != nil {
			return &QueryError{Kind: RegexOnInteger, Field: q.Field}
		}
	}
	if q.After != nil {
		if q.After.HasTerm != q.cursorHasTerm() {
			return &QueryError{Kind: InvalidContinuation, Field: q.Field}
		}
		if q.After.HasTerm && kind == kindInt {
			if _, err := DecodeTerm(q.Field, q.After.Term); err != nil {
				return &QueryError{Kind: InvalidContinuation, Field: q.Field}
			}
		}
	}
	return nil
}

// Cursor is a position in a query's results: the last result of a page. It travels to
// clients as an opaque token (Token) and comes back as a continuation (ParseCursor).
type Cursor struct {
	// HasTerm is set for range queries on index fields, whose results are ordered by
	// (term, key).
	HasTerm bool
	// Term is the stored (encoded) form of the term (see EncodeTerm).
	Term []byte
	// Key is the object key.
	Key []byte
}

// Token encodings: a kind byte, then for cursorTerm the term's length as a uvarint, the
// term and the key; for cursorKey the key. The whole is base64url without padding, so it
// needs no escaping in a query string.
const (
	cursorKey  = 'k'
	cursorTerm = 't'
)

// Token returns the cursor as an opaque, URL-safe string. Equal cursors give equal
// tokens.
func (c Cursor) Token() string {
	raw := make([]byte, 0, 1+binary.MaxVarintLen64+len(c.Term)+len(c.Key))
	if c.HasTerm {
		raw = append(raw, cursorTerm)
		raw = binary.AppendUvarint(raw, uint64(len(c.Term)))
		raw = append(raw, c.Term...)
	} else {
		raw = append(raw, cursorKey)
	}
	raw = append(raw, c.Key...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// ErrBadToken is returned by ParseCursor for a string that no cursor produced.
var ErrBadToken = errors.New("index: malformed continuation")

// ParseCursor decodes a token made by Cursor.Token. It accepts exactly the strings
// Token produces (canonical base64url without padding, a known kind, a term length
// within the token).
func ParseCursor(token string) (Cursor, error) {
	// The decoder skips CR and LF anywhere in its input, which would give one cursor
	// many tokens: refuse them first.
	if strings.ContainsAny(token, "\r\n") {
		return Cursor{}, ErrBadToken
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) == 0 {
		return Cursor{}, ErrBadToken
	}
	switch raw[0] {
	case cursorKey:
		return Cursor{Key: raw[1:]}, nil
	case cursorTerm:
		n, used := binary.Uvarint(raw[1:])
		if used <= 0 || n > uint64(len(raw)-1-used) {
			return Cursor{}, ErrBadToken
		}
		// A non-minimal uvarint would give a second token for the same cursor.
		if used != len(binary.AppendUvarint(nil, n)) {
			return Cursor{}, ErrBadToken
		}
		rest := raw[1+used:]
		return Cursor{HasTerm: true, Term: rest[:n:n], Key: rest[n:]}, nil
	}
	return Cursor{}, ErrBadToken
}

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
	kind := kindOf(q.Field)
	switch kind {
	case kindBucket, kindKey:
		base := storage.KeyString(storage.TagObject, typ, bucket)
		s.objects, s.skip = true, len(base)
		if kind == kindBucket {
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
		s.intTerms, s.regex = kind == kindInt, q.TermRegex
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
// tombstone counts while it is still visible to reads.
//
// Memory use is constant: entries are decoded in place from the iterator.
func Run(ctx context.Context, snap *storage.Snapshot, typ, bucket string, q Query,
	visible func(record []byte) (bool, error), fn func(term, key []byte) error) (Page, error) {
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
			if err := ctx.Err(); err != nil {
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
	case enc[0] == 0x01 && maxIntBytes-int(enc[1]) == len(mag):
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
