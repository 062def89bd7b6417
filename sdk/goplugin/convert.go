package goplugin

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// Conversions between the protobuf messages of hookspb and the typed API.
//
// Aliasing: a decoded message owns its bytes fields (the protobuf decoder copies every
// bytes field out of gRPC's pooled receive buffer into its own allocation), and nothing
// modifies a message after it is decoded. So the typed values made from it share its
// memory instead of copying: strings are made with unsafe.String over the bytes fields,
// Content.Value, VClock, JSON arguments and values are the fields themselves. In the
// other direction, messages about to be encoded borrow the typed values' bytes (strings
// through unsafe.StringData); the encoder only reads them. Every bytes field is its own
// allocation, so a function that modifies Content.Value in place (allowed) changes no
// string.

// bytesString returns b as a string without copying. b must never be modified
// afterwards.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringBytes returns the bytes of s without copying. The slice must only be read.
func stringBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// rawValues returns b as JSON values without copying (json.RawMessage is a []byte).
func rawValues(b [][]byte) []json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*json.RawMessage)(unsafe.SliceData(b)), len(b))
}

// byteValues returns v as a [][]byte without copying.
func byteValues(v []json.RawMessage) [][]byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*[]byte)(unsafe.SliceData(v)), len(v))
}

// rawOrNil returns b as JSON, nil when it is empty (no argument, no key data).
func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

// timeFromUsecs turns microseconds since the Unix epoch into a UTC time; 0 is the zero
// time (so the epoch itself cannot be told from "unknown").
func timeFromUsecs(u int64) time.Time {
	if u == 0 {
		return time.Time{}
	}
	return time.UnixMicro(u).UTC()
}

// usecsFromTime is the inverse of timeFromUsecs: the zero time is 0.
func usecsFromTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// opFromPB converts an operation; an unknown value is the host's mistake.
func opFromPB(op hookspb.Op) (Op, error) {
	switch op {
	case hookspb.Op_PUT:
		return OpPut, nil
	case hookspb.Op_DELETE:
		return OpDelete, nil
	}
	return "", fmt.Errorf("goplugin: unknown operation %d", op)
}

// opToPB converts an operation.
func opToPB(op Op) (hookspb.Op, error) {
	switch op {
	case OpPut:
		return hookspb.Op_PUT, nil
	case OpDelete:
		return hookspb.Op_DELETE, nil
	}
	return 0, fmt.Errorf("goplugin: unknown operation %q", op)
}

// allPoints lists the extension points in their canonical order (the order of the
// protobuf enum), the order Describe reports them in.
var allPoints = [...]Point{PointPrecommit, PointPostcommit, PointKeyFun, PointLinkFun, PointMap, PointReduce}

// numPoints sizes arrays indexed by pointIndex.
const numPoints = len(allPoints)

// pointIndex returns p's position in allPoints, or -1 for an unknown point.
func pointIndex(p Point) int {
	switch p {
	case PointPrecommit:
		return 0
	case PointPostcommit:
		return 1
	case PointKeyFun:
		return 2
	case PointLinkFun:
		return 3
	case PointMap:
		return 4
	case PointReduce:
		return 5
	}
	return -1
}

// pointToPB converts a known point (see pointIndex).
func pointToPB(p Point) hookspb.Point {
	return hookspb.Point(pointIndex(p) + 1)
}

// pointFromPB converts a point; ok is false for POINT_UNSPECIFIED and unknown values.
func pointFromPB(p hookspb.Point) (Point, bool) {
	i := int(p) - 1
	if i < 0 || i >= numPoints {
		return "", false
	}
	return allPoints[i], true
}

// objectFromPB converts a decoded object without copying its bytes (see the aliasing
// note above). An object of one content, the usual case, costs one allocation, plus
// one for all its user metadata and index entries and one for all its links.
func objectFromPB(o *hookspb.Object) *Object {
	var obj *Object
	switch n := len(o.GetContents()); n {
	case 0:
		obj = &Object{}
	case 1:
		one := &struct {
			obj      Object
			contents [1]Content
		}{}
		obj = &one.obj
		obj.Contents = one.contents[:]
	default:
		obj = &Object{Contents: make([]Content, n)}
	}
	obj.BucketType = bytesString(o.GetBucketType())
	obj.Bucket = bytesString(o.GetBucket())
	obj.Key = bytesString(o.GetKey())
	obj.VClock = o.GetVclock()
	if len(obj.Contents) == 0 {
		return obj
	}
	var nPairs, nLinks int
	for _, c := range o.Contents {
		nPairs += len(c.GetUsermeta()) + len(c.GetIndexes())
		nLinks += len(c.GetLinks())
	}
	var pairs []Pair
	if nPairs > 0 {
		pairs = make([]Pair, nPairs)
	}
	var links []Link
	if nLinks > 0 {
		links = make([]Link, nLinks)
	}
	for i, c := range o.Contents {
		dst := &obj.Contents[i]
		dst.Value = c.GetValue()
		dst.ContentType = c.GetContentType()
		dst.Charset = c.GetCharset()
		dst.ContentEncoding = c.GetContentEncoding()
		dst.VTag = c.GetVtag()
		dst.LastModified = timeFromUsecs(c.GetLastModUsecs())
		dst.Deleted = c.GetDeleted()
		// Each content takes its share of the common arrays, capped so that an
		// append by the function cannot overwrite the next content's share.
		dst.UserMeta, pairs = pairsFromPB(c.GetUsermeta(), pairs)
		dst.Indexes, pairs = pairsFromPB(c.GetIndexes(), pairs)
		if n := len(c.GetLinks()); n > 0 {
			dst.Links, links = links[:n:n], links[n:]
			for j, l := range c.Links {
				dst.Links[j] = Link{Bucket: bytesString(l.GetBucket()), Key: bytesString(l.GetKey()), Tag: bytesString(l.GetTag())}
			}
		}
	}
	return obj
}

// pairsFromPB fills the first len(src) entries of buf and returns them and the rest of
// buf.
func pairsFromPB(src []*hookspb.Pair, buf []Pair) (got, rest []Pair) {
	n := len(src)
	if n == 0 {
		return nil, buf
	}
	got, rest = buf[:n:n], buf[n:]
	for i, p := range src {
		got[i] = Pair{Key: bytesString(p.GetKey()), Value: bytesString(p.GetValue())}
	}
	return got, rest
}

// objectToPB converts an object for encoding; the message borrows obj's bytes and
// strings, so it must be encoded before obj changes and never modified.
func objectToPB(obj *Object) *hookspb.Object {
	o := &hookspb.Object{
		BucketType: stringBytes(obj.BucketType),
		Bucket:     stringBytes(obj.Bucket),
		Key:        stringBytes(obj.Key),
		Vclock:     obj.VClock,
	}
	n := len(obj.Contents)
	if n == 0 {
		return o
	}
	var nPairs, nLinks int
	for i := range obj.Contents {
		c := &obj.Contents[i]
		nPairs += len(c.UserMeta) + len(c.Indexes)
		nLinks += len(c.Links)
	}
	contents := make([]hookspb.Content, n)
	pairs := make([]hookspb.Pair, nPairs)
	pairPtrs := make([]*hookspb.Pair, nPairs)
	links := make([]hookspb.Link, nLinks)
	linkPtrs := make([]*hookspb.Link, nLinks)
	o.Contents = make([]*hookspb.Content, n)
	for i := range obj.Contents {
		src, dst := &obj.Contents[i], &contents[i]
		o.Contents[i] = dst
		dst.Value = src.Value
		dst.ContentType = src.ContentType
		dst.Charset = src.Charset
		dst.ContentEncoding = src.ContentEncoding
		dst.Vtag = src.VTag
		dst.LastModUsecs = usecsFromTime(src.LastModified)
		dst.Deleted = src.Deleted
		dst.Usermeta, pairs, pairPtrs = pairsToPB(src.UserMeta, pairs, pairPtrs)
		dst.Indexes, pairs, pairPtrs = pairsToPB(src.Indexes, pairs, pairPtrs)
		if m := len(src.Links); m > 0 {
			dst.Links = linksToPB(src.Links, links[:m:m], linkPtrs[:m:m])
			links, linkPtrs = links[m:], linkPtrs[m:]
		}
	}
	return o
}

// pairsToPB fills the first len(src) entries of buf and ptrs and returns them and the
// rest of both.
func pairsToPB(src []Pair, buf []hookspb.Pair, ptrs []*hookspb.Pair) (got []*hookspb.Pair, restBuf []hookspb.Pair, restPtrs []*hookspb.Pair) {
	n := len(src)
	if n == 0 {
		return nil, buf, ptrs
	}
	got = ptrs[:n:n]
	for i := range src {
		p := &buf[i]
		p.Key, p.Value = stringBytes(src[i].Key), stringBytes(src[i].Value)
		got[i] = p
	}
	return got, buf[n:], ptrs[n:]
}

// linksToPB fills buf and ptrs (both len(src) long) from src and returns ptrs.
func linksToPB(src []Link, buf []hookspb.Link, ptrs []*hookspb.Link) []*hookspb.Link {
	for i := range src {
		l := &buf[i]
		l.Bucket, l.Key, l.Tag = stringBytes(src[i].Bucket), stringBytes(src[i].Key), stringBytes(src[i].Tag)
		ptrs[i] = l
	}
	return ptrs
}

// linksFromPB converts a list of links without copying their bytes.
func linksFromPB(src []*hookspb.Link) []Link {
	if len(src) == 0 {
		return nil
	}
	links := make([]Link, len(src))
	for i, l := range src {
		links[i] = Link{Bucket: bytesString(l.GetBucket()), Key: bytesString(l.GetKey()), Tag: bytesString(l.GetTag())}
	}
	return links
}

// linkListToPB converts a list of links for encoding (two allocations).
func linkListToPB(src []Link) []*hookspb.Link {
	if len(src) == 0 {
		return nil
	}
	return linksToPB(src, make([]hookspb.Link, len(src)), make([]*hookspb.Link, len(src)))
}

// mapInputFromPB converts one map input, with arg as its argument.
func mapInputFromPB(req *hookspb.MapRequest, arg json.RawMessage) MapInput {
	return MapInput{
		Object:   objectFromPB(req.GetObject()),
		NotFound: req.GetNotFound(),
		KeyData:  rawOrNil(req.GetKeydataJson()),
		Arg:      arg,
	}
}
