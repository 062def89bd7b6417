package gopluginhost

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// The conversions between core's objects and the protobuf messages of the Hooks
// service use no reflection and no JSON. Towards a plugin, strings become bytes fields
// without a copy (see bytesOf) and each repeated field is allocated in one block;
// back from a plugin, bytes are copied into strings.

// bytesOf returns the bytes of s without copying them. The slice must never be
// written to: it only goes into request messages, which gRPC marshals (reads) during
// the call, and nothing else holds.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// utf8String makes s fit a protobuf string field, which must be valid UTF-8.
func utf8String(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// objectBlock is an object message with one content, allocated at once (objects
// without conflicts, the common case).
type objectBlock struct {
	obj      hookspb.Object
	content  [1]hookspb.Content
	contents [1]*hookspb.Content
}

// toPBObject converts an object for a plugin; nil stays nil. The message shares the
// object's bytes and must not outlive the call it is sent in (see bytesOf).
func toPBObject(o *core.Object) *hookspb.Object {
	if o == nil {
		return nil
	}
	var out *hookspb.Object
	var contents []hookspb.Content
	if len(o.Siblings) == 1 {
		blk := &objectBlock{}
		out, contents = &blk.obj, blk.content[:]
		out.Contents = blk.contents[:]
	} else {
		out = &hookspb.Object{}
		if len(o.Siblings) > 0 {
			contents = make([]hookspb.Content, len(o.Siblings))
			out.Contents = make([]*hookspb.Content, len(o.Siblings))
		}
	}
	out.BucketType, out.Bucket, out.Key, out.Vclock = bytesOf(o.Type), bytesOf(o.Bucket), bytesOf(o.Key), o.VClock
	nPairs, nLinks := 0, 0
	for i := range o.Siblings {
		nPairs += len(o.Siblings[i].Meta) + len(o.Siblings[i].Indexes)
		nLinks += len(o.Siblings[i].Links)
	}
	// One block of messages and one of pointers to them for all the pairs, the same
	// for links; each content takes its part.
	var pairs []hookspb.Pair
	var pairPtrs []*hookspb.Pair
	if nPairs > 0 {
		pairs, pairPtrs = make([]hookspb.Pair, nPairs), make([]*hookspb.Pair, nPairs)
	}
	var links []hookspb.Link
	var linkPtrs []*hookspb.Link
	if nLinks > 0 {
		links, linkPtrs = make([]hookspb.Link, nLinks), make([]*hookspb.Link, nLinks)
	}
	takePairs := func(n int) []*hookspb.Pair {
		ptrs := pairPtrs[:n:n]
		for j := range ptrs {
			ptrs[j] = &pairs[j]
		}
		pairs, pairPtrs = pairs[n:], pairPtrs[n:]
		return ptrs
	}
	for i := range o.Siblings {
		s := &o.Siblings[i]
		c := &contents[i]
		c.Value = s.Value
		c.ContentType = utf8String(s.ContentType)
		c.Charset = utf8String(s.Charset)
		c.ContentEncoding = utf8String(s.Encoding)
		c.Vtag = utf8String(s.VTag)
		c.Deleted = s.Deleted
		if !s.LastModified.IsZero() {
			c.LastModUsecs = s.LastModified.UnixMicro()
		}
		if len(s.Meta) > 0 {
			c.Usermeta = takePairs(len(s.Meta))
			for j, m := range s.Meta {
				c.Usermeta[j].Key, c.Usermeta[j].Value = bytesOf(m.Name), bytesOf(m.Value)
			}
		}
		if len(s.Indexes) > 0 {
			c.Indexes = takePairs(len(s.Indexes))
			for j, e := range s.Indexes {
				c.Indexes[j].Key, c.Indexes[j].Value = bytesOf(e.Field), bytesOf(e.Value)
			}
		}
		if n := len(s.Links); n > 0 {
			c.Links = linkPtrs[:n:n]
			for j, l := range s.Links {
				pl := &links[j]
				pl.Bucket, pl.Key, pl.Tag = bytesOf(l.Bucket), bytesOf(l.Key), bytesOf(l.Tag)
				c.Links[j] = pl
			}
			links, linkPtrs = links[n:], linkPtrs[n:]
		}
		out.Contents[i] = c
	}
	return out
}

// fromPBLinks converts links; nil for none.
func fromPBLinks(ls []*hookspb.Link) []core.Link {
	if len(ls) == 0 {
		return nil
	}
	out := make([]core.Link, 0, len(ls))
	for _, l := range ls {
		if l != nil {
			out = append(out, core.Link{Bucket: string(l.Bucket), Key: string(l.Key), Tag: string(l.Tag)})
		}
	}
	return out
}

// replacement builds the object a precommit's replacement stands for: obj's place and
// clock, and the first content's value, content type, charset, encoding, user
// metadata, index entries and links (the rest is ignored). It checks what the WASM
// host's JSON decoder checks (plugins/hookjson): strings that end up in HTTP headers
// have no control characters, the content type is a media type, metadata names are
// header tokens, index fields are tokens ending in _bin or _int (lower-cased), _int
// terms are integers (made canonical); index entries come out sorted and without
// duplicates.
func replacement(obj *core.Object, rep *hookspb.Object) (*core.Object, error) {
	if rep == nil || len(rep.Contents) == 0 || rep.Contents[0] == nil {
		return nil, errors.New("it has no contents")
	}
	c := rep.Contents[0]
	s := core.Sibling{Charset: c.Charset, Encoding: c.ContentEncoding, ContentType: c.ContentType}
	if len(c.Value) > 0 {
		s.Value = c.Value
	}
	switch {
	case !core.HeaderSafe(c.ContentType):
		return nil, fmt.Errorf("content type %q has control characters", c.ContentType)
	case c.ContentType != "" && !core.IsMediaType(c.ContentType):
		return nil, fmt.Errorf("content type %q is not a media type (type/subtype)", c.ContentType)
	case !core.HeaderSafe(c.Charset):
		return nil, fmt.Errorf("charset %q has control characters", c.Charset)
	case !core.HeaderSafe(c.ContentEncoding):
		return nil, fmt.Errorf("content encoding %q has control characters", c.ContentEncoding)
	}
	if len(c.Usermeta) > 0 {
		s.Meta = make([]core.MetaEntry, 0, len(c.Usermeta))
		for _, m := range c.Usermeta {
			name, val := string(m.GetKey()), string(m.GetValue())
			switch {
			case !core.IsToken(name):
				return nil, fmt.Errorf("user metadata name %q is not a valid header name", name)
			case !core.HeaderSafe(val):
				return nil, fmt.Errorf("user metadata %s: %q has control characters", name, val)
			}
			s.Meta = append(s.Meta, core.MetaEntry{Name: name, Value: val})
		}
	}
	if len(c.Indexes) > 0 {
		s.Indexes = make([]core.IndexEntry, 0, len(c.Indexes))
		for _, e := range c.Indexes {
			raw, val := string(e.GetKey()), string(e.GetValue())
			field := strings.ToLower(raw)
			isInt := strings.HasSuffix(field, "_int")
			switch {
			case !isInt && !strings.HasSuffix(field, "_bin"):
				return nil, fmt.Errorf("index field %q: index field names end in _bin or _int", raw)
			case !core.IsToken(field):
				return nil, fmt.Errorf("index field %q: not a valid header name", raw)
			case !core.HeaderSafe(val):
				return nil, fmt.Errorf("index field %q: %q has control characters", raw, val)
			}
			if isInt {
				n, ok := core.CanonicalInt(val)
				if !ok {
					return nil, fmt.Errorf("index field %q: %q is not an integer", raw, val)
				}
				val = n
			}
			s.Indexes = append(s.Indexes, core.IndexEntry{Field: field, Value: val})
		}
		slices.SortFunc(s.Indexes, core.CompareIndexEntries)
		s.Indexes = slices.Compact(s.Indexes)
	}
	s.Links = fromPBLinks(c.Links)
	return &core.Object{
		Type: obj.Type, Bucket: obj.Bucket, Key: obj.Key, VClock: obj.VClock,
		Siblings: []core.Sibling{s},
	}, nil
}

// pbOp converts a commit operation.
func pbOp(op hooks.Op) hookspb.Op {
	if op == hooks.OpDelete {
		return hookspb.Op_DELETE
	}
	return hookspb.Op_PUT
}

// hooksPoint converts an extension point from a plugin; false for an unknown one.
func hooksPoint(p hookspb.Point) (hooks.Point, bool) {
	if p < hookspb.Point_PRECOMMIT || p > hookspb.Point_REDUCE {
		return 0, false
	}
	return hooks.Point(p - 1), true
}
