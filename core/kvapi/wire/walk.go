package wire

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core"
)

// WalkAny is the wildcard of a link-walk step: as the bucket or the tag of a step it
// matches every bucket or every tag.
const WalkAny = "_"

// WalkStep is one step of a link walk as the URL gives it: follow the links whose bucket
// is Bucket and whose tag is Tag (WalkAny matching anything), and return the objects
// reached when Keep is set.
type WalkStep struct {
	Bucket string
	Tag    string
	Keep   bool
}

// ErrInvalidWalk reports a link-walk path that is not a list of bucket,tag,keep steps.
// The 400 body is WalkErrorMessage.
var ErrInvalidWalk = errors.New("wire: invalid link walk query")

// WalkError is the error ParseWalk returns; it matches ErrInvalidWalk with errors.Is.
// The body of the 400 response is WalkErrorMessage, not Error.
type WalkError struct {
	// Segment is the refused step, still percent-encoded.
	Segment string
	// Reason says why, for logs.
	Reason string
}

// Error implements error.
func (e *WalkError) Error() string {
	return "wire: invalid link walk step " + strconv.Quote(e.Segment) + ": " + e.Reason
}

// Is reports whether target is ErrInvalidWalk.
func (e *WalkError) Is(target error) bool { return target == ErrInvalidWalk }

// WalkErrorMessage returns the exact 400 body of a malformed link walk, with the
// dialect's old-API prefix and link tag name in the example path (the reference writes
// the riak form; it has no trailing newline):
//
//	Invalid link walk query submitted. Valid link walk query format is: /riak/some_bucket/some_key/<bucket>,<riaktag>,0|1/...
func WalkErrorMessage(d Dialect) string {
	return "Invalid link walk query submitted. Valid link walk query format is: " +
		d.Prefix() + "/some_bucket/some_key/<bucket>,<" + d.LinkTag() + ">,0|1/..."
}

// WalkTypedMessage is the 403 body of a link walk addressed through the typed URL form
// (/types/T/buckets/B/keys/K/...).
const WalkTypedMessage = "Link-walking is not allowed on keys stored in bucket-types."

// ParseWalk parses the steps of a link walk: rest is the part of the path after the
// starting object, still percent-encoded, e.g. "people,friend,1/_,_,_".
//
// rest is split on '/' (empty segments are skipped, as the reference's tokenizer drops
// them). Each segment must be exactly three non-empty, comma-separated parts
// bucket,tag,keep; the bucket and tag are URL-unquoted after the split (Unquote, so
// "%2C" is a comma inside a name and "+" a space), and "_" stands for any bucket or
// tag. keep is "1" (return this step's objects) or "0" (do not); any other value means
// "0" except on the last step. The last step is always kept, whatever its keep says:
// a walk always returns its final step (the reference forces this for a one-step walk
// and fails on a trailing step without keep). Anything else, or no step at all, is a
// *WalkError.
//
// The reference's tokenizer also drops empty comma-separated parts, so it reads
// "a,,t,1" as "a,t,1"; Cairn refuses every empty part instead.
func ParseWalk(rest string) ([]WalkStep, error) {
	var steps []WalkStep
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" {
			continue
		}
		b, after, ok1 := strings.Cut(seg, ",")
		t, k, ok2 := strings.Cut(after, ",")
		switch {
		case !ok1 || !ok2 || strings.IndexByte(k, ',') >= 0:
			return nil, &WalkError{Segment: seg, Reason: "a step is bucket,tag,keep: three comma-separated parts"}
		case b == "" || t == "" || k == "":
			return nil, &WalkError{Segment: seg, Reason: "empty part"}
		}
		steps = append(steps, WalkStep{Bucket: walkName(b), Tag: walkName(t), Keep: k == "1"})
	}
	if len(steps) == 0 {
		return nil, &WalkError{Reason: "no step"}
	}
	steps[len(steps)-1].Keep = true
	return steps, nil
}

// walkName unquotes a bucket or tag of a step; "_" stays the wildcard.
func walkName(s string) string {
	if s == WalkAny {
		return WalkAny
	}
	return Unquote(s)
}

// FormatWalk returns the path segments of steps, the inverse of ParseWalk for steps
// whose names are not empty: each bucket and tag QuotePlus-encoded (WalkAny as is), keep
// as 1 or 0.
func FormatWalk(steps []WalkStep) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte('/')
		}
		for _, name := range [2]string{s.Bucket, s.Tag} {
			if name == WalkAny {
				b.WriteString(WalkAny)
			} else {
				writeQuotePlus(&b, name)
			}
			b.WriteByte(',')
		}
		if s.Keep {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// WalkObjectHeaders returns the header lines of one object in a link-walk response, in
// the reference's order:
//
//	X-Riak-Vclock: <base64 clock>
//	Location: /riak/B/K[?vtag=<first sibling's vtag>]   (or /buckets/B/keys/K)
//	X-Riak-Sibling-VTags: <vtag2>,<vtag3>...            (only with siblings)
//
// followed by the first sibling's SiblingHeaders. The part's body is the first
// sibling's value. obj must have at least one sibling.
func WalkObjectHeaders(obj *core.Object, api API, d Dialect) [][2]string {
	first := &obj.Siblings[0]
	loc := ObjectPath(api, d, obj.Type, obj.Bucket, obj.Key)
	h := make([][2]string, 0, 8+len(first.Meta)+len(first.Indexes))
	if len(obj.Siblings) > 1 {
		loc += "?vtag=" + QuotePlus(first.VTag)
	}
	h = append(h,
		[2]string{d.Header("Vclock"), base64.StdEncoding.EncodeToString(obj.VClock)},
		[2]string{"Location", loc},
	)
	if len(obj.Siblings) > 1 {
		vtags := make([]string, len(obj.Siblings)-1)
		for i := range vtags {
			vtags[i] = obj.Siblings[i+1].VTag
		}
		h = append(h, [2]string{d.Header("Sibling-VTags"), strings.Join(vtags, ",")})
	}
	return append(h, SiblingHeaders(first, api, d, obj.Type, obj.Bucket)...)
}

// AppendWalk appends the body of a link-walk response to dst: a multipart/mixed body
// with the given boundary holding one part per kept step (results[i] is the i-th kept
// step's objects, in the order to send), each part itself a multipart/mixed body with a
// boundary from newBoundary and one part per object (WalkObjectHeaders, then the first
// sibling's value). A step without objects still has its part, with an inner body
// that is only the closing delimiter. The framing is the reference's:
//
//	\r\n--OUTER\r\n
//	Content-Type: multipart/mixed; boundary=INNER\r\n
//	\r\n--INNER\r\n
//	<object headers>\r\n
//	\r\n
//	<value>
//	\r\n--INNER--\r\n
//	\r\n--OUTER--\r\n
//
// The inner body's leading CRLF ends the outer part's header block.
func AppendWalk(dst []byte, boundary string, results [][]*core.Object, api API, d Dialect, newBoundary func() string) []byte {
	for _, objs := range results {
		inner := newBoundary()
		dst = AppendPart(dst, boundary, Part{Headers: [][2]string{{"Content-Type", MultipartContentType(inner)}}, Nested: true})
		for _, o := range objs {
			if len(o.Siblings) == 0 {
				continue
			}
			dst = AppendPart(dst, inner, Part{Headers: WalkObjectHeaders(o, api, d), Body: o.Siblings[0].Value})
		}
		dst = AppendClose(dst, inner)
	}
	return AppendClose(dst, boundary)
}

// WalkSizeHint estimates the length of AppendWalk's output, so that the body can
// usually be built in one allocation; it is a hint, not a bound.
func WalkSizeHint(results [][]*core.Object) int {
	n := 64
	for _, objs := range results {
		n += 128
		for _, o := range objs {
			n += 512 + len(o.VClock)*4/3 + 2*(len(o.Bucket)+len(o.Key)) + 24*len(o.Siblings)
			if len(o.Siblings) > 0 {
				s := &o.Siblings[0]
				n += len(s.Value) + 64*(len(s.Links)+len(s.Meta)+len(s.Indexes))
			}
		}
	}
	return n
}
