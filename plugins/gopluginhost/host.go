// Package gopluginhost runs Cairn's process plugins: programs built on
// hashicorp/go-plugin that serve the Hooks service of sdk/goplugin over gRPC. It
// starts and supervises them and serves their functions to core/hooks as a Provider
// of kind "plugin".
//
// # Starting
//
// New starts every configured plugin. Before each start the SHA-256 of the
// executable is checked (go-plugin's SecureConfig); the handshake allows gRPC only and
// must finish within Config.StartTimeout, after which the host asks the plugin what it
// offers (Describe). A checksum mismatch, a missing executable or a plugin that speaks
// another ABI fails New; a plugin that fails to start in any other way does not: it is
// down, and its supervisor keeps trying.
//
// A plugin's environment is the server's without the variables whose names start with
// "CAIRN_" (the server's own settings and credentials), plus PluginConfig.Env, plus
// go-plugin's handshake variables. Its standard input is the server's.
//
// # Supervision
//
// Every plugin has a supervisor goroutine, owned by the Host and stopped by Close. It
// notices the exit of the process (go-plugin's report of it, a poll, or a call that
// found the connection broken), restarts it after a backoff that starts at
// Config.RestartBackoff and doubles up to Config.RestartBackoffMax, and starts again
// from the bottom once a plugin stayed up for Config.StableAfter. A circuit breaker
// stops the restarts after Config.BreakerThreshold failures within
// Config.BreakerWindow, for Config.BreakerCooldown; then one start is tried
// (half-open), and a failure before StableAfter opens the breaker again. A plugin
// whose executable changed is disabled: it is not started again until the server
// restarts. While a plugin is not up its calls fail at once with a *hooks.CallError
// of kind hooks.Unavailable; a call that was running when the process died fails as
// hooks.Crashed.
//
// A process that stays alive but stops answering is killed as hung: when
// Config.HangAfter of its calls in a row ran past their point's own deadline (each
// input of a map stream counts as a call), with none answered in between, the host
// logs it at error level, counts it in PluginStats.Hangs and sends that process
// SIGKILL; the supervisor then restarts it as after a crash, with the backoff, and
// the failure counts toward the circuit breaker. Any answer (a result, a rejection,
// the plugin's own error) starts the count again, and calls that end with the
// caller's context do not count. The count belongs to one process: a process started
// since is never killed for the timeouts of the one before.
//
// On Linux a plugin gets SIGKILL when the server dies, however it dies (kill -9
// included): the supervisor starts its plugin from an OS thread it keeps locked for
// its whole life, and the process is started with that thread's death as its parent
// death signal (PR_SET_PDEATHSIG). go-plugin plugins do not notice on their own that
// their parent died: they would live on as orphans. Elsewhere, only Close stops them.
//
// # Logging
//
// Every line a plugin writes to standard error or standard output goes to the server's
// log with the attribute plugin=NAME (see lineWriter for the levels), once: go-plugin's
// own parsing of those lines is turned off, and its own messages go to the same log.
//
// # Calls
//
// Objects travel as the protobuf messages of hookspb, converted directly (no JSON, no
// copies of values); the inputs and outputs of map streams are encoded and parsed by
// hand with protowire (wire.go). Every call runs under its point's deadline
// (Config.Timeouts), or the caller's when that is sooner; gRPC carries it to the
// plugin. A map function is a hooks.MapStreamer: a phase's inputs go over a few gRPC
// streams with bounded windows (see mapFn.OpenMapStream), and the unary Map is a
// stream of one input.
//
// Call errors are *hooks.CallError: the plugin's own error (gRPC status Unknown) is
// hooks.Failed, a deadline hooks.TimedOut, a process that died or a panic reported
// as Internal hooks.Crashed, a plugin not up hooks.Unavailable, a result out of range
// (a hash of 0 or more than 20 bytes, a replacement object that does not check out)
// hooks.BadResult. The values of map and reduce functions are handed on as the plugin
// sent them: core/mapreduce, their only consumer, checks that each is JSON, as it
// does for every runtime.
package gopluginhost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cairnkv/cairn/core/hooks"
)

// Host runs process plugins. It is safe for concurrent use.
type Host struct {
	cfg Config
	// plugins holds every configured plugin by name; it does not change after New.
	plugins map[string]*plugin
	names   []string

	// stop is closed by Close: the supervisors stop their plugins and return.
	stop chan struct{}
	// closed is set by the first Close, which closes stop.
	closed atomic.Bool
	// wg counts the supervisors.
	wg sync.WaitGroup
}

var _ hooks.Provider = (*Host)(nil)

// New validates cfg, starts every plugin and returns when each has started or failed
// its first start. It fails when the configuration is invalid (bad or duplicate
// names, no command, no or a malformed sha256) or when a plugin cannot be started as
// configured (its executable is missing, does not match its sha256, or speaks another
// ABI); plugins that merely fail to start are down and retried. Close stops the host.
func New(ctx context.Context, cfg Config) (*Host, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, plugins: map[string]*plugin{}, stop: make(chan struct{})}
	env := hostEnv()
	for _, pc := range cfg.Plugins {
		sum, err := pc.validate()
		if err != nil {
			return nil, fmt.Errorf("gopluginhost: %w", err)
		}
		if _, dup := h.plugins[pc.Name]; dup {
			return nil, fmt.Errorf("gopluginhost: two plugins are named %q", pc.Name)
		}
		h.plugins[pc.Name] = newPlugin(h, pc, sum, env)
	}
	h.names = slices.Sorted(maps.Keys(h.plugins))

	firsts := make(map[string]chan error, len(h.plugins))
	for name, p := range h.plugins {
		first := make(chan error, 1)
		firsts[name] = first
		h.wg.Add(1)
		go p.supervise(first)
	}
	var errs []error
	for _, name := range h.names {
		select {
		case err := <-firsts[name]:
			if fe := (fatalError{}); errors.As(err, &fe) {
				errs = append(errs, fmt.Errorf("gopluginhost: start %s: %w", name, fe.error))
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("gopluginhost: start %s: %w", name, ctx.Err()))
		}
		if len(errs) > 0 {
			break
		}
	}
	if len(errs) > 0 {
		_ = h.Close(context.WithoutCancel(ctx))
		return nil, errors.Join(errs...)
	}
	return h, nil
}

// hostEnv returns the server's environment without the CAIRN_ variables.
func hostEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			env = append(env, kv)
		}
	}
	return env
}

// Kind returns hooks.KindPlugin.
func (h *Host) Kind() string { return hooks.KindPlugin }

// HasModule reports whether a plugin of that name is configured, whatever its state.
func (h *Host) HasModule(name string) bool {
	_, ok := h.plugins[name]
	return ok
}

// Names returns the names of the configured plugins, sorted.
func (h *Host) Names() []string { return slices.Clone(h.names) }

// stopping reports whether Close was called.
func (h *Host) stopping() bool { return h.closed.Load() }

// Close stops every supervisor and plugin: each plugin is asked to exit (go-plugin's
// graceful shutdown, which lets calls in flight finish), and killed if it has not
// exited after 2 seconds. Close waits for all of them; when ctx ends first, the
// plugins still running are killed at once, and Close still waits for their
// supervisors (a supervisor in the middle of a start finishes it first, for at most
// Config.StartTimeout, then kills what it started) and returns ctx's error. Calls
// made after Close fail with hooks.Unavailable. Close may be called more than once,
// concurrently too: every call waits as the first does.
func (h *Host) Close(ctx context.Context) error {
	if !h.closed.Swap(true) {
		close(h.stop)
	}
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, p := range h.plugins {
		p.forceKill()
	}
	<-done
	return fmt.Errorf("gopluginhost: close: plugins did not exit in time and were killed: %w", ctx.Err())
}

// Lookup returns function fun of plugin mod as the implementation of point p's
// interface (hooks.Precommit for hooks.PointPrecommit, and so on); the map function
// is also a hooks.MapStreamer. The implementation calls whichever process of the
// plugin runs at the time of each call. Once the plugin has described itself, fun
// must be one of its functions at p (or, when it names no functions, p one of its
// points); before that (a plugin down since the server started) any function is
// accepted.
func (h *Host) Lookup(mod, fun string, p hooks.Point) (any, error) {
	pl := h.plugins[mod]
	if pl == nil {
		return nil, fmt.Errorf("gopluginhost: %w: %q", hooks.ErrNoModule, mod)
	}
	if p < hooks.PointPrecommit || p > hooks.PointReduce {
		return nil, fmt.Errorf("gopluginhost: %w: unknown extension point %d", hooks.ErrNoFunction, p)
	}
	if fun == "" {
		return nil, fmt.Errorf("gopluginhost: %w: the hook names no function of plugin %q", hooks.ErrNoFunction, mod)
	}
	if caps := pl.capabilities(); caps != nil {
		if err := caps.check(mod, fun, p); err != nil {
			return nil, fmt.Errorf("gopluginhost: %w", err)
		}
	}
	f := fn{p: pl, fun: fun, pbFun: utf8String(fun)}
	switch p {
	case hooks.PointPrecommit:
		return precommitFn{f}, nil
	case hooks.PointPostcommit:
		return postcommitFn{f}, nil
	case hooks.PointKeyFun:
		return keyFn{f}, nil
	case hooks.PointLinkFun:
		return linkFn{f}, nil
	case hooks.PointMap:
		return mapFn{f}, nil
	default:
		return reduceFn{f}, nil
	}
}
