package s3

import (
	"github.com/cairnkv/cairn/core"
	"strings"
	"unicode/utf8"
)

// globMatch reports whether s matches pattern, where * matches any run of characters
// (including none and including '/') and ? exactly one character (one UTF-8 rune);
// with fold, ASCII letters match ignoring case.
//
// It never backtracks: the text between two *s (a segment) is matched at its leftmost
// occurrence, which is always right when what follows is again *. The first segment
// must match at the start of s and the last one at its end. A segment without ? is
// found with strings.Index, so a pattern of literal text and any number of *s runs in
// time linear in len(pattern)+len(s); a segment holding ? is tried at each rune of s,
// O(len(segment)·len(s)) at worst.
func globMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = core.ASCIILower(pattern), core.ASCIILower(s)
	}
	first, rest, star := strings.Cut(pattern, "*")
	if !star {
		end, ok := segmentAt(first, s)
		return ok && end == len(s)
	}
	end, ok := segmentAt(first, s)
	if !ok {
		return false
	}
	s = s[end:]
	for {
		seg, after, more := strings.Cut(rest, "*")
		if !more {
			return segmentAtEnd(seg, s)
		}
		rest = after
		if seg == "" {
			continue
		}
		_, end, ok := findSegment(seg, s)
		if !ok {
			return false
		}
		s = s[end:]
	}
}

// segmentAt matches seg (no *) at the start of s and returns where the match ends.
func segmentAt(seg, s string) (int, bool) {
	i := 0
	for j := 0; j < len(seg); j++ {
		if i >= len(s) {
			return 0, false
		}
		if seg[j] == '?' {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		if s[i] != seg[j] {
			return 0, false
		}
		i++
	}
	return i, true
}

// segmentAtEnd reports whether seg (no *) matches a suffix of s, matching from the end.
func segmentAtEnd(seg, s string) bool {
	i := len(s)
	for j := len(seg) - 1; j >= 0; j-- {
		if i <= 0 {
			return false
		}
		if seg[j] == '?' {
			_, w := utf8.DecodeLastRuneInString(s[:i])
			i -= w
			continue
		}
		if s[i-1] != seg[j] {
			return false
		}
		i--
	}
	return true
}

// findSegment returns the leftmost match of seg (no *, not empty) in s: its start and
// end.
func findSegment(seg, s string) (start, end int, ok bool) {
	if strings.IndexByte(seg, '?') < 0 {
		i := strings.Index(s, seg)
		if i < 0 {
			return 0, 0, false
		}
		return i, i + len(seg), true
	}
	for i := 0; i < len(s); {
		if e, ok := segmentAt(seg, s[i:]); ok {
			return i, i + e, true
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return 0, 0, false
}
