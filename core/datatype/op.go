package datatype

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxOpElements bounds the elements and fields one operation may name.
const MaxOpElements = 10000

// Op is an operation parsed for one kind, with the causal context the client sent.
type Op struct {
	kind Kind
	body any // counterOp, setOp, mapOp
	ctx  vv  // nil when the client sent none
}

// Kind is the kind the operation applies to.
func (o Op) Kind() Kind { return o.kind }

// counterOp adds delta (negative: decrement).
type counterOp struct{ delta int64 }

// setOp removes, then adds elements (G-sets and HyperLogLogs only add).
type setOp struct{ add, remove []string }

// registerOp assigns a register.
type registerOp struct{ val string }

// flagOp enables or disables a flag.
type flagOp struct{ enable bool }

// mapOp removes fields, then updates fields.
type mapOp struct {
	remove []string // field keys
	update []fieldUpdate
}

// fieldUpdate is the operation on one field.
type fieldUpdate struct {
	key string
	op  any
}

// ParseOp parses the JSON body of a POST to /types/T/buckets/B/datatypes[/K] for a
// bucket of kind k, as Riak's riak_kv_crdt_json does. Errors are *OpError with Riak's
// texts ("Couldn't decode JSON: ...", "Invalid operation on datatype 'set': ...",
// "Invalid map field name '...'").
func ParseOp(k Kind, body []byte) (Op, error) {
	// The body is decoded into generic values, each far larger than the bytes that
	// spell it ("0," is two bytes, its value dozens): the values are counted first,
	// without keeping any, so that a large body of tiny elements is refused for what
	// it names before it is decoded.
	if err := checkTokens(body, maxOpTokens); err != nil {
		return Op{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var j any
	if err := dec.Decode(&j); err != nil {
		return Op{}, opErrorf("Couldn't decode JSON: " + err.Error())
	}
	if dec.More() {
		return Op{}, opErrorf("Couldn't decode JSON: trailing data after the operation")
	}
	p := &parser{elems: 0}
	op := Op{kind: k}
	var err error
	switch k {
	case Counter:
		op.body, err = p.counter(j)
	case Set:
		op.body, op.ctx, err = p.set(j, true)
	case GSet, HLL:
		op.body, err = p.grow(k, j)
	case Map:
		op.body, op.ctx, err = p.mapOp(j, 1, true)
	default:
		err = opErrorf(fmt.Sprintf("Bucket datatype '%s' is not a supported type.", k))
	}
	if err != nil {
		return Op{}, err
	}
	return op, nil
}

// parser carries the element count of one operation.
type parser struct {
	elems int
}

// invalid is Riak's error for an operation the kind does not have.
func invalid(k Kind, j any) error {
	b, _ := json.Marshal(j)
	if len(b) > maxEchoed {
		b = append(b[:maxEchoed:maxEchoed], "..."...)
	}
	return opErrorf(fmt.Sprintf("Invalid operation on datatype '%s': %s", k, b))
}

// maxEchoed bounds the part of an invalid operation an error message repeats.
const maxEchoed = 256

// maxOpTokens bounds the JSON tokens (values, keys and delimiters) of an operation:
// several per element or field it may name (MaxOpElements), and the structure
// around them.
const maxOpTokens = 8*MaxOpElements + 1024

// checkTokens refuses a body of more than limit JSON tokens, reading them one at a
// time without keeping them. Malformed JSON passes: the decode that follows reports it.
func checkTokens(body []byte, limit int) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for n := 0; ; n++ {
		if _, err := dec.Token(); err != nil {
			return nil // io.EOF, or malformed: the decode says which
		}
		if n >= limit {
			return opErrorf(fmt.Sprintf("Couldn't decode JSON: an operation may name at most %d elements and fields", MaxOpElements))
		}
	}
}

// counter parses N, "increment", "decrement", {"increment":N} or {"decrement":N}.
func (p *parser) counter(j any) (counterOp, error) {
	switch x := j.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return counterOp{n}, nil
		}
	case string:
		switch x {
		case "increment":
			return counterOp{1}, nil
		case "decrement":
			return counterOp{-1}, nil
		}
	case map[string]any:
		if len(x) == 1 {
			if n, ok := x["increment"].(json.Number); ok {
				if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
					return counterOp{v}, nil
				}
			}
			if n, ok := x["decrement"].(json.Number); ok {
				if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v != math.MinInt64 {
					return counterOp{-v}, nil
				}
			}
		}
	}
	return counterOp{}, invalid(Counter, j)
}

// set parses {"add":e,"add_all":[...],"remove":e,"remove_all":[...],"context":c}; top
// says whether a context may be given (only at the top of the operation).
func (p *parser) set(j any, top bool) (setOp, vv, error) {
	obj, ok := j.(map[string]any)
	if !ok || len(obj) == 0 {
		return setOp{}, nil, invalid(Set, j)
	}
	var op setOp
	var ctx vv
	for key, v := range obj {
		var err error
		switch key {
		case "add", "remove", "add_all", "remove_all":
			var xs []string
			xs, err = p.elements(Set, key, v)
			if strings.HasPrefix(key, "add") {
				op.add = append(op.add, xs...)
			} else {
				op.remove = append(op.remove, xs...)
			}
		case "context":
			if !top {
				return setOp{}, nil, invalid(Set, j)
			}
			ctx, err = parseContext(v)
		default:
			return setOp{}, nil, invalid(Set, j)
		}
		if err != nil {
			return setOp{}, nil, err
		}
	}
	if len(op.add)+len(op.remove) == 0 {
		return setOp{}, nil, invalid(Set, j)
	}
	return op, ctx, nil
}

// grow parses a G-set or HyperLogLog operation: {"add":e} or {"add_all":[...]}.
func (p *parser) grow(k Kind, j any) (setOp, error) {
	obj, ok := j.(map[string]any)
	if !ok || len(obj) == 0 {
		return setOp{}, invalid(k, j)
	}
	var op setOp
	for key, v := range obj {
		if key != "add" && key != "add_all" {
			return setOp{}, invalid(k, j)
		}
		xs, err := p.elements(k, key, v)
		if err != nil {
			return setOp{}, err
		}
		op.add = append(op.add, xs...)
	}
	return op, nil
}

// elements reads the element of "add"/"remove" or the elements of "add_all"/"remove_all".
func (p *parser) elements(k Kind, key string, v any) ([]string, error) {
	var raw []any
	if strings.HasSuffix(key, "_all") {
		l, ok := v.([]any)
		if !ok {
			return nil, invalid(k, map[string]any{key: v})
		}
		raw = l
	} else {
		raw = []any{v}
	}
	out := make([]string, 0, len(raw))
	for _, x := range raw {
		s, ok := x.(string)
		if !ok {
			return nil, invalid(k, map[string]any{key: v})
		}
		if len(s) > MaxElementLen {
			return nil, opErrorf(fmt.Sprintf("Invalid operation on datatype '%s': element longer than %d bytes", k, MaxElementLen))
		}
		if err := p.count(k); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// count charges one element or field to the operation.
func (p *parser) count(k Kind) error {
	p.elems++
	if p.elems > MaxOpElements {
		return opErrorf(fmt.Sprintf("Invalid operation on datatype '%s': more than %d elements", k, MaxOpElements))
	}
	return nil
}

// mapOp parses {"update":{"name_type":op,...},"remove":["name_type",...],"context":c}
// at nesting depth depth.
func (p *parser) mapOp(j any, depth int, top bool) (mapOp, vv, error) {
	if depth > MaxDepth {
		return mapOp{}, nil, opErrorf(fmt.Sprintf("Invalid operation on datatype 'map': maps nested deeper than %d", MaxDepth))
	}
	obj, ok := j.(map[string]any)
	if !ok || len(obj) == 0 {
		return mapOp{}, nil, invalid(Map, j)
	}
	var op mapOp
	var ctx vv
	for key, v := range obj {
		var err error
		switch key {
		case "update":
			op.update, err = p.updates(v, depth)
		case "remove":
			op.remove, err = p.removes(v)
		case "context":
			if !top {
				return mapOp{}, nil, invalid(Map, j)
			}
			ctx, err = parseContext(v)
		default:
			return mapOp{}, nil, invalid(Map, j)
		}
		if err != nil {
			return mapOp{}, nil, err
		}
	}
	if len(op.update)+len(op.remove) == 0 {
		return mapOp{}, nil, invalid(Map, j)
	}
	return op, ctx, nil
}

// updates parses the "update" object of a map operation, in field-name order.
func (p *parser) updates(v any, depth int) ([]fieldUpdate, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(Map, map[string]any{"update": v})
	}
	var out []fieldUpdate
	for _, name := range sortedKeys(obj) {
		key, k, err := parseFieldName(name)
		if err != nil {
			return nil, err
		}
		if err := p.count(Map); err != nil {
			return nil, err
		}
		sub, err := p.fieldOp(k, obj[name], depth)
		if err != nil {
			return nil, err
		}
		out = append(out, fieldUpdate{key: key, op: sub})
	}
	return out, nil
}

// fieldOp parses the operation on an embedded field of kind k.
func (p *parser) fieldOp(k Kind, v any, depth int) (any, error) {
	switch k {
	case Counter:
		return p.counter(v)
	case Set:
		op, _, err := p.set(v, false)
		return op, err
	case Register:
		obj, ok := v.(map[string]any)
		s, isStr := obj["assign"].(string)
		if !ok || len(obj) != 1 || !isStr {
			return nil, invalid(Register, v)
		}
		if len(s) > MaxRegisterLen {
			return nil, opErrorf(fmt.Sprintf("Invalid operation on datatype 'register': value longer than %d bytes", MaxRegisterLen))
		}
		return registerOp{s}, nil
	case Flag:
		switch v {
		case "enable":
			return flagOp{true}, nil
		case "disable":
			return flagOp{false}, nil
		}
		return nil, invalid(Flag, v)
	default:
		op, _, err := p.mapOp(v, depth+1, false)
		return op, err
	}
}

// removes parses the "remove" list of a map operation.
func (p *parser) removes(v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, invalid(Map, map[string]any{"remove": v})
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		name, ok := x.(string)
		if !ok {
			return nil, invalid(Map, map[string]any{"remove": v})
		}
		key, _, err := parseFieldName(name)
		if err != nil {
			return nil, err
		}
		if err := p.count(Map); err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, nil
}

// parseFieldName splits "name_type" at its last underscore into a field key.
func parseFieldName(s string) (string, Kind, error) {
	i := strings.LastIndexByte(s, '_')
	if i < 0 || len(s) > MaxElementLen+len("_register") {
		return "", 0, opErrorf(fmt.Sprintf("Invalid map field name '%s'", s))
	}
	k, ok := fieldKind(s[i+1:])
	if !ok || i > MaxElementLen {
		return "", 0, opErrorf(fmt.Sprintf("Invalid map field name '%s'", s))
	}
	return fieldKey(s[:i], k), k, nil
}

// parseContext decodes a base64 causal context.
func parseContext(v any) (vv, error) {
	s, ok := v.(string)
	if !ok {
		return nil, opErrorf("Invalid context: not a string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, opErrorf("Invalid context: not base64")
	}
	c, err := decodeContext(b)
	if err != nil {
		return nil, opErrorf("Invalid context: " + err.Error())
	}
	return c, nil
}

// EncodeContext returns a value's context as it travels in JSON (base64), or "" when the
// kind has none.
func EncodeContext(v Data) string {
	c := v.Context()
	if c == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(c)
}
