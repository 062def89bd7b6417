package s3types

import (
	"slices"
	"strings"
)

// CORSRule is one rule of a bucket's CORS configuration (PUT ?cors): the origins,
// methods and request headers it allows, and what a matching answer tells the browser.
type CORSRule struct {
	// ID names the rule (optional).
	ID string `json:"id,omitempty"`
	// AllowedOrigins are the origins allowed, each with at most one "*" wildcard.
	AllowedOrigins []string `json:"origins"`
	// AllowedMethods are among GET, PUT, POST, DELETE and HEAD.
	AllowedMethods []string `json:"methods"`
	// AllowedHeaders are the headers a preflight may ask for, each with at most one
	// "*"; matched ignoring case.
	AllowedHeaders []string `json:"headers,omitempty"`
	// ExposeHeaders are the response headers the browser lets the page read.
	ExposeHeaders []string `json:"expose,omitempty"`
	// MaxAgeSeconds, when HasMaxAge, is how long a browser may cache the preflight.
	MaxAgeSeconds int  `json:"max_age,omitempty"`
	HasMaxAge     bool `json:"has_max_age,omitempty"`
}

// wildcardMatch reports whether s matches pattern, in which one "*" stands for any
// run of characters (a second "*" is literal; configurations never hold one); with
// fold, case is ignored.
func wildcardMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	pre, suf, star := strings.Cut(pattern, "*")
	if !star {
		return pattern == s
	}
	return len(s) >= len(pre)+len(suf) && strings.HasPrefix(s, pre) && strings.HasSuffix(s, suf)
}

// AllowsOrigin reports whether the rule allows the origin (matched case-sensitively,
// as AWS does).
func (r *CORSRule) AllowsOrigin(origin string) bool {
	return slices.ContainsFunc(r.AllowedOrigins, func(p string) bool { return wildcardMatch(p, origin, false) })
}

// AllowsHeader reports whether the rule allows a request header (ignoring case).
func (r *CORSRule) AllowsHeader(name string) bool {
	return slices.ContainsFunc(r.AllowedHeaders, func(p string) bool { return wildcardMatch(p, name, true) })
}

// AnyOrigin reports whether the rule allows every origin with the plain "*": its
// answers then say "Access-Control-Allow-Origin: *" rather than the origin.
func (r *CORSRule) AnyOrigin() bool { return slices.Contains(r.AllowedOrigins, "*") }

// MatchCORS returns the first rule of rules that allows a request from origin with
// method and, for a preflight, every one of headers (nil for an actual request), or nil.
func MatchCORS(rules []CORSRule, origin, method string, headers []string) *CORSRule {
	for i := range rules {
		r := &rules[i]
		if !r.AllowsOrigin(origin) || !slices.Contains(r.AllowedMethods, method) {
			continue
		}
		if !slices.ContainsFunc(headers, func(h string) bool { return !r.AllowsHeader(h) }) {
			return r
		}
	}
	return nil
}
