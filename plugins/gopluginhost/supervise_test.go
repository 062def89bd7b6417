package gopluginhost

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// accept calls the "accept" precommit of plugin name.
func accept(t testing.TB, h *Host, name string) error {
	t.Helper()
	pc := lookup[hooks.Precommit](t, h, name, "accept", hooks.PointPrecommit)
	_, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject())
	return err
}

func TestRestartAfterKill(t *testing.T) {
	h := newHost(t, testConfig(nil, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	if err := accept(t, h, "tp"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Until the new process is up, calls fail as unavailable (the plugin is known
	// down) or crashed (the call found the connection broken); never anything else.
	var sawFailure bool
	waitFor(t, 60*time.Second, "calls to work again", func() bool {
		err := accept(t, h, "tp")
		if err == nil {
			return statsOf(t, h, "tp").PID != pid
		}
		if k := callKind(err); k != hooks.Unavailable && k != hooks.Crashed {
			t.Fatalf("while restarting: %v", err)
		}
		sawFailure = true
		return false
	})
	ps := statsOf(t, h, "tp")
	if ps.State != StateUp || ps.Crashes < 1 || ps.Restarts < 1 || ps.PID == pid || ps.PID == 0 {
		t.Fatalf("after the restart: %+v", ps)
	}
	if !strings.Contains(ps.LastError, strconv.Itoa(pid)) || !strings.Contains(ps.LastError, "killed") {
		t.Errorf("last error %q does not tell process %d was killed", ps.LastError, pid)
	}
	t.Logf("calls failed while restarting: %v", sawFailure)
}

func TestCrashDuringCall(t *testing.T) {
	logger, logs := newCapture()
	h := newHost(t, testConfig(logger, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	for _, fun := range []string{"crash", "panic"} {
		pc := lookup[hooks.Precommit](t, h, "tp", fun, hooks.PointPrecommit)
		_, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject())
		if callKind(err) != hooks.Crashed {
			t.Fatalf("%s: err = %v, want crashed", fun, err)
		}
		pid = waitUp(t, h, "tp", pid)
		if err := accept(t, h, "tp"); err != nil {
			t.Fatalf("after %s: %v", fun, err)
		}
	}
	// The panic and its stack reach the log at error level.
	recs := logs.find("panic: test panic")
	if len(recs) != 1 || recs[0].level != slog.LevelError || recs[0].attrs["plugin"] != "tp" {
		t.Fatalf("panic line logged as %+v", recs)
	}
	if stack := logs.find("goroutine "); len(stack) == 0 || stack[0].level != slog.LevelError {
		t.Errorf("stack lines logged as %+v", stack)
	}
	if n := statsOf(t, h, "tp").Failures[hooks.Crashed]; n != 2 {
		t.Errorf("crashed failures = %d, want 2", n)
	}
}

func TestCircuitBreaker(t *testing.T) {
	logger, logs := newCapture()
	cfg := testConfig(logger, tp(t, "bad", "TP_EXIT_AT_START=3"), tp(t, "good"))
	cfg.BreakerThreshold, cfg.BreakerWindow, cfg.BreakerCooldown = 3, time.Minute, time.Hour
	h := newHost(t, cfg) // a plugin that fails to start does not fail New
	if err := accept(t, h, "good"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the breaker to open", func() bool { return statsOf(t, h, "bad").State == StateOpen })
	ps := statsOf(t, h, "bad")
	if ps.StartFailures != 3 || ps.BreakerOpens != 1 || ps.BreakerOpenUntil.IsZero() || !strings.Contains(ps.LastError, "exit") {
		t.Errorf("stats: %+v", ps)
	}
	// Calls fail at once, and say why.
	err := accept(t, h, "bad")
	if callKind(err) != hooks.Unavailable || !strings.Contains(err.Error(), "circuit breaker open") {
		t.Fatalf("err = %v", err)
	}
	if recs := logs.find("circuit breaker open"); len(recs) != 1 || recs[0].level != slog.LevelError || recs[0].attrs["plugin"] != "bad" {
		t.Errorf("breaker log: %+v", recs)
	}
	if recs := logs.find("testplugin: exiting at start as asked"); len(recs) != 3 {
		t.Errorf("the plugin's stderr was logged %d times, want once per start (3)", len(recs))
	}
	// Never described: any function is accepted.
	if _, err := h.Lookup("bad", "whatever", hooks.PointReduce); err != nil {
		t.Errorf("Lookup on a plugin never described: %v", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	cfg := testConfig(nil, tp(t, "tp", "TP_HANG_AT_START=1"))
	cfg.StartTimeout, cfg.RestartBackoff = 300*time.Millisecond, time.Hour
	h := newHost(t, cfg)
	ps := statsOf(t, h, "tp")
	if ps.State != StateDown || ps.StartFailures != 1 || !strings.Contains(ps.LastError, "timeout") {
		t.Fatalf("stats: %+v", ps)
	}
	if err := accept(t, h, "tp"); callKind(err) != hooks.Unavailable || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err = %v", err)
	}
}

func TestBreakerHalfOpen(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ready")
	cfg := testConfig(nil, tp(t, "tp", "TP_EXIT_UNLESS_FILE="+marker))
	cfg.BreakerThreshold, cfg.BreakerCooldown = 2, 300*time.Millisecond
	h := newHost(t, cfg)
	// The half-open start fails too and the breaker opens again.
	waitFor(t, 60*time.Second, "the breaker to reopen", func() bool { return statsOf(t, h, "tp").BreakerOpens >= 2 })
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitUp(t, h, "tp", 0)
	if err := accept(t, h, "tp"); err != nil {
		t.Fatal(err)
	}
}

func TestChecksum(t *testing.T) {
	bad := tp(t, "tp")
	bad.SHA256 = strings.Repeat("ab", 32)
	_, err := New(context.Background(), testConfig(nil, tp(t, "good"), bad))
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "tp") {
		t.Fatalf("mismatch: err = %v", err)
	}
	missing := tp(t, "tp")
	missing.Command = []string{filepath.Join(t.TempDir(), "nonesuch")}
	if _, err := New(context.Background(), testConfig(nil, missing)); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Fatalf("missing executable: err = %v", err)
	}
}

func TestChangedBinaryDisables(t *testing.T) {
	// A copy of the plugin that the test then changes.
	path := filepath.Join(t.TempDir(), "copy")
	orig, _ := testPlugin(t)
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o700); err != nil {
		t.Fatal(err)
	}
	logger, logs := newCapture()
	pc := tp(t, "tp")
	pc.Command = []string{path}
	h := newHost(t, testConfig(logger, pc))
	pid := waitUp(t, h, "tp", 0)
	// Replace the file (a new inode, as an upgrade would) and kill the process.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, 0), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the plugin to be disabled", func() bool { return statsOf(t, h, "tp").State == StateDisabled })
	if err := accept(t, h, "tp"); callKind(err) != hooks.Unavailable || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("err = %v", err)
	}
	if recs := logs.find("PLUGIN DISABLED"); len(recs) != 1 || recs[0].level != slog.LevelError ||
		!strings.Contains(recs[0].attrs["error"], "does not match") {
		t.Errorf("log: %+v", recs)
	}
}

func TestConfigErrors(t *testing.T) {
	noSum := tp(t, "a")
	noSum.SHA256 = ""
	shortSum := tp(t, "a")
	shortSum.SHA256 = "abc"
	noCmd := tp(t, "a")
	noCmd.Command = nil
	badEnv := tp(t, "a")
	badEnv.Env = map[string]string{"A=B": "c"}
	for _, tt := range []struct {
		name    string
		plugins []PluginConfig
		errSub  string
	}{
		{"duplicate", []PluginConfig{tp(t, "a"), tp(t, "a")}, "two plugins are named"},
		{"no sha256", []PluginConfig{noSum}, "no sha256"},
		{"bad sha256", []PluginConfig{shortSum}, "not 64 hex digits"},
		{"no command", []PluginConfig{noCmd}, "no command"},
		{"bad env", []PluginConfig{badEnv}, "environment variable"},
		{"colon", []PluginConfig{tp(t, "plugin:a")}, "invalid plugin name"},
		{"empty name", []PluginConfig{tp(t, "")}, "invalid plugin name"},
		{"leading dot", []PluginConfig{tp(t, ".a")}, "invalid plugin name"},
		{"too long", []PluginConfig{tp(t, strings.Repeat("x", hooks.MaxModuleNameLen+1))}, "invalid plugin name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(context.Background(), Config{Plugins: tt.plugins}); err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("err = %v, want %q", err, tt.errSub)
			}
		})
	}
	if _, err := New(context.Background(), Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: -1}}); err == nil {
		t.Error("a negative timeout was accepted")
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("CAIRN_TEST_SECRET", "hidden")
	t.Setenv("GOPLUGINHOST_TEST_VAR", "from-host")
	h := newHost(t, testConfig(nil, tp(t, "tp", "TP_X=set", "CAIRN_GIVEN=given", "GOPLUGINHOST_TEST_VAR=overridden")))
	for _, tt := range []struct{ name, want string }{
		{"TP_X", "env:set"},
		{"CAIRN_TEST_SECRET", "env:"},
		{"CAIRN_GIVEN", "env:given"},
		{"GOPLUGINHOST_TEST_VAR", "env:overridden"},
		{"PATH", "env:" + os.Getenv("PATH")},
	} {
		pc := lookup[hooks.Precommit](t, h, "tp", "getenv_"+tt.name, hooks.PointPrecommit)
		v, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject())
		if err != nil || v.Reason != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.name, v.Reason, err, tt.want)
		}
	}
}

func TestStderrLogged(t *testing.T) {
	logger, logs := newCapture()
	h := newHost(t, testConfig(logger, tp(t, "tp", `TP_STDERR_AT_START=first line\nsecond line\n[WARN] careful\n`)))
	pc := lookup[hooks.Precommit](t, h, "tp", "stderr", hooks.PointPrecommit)
	if _, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		substr string
		level  slog.Level
	}{
		{"first line", slog.LevelInfo},
		{"second line", slog.LevelInfo},
		{"[WARN] careful", slog.LevelWarn},
		{"synced line for alice", slog.LevelInfo},
		{"stdout line for alice", slog.LevelInfo},
		{"raw line for alice", slog.LevelInfo},
	} {
		// The synced line travels over gRPC and may trail the call.
		waitFor(t, 10*time.Second, tt.substr, func() bool { return len(logs.find(tt.substr)) > 0 })
		recs := logs.find(tt.substr)
		if len(recs) != 1 || recs[0].level != tt.level || recs[0].attrs["plugin"] != "tp" {
			t.Errorf("%q logged as %+v, want once at %s with plugin=tp", tt.substr, recs, tt.level)
		}
	}
	if recs := logs.find("stdout line for alice"); len(recs) != 1 || recs[0].attrs["stream"] != "stdout" {
		t.Errorf("standard output logged as %+v", recs)
	}
	// go-plugin's JSON log in the plugin keeps its (debug) level.
	if recs := logs.find("plugin address"); len(recs) != 1 || recs[0].level != slog.LevelDebug || recs[0].attrs["plugin"] != "tp" {
		t.Errorf("the plugin's go-plugin log: %+v", recs)
	}
}

func TestCloseStopsProcesses(t *testing.T) {
	h, err := New(context.Background(), testConfig(nil, tp(t, "a"), tp(t, "b")))
	if err != nil {
		t.Fatal(err)
	}
	pidA, pidB := waitUp(t, h, "a", 0), waitUp(t, h, "b", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Concurrent Closes: each returns once every plugin is stopped.
	const closers = 3
	errs := make(chan error, closers)
	for range closers {
		go func() {
			err := h.Close(ctx)
			for _, ps := range h.Stats().Plugins {
				if err == nil && ps.State != StateClosed {
					err = fmt.Errorf("Close returned while %s is %s", ps.Name, ps.State)
				}
			}
			errs <- err
		}()
	}
	for range closers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, pid := range []int{pidA, pidB} {
		if !processGone(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
	for _, ps := range h.Stats().Plugins {
		if ps.State != StateClosed {
			t.Errorf("%s is %s after Close", ps.Name, ps.State)
		}
	}
	if err := accept(t, h, "a"); callKind(err) != hooks.Unavailable || !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseForced(t *testing.T) {
	h, err := New(context.Background(), testConfig(nil, tp(t, "tp")))
	if err != nil {
		t.Fatal(err)
	}
	pid := waitUp(t, h, "tp", 0)
	// A call in flight holds up the graceful shutdown; a Close with no time left
	// kills the process.
	pc := lookup[hooks.Precommit](t, h, "tp", "sleep", hooks.PointPrecommit)
	done := make(chan error, 1)
	go func() {
		_, err := pc.Precommit(context.Background(), hooks.OpPut, sampleObject())
		done <- err
	}()
	waitFor(t, 10*time.Second, "the call to start", func() bool { return statsOf(t, h, "tp").Calls == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	if !processGone(pid) {
		t.Errorf("process %d still runs after Close", pid)
	}
	if err := <-done; callKind(err) != hooks.Crashed {
		t.Errorf("the call in flight: %v, want crashed", err)
	}
}

// The variables that make the test binary a server for TestParentDeathKillsPlugin.
const (
	envHelperPlugin = "GOPLUGINHOST_HELPER_PLUGIN"
	envHelperSum    = "GOPLUGINHOST_HELPER_SUM"
)

// TestHelperServer is not a test: TestParentDeathKillsPlugin runs the test binary
// with it to get a server process it can kill.
func TestHelperServer(t *testing.T) {
	if os.Getenv(envHelperPlugin) == "" {
		t.Skip("only a helper process of TestParentDeathKillsPlugin")
	}
	h, err := New(context.Background(), testConfig(nil, tp(t, "tp")))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("PID %d\n", waitUp(t, h, "tp", 0))
	time.Sleep(2 * time.Minute) // until killed
}

func TestParentDeathKillsPlugin(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs Linux")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	path, sum := testPlugin(t)
	cmd.Env = append(os.Environ(), envHelperPlugin+"="+path, envHelperSum+"="+sum)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	stop := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() }) // a helper that never reports
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, _ = strconv.Atoi(s)
		}
	}
	stop.Stop()
	if pid <= 0 {
		t.Fatalf("the helper server reported no plugin (err %v)", sc.Err())
	}
	go func() {
		for sc.Scan() { // drain
		}
	}()
	if processGone(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, 30*time.Second, fmt.Sprintf("plugin %d to die with its server", pid), func() bool { return processGone(pid) })
}
