package wasmhost

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cairnkv/cairn/core/hooks"
)

// numKinds is the number of hooks.CallErrorKind values.
const numKinds = int(hooks.Unavailable) + 1

// moduleStats are the counters of one module name; they survive replacements.
type moduleStats struct {
	calls      atomic.Int64
	failures   [numKinds]atomic.Int64
	live       atomic.Int64
	idle       atomic.Int64
	created    atomic.Int64
	maxLive    atomic.Int64
	logDropped atomic.Int64
}

// instanceCreated counts a new instance; live is its pool's count including it.
func (s *moduleStats) instanceCreated(live int) {
	s.created.Add(1)
	s.live.Add(1)
	for {
		m := s.maxLive.Load()
		if int64(live) <= m || s.maxLive.CompareAndSwap(m, int64(live)) {
			return
		}
	}
}

// failed counts err when it is a call error.
func (s *moduleStats) failed(err error) {
	var ce *hooks.CallError
	if errors.As(err, &ce) && int(ce.Kind) >= 0 && int(ce.Kind) < numKinds {
		s.failures[ce.Kind].Add(1)
	}
}

// Stats are the host's counters.
type Stats struct {
	// Modules has one entry per installed module, sorted by name.
	Modules []ModuleStats
}

// ModuleStats are the counters of one module name, kept across replacements.
type ModuleStats struct {
	Name string
	// Calls counts the calls that reached the module.
	Calls int64
	// Failures counts failed calls by kind; a status 2 handed back by Call counts as
	// hooks.Failed. Only kinds that occurred are present.
	Failures map[hooks.CallErrorKind]int64
	// Live and Idle count instances now (Live includes Idle; while a replaced version
	// drains, both versions count).
	Live, Idle int64
	// Created counts the instances ever created; MaxLive is the most alive at once in
	// one version's pool.
	Created, MaxLive int64
	// LogBytesDropped counts guest log bytes dropped over the per-call cap.
	LogBytesDropped int64
}

// Stats returns the counters of every installed module.
func (h *Host) Stats() Stats {
	h.mu.RLock()
	out := Stats{Modules: make([]ModuleStats, 0, len(h.modules))}
	for name := range h.modules {
		s := h.stats[name]
		if s == nil {
			continue
		}
		m := ModuleStats{
			Name: name, Calls: s.calls.Load(), Failures: map[hooks.CallErrorKind]int64{},
			Live: s.live.Load(), Idle: s.idle.Load(), Created: s.created.Load(), MaxLive: s.maxLive.Load(),
			LogBytesDropped: s.logDropped.Load(),
		}
		for k := range s.failures {
			if n := s.failures[k].Load(); n > 0 {
				m.Failures[hooks.CallErrorKind(k)] = n
			}
		}
		out.Modules = append(out.Modules, m)
	}
	h.mu.RUnlock()
	slices.SortFunc(out.Modules, func(a, b ModuleStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}
