package kvapi

import (
	"fmt"
	"strings"
)

// template is a route's path pattern, matched segment by segment on the request's
// escaped path without regular expressions: gorilla/mux's path templates run a regexp to
// match and again to extract variables, which was a fifth of a cached GET's time. The
// router still dispatches (through mux.MatcherFunc), names routes and runs middleware.
//
// A segment is a literal ("buckets"), a set of literal alternatives ("{prefix:store|riak}",
// not captured), or a capture ("{bucket}"). The last segment may be a rest capture
// ("{walk*}"), which takes one or more remaining segments with their slashes. Captures
// are returned still percent-encoded.
type template struct {
	pattern string
	segs    []tmplSeg
	// slot maps each capture, in order, to its field in a loc.
	slot []string
}

type tmplSeg struct {
	literal string   // for a literal segment
	alts    []string // for an alternatives segment
	capture bool
	rest    bool // a capture of every remaining segment (last segment only)
}

// maxCaptures bounds the captures of one template (type, bucket, key, rest).
const maxCaptures = 4

// parseTemplate parses a pattern such as "/types/{type}/buckets/{bucket}/keys/{key}".
func parseTemplate(pattern string) *template {
	t := &template{pattern: pattern}
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "*}"):
			if i != len(segs)-1 {
				panic(fmt.Sprintf("kvapi: template %q: a rest capture must be the last segment", pattern))
			}
			t.segs = append(t.segs, tmplSeg{capture: true, rest: true})
			t.slot = append(t.slot, s[1:len(s)-2])
		case s == "":
			// the root pattern "/" has no segments
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			name, alts, hasAlts := strings.Cut(s[1:len(s)-1], ":")
			if hasAlts {
				t.segs = append(t.segs, tmplSeg{alts: strings.Split(alts, "|")})
				continue
			}
			t.segs = append(t.segs, tmplSeg{capture: true})
			t.slot = append(t.slot, name)
		default:
			t.segs = append(t.segs, tmplSeg{literal: s})
		}
	}
	if len(t.slot) > maxCaptures {
		panic(fmt.Sprintf("kvapi: template %q has more than %d captures", pattern, maxCaptures))
	}
	return t
}

// match reports whether the escaped path p (already normalised: no empty segments)
// matches, and fills caps with the captured segments in order. It does not allocate.
func (t *template) match(p string, caps *[maxCaptures]string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	rest := p[1:]
	n := 0
	for i, seg := range t.segs {
		if rest == "" {
			return false
		}
		var s string
		if seg.rest {
			if caps != nil {
				caps[n] = rest
			}
			return true
		}
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			s, rest = rest[:j], rest[j+1:]
			if rest == "" {
				return false // a trailing slash would have been normalised away
			}
		} else {
			s, rest = rest, ""
		}
		switch {
		case seg.capture:
			if caps != nil {
				caps[n] = s
			}
			n++
		case seg.alts != nil:
			ok := false
			for _, a := range seg.alts {
				if s == a {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		case s != seg.literal:
			return false
		}
		if i == len(t.segs)-1 && rest != "" {
			return false
		}
	}
	return rest == ""
}
