package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/vclock"
)

// record is an object as stored under its 'o' key: the causal clock and every sibling
// with the dot of the write that created it.
type record struct {
	clock vclock.VClock
	// rawClock is the clock's encoded form as read from storage or as encode wrote it.
	// Reads hand it to clients as is; only writes decode it (clockValue), so a GET never
	// decodes and re-encodes.
	rawClock []byte
	siblings []storedSibling
	// expiry is when the object expires (unix nanoseconds, 0 = never): absolute, decided
	// by the node that coordinated the write, so every replica agrees (see expiry.go).
	expiry int64
}

// clockValue returns the decoded clock, decoding rawClock on first use.
func (r *record) clockValue() (vclock.VClock, error) {
	if r.clock == nil && len(r.rawClock) > 0 {
		c, err := vclock.Decode(r.rawClock)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errCorrupt, err)
		}
		r.clock = c
	}
	return r.clock, nil
}

type storedSibling struct {
	core.Sibling
	dot vclock.Dot
}

// Record layout, version 1 (all integers varints unless noted):
//
//	byte     version (1)
//	bytes    clock (vclock binary form)
//	uvarint  sibling count
//	per sibling:
//	  bytes    dot actor; uvarint dot counter
//	  byte     flags (bit 0: deleted)
//	  bytes    content type, charset, encoding, vtag
//	  varint   last-modified, unix nanoseconds
//	  uvarint  n; n × (bytes name, bytes value)            user metadata
//	  uvarint  n; n × (bytes bucket, bytes key, bytes tag) links
//	  uvarint  n; n × (bytes field, bytes value)           index entries
//	  bytes    value
//
// where "bytes" is a uvarint length followed by that many bytes.
//
// Version 2 is version 1 with a varint expiry (unix nanoseconds, > 0) between the
// version byte and the clock. Only records with an expiry are written as version 2, so
// a store without TTLs holds exactly the bytes it held before expiry existed.
const (
	recordVersion       = 1
	recordVersionExpiry = 2
)

var errCorrupt = errors.New("kv: corrupt object record")

// encode returns the record's stored form. The clock is written straight into it, and
// r.rawClock is set to those bytes of the (immutable) result, so that r.object hands them
// to clients without encoding the clock again.
func (r *record) encode() []byte {
	return r.appendEncode(make([]byte, 0, r.encodedLen()))
}

// encodedLen returns an upper bound of the length of the record's stored form.
func (r *record) encodedLen() int {
	n := 26 + r.clock.EncodedLen()
	for i := range r.siblings {
		s := &r.siblings[i]
		n += 64 + len(s.Value) + len(s.ContentType) + len(s.Charset) + len(s.Encoding) + len(s.VTag) + len(s.dot.Actor)
		for _, m := range s.Meta {
			n += 4 + len(m.Name) + len(m.Value)
		}
		for _, l := range s.Links {
			n += 6 + len(l.Bucket) + len(l.Key) + len(l.Tag)
		}
		for _, e := range s.Indexes {
			n += 4 + len(e.Field) + len(e.Value)
		}
	}
	return n
}

// appendEncode appends the record's stored form to b (see encode); r.rawClock is set
// to the clock's bytes in the result.
func (r *record) appendEncode(b []byte) []byte {
	clkLen := r.clock.EncodedLen()
	if r.expiry > 0 {
		b = append(b, recordVersionExpiry)
		b = binary.AppendVarint(b, r.expiry)
	} else {
		b = append(b, recordVersion)
	}
	b = binary.AppendUvarint(b, uint64(clkLen))
	clkStart := len(b)
	b = r.clock.AppendEncode(b)
	clkEnd := len(b)
	b = binary.AppendUvarint(b, uint64(len(r.siblings)))
	for i := range r.siblings {
		s := &r.siblings[i]
		b = appendString(b, s.dot.Actor)
		b = binary.AppendUvarint(b, s.dot.Counter)
		var flags byte
		if s.Deleted {
			flags |= 1
		}
		b = append(b, flags)
		b = appendString(b, s.ContentType)
		b = appendString(b, s.Charset)
		b = appendString(b, s.Encoding)
		b = appendString(b, s.VTag)
		b = binary.AppendVarint(b, s.LastModified.UnixNano())
		b = binary.AppendUvarint(b, uint64(len(s.Meta)))
		for _, m := range s.Meta {
			b = appendString(b, m.Name)
			b = appendString(b, m.Value)
		}
		b = binary.AppendUvarint(b, uint64(len(s.Links)))
		for _, l := range s.Links {
			b = appendString(b, l.Bucket)
			b = appendString(b, l.Key)
			b = appendString(b, l.Tag)
		}
		b = binary.AppendUvarint(b, uint64(len(s.Indexes)))
		for _, e := range s.Indexes {
			b = appendString(b, e.Field)
			b = appendString(b, e.Value)
		}
		b = appendBytes(b, s.Value)
	}
	r.rawClock = b[clkStart:clkEnd:clkEnd]
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// recordExpiry returns the expiry of an encoded record (unix nanoseconds, 0 = none)
// from its header alone, without decoding the rest: the expiry reaper reads nothing
// else.
func recordExpiry(data []byte) (int64, error) {
	d := decoder{b: data}
	return d.header()
}

// decodeRecord parses a stored record. The returned record aliases data: sibling values
// are sub-slices of it and its strings share its memory (no copies on the read path), so
// callers pass a buffer that nobody modifies afterwards (a fresh read from storage, or
// an object cache entry, which is immutable).
func decodeRecord(data []byte) (*record, error) {
	d := decoder{b: data}
	expiry, err := d.header()
	if err != nil {
		return nil, err
	}
	r := &record{expiry: expiry, rawClock: d.bytes()}
	n := d.count()
	r.siblings = make([]storedSibling, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		var s storedSibling
		s.dot.Actor = d.string()
		s.dot.Counter = d.uvarint()
		s.Deleted = d.byte()&1 != 0
		s.ContentType = d.string()
		s.Charset = d.string()
		s.Encoding = d.string()
		s.VTag = d.string()
		s.LastModified = time.Unix(0, d.varint()).UTC()
		if m := d.count(); m > 0 {
			s.Meta = make([]core.MetaEntry, m)
			for j := range s.Meta {
				s.Meta[j] = core.MetaEntry{Name: d.string(), Value: d.string()}
			}
		}
		if m := d.count(); m > 0 {
			s.Links = make([]core.Link, m)
			for j := range s.Links {
				s.Links[j] = core.Link{Bucket: d.string(), Key: d.string(), Tag: d.string()}
			}
		}
		if m := d.count(); m > 0 {
			s.Indexes = make([]core.IndexEntry, m)
			for j := range s.Indexes {
				s.Indexes[j] = core.IndexEntry{Field: d.string(), Value: d.string()}
			}
		}
		s.Value = d.bytes()
		r.siblings = append(r.siblings, s)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, d.err)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	return r, nil
}

// header reads a record's version byte and, in version 2, its expiry (0 if none).
func (d *decoder) header() (expiry int64, err error) {
	switch v := d.byte(); v {
	case recordVersion:
		return 0, nil
	case recordVersionExpiry:
		expiry = d.varint()
		if d.err != nil || expiry <= 0 {
			return 0, fmt.Errorf("%w: bad expiry", errCorrupt)
		}
		return expiry, nil
	default:
		return 0, fmt.Errorf("%w: version %d", errCorrupt, v)
	}
}

type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated")

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count, bounded by the bytes left (each element takes ≥ 1 byte).
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		if d.err == nil {
			d.err = errShort
		}
		return 0
	}
	return int(v)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// skip skips a counted list of elements of fields length-prefixed fields each.
func (d *decoder) skip(fields int) {
	for m := d.count(); m > 0 && d.err == nil; m-- {
		for range fields {
			d.bytes()
		}
	}
}

// string returns the next length-prefixed string, sharing the decoder's buffer, which
// decodeRecord's callers never modify.
func (d *decoder) string() string {
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// object converts a record into the client view.
func (r *record) object(typ, bucket, key string) *core.Object {
	clk := r.rawClock
	if clk == nil {
		clk = r.clock.Encode()
	}
	o := &core.Object{Type: typ, Bucket: bucket, Key: key, VClock: clk}
	if r.expiry > 0 {
		o.Expiry = time.Unix(0, r.expiry).UTC()
	}
	o.Siblings = make([]core.Sibling, len(r.siblings))
	for i := range r.siblings {
		o.Siblings[i] = r.siblings[i].Sibling
	}
	return o
}

// allDeleted reports whether every sibling is a tombstone (an empty record counts).
func (r *record) allDeleted() bool {
	for i := range r.siblings {
		if !r.siblings[i].Deleted {
			return false
		}
	}
	return true
}

func (r *record) lastModified() time.Time {
	var t time.Time
	for i := range r.siblings {
		if r.siblings[i].LastModified.After(t) {
			t = r.siblings[i].LastModified
		}
	}
	return t
}
