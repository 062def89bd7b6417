package wire

import (
	"regexp"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// This file holds regular-expression reference implementations of the hand-written
// scanners, taken literally from the reference system's patterns. Go's regexp uses
// leftmost-first (Perl-like) submatch semantics, so its captures equal PCRE's. Tests and
// fuzz targets compare the scanners against them.

type refForm struct {
	re     *regexp.Regexp
	bucket bool
	typed  bool
}

var (
	refOldBucket     = refForm{re: regexp.MustCompile(`</(?:store|riak)/([^/]+)>; ?rel="([^"]+)"`), bucket: true}
	refOldKey        = refForm{re: regexp.MustCompile(`</(?:store|riak)/([^/]+)/([^/]+)>; ?(?:storetag|riaktag)="([^"]+)"`)}
	refBucketsBucket = refForm{re: regexp.MustCompile(`</buckets/([^/]+)>; ?rel="([^"]+)"`), bucket: true}
	refBucketsKey    = refForm{re: regexp.MustCompile(`</buckets/([^/]+)/keys/([^/]+)>; ?(?:storetag|riaktag)="([^"]+)"`)}
	refTypedBucket   = refForm{re: regexp.MustCompile(`</types/([^/]+)/buckets/([^/]+)>; ?rel="([^"]+)"`), bucket: true, typed: true}
	refTypedKey      = refForm{re: regexp.MustCompile(`</types/([^/]+)/buckets/([^/]+)/keys/([^/]+)>; ?(?:storetag|riaktag)="([^"]+)"`), typed: true}
)

func refForms(api API) []refForm {
	switch api {
	case APIBuckets:
		return []refForm{refBucketsBucket, refBucketsKey}
	case APITyped:
		return []refForm{refTypedBucket, refTypedKey, refBucketsBucket, refBucketsKey}
	}
	return []refForm{refOldBucket, refOldKey}
}

// refParseLinks is ParseLinks written with the reference regular expressions.
func refParseLinks(header string, api API, typ, bucket string) ([]core.Link, bool) {
	var links []core.Link
	for _, piece := range strings.Split(header, ",") {
		if piece == "" {
			continue
		}
		matched := false
		for _, f := range refForms(api) {
			m := f.re.FindStringSubmatch(piece)
			if m == nil {
				continue
			}
			matched = true
			c := m[1:]
			if f.typed {
				if Unquote(c[0]) != typ {
					return nil, false
				}
				c = c[1:]
			}
			if f.bucket {
				if Unquote(c[1]) != "up" || Unquote(c[0]) != bucket {
					return nil, false
				}
				break
			}
			links = append(links, core.Link{Bucket: Unquote(c[0]), Key: Unquote(c[1]), Tag: Unquote(c[2])})
			break
		}
		if !matched {
			return nil, false
		}
	}
	return links, true
}

var refIndexSplit = regexp.MustCompile(`,\s`)

// refSplitIndex is the reference's re:split(V, ",\\s").
func refSplitIndex(v string) []string { return refIndexSplit.Split(v, -1) }
