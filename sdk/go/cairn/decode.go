package cairn

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnkv/cairn/sdk/abi"
)

// decodeWhole runs decode over all of b with a fresh scanner and checks that nothing
// follows the value.
func decodeWhole(b []byte, decode func(s *scanner) error) error {
	s := scanner{b: b}
	if err := decode(&s); err != nil {
		return err
	}
	return s.end()
}

// UnmarshalJSON decodes an ABI v1 object.
func (o *Object) UnmarshalJSON(b []byte) error {
	if err := decodeWhole(b, o.decode); err != nil {
		return fmt.Errorf("cairn: object: %w", err)
	}
	return nil
}

// UnmarshalJSON decodes one value; "data_b64", when present, wins over "data".
func (v *Value) UnmarshalJSON(b []byte) error {
	if err := decodeWhole(b, v.decode); err != nil {
		return fmt.Errorf("cairn: value: %w", err)
	}
	return nil
}

// UnmarshalJSON decodes metadata written with either dialect prefix. Names are matched
// without regard to case; unknown names are ignored.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	if err := decodeWhole(b, m.decode); err != nil {
		return fmt.Errorf("cairn: metadata: %w", err)
	}
	return nil
}

// UnmarshalJSON decodes [bucket, key, tag] (a missing tag is empty).
func (l *Link) UnmarshalJSON(b []byte) error {
	if err := decodeWhole(b, l.decode); err != nil {
		return fmt.Errorf("cairn: %w", err)
	}
	return nil
}

// field wraps the error of a member's value with the member's name.
func field(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return nil
}

func (o *Object) decode(s *scanner) error {
	*o = Object{}
	return s.object(func(key string) error {
		var err error
		switch key {
		case abi.ObjBucketType:
			o.BucketType, err = s.optStr()
		case abi.ObjBucket:
			o.Bucket, err = s.optStr()
		case abi.ObjKey:
			o.Key, err = s.optStr()
		case abi.ObjVClock:
			var vc string
			if vc, err = s.optStr(); err == nil {
				o.VClock, err = decodeBase64(vc)
			}
		case abi.ObjValues:
			o.Values = nil
			if s.null() {
				return nil
			}
			err = s.array(func() error {
				var v Value
				if err := v.decode(s); err != nil {
					return err
				}
				o.Values = append(o.Values, v)
				return nil
			})
		default:
			err = s.skip()
		}
		return field(key, err)
	})
}

func (v *Value) decode(s *scanner) error {
	*v = Value{}
	var data, b64 []byte
	hasB64 := false
	err := s.object(func(key string) error {
		var err error
		switch key {
		case abi.ObjMetadata:
			if !s.null() {
				err = v.Metadata.decode(s)
			}
		case abi.ObjData:
			if !s.null() {
				data, err = s.strBytes()
			}
		case abi.ObjDataB64:
			if !s.null() {
				var str string
				if str, err = s.str(); err == nil {
					b64, err = decodeBase64(str)
					hasB64 = true
				}
			}
		default:
			err = s.skip()
		}
		return field(key, err)
	})
	if err != nil {
		return err
	}
	if hasB64 {
		data = b64
	}
	if data == nil {
		data = []byte{}
	}
	v.Data = data
	return nil
}

func (m *Metadata) decode(s *scanner) error {
	*m = Metadata{}
	return s.object(func(name string) error {
		return field(name, m.decodeField(s, name))
	})
}

func (m *Metadata) decodeField(s *scanner, name string) error {
	var err error
	switch {
	case strings.EqualFold(name, abi.MetaContentType):
		m.ContentType, err = s.optStr()
		return err
	case strings.EqualFold(name, abi.MetaCharset):
		m.Charset, err = s.optStr()
		return err
	case strings.EqualFold(name, abi.MetaContentEncoding):
		m.ContentEncoding, err = s.optStr()
		return err
	case strings.EqualFold(name, abi.MetaIndex):
		return m.decodeIndexes(s)
	case strings.EqualFold(name, abi.MetaLinks):
		m.Links = nil
		if s.null() {
			return nil
		}
		return s.array(func() error {
			var l Link
			if err := l.decode(s); err != nil {
				return err
			}
			m.Links = append(m.Links, l)
			return nil
		})
	}
	prefix, suffix, ok := splitPrefix(name)
	if !ok {
		return s.skip()
	}
	if m.Prefix == "" {
		m.Prefix = prefix
	}
	switch {
	case strings.EqualFold(suffix, abi.MetaVTagSuffix):
		m.VTag, err = s.optStr()
	case strings.EqualFold(suffix, abi.MetaLastModifiedSuffix):
		m.LastModified, err = s.optStr()
	case strings.EqualFold(suffix, abi.MetaDeletedSuffix):
		m.Deleted, err = decodeFlag(s)
	case strings.EqualFold(suffix, abi.MetaUserSuffix):
		err = m.decodeUserMeta(s)
	default:
		err = s.skip()
	}
	return err
}

// splitPrefix splits a dialect-prefixed name ("X-Riak-VTag") into its canonical prefix
// and the rest.
func splitPrefix(name string) (prefix, suffix string, ok bool) {
	for _, p := range []string{PrefixStore, PrefixRiak} {
		if len(name) > len(p) && strings.EqualFold(name[:len(p)], p) {
			return p, name[len(p):], true
		}
	}
	return "", "", false
}

// decodeFlag decodes "true"/"false" or a JSON boolean (null is false).
func decodeFlag(s *scanner) (bool, error) {
	switch {
	case s.null(), s.literal("false"):
		return false, nil
	case s.literal("true"):
		return true, nil
	case s.peek() == '"':
		v, err := s.str()
		return strings.EqualFold(v, "true"), err
	}
	return false, s.errorf(`want "true" or a boolean, have %s`, s.what())
}

// decodeUserMeta decodes {"X-Store-Meta-Name": "value", ...}, stripping either prefix
// from the names.
func (m *Metadata) decodeUserMeta(s *scanner) error {
	m.UserMeta = nil
	if s.null() {
		return nil
	}
	m.UserMeta = map[string]string{}
	user := abi.MetaUserSuffix + "-"
	return s.object(func(key string) error {
		if s.null() {
			return nil
		}
		v, err := s.str()
		if err != nil {
			return field(key, err)
		}
		name := key
		if _, rest, ok := splitPrefix(key); ok && len(rest) >= len(user) && strings.EqualFold(rest[:len(user)], user) {
			name = rest[len(user):]
		}
		m.UserMeta[name] = v
		return nil
	})
}

// decodeIndexes decodes {"field": value or [values]}, where each value is a string or a
// number (kept as its literal text). Field names are lower-cased.
func (m *Metadata) decodeIndexes(s *scanner) error {
	m.Indexes = nil
	if s.null() {
		return nil
	}
	m.Indexes = map[string][]string{}
	return s.object(func(name string) error {
		f := strings.ToLower(name)
		scalar := func() error {
			var v string
			var err error
			switch c := s.peek(); {
			case c == '"':
				v, err = s.str()
			case c == '-' || (c >= '0' && c <= '9'):
				v, err = s.number()
			default:
				err = s.errorf("want a string or a number, have %s", s.what())
			}
			if err == nil {
				m.Indexes[f] = append(m.Indexes[f], v)
			}
			return err
		}
		if s.peek() == '[' {
			if _, ok := m.Indexes[f]; !ok {
				m.Indexes[f] = []string{}
			}
			return field(name, s.array(scalar))
		}
		return field(name, scalar())
	})
}

func (l *Link) decode(s *scanner) error {
	var parts []string
	err := s.array(func() error {
		p, err := s.str()
		parts = append(parts, p)
		return err
	})
	if err == nil && (len(parts) < 2 || len(parts) > 3) {
		err = fmt.Errorf("have %d strings", len(parts))
	}
	if err != nil {
		return fmt.Errorf("link: want [bucket, key, tag]: %w", err)
	}
	*l = Link{Bucket: parts[0], Key: parts[1]}
	if len(parts) == 3 {
		l.Tag = parts[2]
	}
	return nil
}

// decodeBase64 decodes standard base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// decodeInput decodes the top-level object of point p's input, calling member for
// each member.
func decodeInput(p Point, input []byte, member func(s *scanner, key string) error) error {
	err := decodeWhole(input, func(s *scanner) error {
		return s.object(func(key string) error { return field(key, member(s, key)) })
	})
	if err != nil {
		return fmt.Errorf("cairn: decode %s input: %w", p, err)
	}
	return nil
}

// optObject decodes an object or null (nil).
func optObject(s *scanner) (*Object, error) {
	if s.null() {
		return nil, nil
	}
	var o Object
	if err := o.decode(s); err != nil {
		return nil, err
	}
	return &o, nil
}

// optRaw reads any value; null is nil.
func optRaw(s *scanner) (json.RawMessage, error) {
	if s.null() {
		return nil, nil
	}
	return s.raw()
}

func decodeCommitInput(p Point, input []byte) (*CommitInput, error) {
	var in CommitInput
	err := decodeInput(p, input, func(s *scanner, key string) (err error) {
		switch key {
		case abi.InputOp:
			in.Op, err = s.optStr()
		case abi.InputObject:
			in.Object, err = optObject(s)
		default:
			err = s.skip()
		}
		return err
	})
	if err == nil && in.Object == nil {
		err = fmt.Errorf("cairn: decode %s input: no %q", p, abi.InputObject)
	}
	return &in, err
}

func (pl *Place) decode(s *scanner) error {
	return s.object(func(key string) (err error) {
		switch key {
		case abi.ObjBucketType:
			pl.BucketType, err = s.optStr()
		case abi.ObjBucket:
			pl.Bucket, err = s.optStr()
		case abi.ObjKey:
			pl.Key, err = s.optStr()
		default:
			err = s.skip()
		}
		return field(key, err)
	})
}

func decodeKeyFunInput(input []byte) (*KeyFunInput, error) {
	var pl Place
	err := decodeWhole(input, pl.decode)
	if err != nil {
		return nil, fmt.Errorf("cairn: decode %s input: %w", PointKeyFun, err)
	}
	return &KeyFunInput{BucketType: pl.BucketType, Bucket: pl.Bucket, Key: pl.Key}, nil
}

func decodeLinkFunInput(input []byte) (*LinkFunInput, error) {
	var in LinkFunInput
	err := decodeInput(PointLinkFun, input, func(s *scanner, key string) (err error) {
		switch key {
		case abi.InputObject:
			in.Object, err = optObject(s)
		case abi.InputSpec:
			err = s.object(func(key string) (err error) {
				switch key {
				case "bucket":
					in.Spec.Bucket, err = s.optStr()
				case "tag":
					in.Spec.Tag, err = s.optStr()
				default:
					err = s.skip()
				}
				return field(key, err)
			})
		default:
			err = s.skip()
		}
		return err
	})
	if err == nil && in.Object == nil {
		err = fmt.Errorf("cairn: decode %s input: no %q", PointLinkFun, abi.InputObject)
	}
	return &in, err
}

func decodeMapInput(input []byte) (*MapInput, error) {
	var in MapInput
	err := decodeInput(PointMap, input, func(s *scanner, key string) (err error) {
		switch key {
		case abi.InputObject:
			in.Object, err = optObject(s)
		case abi.InputNotFound:
			if !s.null() {
				in.NotFound = &Place{}
				err = in.NotFound.decode(s)
			}
		case abi.InputKeyData:
			in.KeyData, err = optRaw(s)
		case abi.InputArg:
			in.Arg, err = optRaw(s)
		default:
			err = s.skip()
		}
		return err
	})
	if err == nil && in.Object == nil && in.NotFound == nil {
		err = fmt.Errorf("cairn: decode %s input: neither %q nor %q", PointMap, abi.InputObject, abi.InputNotFound)
	}
	return &in, err
}

func decodeReduceInput(input []byte) (*ReduceInput, error) {
	in := ReduceInput{Values: []json.RawMessage{}}
	err := decodeInput(PointReduce, input, func(s *scanner, key string) (err error) {
		switch key {
		case abi.InputValues:
			in.Values = []json.RawMessage{}
			if s.null() {
				return nil
			}
			err = s.array(func() error {
				v, err := s.raw()
				in.Values = append(in.Values, v)
				return err
			})
		case abi.InputArg:
			in.Arg, err = optRaw(s)
		default:
			err = s.skip()
		}
		return err
	})
	return &in, err
}
