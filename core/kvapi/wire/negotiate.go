package wire

import (
	"math"
	"strconv"
	"strings"
)

// Negotiate picks the media type to serve from offers (the resource's types, most
// preferred first) for a request's Accept header, as webmachine's content negotiation
// does, and reports false when nothing is acceptable (406).
//
//   - An absent or blank Accept selects the first offer.
//   - Accept is a comma-separated list of media ranges ("type/subtype", "type/*", "*/*",
//     and "*" as a lenient synonym of "*/*") with parameters. Only the q parameter is
//     used; an entry whose q is not a number in [0, 1], or whose range is malformed, is
//     ignored. Types compare case-insensitively; offer parameters are ignored.
//   - Each offer takes the q of its most specific matching range (an exact type beats
//     type/*, which beats */*; the earliest such entry if several). q=0 excludes it.
//   - The offer with the highest q wins; ties go to the more specific match, then to the
//     range that comes first in Accept, then to the earlier offer.
//
// So "multipart/mixed,application/json;q=0.7, */*;q=0.5" picks multipart/mixed when it is
// offered, else application/json, else anything offered at q=0.5.
func Negotiate(accept string, offers []string) (string, bool) {
	if len(offers) == 0 {
		return "", false
	}
	if strings.TrimSpace(accept) == "" {
		return offers[0], true
	}
	best := -1
	var bq float64
	var bspec, bpos int
	for i, offer := range offers {
		q, spec, pos, ok := matchOffer(accept, mediaOnly(offer))
		if !ok || q <= 0 {
			continue
		}
		if best < 0 || q > bq || q == bq && (spec > bspec || spec == bspec && pos < bpos) {
			best, bq, bspec, bpos = i, q, spec, pos
		}
	}
	if best < 0 {
		return "", false
	}
	return offers[best], true
}

// mediaOnly strips parameters from a media type.
func mediaOnly(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// matchOffer finds the most specific Accept entry matching offer and returns its q,
// its specificity (3 exact, 2 type/*, 1 */*) and its position in the list.
func matchOffer(accept, offer string) (q float64, spec, pos int, ok bool) {
	otype, _, _ := strings.Cut(offer, "/")
	for n, rest := 0, accept; rest != ""; n++ {
		entry := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			entry, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		rng, params, _ := strings.Cut(entry, ";")
		rng = strings.TrimSpace(rng)
		if rng == "" {
			continue
		}
		s := rangeMatch(rng, offer, otype)
		if s == 0 || s <= spec {
			continue
		}
		eq, valid := qValue(params)
		if !valid {
			continue
		}
		q, spec, pos, ok = eq, s, n, true
		if s == 3 {
			break
		}
	}
	return q, spec, pos, ok
}

// rangeMatch returns the specificity with which media range rng matches offer (whose
// type is otype), or 0.
func rangeMatch(rng, offer, otype string) int {
	if rng == "*/*" || rng == "*" {
		return 1
	}
	rt, rs, found := strings.Cut(rng, "/")
	if !found || rt == "" || rs == "" || rt == "*" {
		return 0
	}
	if rs == "*" {
		if strings.EqualFold(rt, otype) {
			return 2
		}
		return 0
	}
	if strings.EqualFold(rng, offer) {
		return 3
	}
	return 0
}

// qValue returns the q parameter of an Accept entry's parameters (1 when absent) and
// whether it is a valid quality.
func qValue(params string) (float64, bool) {
	for params != "" {
		p := params
		if i := strings.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			params = ""
		}
		name, val, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(q) || q < 0 || q > 1 {
			return 0, false
		}
		return q, true
	}
	return 1, true
}
