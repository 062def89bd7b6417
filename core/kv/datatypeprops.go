package kv

import (
	"encoding/json"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
)

// Riak's reasons (riak_kv_bucket) for refused datatype properties.
const (
	reasonDatatypeAllowMult  = "Data Type buckets must be allow_mult=true"
	reasonDatatypeAdd        = "Cannot add datatype to existing bucket"
	reasonDatatypeUpdate     = "Cannot update datatype on existing bucket"
	reasonDatatypeMultUpdate = "Cannot change datatype bucket from allow_mult=true"
)

// checkDatatype applies Riak's rules for the datatype property to the validated changes
// out against the current (effective) properties: when a type is created, the datatype
// must name a bucket-level type (counter, set, map, hll, gset) and allow_mult must end
// true; afterwards the datatype can neither be added, changed nor removed, and a datatype
// bucket's allow_mult cannot become false. Refusals go to reasons.
func checkDatatype(out, current map[string]json.RawMessage, creating bool, reasons map[string]string) {
	raw, set := out[core.PropDatatype]
	existing := storedDatatype(current)
	if set {
		delete(out, core.PropDatatype)
		name, ok := datatypeName(raw)
		switch {
		case !ok:
			reasons[core.PropDatatype] = shorten(raw) + " not supported for bucket datatype property"
		case creating:
			out[core.PropDatatype], _ = json.Marshal(name)
		case existing == "":
			reasons[core.PropDatatype] = reasonDatatypeAdd
		case existing != name:
			reasons[core.PropDatatype] = reasonDatatypeUpdate
		default:
			out[core.PropDatatype], _ = json.Marshal(name)
		}
	}
	if !set && (creating || existing == "") {
		return
	}
	if lookupBool(out, current, core.PropAllowMult) {
		return
	}
	if creating {
		reasons[core.PropAllowMult] = reasonDatatypeAllowMult
	} else if existing != "" {
		reasons[core.PropAllowMult] = reasonDatatypeMultUpdate
	}
}

// datatypeName returns the bucket-level type a datatype property value names.
func datatypeName(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	if _, ok := datatype.BucketKind(strings.TrimSpace(s)); !ok {
		return "", false
	}
	return strings.TrimSpace(s), true
}

// storedDatatype returns the datatype of stored properties ("" when none or not valid).
func storedDatatype(raw map[string]json.RawMessage) string {
	if v, ok := raw[core.PropDatatype]; ok {
		if name, ok := datatypeName(v); ok {
			return name
		}
	}
	return ""
}
