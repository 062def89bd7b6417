package kv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/vclock"
)

// propsDefaults returns the stored-form defaults of a bucket of the given type, in the
// server's dialect (which names the stock chash_keyfun and linkfun modules).
func (s *Service) propsDefaults(typ string) map[string]json.RawMessage {
	d := map[string]json.RawMessage{
		core.PropNVal:           json.RawMessage(`3`),
		core.PropAllowMult:      json.RawMessage(`false`),
		core.PropLastWriteWins:  json.RawMessage(`false`),
		core.PropDVVEnabled:     json.RawMessage(`false`),
		core.PropPrecommit:      json.RawMessage(`[]`),
		core.PropPostcommit:     json.RawMessage(`[]`),
		core.PropChashKeyfun:    json.RawMessage(`{"mod":"` + s.cfg.Dialect + `_core_util","fun":"chash_std_keyfun"}`),
		core.PropLinkfun:        json.RawMessage(`{"mod":"` + s.cfg.Dialect + `_kv_wm_link_walker","fun":"mapreduce_linkfun"}`),
		core.PropOldVclock:      json.RawMessage(`86400`),
		core.PropYoungVclock:    json.RawMessage(`20`),
		core.PropBigVclock:      json.RawMessage(`50`),
		core.PropSmallVclock:    json.RawMessage(`50`),
		core.PropR:              json.RawMessage(`"quorum"`),
		core.PropW:              json.RawMessage(`"quorum"`),
		core.PropDW:             json.RawMessage(`"quorum"`),
		core.PropRW:             json.RawMessage(`"quorum"`),
		core.PropPR:             json.RawMessage(`0`),
		core.PropPW:             json.RawMessage(`0`),
		core.PropBasicQuorum:    json.RawMessage(`false`),
		core.PropNotfoundOK:     json.RawMessage(`true`),
		core.PropWriteOnce:      json.RawMessage(`false`),
		core.PropMaxSiblings:    json.RawMessage(strconv.Itoa(DefaultMaxSiblings)),
		core.PropWarnSiblings:   json.RawMessage(strconv.Itoa(DefaultWarnSiblings)),
		core.PropMaxObjectSize:  json.RawMessage(strconv.FormatInt(s.maxObjectSize(), 10)),
		core.PropWarnObjectSize: json.RawMessage(strconv.Itoa(DefaultWarnObjectSize)),
	}
	if typ != core.DefaultType {
		d[core.PropAllowMult] = json.RawMessage(`true`)
		d[core.PropDVVEnabled] = json.RawMessage(`true`)
		d["active"] = json.RawMessage(`true`)
		name, _ := json.Marshal(s.cfg.NodeName)
		d["claimant"] = name
	}
	return d
}

var boolProps = map[string]bool{
	core.PropAllowMult: true, core.PropBasicQuorum: true, core.PropLastWriteWins: true,
	core.PropNotfoundOK: true, "stat_tracked": true, core.PropDVVEnabled: true,
}

// Defaults and bounds of the numeric bucket properties (docs/kv-http.md lists them).
const (
	// DefaultMaxSiblings and DefaultWarnSiblings are Riak's max_siblings (a write that
	// would leave more siblings is refused) and warn_siblings (more are logged).
	DefaultMaxSiblings  = 100
	DefaultWarnSiblings = 25
	// DefaultMaxObjectSize and DefaultWarnObjectSize are Riak's max_object_size and
	// warn_object_size, in bytes. A service whose MaxValueSize is larger takes that as
	// the default and the largest accepted max_object_size (maxObjectSize).
	DefaultMaxObjectSize  = 50 << 20
	DefaultWarnObjectSize = 5 << 20
	// MaxSiblingsLimit is the largest max_siblings or warn_siblings a bucket may set.
	MaxSiblingsLimit = 10_000
	// MaxVclockAge is the largest old_vclock or young_vclock, in seconds (2^31−1: 68
	// years, far below where a time.Duration of that many seconds would overflow).
	MaxVclockAge = 1<<31 - 1
)

// intRange is the accepted range of an integer property.
type intRange struct{ min, max int64 }

// intRange returns the range of an integer property; ok is false for any other
// property. n_val goes up to RingSize: a preference list of more partitions than the
// ring has would repeat them. A clock never keeps more than vclock.MaxStoredEntries
// entries, so small_vclock and big_vclock stop there.
func (s *Service) intRange(name string) (r intRange, ok bool) {
	switch name {
	case core.PropNVal:
		return intRange{1, RingSize}, true
	case core.PropSmallVclock, core.PropBigVclock:
		return intRange{1, vclock.MaxStoredEntries}, true
	case core.PropOldVclock:
		return intRange{1, MaxVclockAge}, true
	case core.PropYoungVclock:
		return intRange{0, MaxVclockAge}, true
	case core.PropMaxSiblings, core.PropWarnSiblings:
		return intRange{1, MaxSiblingsLimit}, true
	case core.PropMaxObjectSize, core.PropWarnObjectSize:
		return intRange{1, s.maxObjectSize()}, true
	case core.PropTTL:
		return intRange{0, MaxTTLSeconds}, true
	}
	return intRange{}, false
}

// maxObjectSize is the default and the largest max_object_size: Riak's 50 MiB, or the
// service's MaxValueSize when that is larger, so that a bucket can always hold a value
// of the size the server takes, and never be made to hold much more.
func (s *Service) maxObjectSize() int64 { return max(DefaultMaxObjectSize, s.cfg.MaxValueSize) }

// checkInt validates an integer property's stored-form value: "" when it is fine,
// otherwise the reason. Below the range is Riak's not_integer (its reason for any
// integer property that is not positive); above it, out_of_range with the range.
func (s *Service) checkInt(name string, raw json.RawMessage) string {
	r, _ := s.intRange(name)
	n, ok := jsonInt(raw)
	switch {
	case !ok || n < r.min:
		return "not_integer"
	case n > r.max:
		return fmt.Sprintf("out_of_range: %s must be an integer from %d to %d", name, r.min, r.max)
	}
	return ""
}

// storedInt returns an integer property of stored-form props for the typed view: def
// when it is absent or not an integer, otherwise clamped to its range. A value stored
// before it was validated (an n_val of 10^12 written by an older build) thus never
// reaches the code that sizes things by it; `cairn check` reports it.
func (s *Service) storedInt(raw map[string]json.RawMessage, name string, def int64) int64 {
	n, ok := jsonInt(raw[name])
	if !ok {
		return def
	}
	r, _ := s.intRange(name)
	return min(max(n, r.min), r.max)
}

// quorum props: the value is whether 0 is allowed.
var quorumProps = map[string]bool{
	core.PropR: false, core.PropW: false, core.PropRW: false,
	core.PropDW: true, core.PropPR: true, core.PropPW: true,
}

// quorumNames lists the quorum properties in the order their reasons are reported.
var quorumNames = []string{core.PropR, core.PropW, core.PropDW, core.PropRW, core.PropPR, core.PropPW}

// validateChanges checks and normalises the properties a client sets. It returns the
// normalised values to store and, for every bad property, the reference system's reason.
// current are the effective properties before the change (for cross-property rules).
func (s *Service) validateChanges(changes map[string]json.RawMessage, current map[string]json.RawMessage) (map[string]json.RawMessage, map[string]string) {
	out := make(map[string]json.RawMessage, len(changes))
	reasons := map[string]string{}
	for name, raw := range changes {
		raw = bytes.TrimSpace(raw)
		switch {
		case name == core.PropName:
			continue // derived from the URL; a round-tripped value is accepted and ignored
		case boolProps[name]:
			b, ok := coerceBool(raw)
			if !ok {
				reasons[name] = "not_boolean"
				continue
			}
			out[name] = json.RawMessage(strconv.FormatBool(b))
		case s.isIntProp(name):
			if reason := s.checkInt(name, raw); reason != "" {
				reasons[name] = reason
				continue
			}
			n, _ := jsonInt(raw)
			out[name] = json.RawMessage(strconv.FormatInt(n, 10))
		case isQuorumProp(name):
			q, ok := parseQuorumProp(raw, quorumProps[name])
			if !ok {
				reasons[name] = "not_valid_quorum"
				continue
			}
			b, _ := q.MarshalJSON()
			out[name] = b
		case name == core.PropWriteOnce || name == "consistent":
			b, ok := coerceBool(raw)
			if !ok || b {
				reasons[name] = "cannot update " + name + " property"
				continue
			}
			out[name] = json.RawMessage(`false`)
		case name == core.PropPrecommit || name == core.PropPostcommit:
			hooks, err := parseHookList(raw)
			if err != nil {
				reasons[name] = err.Error()
				continue
			}
			b, _ := json.Marshal(hooks)
			out[name] = b
		case name == core.PropChashKeyfun:
			h, err := parseModFun(raw)
			if err != nil {
				reasons[name] = err.Error()
				continue
			}
			out[name] = h.Raw
		case name == core.PropLinkfun:
			h, err := parseLinkfun(raw)
			if err != nil {
				reasons[name] = err.Error()
				continue
			}
			out[name] = h.Raw
		default:
			if !json.Valid(raw) {
				reasons[name] = "not_json"
				continue
			}
			out[name] = raw
		}
	}
	lww := lookupBool(out, current, core.PropLastWriteWins)
	dvv := lookupBool(out, current, core.PropDVVEnabled)
	if lww && dvv {
		if _, set := changes[core.PropLastWriteWins]; set || changes[core.PropDVVEnabled] != nil {
			reasons[core.PropDVVEnabled] = "If last_write_wins is true, dvv_enabled must be false"
		}
	}
	s.checkQuorumsWithinNVal(out, current, reasons)
	return out, reasons
}

// checkQuorumsWithinNVal refuses an integer quorum above the n_val the change leaves: as
// Riak documents it, an integer quorum must not exceed n_val. The reason goes to the
// quorum when the change sets it, otherwise to the n_val the change lowers below it.
func (s *Service) checkQuorumsWithinNVal(out, current map[string]json.RawMessage, reasons map[string]string) {
	merged := func(name string) (json.RawMessage, bool) {
		if raw, ok := out[name]; ok {
			return raw, true
		}
		return current[name], false
	}
	nRaw, nChanged := merged(core.PropNVal)
	nval := s.storedInt(map[string]json.RawMessage{core.PropNVal: nRaw}, core.PropNVal, 3)
	for _, name := range quorumNames {
		raw, changed := merged(name)
		q, ok := parseQuorumProp(raw, true)
		if !ok || q.Word != "" || int64(q.N) <= nval {
			continue
		}
		switch {
		case changed:
			reasons[name] = fmt.Sprintf("not_valid_quorum: %d is above n_val %d", q.N, nval)
		case nChanged && reasons[core.PropNVal] == "":
			reasons[core.PropNVal] = fmt.Sprintf("out_of_range: n_val %d is below the %s quorum of %d", nval, name, q.N)
		}
	}
}

// propProblems lists what is wrong with a stored property record (a bucket's or a
// type's own settings, own) given the effective properties it belongs to: integers out
// of their range, quorums that are not valid, and integer quorums above n_val. The write
// path never stores these; an older build, which validated less, may have.
func (s *Service) propProblems(own, effective map[string]json.RawMessage) []string {
	var out []string
	for _, name := range sortedKeys(own) {
		if !s.isIntProp(name) {
			continue
		}
		if reason := s.checkInt(name, own[name]); reason != "" {
			out = append(out, fmt.Sprintf("%s is %s: %s", name, shorten(own[name]), reason))
		}
	}
	nval := s.storedInt(effective, core.PropNVal, 3)
	for _, name := range quorumNames {
		raw, set := own[name]
		if !set {
			continue
		}
		q, ok := parseQuorumProp(raw, quorumProps[name])
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is %s: not_valid_quorum", name, shorten(raw)))
		case q.Word == "" && int64(q.N) > nval:
			out = append(out, fmt.Sprintf("%s is %d, above n_val %d", name, q.N, nval))
		}
	}
	return out
}

// shorten returns a stored value for a report line, cut after 64 bytes.
func shorten(raw json.RawMessage) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func isQuorumProp(name string) bool { _, ok := quorumProps[name]; return ok }

// isIntProp reports whether name is an integer property (one with a range).
func (s *Service) isIntProp(name string) bool { _, ok := s.intRange(name); return ok }

func lookupBool(a, b map[string]json.RawMessage, name string) bool {
	raw, ok := a[name]
	if !ok {
		raw = b[name]
	}
	v, _ := coerceBool(raw)
	return v
}

// coerceBool accepts JSON booleans, the strings "true"/"false" in any case, and
// integers (> 0 is true), as the reference system does.
func coerceBool(raw json.RawMessage) (bool, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, false
	}
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(x) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	case float64:
		if x == float64(int64(x)) {
			return x > 0, true
		}
	}
	return false, false
}

// jsonInt accepts a JSON integer (not a string, not a fraction).
func jsonInt(raw json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

func parseQuorumProp(raw json.RawMessage, zeroOK bool) (core.Quorum, bool) {
	if n, ok := jsonInt(raw); ok {
		if n < 0 || (n == 0 && !zeroOK) || n > 1<<20 {
			return core.Quorum{}, false
		}
		return core.Quorum{N: int(n)}, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return core.Quorum{}, false
	}
	switch s {
	case "one", "quorum", "all":
		return core.Quorum{Word: s}, true
	}
	return core.Quorum{}, false
}

// parseHookList accepts an array of hook specs, or the string "none" (an empty list).
func parseHookList(raw json.RawMessage) ([]core.HookSpec, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil && s == "none" {
		return []core.HookSpec{}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("not_list")
	}
	out := make([]core.HookSpec, 0, len(elems))
	for _, e := range elems {
		h, err := parseHook(e)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// parseHook accepts {"mod": M, "fun": F} or {"name": N}.
func parseHook(raw json.RawMessage) (core.HookSpec, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return core.HookSpec{}, fmt.Errorf("not_hook: each hook must be {\"mod\":M,\"fun\":F} or {\"name\":N}")
	}
	if name, ok := m["name"]; ok {
		var n string
		if json.Unmarshal(name, &n) != nil || n == "" {
			return core.HookSpec{}, fmt.Errorf("not_hook: \"name\" must be a non-empty string")
		}
		return core.HookSpec{Name: n, Raw: compact(raw)}, nil
	}
	return parseModFun(raw)
}

func parseModFun(raw json.RawMessage) (core.HookSpec, error) {
	var mf struct {
		Mod *string `json:"mod"`
		Fun *string `json:"fun"`
	}
	if err := json.Unmarshal(raw, &mf); err != nil || mf.Mod == nil || mf.Fun == nil || *mf.Mod == "" || *mf.Fun == "" {
		return core.HookSpec{}, fmt.Errorf("not_modfun: must be {\"mod\":M,\"fun\":F} with non-empty strings")
	}
	return core.HookSpec{Mod: *mf.Mod, Fun: *mf.Fun, Raw: compact(raw)}, nil
}

// parseLinkfun accepts {"mod","fun"} and the reference's JavaScript forms {"jsfun": N},
// {"jsanon": SRC} and {"jsanon": {"bucket": B, "key": K}}.
func parseLinkfun(raw json.RawMessage) (core.HookSpec, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		if v, ok := m["jsfun"]; ok {
			var n string
			if json.Unmarshal(v, &n) != nil || n == "" {
				return core.HookSpec{}, fmt.Errorf("not_linkfun: \"jsfun\" must be a function name")
			}
			return core.HookSpec{Name: n, Raw: compact(raw)}, nil
		}
		if _, ok := m["jsanon"]; ok {
			return core.HookSpec{Raw: compact(raw)}, nil
		}
	}
	return parseModFun(raw)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// typedProps derives the typed view from stored-form properties. Integers are clamped
// to their ranges (storedInt), whatever an older build stored.
func (s *Service) typedProps(name string, raw map[string]json.RawMessage) *core.BucketProps {
	p := &core.BucketProps{Name: name, Raw: raw}
	nameJSON, _ := json.Marshal(name)
	raw[core.PropName] = nameJSON
	intOr := func(k string, def int) int { return int(s.storedInt(raw, k, int64(def))) }
	boolOf := func(k string) bool { b, _ := coerceBool(raw[k]); return b }
	quorumOf := func(k string, def core.Quorum) core.Quorum {
		if q, ok := parseQuorumProp(raw[k], true); ok {
			return q
		}
		return def
	}
	p.NVal = intOr(core.PropNVal, 3)
	p.AllowMult = boolOf(core.PropAllowMult)
	p.LastWriteWins = boolOf(core.PropLastWriteWins)
	p.DVVEnabled = boolOf(core.PropDVVEnabled)
	p.OldVclock = intOr(core.PropOldVclock, 86400)
	p.YoungVclock = intOr(core.PropYoungVclock, 20)
	p.BigVclock = intOr(core.PropBigVclock, 50)
	p.SmallVclock = intOr(core.PropSmallVclock, 50)
	p.R = quorumOf(core.PropR, core.QuorumQuorum)
	p.W = quorumOf(core.PropW, core.QuorumQuorum)
	p.DW = quorumOf(core.PropDW, core.QuorumQuorum)
	p.RW = quorumOf(core.PropRW, core.QuorumQuorum)
	p.PR = quorumOf(core.PropPR, core.Quorum{})
	p.PW = quorumOf(core.PropPW, core.Quorum{})
	p.BasicQuorum = boolOf(core.PropBasicQuorum)
	p.NotfoundOK = boolOf(core.PropNotfoundOK)
	p.WriteOnce = boolOf(core.PropWriteOnce)
	p.Datatype = storedDatatype(raw)
	p.MaxSiblings = intOr(core.PropMaxSiblings, DefaultMaxSiblings)
	p.WarnSiblings = intOr(core.PropWarnSiblings, DefaultWarnSiblings)
	p.MaxObjectSize = s.storedInt(raw, core.PropMaxObjectSize, s.maxObjectSize())
	p.WarnObjectSize = s.storedInt(raw, core.PropWarnObjectSize, DefaultWarnObjectSize)
	p.TTL = intOr(core.PropTTL, 0)
	p.Precommit, _ = parseHookList(raw[core.PropPrecommit])
	p.Postcommit, _ = parseHookList(raw[core.PropPostcommit])
	if h, err := parseModFun(raw[core.PropChashKeyfun]); err == nil {
		p.ChashKeyfun = &h
	}
	if h, err := parseLinkfun(raw[core.PropLinkfun]); err == nil {
		p.Linkfun = &h
	}
	return p
}

// pruneOptions returns the clock-pruning settings of a bucket.
func (s *Service) pruneOptions(p *core.BucketProps) vclock.PruneOptions {
	return vclock.PruneOptions{Keep: s.nodeID,
		Small: p.SmallVclock, Big: p.BigVclock,
		Young: time.Duration(p.YoungVclock) * time.Second,
		Old:   time.Duration(p.OldVclock) * time.Second,
	}
}
