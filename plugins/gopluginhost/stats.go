package gopluginhost

import (
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// numKinds is the number of hooks.CallErrorKind values.
const numKinds = int(hooks.Unavailable) + 1

// pluginStats are the counters of one plugin, across its processes.
type pluginStats struct {
	calls         atomic.Int64
	failures      [numKinds]atomic.Int64
	starts        atomic.Int64
	restarts      atomic.Int64
	startFailures atomic.Int64
	crashes       atomic.Int64
	hangs         atomic.Int64
	breakerOpens  atomic.Int64
}

// failed counts a failure of kind k.
func (s *pluginStats) failed(k hooks.CallErrorKind) {
	if int(k) >= 0 && int(k) < numKinds {
		s.failures[k].Add(1)
	}
}

// Stats are the host's counters.
type Stats struct {
	// Plugins has one entry per configured plugin, sorted by name.
	Plugins []PluginStats
}

// PluginStats are the state and counters of one plugin, kept across its restarts.
type PluginStats struct {
	Name  string
	State State
	// PID is the process id of the running process; 0 when the plugin is not up.
	PID int
	// Starts counts successful starts; Restarts those after the first.
	Starts, Restarts int64
	// StartFailures counts starts that failed; Crashes counts exits of a running
	// process that Close did not ask for, hung processes the host killed included.
	StartFailures, Crashes int64
	// Hangs counts the processes killed as hung: Config.HangAfter calls in a row ran
	// past their own deadline with none answered.
	Hangs int64
	// BreakerOpens counts the openings of the circuit breaker; BreakerOpenUntil is
	// the end of the current cool-down (zero unless State is StateOpen).
	BreakerOpens     int64
	BreakerOpenUntil time.Time
	// Calls counts calls (a map stream counts one per input); Failures counts failed
	// calls by kind. Only kinds that occurred are present.
	Calls    int64
	Failures map[hooks.CallErrorKind]int64
	// LastError is the last start failure or exit, and when it happened.
	LastError   string
	LastErrorAt time.Time
}

// Stats returns the state and counters of every plugin.
func (h *Host) Stats() Stats {
	out := Stats{Plugins: make([]PluginStats, 0, len(h.names))}
	for _, name := range h.names {
		p := h.plugins[name]
		s := &p.stats
		ps := PluginStats{
			Name: name, Starts: s.starts.Load(), Restarts: s.restarts.Load(),
			StartFailures: s.startFailures.Load(), Crashes: s.crashes.Load(), Hangs: s.hangs.Load(), BreakerOpens: s.breakerOpens.Load(),
			Calls: s.calls.Load(), Failures: map[hooks.CallErrorKind]int64{},
		}
		for k := range s.failures {
			if n := s.failures[k].Load(); n > 0 {
				ps.Failures[hooks.CallErrorKind(k)] = n
			}
		}
		p.mu.Lock()
		ps.State, ps.PID, ps.LastError, ps.LastErrorAt = p.state, p.pid, p.lastErr, p.lastErrAt
		if p.state == StateOpen {
			ps.BreakerOpenUntil = p.openUntil
		}
		p.mu.Unlock()
		out.Plugins = append(out.Plugins, ps)
	}
	return out
}
