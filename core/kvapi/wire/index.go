package wire

import (
	"slices"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// The lower-case header prefixes that carry index entries; both are accepted whatever
// the server's dialect.
const (
	storeIndexPrefix = "x-store-index-"
	riakIndexPrefix  = "x-riak-index-"
)

// IndexFieldError is one refused index header value.
type IndexFieldError struct {
	// Field is the lower-cased field name.
	Field string
	// Value is the value that failed to parse as an integer; empty when UnknownType.
	Value string
	// UnknownType is set when Field ends in neither "_bin" nor "_int".
	UnknownType bool
}

// IndexError is the error ParseIndexHeaders returns; it matches ErrInvalidIndex with
// errors.Is. Its Error text is the exact 400 body.
type IndexError struct {
	// Fields lists every problem, sorted and de-duplicated: unparsable _int values
	// first (by field, then value), then unknown field types (by field).
	Fields []IndexFieldError
}

// Error returns one line per problem, e.g.
//
//	Could not parse field 'age_int', value 'abc'.
//	Unknown field type for field: 'foo'.
func (e *IndexError) Error() string {
	var b strings.Builder
	for _, f := range e.Fields {
		if f.UnknownType {
			b.WriteString("Unknown field type for field: '")
			b.WriteString(f.Field)
			b.WriteString("'.\n")
		} else {
			b.WriteString("Could not parse field '")
			b.WriteString(f.Field)
			b.WriteString("', value '")
			b.WriteString(f.Value)
			b.WriteString("'.\n")
		}
	}
	return b.String()
}

// Is reports whether target is ErrInvalidIndex.
func (e *IndexError) Is(target error) bool { return target == ErrInvalidIndex }

func compareFieldErrors(a, b IndexFieldError) int {
	// The reference sorts {field_parsing_failed, {F, V}} before {unknown_field_type, F}.
	if a.UnknownType != b.UnknownType {
		if b.UnknownType {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.Field, b.Field); c != 0 {
		return c
	}
	return strings.Compare(a.Value, b.Value)
}

// indexField returns the lower-cased field named by an index header, if name is one.
func indexField(name string) (string, bool) {
	switch {
	case hasPrefixFold(name, riakIndexPrefix):
		return core.ASCIILower(name[len(riakIndexPrefix):]), true
	case hasPrefixFold(name, storeIndexPrefix):
		return core.ASCIILower(name[len(storeIndexPrefix):]), true
	}
	return "", false
}

// isSpace reports whether c is matched by the reference's \s (PCRE without VT).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// cutIndexValue cuts v at the first match of the regular expression `,\s`: splitting
// a header value with it repeatedly gives what the reference's re:split gives.
func cutIndexValue(v string) (val, rest string, more bool) {
	for i := 0; i+1 < len(v); i++ {
		if v[i] == ',' && isSpace(v[i+1]) {
			return v[:i], v[i+2:], true
		}
	}
	return v, "", false
}

// ParseIndexHeaders extracts the secondary-index entries from request headers.
//
// Every header whose name starts, ignoring ASCII case, with "x-store-index-" or
// "x-riak-index-" counts (both prefixes whatever d is; d is accepted for symmetry with
// FormatIndexHeaders). The field is the rest of the name, ASCII lower-cased. A header's
// values are joined with ", " and split on the regular expression `,\s`, so "a, b" is two
// values and "a,b" one. A field ending in "_bin" keeps its values as bytes; one ending in
// "_int" needs integers (optional sign, decimal digits, any size), stored in canonical
// form ("+007" is "7", "-0" is "0"). Any other field is an error. All problems are
// reported together in an *IndexError.
//
// The result is de-duplicated and sorted by field, then value (integers numerically);
// nil when there are no entries.
func ParseIndexHeaders(headers map[string][]string, d Dialect) ([]core.IndexEntry, error) {
	_ = d
	var entries []core.IndexEntry
	var bad []IndexFieldError
	for name, vals := range headers {
		field, ok := indexField(name)
		if !ok || len(vals) == 0 {
			continue
		}
		v := vals[0]
		if len(vals) > 1 {
			v = strings.Join(vals, ", ")
		}
		// A bare suffix is no field name (the reference's is_field_match wants a key
		// longer than the suffix).
		named := len(field) > len("_bin")
		isBin, isInt := named && strings.HasSuffix(field, "_bin"), named && strings.HasSuffix(field, "_int")
		if !isBin && !isInt {
			bad = append(bad, IndexFieldError{Field: field, UnknownType: true})
			continue
		}
		for more := true; more; {
			var s string
			s, v, more = cutIndexValue(v)
			if isInt {
				c, ok := core.CanonicalInt(s)
				if !ok {
					bad = append(bad, IndexFieldError{Field: field, Value: s})
					continue
				}
				s = c
			}
			if entries == nil {
				entries = make([]core.IndexEntry, 0, 8)
			}
			entries = append(entries, core.IndexEntry{Field: field, Value: s})
		}
	}
	if len(bad) > 0 {
		slices.SortFunc(bad, compareFieldErrors)
		bad = slices.Compact(bad)
		return nil, &IndexError{Fields: bad}
	}
	if len(entries) > 1 {
		slices.SortFunc(entries, core.CompareIndexEntries)
		entries = slices.Compact(entries)
	}
	return entries, nil
}

// IndexHeaderName returns the response header carrying field: the dialect's header
// prefix lower-cased, then "index-", then the field, e.g. "x-riak-index-email_bin".
func IndexHeaderName(d Dialect, field string) string {
	return core.ASCIILower(d.HeaderPrefix()) + "index-" + field
}

// sortedEntries returns entries in core.CompareIndexEntries order, copying only when they
// are not sorted already.
func sortedEntries(entries []core.IndexEntry) []core.IndexEntry {
	if slices.IsSortedFunc(entries, core.CompareIndexEntries) {
		return entries
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, core.CompareIndexEntries)
	return sorted
}

// FormatIndexHeaders returns one (name, value) response header per field, fields in
// sorted order: the name is IndexHeaderName, the value the field's values sorted
// (integers numerically), de-duplicated and joined with ", ".
func FormatIndexHeaders(entries []core.IndexEntry, d Dialect) [][2]string {
	if len(entries) == 0 {
		return nil
	}
	sorted := sortedEntries(entries)
	prefix := core.ASCIILower(d.HeaderPrefix()) + "index-"
	var out [][2]string
	var b strings.Builder
	for i := 0; i < len(sorted); {
		field := sorted[i].Field
		b.Reset()
		b.WriteString(sorted[i].Value)
		j := i + 1
		for ; j < len(sorted) && sorted[j].Field == field; j++ {
			if sorted[j].Value == sorted[j-1].Value {
				continue
			}
			b.WriteString(", ")
			b.WriteString(sorted[j].Value)
		}
		out = append(out, [2]string{prefix + field, b.String()})
		i = j
	}
	return out
}

// IndexPartHeaders returns the index header lines of a multipart part: one
// (name, value) per entry, in sorted order, as the reference writes them.
func IndexPartHeaders(entries []core.IndexEntry, d Dialect) [][2]string {
	if len(entries) == 0 {
		return nil
	}
	sorted := sortedEntries(entries)
	prefix := core.ASCIILower(d.HeaderPrefix()) + "index-"
	out := make([][2]string, 0, len(sorted))
	for i, e := range sorted {
		if i > 0 && e == sorted[i-1] {
			continue
		}
		out = append(out, [2]string{prefix + e.Field, e.Value})
	}
	return out
}
