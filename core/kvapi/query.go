package kvapi

import (
	"net/http"
	"net/url"
	"strings"
)

// maxPlainArgs is how many key=value pairs a query string may have and still be read
// in place (queryArgs); a longer one is parsed by url.ParseQuery.
const maxPlainArgs = 16

// queryArgs is a request's query string as the handlers read it: the first value of a
// name, as url.ParseQuery decodes it. A plain query (no percent-escape, '+' or ';', at
// most maxPlainArgs pairs: what clients send on the hot paths, e.g. "dw=0") is read in
// place without allocating; any other goes through url.ParseQuery, so both give the
// same answers.
type queryArgs struct {
	plain [maxPlainArgs]queryPair
	n     int
	vals  url.Values // set when the query is not plain
}

// queryPair is one key=value pair of a plain query.
type queryPair struct{ k, v string }

// query returns the request's query arguments.
func query(r *http.Request) *queryArgs {
	q := new(queryArgs)
	q.parse(r.URL.RawQuery)
	return q
}

// parse reads raw into q, in place when it is plain.
func (q *queryArgs) parse(raw string) {
	if strings.ContainsAny(raw, "%+;") || strings.Count(raw, "&") >= maxPlainArgs {
		q.vals, _ = url.ParseQuery(raw) // as (*url.URL).Query: malformed pairs are dropped
		if q.vals == nil {
			q.vals = url.Values{}
		}
		return
	}
	// url.ParseQuery's loop, without unescaping (a plain query has nothing to unescape).
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		q.plain[q.n] = queryPair{k, v}
		q.n++
	}
}

// lookup returns the first value of name and whether the query has it.
func (q *queryArgs) lookup(name string) (string, bool) {
	if q.vals != nil {
		if v, ok := q.vals[name]; ok && len(v) > 0 {
			return v[0], true
		}
		return "", false
	}
	for _, p := range q.plain[:q.n] {
		if p.k == name {
			return p.v, true
		}
	}
	return "", false
}

// get returns the first value of name, or "" when the query does not have it.
func (q *queryArgs) get(name string) string {
	v, _ := q.lookup(name)
	return v
}
