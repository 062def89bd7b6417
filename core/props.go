package core

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// HookSpec names an extension function in bucket properties. The reference forms are
// {"mod": M, "fun": F} (a module function) and {"name": N} (a JavaScript function). Raw
// keeps the element exactly as the client sent it so that it is returned unchanged.
type HookSpec struct {
	Mod  string
	Fun  string
	Name string
	Raw  json.RawMessage
}

// MarshalJSON returns Raw when set, otherwise the canonical {"mod","fun"} or {"name"} form.
func (h HookSpec) MarshalJSON() ([]byte, error) {
	if len(h.Raw) > 0 {
		return h.Raw, nil
	}
	if h.Name != "" {
		return json.Marshal(map[string]string{"name": h.Name})
	}
	return json.Marshal(struct {
		Mod string `json:"mod"`
		Fun string `json:"fun"`
	}{h.Mod, h.Fun})
}

// Quorum is a quorum setting: a non-negative integer or one of the words "one",
// "quorum", "all" ("default" is accepted only in query parameters).
type Quorum struct {
	Word string // "", "one", "quorum", "all" or "default"
	N    int    // used when Word is ""
}

// Quorum words.
var (
	QuorumOne     = Quorum{Word: "one"}
	QuorumQuorum  = Quorum{Word: "quorum"}
	QuorumAll     = Quorum{Word: "all"}
	QuorumDefault = Quorum{Word: "default"}
)

// ParseQuorum parses an integer or a quorum word (case-insensitive). ok is false for
// anything else.
func ParseQuorum(s string) (q Quorum, ok bool) {
	switch w := strings.ToLower(s); w {
	case "one", "quorum", "all", "default":
		return Quorum{Word: w}, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return Quorum{}, false
	}
	return Quorum{N: n}, true
}

// Resolve returns the number of replicas q asks for with n replicas; "default" resolves
// through def (the bucket's setting).
func (q Quorum) Resolve(n int, def Quorum) int {
	switch q.Word {
	case "one":
		return 1
	case "quorum":
		return n/2 + 1
	case "all":
		return n
	case "default":
		if def.Word == "default" {
			return n/2 + 1
		}
		return def.Resolve(n, QuorumQuorum)
	}
	return q.N
}

// String returns the word or the decimal integer.
func (q Quorum) String() string {
	if q.Word != "" {
		return q.Word
	}
	return strconv.Itoa(q.N)
}

// MarshalJSON writes a word as a JSON string and an integer as a JSON number.
func (q Quorum) MarshalJSON() ([]byte, error) {
	if q.Word != "" {
		return json.Marshal(q.Word)
	}
	return []byte(strconv.Itoa(q.N)), nil
}

// Names of the bucket properties Cairn interprets. Any other property is stored and
// returned unchanged.
const (
	PropName          = "name"
	PropNVal          = "n_val"
	PropAllowMult     = "allow_mult"
	PropLastWriteWins = "last_write_wins"
	PropDVVEnabled    = "dvv_enabled"
	PropPrecommit     = "precommit"
	PropPostcommit    = "postcommit"
	PropChashKeyfun   = "chash_keyfun"
	PropLinkfun       = "linkfun"
	PropOldVclock     = "old_vclock"
	PropYoungVclock   = "young_vclock"
	PropBigVclock     = "big_vclock"
	PropSmallVclock   = "small_vclock"
	PropR             = "r"
	PropW             = "w"
	PropDW            = "dw"
	PropRW            = "rw"
	PropPR            = "pr"
	PropPW            = "pw"
	PropBasicQuorum   = "basic_quorum"
	PropNotfoundOK    = "notfound_ok"
	PropWriteOnce     = "write_once"
	// PropDatatype makes a bucket type hold convergent data types (counter, set, map,
	// hll, gset); it is set when the type is created and never changes.
	PropDatatype = "datatype"
	// The object guards (Riak's max_siblings, warn_siblings, max_object_size and
	// warn_object_size, which Cairn keeps per bucket).
	PropMaxSiblings    = "max_siblings"
	PropWarnSiblings   = "warn_siblings"
	PropMaxObjectSize  = "max_object_size"
	PropWarnObjectSize = "warn_object_size"
	// PropTTL is the time to live, in seconds, of the objects written to the bucket
	// without a TTL header of their own (0 or absent: they never expire).
	PropTTL = "ttl"
)

// BucketProps are the properties of a bucket after validation. Raw holds every property
// (interpreted or not) in its stored JSON form; the typed fields are derived from it.
type BucketProps struct {
	Name          string
	NVal          int
	AllowMult     bool
	LastWriteWins bool
	DVVEnabled    bool
	Precommit     []HookSpec
	Postcommit    []HookSpec
	ChashKeyfun   *HookSpec
	Linkfun       *HookSpec
	OldVclock     int // seconds
	YoungVclock   int // seconds
	BigVclock     int
	SmallVclock   int
	R, W, DW, RW  Quorum
	PR, PW        Quorum
	BasicQuorum   bool
	NotfoundOK    bool
	WriteOnce     bool
	// Datatype is the data type the bucket holds ("" for plain objects).
	Datatype string
	// MaxSiblings and MaxObjectSize refuse a write that would leave an object with more
	// siblings, or more bytes over all its siblings, than this (unless it has no more
	// than before); WarnSiblings and WarnObjectSize log a warning above theirs.
	MaxSiblings, WarnSiblings     int
	MaxObjectSize, WarnObjectSize int64
	// TTL is the time to live of the bucket's objects in seconds (0: none).
	TTL int

	// Raw maps each property name to its JSON value as stored and returned.
	Raw map[string]json.RawMessage
}

// MarshalJSON writes Raw as one JSON object with sorted keys.
func (p *BucketProps) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(p.Raw))
	for k := range p.Raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(p.Raw[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
