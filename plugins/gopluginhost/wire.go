package gopluginhost

import (
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// The Map streams, which carry every input of a MapReduce phase, do not go through
// the generated messages: each MapRequest is encoded straight from the core.Object
// into one buffer of its exact size, and each ValuesResponse is parsed from one copy
// of its bytes, with protowire. That saves building a message tree per input and the
// protobuf runtime's size and marshal passes over it, about a third of the host's work
// per input. The bytes are the same messages (hookspb), so the plugin's side does not
// know; wire_test.go checks the encoding against the protobuf runtime.

// wireMsg is one encoded message: gRPC hands it to wireCodec.
type wireMsg struct{ b []byte }

// wireCodec passes encoded messages through. It names itself "proto", the content
// subtype of the Hooks service, so the plugin decodes with its protobuf codec.
type wireCodec struct{}

// Marshal implements encoding.CodecV2: the bytes, which are never written to after.
func (wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*wireMsg)
	if !ok {
		return nil, fmt.Errorf("gopluginhost: wire codec: cannot marshal a %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(m.b)}, nil
}

// Unmarshal implements encoding.CodecV2: a copy of the bytes (gRPC reuses its buffers).
func (wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*wireMsg)
	if !ok {
		return fmt.Errorf("gopluginhost: wire codec: cannot unmarshal into a %T", v)
	}
	m.b = data.Materialize()
	return nil
}

// Name implements encoding.CodecV2.
func (wireCodec) Name() string { return "proto" }

// mapStreamDesc describes the Map method of the Hooks service.
var mapStreamDesc = grpc.StreamDesc{StreamName: "Map", ServerStreams: true, ClientStreams: true}

// openWireMap opens a Map stream on conn that sends and receives wireMsgs.
func openWireMap(ms *mapStream) (grpc.ClientStream, error) {
	return ms.inst.conn.NewStream(ms.ctx, &mapStreamDesc, hookspb.Hooks_Map_FullMethodName, grpc.ForceCodecV2(wireCodec{}))
}

// The field numbers of hooks.proto.
const (
	fMapFun, fMapObject, fMapNotFound, fMapKeyData, fMapArg = 1, 2, 3, 4, 5
	fObjType, fObjBucket, fObjKey, fObjVClock, fObjContents = 1, 2, 3, 4, 5
	fCValue, fCType, fCCharset, fCEncoding, fCVTag, fCLinks = 1, 2, 3, 4, 5, 6
	fCLastMod, fCMeta, fCIndexes, fCDeleted                 = 7, 8, 9, 10
	fPairKey, fPairValue, fLinkBucket, fLinkKey, fLinkTag   = 1, 2, 1, 2, 3
	fValues, fValuesError                                   = 1, 2
	lenTag                                                  = 1 // every field number here is < 16
)

// sizeField is the size of a length-delimited field of n bytes; 0 when n is 0 and
// the field may be left out (proto3 scalars).
func sizeField(n int) int {
	if n == 0 {
		return 0
	}
	return lenTag + protowire.SizeVarint(uint64(n)) + n
}

// sizeMsg is the size of a message field of n bytes (present even when empty).
func sizeMsg(n int) int { return lenTag + protowire.SizeVarint(uint64(n)) + n }

// appendField appends a length-delimited field unless it is empty.
func appendField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendStr is appendField for a string.
func appendStr(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendMsgHeader appends the tag and length of a message field of n bytes.
func appendMsgHeader(b []byte, num protowire.Number, n int) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

func sizePair(k, v string) int { return sizeField(len(k)) + sizeField(len(v)) }

func sizeLink(l *core.Link) int {
	return sizeField(len(l.Bucket)) + sizeField(len(l.Key)) + sizeField(len(l.Tag))
}

// sizeContent is the size of a sibling's Content message.
func sizeContent(s *core.Sibling) int {
	n := sizeField(len(s.Value)) + sizeField(len(utf8String(s.ContentType))) + sizeField(len(utf8String(s.Charset))) +
		sizeField(len(utf8String(s.Encoding))) + sizeField(len(utf8String(s.VTag)))
	for i := range s.Links {
		n += sizeMsg(sizeLink(&s.Links[i]))
	}
	if !s.LastModified.IsZero() {
		if us := s.LastModified.UnixMicro(); us != 0 {
			n += 1 + protowire.SizeVarint(uint64(us))
		}
	}
	for _, m := range s.Meta {
		n += sizeMsg(sizePair(m.Name, m.Value))
	}
	for _, e := range s.Indexes {
		n += sizeMsg(sizePair(e.Field, e.Value))
	}
	if s.Deleted {
		n += 2
	}
	return n
}

// appendContent appends a sibling's Content message (without its header).
func appendContent(b []byte, s *core.Sibling) []byte {
	b = appendField(b, fCValue, s.Value)
	b = appendStr(b, fCType, utf8String(s.ContentType))
	b = appendStr(b, fCCharset, utf8String(s.Charset))
	b = appendStr(b, fCEncoding, utf8String(s.Encoding))
	b = appendStr(b, fCVTag, utf8String(s.VTag))
	for i := range s.Links {
		l := &s.Links[i]
		b = appendMsgHeader(b, fCLinks, sizeLink(l))
		b = appendStr(b, fLinkBucket, l.Bucket)
		b = appendStr(b, fLinkKey, l.Key)
		b = appendStr(b, fLinkTag, l.Tag)
	}
	if !s.LastModified.IsZero() {
		if us := s.LastModified.UnixMicro(); us != 0 {
			b = protowire.AppendTag(b, fCLastMod, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(us))
		}
	}
	for _, m := range s.Meta {
		b = appendMsgHeader(b, fCMeta, sizePair(m.Name, m.Value))
		b = appendStr(b, fPairKey, m.Name)
		b = appendStr(b, fPairValue, m.Value)
	}
	for _, e := range s.Indexes {
		b = appendMsgHeader(b, fCIndexes, sizePair(e.Field, e.Value))
		b = appendStr(b, fPairKey, e.Field)
		b = appendStr(b, fPairValue, e.Value)
	}
	if s.Deleted {
		b = protowire.AppendTag(b, fCDeleted, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b
}

// sizeObject is the size of an object's Object message; sizes receives the size of
// each sibling's Content (len(o.Siblings) of them).
func sizeObject(o *core.Object, sizes []int) int {
	n := sizeField(len(o.Type)) + sizeField(len(o.Bucket)) + sizeField(len(o.Key)) + sizeField(len(o.VClock))
	for i := range o.Siblings {
		sizes[i] = sizeContent(&o.Siblings[i])
		n += sizeMsg(sizes[i])
	}
	return n
}

// appendObject appends an object's Object message (without its header); sizes are
// those sizeObject found.
func appendObject(b []byte, o *core.Object, sizes []int) []byte {
	b = appendStr(b, fObjType, o.Type)
	b = appendStr(b, fObjBucket, o.Bucket)
	b = appendStr(b, fObjKey, o.Key)
	b = appendField(b, fObjVClock, o.VClock)
	for i := range o.Siblings {
		b = appendMsgHeader(b, fObjContents, sizes[i])
		b = appendContent(b, &o.Siblings[i])
	}
	return b
}

// sizePlace is the size of the Object message of a missing input's place.
func sizePlace(p *hooks.Place) int {
	return sizeField(len(p.Type)) + sizeField(len(p.Bucket)) + sizeField(len(p.Key))
}

// encodeMapRequest encodes the MapRequest of one map input into a new buffer of its
// exact size. fun and arg are set only in the first message of a stream ("" and nil
// otherwise).
func encodeMapRequest(fun string, arg json.RawMessage, in *hooks.MapInput) []byte {
	fun = utf8String(fun)
	objSize := -1
	var sizesBuf [4]int
	var sizes []int
	n := sizeField(len(fun)) + sizeField(len(in.KeyData)) + sizeField(len(arg))
	switch {
	case in.Object != nil:
		if sizes = sizesBuf[:]; len(in.Object.Siblings) > len(sizes) {
			sizes = make([]int, len(in.Object.Siblings))
		}
		objSize = sizeObject(in.Object, sizes)
		n += sizeMsg(objSize)
	case in.NotFound != nil:
		objSize = sizePlace(in.NotFound)
		n += sizeMsg(objSize) + 2
	default:
		n += 2
	}
	b := make([]byte, 0, n)
	b = appendStr(b, fMapFun, fun)
	switch {
	case in.Object != nil:
		b = appendMsgHeader(b, fMapObject, objSize)
		b = appendObject(b, in.Object, sizes)
	case in.NotFound != nil:
		b = appendMsgHeader(b, fMapObject, objSize)
		b = appendStr(b, fObjType, in.NotFound.Type)
		b = appendStr(b, fObjBucket, in.NotFound.Bucket)
		b = appendStr(b, fObjKey, in.NotFound.Key)
	}
	if in.Object == nil {
		b = protowire.AppendTag(b, fMapNotFound, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	b = appendField(b, fMapKeyData, in.KeyData)
	return appendField(b, fMapArg, arg)
}

// errMalformed is the cause of a ValuesResponse that does not parse.
var errMalformed = errors.New("a malformed ValuesResponse")

// parseValues parses a ValuesResponse. The values are slices of b (capped, so that
// appending to one cannot overwrite the next), which the caller must own; fields it
// does not know are skipped.
func parseValues(b []byte) (vals []json.RawMessage, errMsg string, err error) {
	vals = []json.RawMessage{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, "", errMalformed
		}
		b = b[n:]
		switch {
		case num == fValues && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, "", errMalformed
			}
			vals = append(vals, json.RawMessage(v[:len(v):len(v)]))
			b = b[n:]
		case num == fValuesError && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, "", errMalformed
			}
			errMsg = string(v)
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, "", errMalformed
			}
			b = b[n:]
		}
	}
	return vals, errMsg, nil
}
