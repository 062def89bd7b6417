package kv

import (
	"bytes"
	"encoding/json"
	"fmt"
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
		core.PropNVal:          json.RawMessage(`3`),
		core.PropAllowMult:     json.RawMessage(`false`),
		core.PropLastWriteWins: json.RawMessage(`false`),
		core.PropDVVEnabled:    json.RawMessage(`false`),
		core.PropPrecommit:     json.RawMessage(`[]`),
		core.PropPostcommit:    json.RawMessage(`[]`),
		core.PropChashKeyfun:   json.RawMessage(`{"mod":"` + s.cfg.Dialect + `_core_util","fun":"chash_std_keyfun"}`),
		core.PropLinkfun:       json.RawMessage(`{"mod":"` + s.cfg.Dialect + `_kv_wm_link_walker","fun":"mapreduce_linkfun"}`),
		core.PropOldVclock:     json.RawMessage(`86400`),
		core.PropYoungVclock:   json.RawMessage(`20`),
		core.PropBigVclock:     json.RawMessage(`50`),
		core.PropSmallVclock:   json.RawMessage(`50`),
		core.PropR:             json.RawMessage(`"quorum"`),
		core.PropW:             json.RawMessage(`"quorum"`),
		core.PropDW:            json.RawMessage(`"quorum"`),
		core.PropRW:            json.RawMessage(`"quorum"`),
		core.PropPR:            json.RawMessage(`0`),
		core.PropPW:            json.RawMessage(`0`),
		core.PropBasicQuorum:   json.RawMessage(`false`),
		core.PropNotfoundOK:    json.RawMessage(`true`),
		core.PropWriteOnce:     json.RawMessage(`false`),
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

var posIntProps = map[string]bool{
	core.PropNVal: true, core.PropBigVclock: true, core.PropOldVclock: true, core.PropSmallVclock: true,
}

// quorum props: the value is whether 0 is allowed.
var quorumProps = map[string]bool{
	core.PropR: false, core.PropW: false, core.PropRW: false,
	core.PropDW: true, core.PropPR: true, core.PropPW: true,
}

// validateChanges checks and normalises the properties a client sets. It returns the
// normalised values to store and, for every bad property, the reference system's reason.
// current are the effective properties before the change (for cross-property rules).
func validateChanges(changes map[string]json.RawMessage, current map[string]json.RawMessage) (map[string]json.RawMessage, map[string]string) {
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
		case posIntProps[name]:
			n, ok := jsonInt(raw)
			if !ok || n <= 0 {
				reasons[name] = "not_integer"
				continue
			}
			out[name] = json.RawMessage(strconv.FormatInt(n, 10))
		case name == core.PropYoungVclock:
			out[name] = raw // not validated by the reference system
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
	return out, reasons
}

func isQuorumProp(name string) bool { _, ok := quorumProps[name]; return ok }

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

// typedProps derives the typed view from stored-form properties.
func typedProps(name string, raw map[string]json.RawMessage) *core.BucketProps {
	p := &core.BucketProps{Name: name, Raw: raw}
	nameJSON, _ := json.Marshal(name)
	raw[core.PropName] = nameJSON
	intOr := func(k string, def int) int {
		if n, ok := jsonInt(raw[k]); ok {
			return int(n)
		}
		return def
	}
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
