package wire

import (
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// API is the URL family a request used. It decides the grammar of Link headers and of
// the paths the server writes (Link, Location).
type API int

// The three URL families.
const (
	// APIOld is /store/B/K (or /riak/B/K): API version 1 of the reference system.
	APIOld API = 1
	// APIBuckets is /buckets/B/keys/K: API version 2, always the default bucket type.
	APIBuckets API = 2
	// APITyped is /types/T/buckets/B/keys/K: API version 3.
	APITyped API = 3
)

// String returns "old", "buckets" or "typed".
func (a API) String() string {
	switch a {
	case APIOld:
		return "old"
	case APIBuckets:
		return "buckets"
	case APITyped:
		return "typed"
	}
	return "API(" + strconv.Itoa(int(a)) + ")"
}

// LinkError is the error ParseLinks returns; it matches ErrInvalidLink with errors.Is.
// The body of the 400 response is LinkErrorMessage, not Error.
type LinkError struct {
	// Piece is the comma-separated element of the header that was refused.
	Piece string
	// Reason says why, for logs.
	Reason string
}

// Error implements error.
func (e *LinkError) Error() string {
	return "wire: invalid Link header: " + e.Reason + ": " + strconv.Quote(e.Piece)
}

// Is reports whether target is ErrInvalidLink.
func (e *LinkError) Is(target error) bool { return target == ErrInvalidLink }

// LinkErrorMessage returns the exact 400 body for a refused Link header, e.g.
//
//	Invalid Link header. Links must be of the form
//	</riak/BUCKET/KEY>; riaktag="TAG"
//
// with the dialect's prefix and tag name and the key-link form of api.
func LinkErrorMessage(api API, d Dialect) string {
	var form string
	switch api {
	case APIBuckets:
		form = "</buckets/BUCKET/keys/KEY>"
	case APITyped:
		form = "</types/TYPE/buckets/BUCKET/keys/KEY>"
	default:
		form = "<" + d.Prefix() + "/BUCKET/KEY>"
	}
	return "Invalid Link header. Links must be of the form\n" + form + "; " + d.LinkTag() + "=\"TAG\"\n"
}

// linkForm is one link grammar, equivalent to a regular expression of the shape
//
//	HEAD([^/]+)SEP1([^/]+)...([^/]+)>; ?(ATTR)="([^"]+)"
//
// searched for anywhere in a string (unanchored, leftmost match, greedy captures), as
// the reference system's PCRE patterns are.
type linkForm struct {
	heads  []string // alternatives for the opening literal, e.g. "</riak/", "</store/"
	seps   []string // literal after each capture but the last
	attrs  []string // alternatives for the attribute name
	bucket bool     // a bucket link (rel="..."), not a key link
	typed  bool     // the first capture is a bucket type
}

var (
	tagAttrs = []string{"storetag", "riaktag"}
	relAttrs = []string{"rel"}
	oldHeads = []string{"</store/", "</riak/"}

	oldBucketForm     = linkForm{heads: oldHeads, attrs: relAttrs, bucket: true}
	oldKeyForm        = linkForm{heads: oldHeads, seps: []string{"/"}, attrs: tagAttrs}
	bucketsBucketForm = linkForm{heads: []string{"</buckets/"}, attrs: relAttrs, bucket: true}
	bucketsKeyForm    = linkForm{heads: []string{"</buckets/"}, seps: []string{"/keys/"}, attrs: tagAttrs}
	typedBucketForm   = linkForm{heads: []string{"</types/"}, seps: []string{"/buckets/"}, attrs: relAttrs, bucket: true, typed: true}
	typedKeyForm      = linkForm{heads: []string{"</types/"}, seps: []string{"/buckets/", "/keys/"}, attrs: tagAttrs, typed: true}

	// The forms tried for each API, in order; the first that matches a piece decides
	// (the reference system tries the bucket-link pattern before the key-link one).
	oldForms     = []*linkForm{&oldBucketForm, &oldKeyForm}
	bucketsForms = []*linkForm{&bucketsBucketForm, &bucketsKeyForm}
	typedForms   = []*linkForm{&typedBucketForm, &typedKeyForm, &bucketsBucketForm, &bucketsKeyForm}
)

func formsFor(api API) []*linkForm {
	switch api {
	case APIBuckets:
		return bucketsForms
	case APITyped:
		return typedForms
	}
	return oldForms
}

// find returns the captures and the attribute value of the leftmost match of f in s.
// caps must have room for len(f.seps)+1 captures.
func (f *linkForm) find(s string, caps []string) (val string, ok bool) {
	for off := 0; ; {
		j := strings.Index(s[off:], "</")
		if j < 0 {
			return "", false
		}
		i := off + j
		for _, h := range f.heads {
			if strings.HasPrefix(s[i:], h) {
				if val, ok := f.matchFrom(s, i+len(h), caps); ok {
					return val, true
				}
			}
		}
		off = i + 1
	}
}

// matchFrom matches the captures, separators and tail of f starting at p.
func (f *linkForm) matchFrom(s string, p int, caps []string) (string, bool) {
	for k, sep := range f.seps {
		end := runEnd(s, p)
		if end == p || !strings.HasPrefix(s[end:], sep) {
			return "", false
		}
		caps[k] = s[p:end]
		p = end + len(sep)
	}
	// The last capture is [^/]+ followed by '>': greedy, so try the longest first.
	end := runEnd(s, p)
	for q := end; q > p+1; {
		r := strings.LastIndexByte(s[p+1:q], '>')
		if r < 0 {
			break
		}
		q = p + 1 + r
		if val, ok := tailAt(s, q, f.attrs); ok {
			caps[len(f.seps)] = s[p:q]
			return val, true
		}
	}
	return "", false
}

// runEnd returns the index of the first '/' at or after p, or len(s).
func runEnd(s string, p int) int {
	if j := strings.IndexByte(s[p:], '/'); j >= 0 {
		return p + j
	}
	return len(s)
}

// tailAt matches `>; ?ATTR="([^"]+)"` at q and returns the quoted value.
func tailAt(s string, q int, attrs []string) (string, bool) {
	if !strings.HasPrefix(s[q:], ">;") {
		return "", false
	}
	r := q + 2
	if r < len(s) && s[r] == ' ' {
		r++ // "; ?": the attribute cannot start with a space, so no other path exists
	}
	for _, a := range attrs {
		if strings.HasPrefix(s[r:], a) && strings.HasPrefix(s[r+len(a):], `="`) {
			v := r + len(a) + 2
			e := strings.IndexByte(s[v:], '"')
			if e <= 0 {
				return "", false
			}
			return s[v : v+e], true
		}
	}
	return "", false
}

// ParseLinks parses a request's Link header (all Link header lines joined with ", ") for
// an object stored under typ/bucket through the URL family api.
//
// The header is split on every ','; empty pieces are skipped. Each piece must contain
// (anywhere, so leading spaces are fine) one of these forms, where PREFIX is "store" or
// "riak" and TAG is "storetag" or "riaktag" whatever the server's dialect:
//
//	APIOld:     </PREFIX/B/K>; TAG="T"               </PREFIX/B>; rel="R"
//	APIBuckets: </buckets/B/keys/K>; TAG="T"         </buckets/B>; rel="R"
//	APITyped:   </types/TY/buckets/B/keys/K>; TAG="T" </types/TY/buckets/B>; rel="R"
//	            and the APIBuckets forms
//
// B, K, TY and T are URL-unquoted (Unquote). A bucket link is accepted only when it is
// the object's own bucket (and type) with rel="up", and is then dropped: the server
// regenerates it. A typed key link must name the object's own type, since a core.Link
// cannot point into another type. Anything else is a *LinkError. The result is nil when
// there are no key links. bucket (and typ, for APITyped) must be non-empty for a
// FormatLinks result to parse back.
func ParseLinks(header string, api API, typ, bucket string) ([]core.Link, error) {
	if header == "" {
		return nil, nil
	}
	var links []core.Link
	var caps [3]string
	forms := formsFor(api)
	for rest := header; rest != ""; {
		piece := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			piece, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if piece == "" {
			continue
		}
		matched := false
		for _, f := range forms {
			val, ok := f.find(piece, caps[:])
			if !ok {
				continue
			}
			matched = true
			c := caps[:len(f.seps)+1]
			if f.typed {
				if Unquote(c[0]) != typ {
					return nil, &LinkError{Piece: piece, Reason: "link to another bucket type"}
				}
				c = c[1:]
			}
			if f.bucket {
				if Unquote(val) != "up" || Unquote(c[0]) != bucket {
					return nil, &LinkError{Piece: piece, Reason: `only the object's own bucket may be linked, with rel="up"`}
				}
				break
			}
			if links == nil {
				links = make([]core.Link, 0, strings.Count(header, ",")+1)
			}
			links = append(links, core.Link{Bucket: Unquote(c[0]), Key: Unquote(c[1]), Tag: Unquote(val)})
			break
		}
		if !matched {
			return nil, &LinkError{Piece: piece, Reason: "not a link of the form " + formHint(api)}
		}
	}
	return links, nil
}

func formHint(api API) string {
	switch api {
	case APIBuckets:
		return "</buckets/B/keys/K>; riaktag=\"T\""
	case APITyped:
		return "</types/T/buckets/B/keys/K>; riaktag=\"T\""
	}
	return "</riak/B/K>; riaktag=\"T\""
}

// bucketPath writes the (quoted) path of a bucket in the given URL family:
// /riak/B, /buckets/B or /types/T/buckets/B.
func bucketPath(b *strings.Builder, api API, d Dialect, typ, bucket string) {
	switch api {
	case APIBuckets:
		b.WriteString("/buckets/")
	case APITyped:
		b.WriteString("/types/")
		writeQuotePlus(b, typ)
		b.WriteString("/buckets/")
	default:
		b.WriteString(d.Prefix())
		b.WriteByte('/')
	}
	writeQuotePlus(b, bucket)
}

// objectPath writes the (quoted) path of an object in the given URL family.
func objectPath(b *strings.Builder, api API, d Dialect, typ, bucket, key string) {
	bucketPath(b, api, d, typ, bucket)
	if api == APIOld {
		b.WriteByte('/')
	} else {
		b.WriteString("/keys/")
	}
	writeQuotePlus(b, key)
}

// ObjectPath returns the path of an object as the server writes it in Location headers:
// /riak/B/K (APIOld, dialect prefix), /buckets/B/keys/K or /types/T/buckets/B/keys/K,
// with each element QuotePlus-encoded.
func ObjectPath(api API, d Dialect, typ, bucket, key string) string {
	var b strings.Builder
	b.Grow(len(d.Prefix()) + len(typ) + len(bucket) + len(key) + 24)
	objectPath(&b, api, d, typ, bucket, key)
	return b.String()
}

func writeKeyLink(b *strings.Builder, api API, d Dialect, typ string, l core.Link) {
	b.WriteByte('<')
	objectPath(b, api, d, typ, l.Bucket, l.Key)
	b.WriteString(">; ")
	b.WriteString(d.LinkTag())
	b.WriteString(`="`)
	writeQuotePlus(b, l.Tag)
	b.WriteByte('"')
}

func writeUpLink(b *strings.Builder, api API, d Dialect, typ, bucket string) {
	b.WriteByte('<')
	bucketPath(b, api, d, typ, bucket)
	b.WriteString(`>; rel="up"`)
}

func linksSize(links []core.Link, d Dialect, typ, bucket string) int {
	n := len(bucket) + len(typ) + 32
	for _, l := range links {
		n += len(l.Bucket) + len(l.Key) + len(l.Tag) + len(typ) + len(d.Prefix()) + 40
	}
	return n
}

// FormatLinks returns the Link header of a fetched object stored under typ/bucket, as
// served through the URL family api: each user link in order, then the bucket's up link,
// joined with ", ":
//
//	</riak/b/k2>; riaktag="tag1", </riak/b>; rel="up"
//
// Bucket, key, tag (and type) are QuotePlus-encoded. Typed links use typ as their type.
func FormatLinks(links []core.Link, api API, d Dialect, typ, bucket string) string {
	var b strings.Builder
	b.Grow(linksSize(links, d, typ, bucket))
	for _, l := range links {
		writeKeyLink(&b, api, d, typ, l)
		b.WriteString(", ")
	}
	writeUpLink(&b, api, d, typ, bucket)
	return b.String()
}

// FormatPartLinks returns the Link header line of a multipart sibling part or link-walk
// object: the up link first, then each user link, joined with ", " (the order the
// reference system writes inside multipart bodies; FormatLinks is the order of a plain
// GET). Clients must not depend on either order.
func FormatPartLinks(links []core.Link, api API, d Dialect, typ, bucket string) string {
	var b strings.Builder
	b.Grow(linksSize(links, d, typ, bucket))
	writeUpLink(&b, api, d, typ, bucket)
	for _, l := range links {
		b.WriteString(", ")
		writeKeyLink(&b, api, d, typ, l)
	}
	return b.String()
}

// FormatUpLink returns the bucket link alone, e.g. </riak/b>; rel="up".
func FormatUpLink(api API, d Dialect, typ, bucket string) string {
	var b strings.Builder
	b.Grow(len(bucket) + len(typ) + 32)
	writeUpLink(&b, api, d, typ, bucket)
	return b.String()
}
