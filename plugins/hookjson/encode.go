package hookjson

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/abi"
)

// lastModifiedLayout is RFC 1123 with the zone fixed to GMT (HTTP's date format).
const lastModifiedLayout = "Mon, 02 Jan 2006 15:04:05 GMT"

const hexDigits = "0123456789abcdef"

// noEscape[c] is true for the ASCII bytes a JSON string carries as they are.
var noEscape = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD; U+2028 and
// U+2029 are escaped so that the text is also a valid JavaScript literal.
func appendString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s)
	return append(dst, '"')
}

// appendStringBody appends s escaped as the inside of a JSON string, without quotes.
func appendStringBody[S string | []byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if noEscape[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		var buf [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(buf[:copy(buf[:], s[i:])])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// appendRaw appends a JSON value given by the caller, or null when it is empty.
func appendRaw(dst []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, v...)
}

// AppendObject appends o as the ABI's object JSON.
func (c Codec) AppendObject(dst []byte, o *core.Object) []byte {
	p := c.prefix()
	typ := o.Type
	if typ == "" {
		typ = core.DefaultType
	}
	dst = append(dst, `{"bucket_type":`...)
	dst = appendString(dst, typ)
	dst = append(dst, `,"bucket":`...)
	dst = appendString(dst, o.Bucket)
	dst = append(dst, `,"key":`...)
	dst = appendString(dst, o.Key)
	dst = append(dst, `,"vclock":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, o.VClock)
	dst = append(dst, `","values":[`...)
	for i := range o.Siblings {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSibling(dst, p, &o.Siblings[i])
	}
	return append(dst, "]}"...)
}

func appendSibling(dst []byte, p string, s *core.Sibling) []byte {
	dst = append(dst, `{"metadata":{"content-type":`...)
	dst = appendString(dst, s.ContentType)
	if s.Charset != "" {
		dst = append(dst, `,"charset":`...)
		dst = appendString(dst, s.Charset)
	}
	if s.Encoding != "" {
		dst = append(dst, `,"content-encoding":`...)
		dst = appendString(dst, s.Encoding)
	}
	if s.VTag != "" {
		dst = appendKey(dst, p, abi.MetaVTagSuffix)
		dst = appendString(dst, s.VTag)
	}
	if !s.LastModified.IsZero() {
		dst = appendKey(dst, p, abi.MetaLastModifiedSuffix)
		dst = append(dst, '"')
		dst = s.LastModified.UTC().AppendFormat(dst, lastModifiedLayout)
		dst = append(dst, '"')
	}
	dst = appendKey(dst, p, abi.MetaUserSuffix)
	dst = append(dst, '{')
	for i, m := range s.Meta {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, p...)
		dst = append(dst, abi.MetaUserSuffix+"-"...)
		dst = appendStringBody(dst, m.Name)
		dst = append(dst, '"', ':')
		dst = appendString(dst, m.Value)
	}
	dst = append(dst, '}')
	if len(s.Indexes) > 0 {
		dst = append(dst, `,"`+abi.MetaIndex+`":{`...)
		dst = appendIndexes(dst, s.Indexes)
		dst = append(dst, '}')
	}
	if len(s.Links) > 0 {
		dst = append(dst, `,"`+abi.MetaLinks+`":`...)
		dst = appendLinks(dst, s.Links)
	}
	if s.Deleted {
		dst = appendKey(dst, p, abi.MetaDeletedSuffix)
		dst = append(dst, `"true"`...)
	}
	dst = append(dst, '}')
	if utf8.Valid(s.Value) {
		dst = append(dst, `,"data":`...)
		dst = appendString(dst, s.Value)
	} else {
		dst = append(dst, `,"data_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, s.Value)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// appendKey appends `,"<prefix><suffix>":`.
func appendKey(dst []byte, p, suffix string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, p...)
	dst = append(dst, suffix...)
	return append(dst, '"', ':')
}

// appendIndexes appends the members of the "index" object: one per field, a scalar for
// one value and an array for several; _int values as numbers.
func appendIndexes(dst []byte, entries []core.IndexEntry) []byte {
	if !slices.IsSortedFunc(entries, func(a, b core.IndexEntry) int { return strings.Compare(a.Field, b.Field) }) {
		entries = slices.Clone(entries)
		slices.SortStableFunc(entries, func(a, b core.IndexEntry) int { return strings.Compare(a.Field, b.Field) })
	}
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].Field == entries[i].Field {
			j++
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, entries[i].Field)
		dst = append(dst, ':')
		isInt := strings.HasSuffix(entries[i].Field, "_int")
		if j-i > 1 {
			dst = append(dst, '[')
		}
		for k := i; k < j; k++ {
			if k > i {
				dst = append(dst, ',')
			}
			dst = appendIndexValue(dst, isInt, entries[k].Value)
		}
		if j-i > 1 {
			dst = append(dst, ']')
		}
		i = j
	}
	return dst
}

func appendIndexValue(dst []byte, isInt bool, v string) []byte {
	if isInt {
		if n, ok := core.CanonicalInt(v); ok {
			return append(dst, n...)
		}
	}
	return appendString(dst, v)
}

// appendLinks appends links as [[bucket,key,tag],...].
func appendLinks(dst []byte, links []core.Link) []byte {
	dst = append(dst, '[')
	for i, l := range links {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = appendString(dst, l.Bucket)
		dst = append(dst, ',')
		dst = appendString(dst, l.Key)
		dst = append(dst, ',')
		dst = appendString(dst, l.Tag)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}

// AppendLinks appends links as the linkfun output shape, [[bucket,key,tag],...].
func AppendLinks(dst []byte, links []core.Link) []byte { return appendLinks(dst, links) }

// AppendCommitInput appends a precommit or postcommit input: {"op":..,"object":..}.
func (c Codec) AppendCommitInput(dst []byte, op hooks.Op, o *core.Object) []byte {
	dst = append(dst, `{"op":`...)
	dst = appendString(dst, string(op))
	dst = append(dst, `,"object":`...)
	dst = c.AppendObject(dst, o)
	return append(dst, '}')
}

// AppendKeyFunInput appends a chash_keyfun input: {"bucket_type":T,"bucket":B,"key":K}.
// An empty typ is the default bucket type.
func AppendKeyFunInput(dst []byte, typ, bucket, key string) []byte {
	if typ == "" {
		typ = core.DefaultType
	}
	dst = append(dst, `{"bucket_type":`...)
	dst = appendString(dst, typ)
	dst = append(dst, `,"bucket":`...)
	dst = appendString(dst, bucket)
	dst = append(dst, `,"key":`...)
	dst = appendString(dst, key)
	return append(dst, '}')
}

// AppendLinkFunInput appends a linkfun input: {"object":..,"spec":{"bucket":B,"tag":T}}.
// An empty bucket or tag is the wildcard "_".
func (c Codec) AppendLinkFunInput(dst []byte, o *core.Object, bucket, tag string) []byte {
	if bucket == "" {
		bucket = abi.Wildcard
	}
	if tag == "" {
		tag = abi.Wildcard
	}
	dst = append(dst, `{"object":`...)
	dst = c.AppendObject(dst, o)
	dst = append(dst, `,"spec":{"bucket":`...)
	dst = appendString(dst, bucket)
	dst = append(dst, `,"tag":`...)
	dst = appendString(dst, tag)
	return append(dst, "}}"...)
}

// AppendMapInput appends a map input: {"object":..} or {"not_found":{..}}, then
// "keydata" and "arg" (null when absent). in.KeyData and in.Arg must be valid JSON.
func (c Codec) AppendMapInput(dst []byte, in hooks.MapInput) []byte {
	switch {
	case in.Object != nil:
		dst = append(dst, `{"object":`...)
		dst = c.AppendObject(dst, in.Object)
	default:
		var p hooks.Place
		if in.NotFound != nil {
			p = *in.NotFound
		}
		dst = append(dst, `{"not_found":`...)
		dst = AppendKeyFunInput(dst, p.Type, p.Bucket, p.Key)
	}
	dst = append(dst, `,"keydata":`...)
	dst = appendRaw(dst, in.KeyData)
	dst = append(dst, `,"arg":`...)
	dst = appendRaw(dst, in.Arg)
	return append(dst, '}')
}

// AppendReduceInput appends a reduce input: {"values":[..],"arg":..}. Every value and
// arg must be valid JSON; an empty one is written as null.
func AppendReduceInput(dst []byte, values []json.RawMessage, arg json.RawMessage) []byte {
	dst = append(dst, `{"values":[`...)
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRaw(dst, v)
	}
	dst = append(dst, `],"arg":`...)
	dst = appendRaw(dst, arg)
	return append(dst, '}')
}
