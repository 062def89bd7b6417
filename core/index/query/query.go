// Package query holds what a secondary-index query is, apart from running it: the
// query (field, terms, range, paging, term filter) and its validation, the errors of a
// query that cannot run, the continuation cursor and its token, and the
// order-preserving encoding of index terms. It depends on the standard library and
// core alone, so the HTTP wire package (core/kvapi/wire) parses queries without
// linking storage; core/index runs them and keeps every name as an alias.
package query

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// The reference system's built-in query fields. Neither is stored as postings: both read
// the keys of the bucket's objects.
const (
	// FieldBucket matches every key of the bucket; its terms are ignored.
	FieldBucket = "$bucket"
	// FieldKey matches keys by value: exactly, or bytewise within an inclusive range.
	FieldKey = "$key"
)

// Query is one secondary-index query on a bucket. Build it with New, then set the
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
	// range queries on index fields (New leaves it to the caller; see WantsTerms).
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

// ErrorKind classifies an Error.
type ErrorKind int

// Kinds of Error, named after the reference system's reasons.
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

// Error reports a query that cannot run. The HTTP layer turns it into the
// reference system's 400 text.
type Error struct {
	Kind ErrorKind
	// Field is the (lower-cased) field.
	Field string
	// Value is the term that failed to parse (FieldParsingFailed).
	Value string
	// Args are the terms given (TooFewArguments, TooManyArguments).
	Args []string
}

// Error describes the problem in plain words.
func (e *Error) Error() string {
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

// New builds an exact (one term) or range (two terms) query on field, which is
// ASCII lower-cased first. FieldBucket takes any number of terms and ignores them. _int
// terms are checked and stored in canonical form. Errors are *Error.
func New(field string, terms []string) (Query, error) {
	field = core.ASCIILower(field)
	kind := kindOf(field)
	if kind == kindUnknown {
		return Query{}, &Error{Kind: UnknownFieldType, Field: field}
	}
	q := Query{Field: field}
	if kind == kindBucket {
		return q, nil
	}
	switch len(terms) {
	case 0:
		return Query{}, &Error{Kind: TooFewArguments, Field: field, Args: terms}
	case 1, 2:
	default:
		return Query{}, &Error{Kind: TooManyArguments, Field: field, Args: terms}
	}
	canon := make([]string, len(terms))
	for i, t := range terms {
		canon[i] = t
		if kind == kindInt {
			c, ok := core.CanonicalInt(t)
			if !ok {
				return Query{}, &Error{Kind: FieldParsingFailed, Field: field, Value: t}
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
// and the term regular expression. Errors are *Error.
func (q *Query) Validate() error {
	kind := kindOf(q.Field)
	if kind == kindUnknown {
		return &Error{Kind: UnknownFieldType, Field: q.Field}
	}
	if kind == kindInt {
		for _, t := range []string{q.Start, q.End} {
			if _, ok := core.CanonicalInt(t); !ok {
				return &Error{Kind: FieldParsingFailed, Field: q.Field, Value: t}
			}
		}
		if q.TermRegex != nil {
			return &Error{Kind: RegexOnInteger, Field: q.Field}
		}
	}
	if q.After != nil {
		if q.After.HasTerm != q.cursorHasTerm() {
			return &Error{Kind: InvalidContinuation, Field: q.Field}
		}
		if q.After.HasTerm && kind == kindInt {
			if _, err := DecodeTerm(q.Field, q.After.Term); err != nil {
				return &Error{Kind: InvalidContinuation, Field: q.Field}
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
