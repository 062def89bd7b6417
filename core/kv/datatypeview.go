package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
)

// The data-type view. Extensions never see a data type's stored binary: precommit and
// postcommit hooks, linkfuns of link phases and MapReduce map functions (every runtime:
// WebAssembly, JavaScript, process plugins, the built-ins) get, in place of the stored
// datatype siblings of an object of a datatype bucket, one sibling holding
//
//	{"type":"map","value":{…}}
//
// — the JSON the GET datatypes endpoint answers, without the context — with content type
// application/json and the user-metadata entry DatatypeMetaName = the type's name, so that
// every hook ABI carries the marker as it carries user metadata. A precommit hook may
// accept or reject an update; a replacement that changes the view is refused (errViewChanged),
// since a JSON value cannot be merged back into the data type.

// DatatypeMetaName is the user-metadata name that marks the data-type view of a value:
// its value is the type's name (counter, set, map, hll, gset). Hook ABIs show it as
// X-Store-Meta-Datatype (X-Riak-Meta-Datatype in the riak dialect); sdk/abi documents it
// as UserMetaDatatype (a test keeps the two equal).
const DatatypeMetaName = "Datatype"

// datatypeCTPrefix starts the content type of every stored data type
// (DatatypeContentType): an object without a sibling of that kind is not looked at
// further, so plain objects pay one string comparison per sibling for the view.
const datatypeCTPrefix = "application/riak_"

// JSON returns r as the HTTP interface answers it, {"type":…,"value":…,"context":…}; the
// context only when withContext is set and the kind has one.
func (r DatatypeResult) JSON(withContext bool) ([]byte, error) {
	var doc struct {
		Type    string `json:"type"`
		Value   any    `json:"value"`
		Context string `json:"context,omitempty"`
	}
	doc.Type, doc.Value = r.Kind.String(), r.Value
	if withContext {
		doc.Context = r.Context
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("kv: encode %s value: %w", r.Kind, err)
	}
	return b, nil
}

// viewSibling returns the data-type view of v as a sibling (no VTag or Last-Modified).
func viewSibling(v datatype.Data) (core.Sibling, error) {
	b, err := DatatypeResult{Kind: v.Kind(), Value: v.Value()}.JSON(false)
	if err != nil {
		return core.Sibling{}, err
	}
	return core.Sibling{Value: b, ContentType: "application/json",
		Meta: []core.MetaEntry{{Name: DatatypeMetaName, Value: v.Kind().String()}}}, nil
}

// datatypeView returns obj as extensions see it when its bucket holds data types of kind
// k: its datatype siblings merged into one view sibling (with the VTag and Last-Modified
// of the latest of them) where the first of them was; tombstones and siblings of other
// content types as they are. An object without a datatype sibling is returned as it is.
func datatypeView(obj *core.Object, k datatype.Kind) (*core.Object, error) {
	ct := DatatypeContentType(k)
	first, latest := -1, -1
	for i := range obj.Siblings {
		sib := &obj.Siblings[i]
		if sib.Deleted || sib.ContentType != ct {
			continue
		}
		if first < 0 {
			first = i
		}
		if latest < 0 || sib.LastModified.After(obj.Siblings[latest].LastModified) {
			latest = i
		}
	}
	if first < 0 {
		return obj, nil
	}
	v, _, err := datatypeOf(obj, k)
	if err != nil {
		return nil, err
	}
	view, err := viewSibling(v)
	if err != nil {
		return nil, err
	}
	view.VTag, view.LastModified = obj.Siblings[latest].VTag, obj.Siblings[latest].LastModified
	out := *obj
	out.Siblings = make([]core.Sibling, 0, len(obj.Siblings))
	for i := range obj.Siblings {
		sib := &obj.Siblings[i]
		switch {
		case i == first:
			out.Siblings = append(out.Siblings, view)
		case sib.Deleted || sib.ContentType != ct:
			out.Siblings = append(out.Siblings, *sib)
		}
	}
	return &out, nil
}

// HookView returns obj as extensions see it: the data-type view (see DatatypeMetaName)
// for an object of a datatype bucket, any other object as it is (nil stays nil).
// MapReduce hands its map and link phases what this returns.
func (s *Service) HookView(ctx context.Context, obj *core.Object) (*core.Object, error) {
	if obj == nil || !hasDatatypeSibling(obj) {
		return obj, nil
	}
	p, err := s.Props(ctx, obj.Type, obj.Bucket)
	if err != nil {
		return nil, fmt.Errorf("kv: view of %s/%s: %w", obj.Bucket, obj.Key, err)
	}
	k, ok := datatype.BucketKind(p.Datatype)
	if !ok {
		return obj, nil
	}
	return datatypeView(obj, k)
}

// hasDatatypeSibling reports whether a sibling of obj has a data type's content type.
func hasDatatypeSibling(obj *core.Object) bool {
	for i := range obj.Siblings {
		if strings.HasPrefix(obj.Siblings[i].ContentType, datatypeCTPrefix) {
			return true
		}
	}
	return false
}

// errViewChanged says what a precommit replacement changed in a data-type view.
var errViewChanged = errors.New("a precommit hook may accept or reject a data type update, not change it")

// sameView returns the replaceFunc of updates of kind k: a replacement is accepted only
// when it is the view the hook was given — the same value (as JSON: formatting and key
// order aside), content type and user metadata, and no links, indexes or encoding. It
// returns orig, since what is stored is the data type, not its view.
func sameView(k datatype.Kind) replaceFunc {
	return func(r *core.Object, orig core.Sibling) (core.Sibling, error) {
		if what := viewChange(r, orig); what != "" {
			return orig, fmt.Errorf("%s of the %s it was given: %w", what, k, errViewChanged)
		}
		return orig, nil
	}
}

// viewChange says what replacement r changed in the view orig, "" for nothing.
func viewChange(r *core.Object, orig core.Sibling) string {
	switch {
	case len(r.Siblings) != 1:
		return fmt.Sprintf("returned %d values instead", len(r.Siblings))
	case !sameJSON(r.Siblings[0].Value, orig.Value):
		return "changed the value"
	case !strings.EqualFold(r.Siblings[0].ContentType, orig.ContentType) || r.Siblings[0].Encoding != "":
		return "changed the content type"
	case !sameMeta(r.Siblings[0].Meta, orig.Meta):
		return "changed the metadata"
	case len(r.Siblings[0].Links) > 0 || len(r.Siblings[0].Indexes) > 0:
		return "added links or index entries"
	}
	return ""
}

// sameJSON reports whether a and b are the same JSON value; numbers are compared as
// written, so a value rounded by a float conversion is a change.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, oka := decodeJSONNumbers(a)
	vb, okb := decodeJSONNumbers(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

// decodeJSONNumbers decodes one JSON value with numbers kept as written.
func decodeJSONNumbers(b []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// sameMeta reports whether two user-metadata lists hold the same entries, names
// compared without regard to case (they are header names).
func sameMeta(a, b []core.MetaEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i].Name, b[i].Name) || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// postcommitView returns the object postcommit hooks of a data-type update see; when
// the view cannot be made (a corrupt sibling kept beside the new value), the hooks are
// skipped, counted as failures and logged, and nil is returned.
func (s *Service) postcommitView(p *core.BucketProps, obj *core.Object, k datatype.Kind) *core.Object {
	if len(p.Postcommit) == 0 || s.cfg.Hooks == nil {
		return obj
	}
	view, err := datatypeView(obj, k)
	if err != nil {
		for range p.Postcommit {
			s.postcommitFailed()
		}
		s.log.Warn("postcommit hooks skipped: no data-type view", "bucket", obj.Bucket, "key", obj.Key, "err", err)
		return nil
	}
	return view
}
