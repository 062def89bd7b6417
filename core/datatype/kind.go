package datatype

// Kind names a data type.
type Kind uint8

// The kinds. Counter, Set, Map, HLL and GSet are bucket-level types (a bucket type's
// datatype property); Register and Flag exist only embedded in a map.
const (
	Counter Kind = iota + 1
	Set
	Map
	HLL
	GSet
	Register
	Flag
)

// kindNames are the names Riak uses for each kind: in the datatype bucket property, in
// the "type" of a fetch response and as the suffix of a map field name.
var kindNames = [...]string{
	Counter:  "counter",
	Set:      "set",
	Map:      "map",
	HLL:      "hll",
	GSet:     "gset",
	Register: "register",
	Flag:     "flag",
}

// String returns Riak's name of k ("counter", "set", ...), or "" for an unknown kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return ""
}

// BucketKind returns the kind a bucket type's datatype property names (counter, set,
// map, hll, gset); ok is false for any other string.
func BucketKind(s string) (k Kind, ok bool) {
	for _, c := range []Kind{Counter, Set, Map, HLL, GSet} {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}

// fieldKind returns the kind a map field name's suffix names (counter, set, register,
// flag, map).
func fieldKind(s string) (Kind, bool) {
	for _, c := range []Kind{Counter, Set, Register, Flag, Map} {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}

// riakModule is the riak_dt module of an embedded kind, as Riak prints a map field in a
// precondition error ({<<"name">>,riak_dt_emcntr}).
func riakModule(k Kind) string {
	switch k {
	case Counter:
		return "riak_dt_emcntr"
	case Set:
		return "riak_dt_orswot"
	case Register:
		return "riak_dt_lwwreg"
	case Flag:
		return "riak_dt_od_flag"
	default:
		return "riak_dt_map"
	}
}
