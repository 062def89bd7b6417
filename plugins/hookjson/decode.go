package hookjson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/sdk/abi"
)

// DecodeObject decodes an object in the ABI's JSON shape, as a precommit returns it. It
// accepts metadata names of both dialects (case-insensitively), treats null as absent,
// skips members it does not know, and is strict about everything it does know: types,
// base64, dates, index field names and values, link shape, and that every string that
// ends up in an HTTP header value has no control characters (link elements are
// URL-quoted in headers and may hold any text). Index entries are lower-cased,
// canonical, sorted and de-duplicated; an empty or absent bucket type is "default".
func (c Codec) DecodeObject(b []byte) (*core.Object, error) {
	s := scanner{b: b}
	o, err := decodeObject(&s)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, fmt.Errorf("hookjson: object: %w", err)
	}
	return o, nil
}

func decodeObject(s *scanner) (*core.Object, error) {
	o := &core.Object{}
	err := s.object(func(k string) error {
		if s.null() {
			return nil
		}
		var err error
		switch k {
		case abi.ObjBucketType:
			o.Type, err = s.str()
		case abi.ObjBucket:
			o.Bucket, err = s.str()
		case abi.ObjKey:
			o.Key, err = s.str()
		case abi.ObjVClock:
			o.VClock, err = base64String(s)
		case abi.ObjValues:
			err = s.array(func(i int) error {
				sib, err := decodeSibling(s)
				if err != nil {
					return fmt.Errorf("[%d]: %w", i, err)
				}
				o.Siblings = append(o.Siblings, sib)
				return nil
			})
		default:
			err = s.skip()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.Type == "" {
		o.Type = core.DefaultType
	}
	return o, nil
}

// base64String reads a string of standard base64; "" decodes to nil.
func base64String(s *scanner) ([]byte, error) {
	v, err := s.str()
	if err != nil || v == "" {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("not standard base64: %w", err)
	}
	return b, nil
}

func decodeSibling(s *scanner) (core.Sibling, error) {
	var sib core.Sibling
	var haveData, haveB64 bool
	err := s.object(func(k string) error {
		if s.null() {
			return nil
		}
		var err error
		switch k {
		case abi.ObjMetadata:
			err = decodeMetadata(s, &sib)
		case abi.ObjData:
			haveData = true
			sib.Value, err = s.strBytes()
		case abi.ObjDataB64:
			haveB64 = true
			sib.Value, err = base64String(s)
		default:
			err = s.skip()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
	if err == nil && haveData && haveB64 {
		err = errors.New("both data and data_b64 are set")
	}
	if len(sib.Value) == 0 {
		sib.Value = nil
	}
	return sib, err
}

// cutPrefixFold returns s without prefix when s starts with it, ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// cutDialect removes a dialect prefix ("X-Store-" or "X-Riak-", any case).
func cutDialect(k string) (string, bool) {
	if rest, ok := cutPrefixFold(k, PrefixStore); ok {
		return rest, true
	}
	return cutPrefixFold(k, PrefixRiak)
}

func decodeMetadata(s *scanner, sib *core.Sibling) error {
	return s.object(func(k string) error {
		if s.null() {
			return nil
		}
		var err error
		switch {
		case strings.EqualFold(k, abi.MetaContentType):
			sib.ContentType, err = headerString(s)
			if err == nil && sib.ContentType != "" && !core.IsMediaType(sib.ContentType) {
				err = fmt.Errorf("%q is not a media type (type/subtype)", sib.ContentType)
			}
		case strings.EqualFold(k, abi.MetaCharset):
			sib.Charset, err = headerString(s)
		case strings.EqualFold(k, abi.MetaContentEncoding):
			sib.Encoding, err = headerString(s)
		case strings.EqualFold(k, abi.MetaIndex):
			sib.Indexes, err = decodeIndex(s)
		case strings.EqualFold(k, abi.MetaLinks):
			sib.Links, err = decodeLinkList(s)
		default:
			suffix, ok := cutDialect(k)
			switch {
			case !ok:
				err = s.skip()
			case strings.EqualFold(suffix, abi.MetaVTagSuffix):
				sib.VTag, err = headerString(s)
			case strings.EqualFold(suffix, abi.MetaLastModifiedSuffix):
				sib.LastModified, err = lastModified(s)
			case strings.EqualFold(suffix, abi.MetaUserSuffix):
				err = decodeUserMeta(s, sib)
			case strings.EqualFold(suffix, abi.MetaDeletedSuffix):
				sib.Deleted, err = flag(s)
			default:
				err = s.skip()
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
}

// headerString reads a string that may be sent in an HTTP header: no control characters
// other than tab.
func headerString(s *scanner) (string, error) {
	v, err := s.str()
	if err != nil {
		return "", err
	}
	if !core.HeaderSafe(v) {
		return "", fmt.Errorf("%q has control characters", v)
	}
	return v, nil
}

func lastModified(s *scanner) (time.Time, error) {
	v, err := s.str()
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(lastModifiedLayout, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 1123 GMT date", v)
	}
	return t, nil
}

// flag reads a boolean given as true/false or "true"/"false".
func flag(s *scanner) (bool, error) {
	switch {
	case s.literal("true"):
		return true, nil
	case s.literal("false"):
		return false, nil
	case s.peek() == '"':
		v, err := s.str()
		if err != nil {
			return false, err
		}
		switch strings.ToLower(v) {
		case "true":
			return true, nil
		case "false", "":
			return false, nil
		}
		return false, fmt.Errorf("%q is not a boolean", v)
	}
	return false, fmt.Errorf("want a boolean, have %s", s.kind())
}

func decodeUserMeta(s *scanner, sib *core.Sibling) error {
	return s.object(func(k string) error {
		rest, ok := cutDialect(k)
		if ok {
			rest, ok = cutPrefixFold(rest, abi.MetaUserSuffix+"-")
		}
		switch {
		case !ok:
			return fmt.Errorf("%q: user metadata names start with %q", k, PrefixStore+abi.MetaUserSuffix+"-")
		case !core.IsToken(rest):
			return fmt.Errorf("%q: %q is not a valid header name", k, rest)
		}
		if s.null() {
			return nil
		}
		v, err := headerString(s)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		sib.Meta = append(sib.Meta, core.MetaEntry{Name: rest, Value: v})
		return nil
	})
}

// decodeIndex reads the "index" object: field -> value or [values].
func decodeIndex(s *scanner) ([]core.IndexEntry, error) {
	var entries []core.IndexEntry
	err := s.object(func(k string) error {
		field := strings.ToLower(k)
		isInt := strings.HasSuffix(field, "_int")
		switch {
		case !isInt && !strings.HasSuffix(field, "_bin"):
			return fmt.Errorf("field %q: index field names end in _bin or _int", k)
		case !core.IsToken(field):
			return fmt.Errorf("field %q: not a valid header name", k)
		}
		one := func() error {
			v, err := indexValue(s, isInt)
			if err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
			entries = append(entries, core.IndexEntry{Field: field, Value: v})
			return nil
		}
		if s.peek() == '[' {
			return s.array(func(int) error { return one() })
		}
		return one()
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, core.CompareIndexEntries)
	return slices.Compact(entries), nil
}

func indexValue(s *scanner, isInt bool) (string, error) {
	var v string
	var err error
	switch c := s.peek(); {
	case c == '"':
		v, err = headerString(s)
	case c == '-' || ('0' <= c && c <= '9'):
		v, err = s.number()
	default:
		return "", fmt.Errorf("want a string or a number, have %s", s.kind())
	}
	if err != nil || !isInt {
		return v, err
	}
	n, ok := core.CanonicalInt(v)
	if !ok {
		return "", fmt.Errorf("%q is not an integer", v)
	}
	return n, nil
}

// decodeLinkList reads [[bucket,key,tag],...].
func decodeLinkList(s *scanner) ([]core.Link, error) {
	var links []core.Link
	err := s.array(func(i int) error {
		var parts [3]string
		n := 0
		err := s.array(func(j int) error {
			if j >= 3 {
				return errors.New("a link has three elements")
			}
			v, err := s.str()
			parts[j] = v
			n++
			return err
		})
		switch {
		case err != nil:
		case n != 3:
			err = errors.New("a link is [bucket, key, tag]")
		case parts[0] == "" || parts[1] == "":
			err = errors.New("a link's bucket and key are not empty")
		}
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		links = append(links, core.Link{Bucket: parts[0], Key: parts[1], Tag: parts[2]})
		return nil
	})
	return links, err
}

// DecodeLinks decodes a linkfun output, [[bucket,key,tag],...].
func DecodeLinks(b []byte) ([]core.Link, error) {
	s := scanner{b: b}
	links, err := decodeLinkList(&s)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, fmt.Errorf("hookjson: links: %w", err)
	}
	return links, nil
}

// DecodeValues decodes a map or reduce output, which must be a JSON array, into its
// elements. The elements are validated and alias b.
func DecodeValues(b []byte) ([]json.RawMessage, error) {
	s := scanner{b: b}
	var vals []json.RawMessage
	err := s.array(func(i int) error {
		v, err := s.raw()
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		vals = append(vals, v)
		return nil
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, fmt.Errorf("hookjson: values: %w", err)
	}
	if vals == nil {
		vals = []json.RawMessage{}
	}
	return vals, nil
}
