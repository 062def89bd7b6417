package wire

import (
	"errors"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index/query"
)

// ErrInvalidIndexQuery reports a secondary-index request whose path or parameters the
// reference system refuses with 400. The body is the *IndexQueryError's Error text.
var ErrInvalidIndexQuery = errors.New("wire: invalid index query")

// IndexQueryError is the error ParseIndexQuery returns; it matches ErrInvalidIndexQuery
// with errors.Is. Its Error text is the exact 400 body (text/plain).
type IndexQueryError struct {
	Body string
}

// Error returns the 400 body.
func (e *IndexQueryError) Error() string { return e.Body }

// Is reports whether target is ErrInvalidIndexQuery.
func (e *IndexQueryError) Is(target error) bool { return target == ErrInvalidIndexQuery }

// IndexRequest is a parsed secondary-index request.
type IndexRequest struct {
	// Query is the query with its options (return_terms, max_results, continuation,
	// term_regex, pagination_sort) applied.
	Query query.Query
	// Stream is stream=true: results as a chunked multipart/mixed body.
	Stream bool
	// Timeout is the timeout parameter; zero means none (absent or 0).
	Timeout time.Duration
}

// ParseIndexQuery parses a secondary-index request: rest is the path after ".../index/"
// (FIELD/TERM[/TERM], still percent-encoded, without empty segments) and params the
// query parameters. The field and terms are decoded with Unquote; the field is
// lower-cased. Parameters:
//
//   - return_terms=true|false (any case): terms with the keys, for range queries on
//     index fields only;
//   - max_results=N, N > 0: the page size;
//   - continuation=C: a token from a previous page;
//   - pagination_sort=true|false (any case): accepted (results are always sorted);
//   - term_regex=RE: RE2 syntax, on _bin fields and $key (refused on _int);
//   - stream=true (exactly): streamed results;
//   - timeout=MS, MS >= 0 (0 = none).
//
// Problems are reported as the reference system does, one at a time and in its order of
// precedence: pagination_sort, return_terms, a regular expression on an integer query,
// a bad regular expression, the query itself (field, terms, continuation), max_results,
// timeout. The error is an *IndexQueryError holding the exact body.
func ParseIndexQuery(rest string, params url.Values) (IndexRequest, error) {
	var req IndexRequest
	fail := func(body string) (IndexRequest, error) {
		return IndexRequest{}, &IndexQueryError{Body: body}
	}

	pgSort := false
	if v, ok := params["pagination_sort"]; ok {
		b, good := parseIndexBool(v[0])
		if !good {
			return fail(`Invalid "pagination_sort". ` + erlangString(v[0]) + " is not a boolean")
		}
		pgSort = b
	}
	returnTerms := false
	if v, ok := params["return_terms"]; ok {
		b, good := parseIndexBool(v[0])
		if !good {
			return fail(`Invalid "return_terms". ` + erlangString(v[0]) + " is not a boolean")
		}
		returnTerms = b
	}

	q, qerr := parseIndexPath(rest)
	token, hasToken := params["continuation"]
	if qerr == nil && hasToken {
		c, err := query.ParseCursor(token[0])
		if err != nil {
			qerr = &continuationError{token: token[0]}
		} else {
			q.After = &c
			if err := q.Validate(); err != nil {
				qerr = &continuationError{token: token[0]}
			}
		}
	}

	var re *regexp.Regexp
	var reErr error
	reText, hasRe := params["term_regex"]
	if hasRe {
		re, reErr = regexp.Compile(reText[0])
	}
	switch {
	case hasRe && reErr == nil && qerr == nil && q.IsInteger():
		return fail("Can not use term regular expressions on integer queries")
	case reErr != nil:
		return fail("Invalid term regular expression " + erlangString(reText[0]) + " : " + erlangString(regexErrorText(reErr)))
	}

	maxResults, maxOK, maxBad := 0, true, ""
	if v, ok := params["max_results"]; ok {
		maxResults, maxOK, maxBad = parsePositive(v[0])
	}
	var timeout time.Duration
	timeoutOK, timeoutBad := true, ""
	if v, ok := params["timeout"]; ok {
		timeout, timeoutOK, timeoutBad = parseIndexTimeout(v[0])
	}
	switch {
	case qerr != nil:
		return fail("Invalid query: " + queryReason(qerr) + "\n")
	case !maxOK:
		return fail(`Invalid "max_results". ` + maxBad + " is not a positive integer")
	case !timeoutOK:
		return fail("Bad timeout value " + timeoutBad + ". Must be a non-negative integer\n")
	}

	q.ReturnTerms = returnTerms && q.WantsTerms()
	q.Sorted = pgSort || hasToken || maxResults > 0
	q.MaxResults = maxResults
	if q.Field != query.FieldBucket {
		q.TermRegex = re
	}
	req.Query = q
	req.Stream = params.Get("stream") == "true"
	req.Timeout = timeout
	return req, nil
}

// parseIndexPath splits FIELD/TERM[/TERM] and builds the query.
func parseIndexPath(rest string) (query.Query, error) {
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		segs[i] = Unquote(s)
	}
	return query.New(segs[0], segs[1:])
}

// continuationError is a continuation token that does not decode or does not belong to
// the query.
type continuationError struct{ token string }

func (e *continuationError) Error() string { return "invalid continuation " + strconv.Quote(e.token) }

// queryReason renders a query error as the reference system prints its reason term.
func queryReason(err error) string {
	var ce *continuationError
	if errors.As(err, &ce) {
		return "{invalid_continuation," + erlangBinary(ce.token) + "}"
	}
	var qe *query.Error
	if !errors.As(err, &qe) {
		return erlangBinary(err.Error())
	}
	switch qe.Kind {
	case query.UnknownFieldType:
		return "{unknown_field_type," + erlangBinary(qe.Field) + "}"
	case query.FieldParsingFailed:
		return "{field_parsing_failed,{" + erlangBinary(qe.Field) + "," + erlangBinary(qe.Value) + "}}"
	case query.TooFewArguments, query.TooManyArguments:
		name := "too_few_arguments"
		if qe.Kind == query.TooManyArguments {
			name = "too_many_arguments"
		}
		var b strings.Builder
		b.WriteString("{" + name + ",[")
		for i, a := range qe.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(erlangBinary(a))
		}
		b.WriteString("]}")
		return b.String()
	}
	return erlangBinary(qe.Error())
}

// regexErrorText is a regular-expression error without Go's "error parsing regexp: "
// prefix.
func regexErrorText(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// parseIndexBool is the reference's boolean for 2i parameters: "true" or "false" in any
// ASCII case.
func parseIndexBool(s string) (val, ok bool) {
	switch core.ASCIILower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parsePositive parses max_results: an integer (optional sign, decimal digits, any
// size) above zero. bad is the value as the reference prints it in the error: the
// integer for a number that is not positive, the quoted text otherwise. Values beyond
// the int range are capped (a page that large is the same as no limit).
func parsePositive(s string) (n int, ok bool, bad string) {
	c, isInt := core.CanonicalInt(s)
	if !isInt {
		return 0, false, erlangString(s)
	}
	if c == "0" || c[0] == '-' {
		return 0, false, c
	}
	v, err := strconv.ParseInt(c, 10, 64)
	if err != nil || v > math.MaxInt32 {
		v = math.MaxInt32
	}
	return int(v), true, ""
}

// parseIndexTimeout parses the timeout parameter of a 2i request: milliseconds, an
// integer of at least 0; 0 means none. bad is the value as the reference prints it.
func parseIndexTimeout(s string) (d time.Duration, ok bool, bad string) {
	c, isInt := core.CanonicalInt(s)
	if !isInt {
		return 0, false, erlangString(s)
	}
	if c[0] == '-' {
		return 0, false, c
	}
	ms, err := strconv.ParseInt(c, 10, 64)
	if err != nil || ms > math.MaxInt64/int64(time.Millisecond) {
		ms = math.MaxInt64 / int64(time.Millisecond)
	}
	return time.Duration(ms) * time.Millisecond, true, ""
}

// erlangBinary renders s as Erlang's ~p prints a binary: <<"text">> when every byte is
// printable (see erlangString), <<>> when empty, else the bytes as <<104,0>>.
func erlangBinary(s string) string {
	if s == "" {
		return "<<>>"
	}
	return "<<" + strings.TrimSuffix(strings.TrimPrefix(erlangString(s), "["), "]") + ">>"
}
