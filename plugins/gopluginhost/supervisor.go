package gopluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// State is the state of a plugin.
type State string

// The states of a plugin.
const (
	// StateUp: a process serves the plugin's calls.
	StateUp State = "up"
	// StateDown: no process runs (it crashed or failed to start) and the supervisor is
	// starting one or waiting to; calls fail with hooks.Unavailable.
	StateDown State = "down"
	// StateOpen: the circuit breaker is open after repeated failures; no start is tried
	// before the cool-down ends.
	StateOpen State = "open"
	// StateDisabled: the executable changed (or vanished) since it was configured; the
	// plugin is not started again until the server restarts.
	StateDisabled State = "disabled"
	// StateClosed: the host was closed.
	StateClosed State = "closed"
)

// exitPoll is how often a supervisor checks that its process still runs when nothing
// told it otherwise (go-plugin reports an exit through its logger, and calls report a
// broken connection, both at once).
const exitPoll = 100 * time.Millisecond

// plugin is one configured plugin and its supervisor's state.
type plugin struct {
	h      *Host
	name   string
	cfg    PluginConfig
	sum    []byte
	env    []string
	logger *slog.Logger
	stats  pluginStats

	// cur is the process serving calls; nil while the plugin is not up.
	cur atomic.Pointer[instance]
	// live is the process the supervisor runs, until it is dead: Close's forced kill
	// looks here.
	live atomic.Pointer[instance]
	// caps is what the plugin said of itself at its last start; nil before.
	caps atomic.Pointer[capabilities]
	// nudge wakes the supervisor to check its process (capacity 1).
	nudge chan struct{}

	// mu guards state, pid, lastErr, lastErrAt and openUntil.
	mu        sync.Mutex
	state     State
	pid       int
	lastErr   string
	lastErrAt time.Time
	openUntil time.Time
}

// instance is one process of a plugin.
type instance struct {
	p      *plugin
	client *hplugin.Client
	rpc    hookspb.HooksClient
	conn   *grpc.ClientConn // rpc's connection, for the hand-encoded Map streams
	pid    int
	// proc is the started process (go-plugin starts the exec.Cmd the host built):
	// hang detection kills it through this handle, which never signals another
	// process that reused the pid.
	proc    *os.Process
	started time.Time
	// exited is set once the process is known to have exited; exitStatus is how.
	exited     atomic.Bool
	exitStatus atomic.Pointer[string]
	// quiet is set when go-plugin's Kill is only cleaning up after a process that is
	// gone: its complaint that the process did not exit gracefully is noise then.
	quiet   atomic.Bool
	writers []*lineWriter

	// Hang detection (hang.go): timeouts counts the calls in a row that ran past their
	// own deadline since one was answered; hangClaim is set by the call that decides
	// to kill the process as hung, and hang says why once it did.
	timeouts  atomic.Int64
	hangClaim atomic.Bool
	hang      atomic.Pointer[hangInfo]
}

func newPlugin(h *Host, pc PluginConfig, sum []byte, hostEnv []string) *plugin {
	env := slices.Clone(hostEnv)
	keys := make([]string, 0, len(pc.Env))
	for k := range pc.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+pc.Env[k]) // later entries win in exec.Cmd
	}
	return &plugin{
		h: h, name: pc.Name, cfg: pc, sum: sum, env: env,
		logger: h.cfg.Logger.With(slog.String("plugin", pc.Name)),
		nudge:  make(chan struct{}, 1),
		state:  StateDown,
	}
}

// poke wakes the supervisor to check its process.
func (p *plugin) poke() {
	select {
	case p.nudge <- struct{}{}:
	default:
	}
}

// capabilities returns what the plugin said of itself, or nil.
func (p *plugin) capabilities() *capabilities { return p.caps.Load() }

// launch starts one process of the plugin and asks it what it offers. A fatalError
// means that trying again is pointless.
func (p *plugin) launch() (*instance, error) {
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	if cmd.Err != nil {
		return nil, fatalError{fmt.Errorf("executable %s: %w", p.cfg.Command[0], cmd.Err)}
	}
	fi, err := os.Stat(cmd.Path)
	switch {
	case err != nil:
		return nil, fatalError{fmt.Errorf("executable: %w", err)}
	case !fi.Mode().IsRegular():
		return nil, fatalError{fmt.Errorf("executable %s is not a regular file", cmd.Path)}
	}
	cmd.Env = p.env
	cmd.SysProcAttr = sysProcAttr()

	inst := &instance{p: p}
	stderr := newLineWriter(p.logger)
	syncOut := newLineWriter(p.logger, slog.String("stream", "stdout"))
	syncErr := newLineWriter(p.logger)
	inst.writers = []*lineWriter{stderr, syncOut, syncErr}
	hl := newHCLogger(p.logger, filepath.Base(cmd.Path), func(status string) {
		inst.exitStatus.Store(&status)
		inst.exited.Store(true)
		p.poke()
	})
	hl.quiet = &inst.quiet
	inst.client = hplugin.NewClient(&hplugin.ClientConfig{
		HandshakeConfig:  goplugin.Handshake,
		Plugins:          goplugin.PluginSet(nil),
		Cmd:              cmd,
		SecureConfig:     &hplugin.SecureConfig{Checksum: p.sum, Hash: sha256.New()},
		AllowedProtocols: []hplugin.Protocol{hplugin.ProtocolGRPC},
		// Objects up to the server's size limit travel whole (gRPC's default is 4 MiB).
		GRPCDialOptions: goplugin.GRPCDialOptions(),
		StartTimeout:    p.h.cfg.StartTimeout,
		Stderr:          stderr,
		SyncStdout:      syncOut,
		SyncStderr:      syncErr,
		Logger:          hl,
		// The environment is built in p.env: the server's without CAIRN_*, then Env.
		SkipHostEnv: true,
	})
	fail := func(err error) (*instance, error) {
		inst.quiet.Store(true)
		inst.client.Kill()
		inst.flush()
		return nil, err
	}
	rpc, err := inst.client.Client()
	switch {
	case errors.Is(err, hplugin.ErrChecksumsDoNotMatch):
		return fail(fatalError{fmt.Errorf("%s: %w: the configured sha256 is %s", cmd.Path, ErrChecksum, hex.EncodeToString(p.sum))})
	case err != nil && strings.HasPrefix(err.Error(), "error verifying checksum"):
		return fail(fatalError{fmt.Errorf("%s: %w: %w", cmd.Path, ErrChecksum, err)})
	case err != nil:
		_, err = fail(fmt.Errorf("start: %w", err))
		// The exit status is known once Kill has returned. go-plugin's message only
		// says that stdout closed: say how the process ended.
		if s := inst.exitStatus.Load(); s != nil && exitedEarly(err) {
			err = fmt.Errorf("start: the process ended (%s) before it completed the handshake", *s)
		}
		return nil, err
	}
	raw, err := rpc.Dispense(goplugin.PluginName)
	if err != nil {
		return fail(fmt.Errorf("dispense: %w", err))
	}
	hc, ok := raw.(hookspb.HooksClient)
	if !ok {
		return fail(fmt.Errorf("dispense: got a %T, not a Hooks client", raw))
	}
	gc, ok := rpc.(*hplugin.GRPCClient)
	if !ok {
		return fail(fmt.Errorf("start: go-plugin gave a %T, not a gRPC client", rpc))
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.h.cfg.StartTimeout)
	desc, err := hc.Describe(ctx, &hookspb.Empty{})
	cancel()
	if err != nil {
		return fail(fmt.Errorf("describe: %w", err))
	}
	caps, err := parseCapabilities(desc)
	if err != nil {
		return fail(fatalError{fmt.Errorf("describe: %w", err)})
	}
	inst.rpc, inst.conn, inst.proc = hc, gc.Conn, cmd.Process
	inst.pid, _ = strconv.Atoi(inst.client.ID())
	inst.started = time.Now()
	p.caps.Store(caps)
	return inst, nil
}

// exitedEarly reports whether go-plugin's start error says that the process ended (or
// closed its standard output) before its handshake line.
func exitedEarly(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "plugin exited before we could connect") ||
		strings.Contains(msg, "Failed to read any lines from plugin's stdout")
}

// flush logs what the process left unterminated on its streams.
func (inst *instance) flush() {
	for _, w := range inst.writers {
		w.Flush()
	}
}

// supervise runs the plugin until Close: it starts it, waits for it to exit, and
// starts it again after a backoff, or after a cool-down when the circuit breaker
// opens. first receives the result of the first start.
func (p *plugin) supervise(first chan<- error) {
	defer p.h.wg.Done()
	defer p.setState(StateClosed)
	unlock := lockLaunchThread()
	defer unlock()
	cfg := &p.h.cfg
	var (
		consecutive int         // failures since the plugin last stayed up for StableAfter
		recent      []time.Time // failures within the breaker window
		halfOpen    bool        // the current start follows a cool-down
	)
	// report hands the result of the first start to New, once the plugin's state
	// shows it.
	report := func(err error) {
		if first != nil {
			first <- err
			first = nil
		}
	}
	for !p.h.stopping() {
		inst, err := p.launch()
		var failure error
		switch fe := (fatalError{}); {
		case err == nil:
			p.up(inst)
			report(nil)
			if p.watch(inst) {
				p.shutdown(inst)
				return
			}
			upFor := time.Since(inst.started)
			p.down(inst)
			if upFor >= cfg.StableAfter {
				consecutive, recent, halfOpen = 0, recent[:0], false
			}
			status := "exited"
			if s := inst.exitStatus.Load(); s != nil {
				status = *s
			}
			p.stats.crashes.Add(1)
			failure = fmt.Errorf("process %d ended (%s) after %s", inst.pid, status, upFor.Round(time.Millisecond))
			if hi := inst.hang.Load(); hi != nil {
				failure = fmt.Errorf("process %d hung (%d calls in a row ran past their deadline of %s with none answered) and was killed after %s",
					inst.pid, hi.calls, hi.deadline, upFor.Round(time.Millisecond))
			}
		case errors.As(err, &fe):
			p.disable(fe.error)
			report(err)
			<-p.h.stop
			return
		default:
			p.stats.startFailures.Add(1)
			failure = err
		}

		now := time.Now()
		recent = slices.DeleteFunc(recent, func(t time.Time) bool { return now.Sub(t) >= cfg.BreakerWindow })
		recent = append(recent, now)
		if halfOpen || len(recent) >= cfg.BreakerThreshold {
			p.open(failure, len(recent), halfOpen, now.Add(cfg.BreakerCooldown))
			report(err)
			if !p.sleep(cfg.BreakerCooldown) {
				return
			}
			consecutive, recent, halfOpen = 0, recent[:0], true
			p.setState(StateDown)
			p.logger.Info("plugin circuit breaker half-open: trying one start")
			continue
		}
		delay := backoff(cfg.RestartBackoff, cfg.RestartBackoffMax, consecutive)
		consecutive++
		p.failed(StateDown, failure)
		report(err)
		p.logger.Warn("plugin down; restarting", slog.String("error", failure.Error()), slog.Duration("restart_in", delay))
		if !p.sleep(delay) {
			return
		}
	}
}

// backoff returns the wait before the restart that follows n consecutive failures.
func backoff(base, ceiling time.Duration, n int) time.Duration {
	d := base
	for range n {
		if d >= ceiling/2 {
			return ceiling
		}
		d *= 2
	}
	return min(d, ceiling)
}

// sleep waits for d; false when the host is closing.
func (p *plugin) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.h.stop:
		return false
	}
}

// watch waits until inst exits (false) or the host closes (true).
func (p *plugin) watch(inst *instance) bool {
	t := time.NewTicker(exitPoll)
	defer t.Stop()
	for {
		select {
		case <-p.h.stop:
			return true
		case <-p.nudge:
		case <-t.C:
		}
		if inst.exited.Load() || inst.client.Exited() {
			return false
		}
	}
}

// up makes inst the process that serves calls. The state says up last, so that
// whoever sees it up (Stats) finds the process serving calls and the start counted.
func (p *plugin) up(inst *instance) {
	p.live.Store(inst)
	p.cur.Store(inst)
	if p.stats.starts.Add(1) > 1 {
		p.stats.restarts.Add(1)
	}
	p.mu.Lock()
	p.state, p.pid, p.openUntil = StateUp, inst.pid, time.Time{}
	p.mu.Unlock()
	caps := p.caps.Load()
	p.logger.Info("plugin started", slog.Int("pid", inst.pid), slog.String("points", caps.points.String()),
		slog.Int("functions", len(caps.order)))
}

// down releases what is left of inst after its process exited.
func (p *plugin) down(inst *instance) {
	p.cur.CompareAndSwap(inst, nil)
	inst.exited.Store(true)
	inst.quiet.Store(true)
	inst.client.Kill() // the process is gone: this releases go-plugin's goroutines and socket
	inst.flush()
	p.live.CompareAndSwap(inst, nil)
	p.mu.Lock()
	p.state, p.pid = StateDown, 0
	p.mu.Unlock()
}

// shutdown stops inst for Close: go-plugin asks it to exit, waits up to 2 seconds,
// then kills it.
func (p *plugin) shutdown(inst *instance) {
	p.cur.CompareAndSwap(inst, nil)
	inst.client.Kill()
	inst.flush()
	p.live.CompareAndSwap(inst, nil)
	p.logger.Info("plugin stopped", slog.Int("pid", inst.pid))
}

// forceKill kills the running process at once (Close ran out of time).
func (p *plugin) forceKill() {
	inst := p.live.Load()
	if inst == nil || inst.proc == nil || inst.client.Exited() {
		return
	}
	_ = inst.proc.Kill()
}

// failed records failure as the last error and enters state.
func (p *plugin) failed(state State, failure error) {
	p.mu.Lock()
	p.state, p.pid = state, 0
	p.lastErr, p.lastErrAt = failure.Error(), time.Now()
	p.mu.Unlock()
}

// open records that the circuit breaker opened until until.
func (p *plugin) open(failure error, n int, halfOpen bool, until time.Time) {
	p.failed(StateOpen, failure)
	p.mu.Lock()
	p.openUntil = until
	p.mu.Unlock()
	p.stats.breakerOpens.Add(1)
	why := fmt.Sprintf("%d failures within %s", n, p.h.cfg.BreakerWindow)
	if halfOpen {
		why = "the start after the cool-down failed"
	}
	p.logger.Error("plugin circuit breaker open: not restarting until the cool-down ends",
		slog.String("error", failure.Error()), slog.String("reason", why),
		slog.Duration("cooldown", p.h.cfg.BreakerCooldown), slog.Time("retry_at", until))
}

// disable records that the plugin will not be started again.
func (p *plugin) disable(err error) {
	p.failed(StateDisabled, err)
	p.logger.Error("PLUGIN DISABLED: it cannot be started as configured and will not be restarted until the server restarts",
		slog.String("error", err.Error()))
}

// setState enters state.
func (p *plugin) setState(state State) {
	p.mu.Lock()
	p.state = state
	p.mu.Unlock()
}
