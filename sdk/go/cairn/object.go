package cairn

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnkv/cairn/sdk/abi"
)

// The metadata name prefixes of the two server dialects. The host writes the one of its
// dialect; the SDK reads both and writes back the one it read.
const (
	PrefixStore = "X-Store-"
	PrefixRiak  = "X-Riak-"
)

// Object is a stored object as the host passes it to hooks: its place, its opaque causal
// context and one Value per sibling.
type Object struct {
	BucketType string
	Bucket     string
	Key        string
	// VClock is the opaque causal context (sent as standard base64; nil when none).
	// The host ignores it in a precommit's replacement.
	VClock []byte
	// Values holds one entry per sibling; a precommit sees exactly one.
	Values []Value
}

// Value is one sibling of an object: its metadata and its bytes.
type Value struct {
	Metadata Metadata
	// Data is the value. It travels as "data" when it is valid UTF-8 and as "data_b64"
	// (standard base64) otherwise.
	Data []byte
}

// Metadata is the metadata of one value.
type Metadata struct {
	// ContentType is the media type, e.g. "application/json".
	ContentType string
	// Charset is the charset parameter of the content type, if one was sent.
	Charset string
	// ContentEncoding is the Content-Encoding, if one was sent (e.g. "gzip").
	ContentEncoding string
	// VTag is the value's version tag; empty in a precommit's input on put. Read only.
	VTag string
	// LastModified is the RFC 1123 (GMT) modification time as sent; empty in a
	// precommit's input on put. Read only; see LastModifiedTime.
	LastModified string
	// UserMeta maps user-metadata names, as the client sent them and without the
	// "X-Store-Meta-" or "X-Riak-Meta-" prefix, to their values.
	UserMeta map[string]string
	// Indexes maps secondary-index fields (lower case, ending in "_bin" or "_int") to
	// their values; "_int" values are decimal integers of any size.
	Indexes map[string][]string
	// Links are the value's links.
	Links []Link
	// Deleted marks a tombstone. Read only.
	Deleted bool
	// Prefix is the dialect prefix of the metadata names, PrefixStore or PrefixRiak: the
	// one read from the host, used again when the object is encoded. Empty means
	// PrefixStore.
	Prefix string
}

// Link is a typed pointer to another object. It travels as [bucket, key, tag].
type Link struct {
	Bucket string
	Key    string
	Tag    string
}

// NewObject returns an object of the default bucket type with one value of the given
// content type and bytes, as a precommit sees a put.
func NewObject(bucket, key, contentType string, data []byte) *Object {
	return &Object{
		BucketType: "default",
		Bucket:     bucket,
		Key:        key,
		Values:     []Value{{Metadata: Metadata{ContentType: contentType}, Data: data}},
	}
}

// First returns the object's first value, or nil when it has none.
func (o *Object) First() *Value {
	if o == nil || len(o.Values) == 0 {
		return nil
	}
	return &o.Values[0]
}

// Live returns the values that are not tombstones.
func (o *Object) Live() []*Value {
	var out []*Value
	for i := range o.Values {
		if !o.Values[i].Metadata.Deleted {
			out = append(out, &o.Values[i])
		}
	}
	return out
}

// Clone returns a deep copy of the object.
func (o *Object) Clone() *Object {
	c := *o
	c.VClock = slices.Clone(o.VClock)
	c.Values = make([]Value, len(o.Values))
	for i, v := range o.Values {
		c.Values[i] = Value{Metadata: v.Metadata.clone(), Data: slices.Clone(v.Data)}
	}
	return &c
}

func (m Metadata) clone() Metadata {
	c := m
	c.UserMeta = maps.Clone(m.UserMeta)
	if m.Indexes != nil {
		c.Indexes = make(map[string][]string, len(m.Indexes))
		for k, v := range m.Indexes {
			c.Indexes[k] = slices.Clone(v)
		}
	}
	c.Links = slices.Clone(m.Links)
	return c
}

// DecodeJSON unmarshals the value's data, which must be JSON, into dst.
func (v *Value) DecodeJSON(dst any) error {
	if err := json.Unmarshal(v.Data, dst); err != nil {
		return fmt.Errorf("cairn: value is not JSON: %w", err)
	}
	return nil
}

// SetJSON replaces the value's data with src encoded as JSON and, when no content type
// is set, sets it to application/json.
func (v *Value) SetJSON(src any) error {
	b, err := marshalValue(src)
	if err != nil {
		return fmt.Errorf("cairn: encode value: %w", err)
	}
	v.Data = b
	if v.Metadata.ContentType == "" {
		v.Metadata.ContentType = "application/json"
	}
	return nil
}

// Meta returns the user-metadata value of name (matched without regard to case) and
// whether it is set.
func (m *Metadata) Meta(name string) (string, bool) {
	if v, ok := m.UserMeta[name]; ok {
		return v, true
	}
	for k, v := range m.UserMeta {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// SetMeta sets the user-metadata value of name.
func (m *Metadata) SetMeta(name, value string) {
	if m.UserMeta == nil {
		m.UserMeta = map[string]string{}
	}
	m.UserMeta[name] = value
}

// Index returns the values of an index field (the name is lower-cased first).
func (m *Metadata) Index(field string) []string {
	return m.Indexes[strings.ToLower(field)]
}

// AddIndex adds value to an index field unless it is there already. The field name is
// lower-cased; it must end in "_bin" or "_int" for the host to accept it.
func (m *Metadata) AddIndex(field, value string) {
	field = strings.ToLower(field)
	if slices.Contains(m.Indexes[field], value) {
		return
	}
	if m.Indexes == nil {
		m.Indexes = map[string][]string{}
	}
	m.Indexes[field] = append(m.Indexes[field], value)
}

// SetIndex replaces the values of an index field; no values removes the field.
func (m *Metadata) SetIndex(field string, values ...string) {
	field = strings.ToLower(field)
	if len(values) == 0 {
		delete(m.Indexes, field)
		return
	}
	if m.Indexes == nil {
		m.Indexes = map[string][]string{}
	}
	m.Indexes[field] = slices.Clone(values)
}

// LastModifiedTime parses LastModified; it returns the zero time and no error when it
// is empty.
func (m *Metadata) LastModifiedTime() (time.Time, error) {
	if m.LastModified == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC1123, m.LastModified)
	if err != nil {
		return time.Time{}, fmt.Errorf("cairn: last-modified: %w", err)
	}
	return t, nil
}

// MarshalJSON encodes the object in the ABI v1 object shape.
func (o Object) MarshalJSON() ([]byte, error) {
	return o.appendJSON(make([]byte, 0, o.sizeHint())), nil
}

// sizeHint estimates the size of the object's encoding, so that one allocation
// usually holds it: large values are the common case worth avoiding copies for.
func (o *Object) sizeHint() int {
	n := 256
	for i := range o.Values {
		n += len(o.Values[i].Data)*5/4 + 256
	}
	return n
}

func (o *Object) appendJSON(b []byte) []byte {
	b = append(b, `{"`+abi.ObjBucketType+`":`...)
	b = appendString(b, o.BucketType)
	b = append(b, `,"`+abi.ObjBucket+`":`...)
	b = appendString(b, o.Bucket)
	b = append(b, `,"`+abi.ObjKey+`":`...)
	b = appendString(b, o.Key)
	b = append(b, `,"`+abi.ObjVClock+`":`...)
	b = appendString(b, base64.StdEncoding.EncodeToString(o.VClock))
	b = append(b, `,"`+abi.ObjValues+`":[`...)
	for i := range o.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = o.Values[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

// MarshalJSON encodes the value: {"metadata": ..., "data": ...} or "data_b64".
func (v Value) MarshalJSON() ([]byte, error) {
	return v.appendJSON(nil), nil
}

func (v *Value) appendJSON(b []byte) []byte {
	b = append(b, `{"`+abi.ObjMetadata+`":`...)
	b = v.Metadata.appendJSON(b)
	if utf8.Valid(v.Data) {
		b = append(b, `,"`+abi.ObjData+`":`...)
		b = appendString(b, string(v.Data))
	} else {
		b = append(b, `,"`+abi.ObjDataB64+`":`...)
		b = appendString(b, base64.StdEncoding.EncodeToString(v.Data))
	}
	return append(b, '}')
}

// MarshalJSON encodes the metadata with the names of its Prefix. Empty optional fields
// are left out; the user-metadata object is always present.
func (m Metadata) MarshalJSON() ([]byte, error) {
	return m.appendJSON(nil), nil
}

func (m *Metadata) appendJSON(b []byte) []byte {
	p := m.Prefix
	if p == "" {
		p = PrefixStore
	}
	b = append(b, `{"`+abi.MetaContentType+`":`...)
	b = appendString(b, m.ContentType)
	opt := func(name, val string) {
		if val != "" {
			b = append(b, ',')
			b = appendString(b, name)
			b = append(b, ':')
			b = appendString(b, val)
		}
	}
	opt(abi.MetaCharset, m.Charset)
	opt(abi.MetaContentEncoding, m.ContentEncoding)
	opt(p+abi.MetaVTagSuffix, m.VTag)
	opt(p+abi.MetaLastModifiedSuffix, m.LastModified)

	b = append(b, ',')
	b = appendString(b, p+abi.MetaUserSuffix)
	b = append(b, ":{"...)
	for i, name := range sortedKeys(m.UserMeta) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p+abi.MetaUserSuffix+"-"+name)
		b = append(b, ':')
		b = appendString(b, m.UserMeta[name])
	}
	b = append(b, '}')

	if idx := normalIndexes(m.Indexes); len(idx) > 0 {
		b = append(b, `,"`+abi.MetaIndex+`":{`...)
		for i, field := range sortedKeys(idx) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIndexField(b, field, idx[field])
		}
		b = append(b, '}')
	}

	if len(m.Links) > 0 {
		b = append(b, `,"`+abi.MetaLinks+`":[`...)
		for i, l := range m.Links {
			if i > 0 {
				b = append(b, ',')
			}
			b = l.appendJSON(b)
		}
		b = append(b, ']')
	}
	if m.Deleted {
		b = append(b, ',')
		b = appendString(b, p+abi.MetaDeletedSuffix)
		b = append(b, `:"true"`...)
	}
	return append(b, '}')
}

// normalIndexes returns the index fields that have values, with lower-case names
// (fields that differ only in case are merged).
func normalIndexes(in map[string][]string) map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]string, len(in))
	for field, vals := range in {
		if len(vals) > 0 {
			lf := strings.ToLower(field)
			out[lf] = append(out[lf], vals...)
		}
	}
	return out
}

// appendIndexField appends "field": value, or "field": [values...] for several values.
// Values of "_int" fields that are integers are written as canonical JSON numbers,
// everything else as strings.
func appendIndexField(b []byte, field string, vals []string) []byte {
	b = appendString(b, field)
	b = append(b, ':')
	isInt := strings.HasSuffix(field, "_int")
	if len(vals) > 1 {
		b = append(b, '[')
	}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		if n, ok := canonicalInt(v); isInt && ok {
			b = append(b, n...)
		} else {
			b = appendString(b, v)
		}
	}
	if len(vals) > 1 {
		b = append(b, ']')
	}
	return b
}

// MarshalJSON encodes the link as [bucket, key, tag].
func (l Link) MarshalJSON() ([]byte, error) {
	return l.appendJSON(nil), nil
}

func (l Link) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = appendString(b, l.Bucket)
	b = append(b, ',')
	b = appendString(b, l.Key)
	b = append(b, ',')
	b = appendString(b, l.Tag)
	return append(b, ']')
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}
