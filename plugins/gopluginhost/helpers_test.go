package gopluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// The test plugin (testdata/testplugin), built once per test binary when a test first
// needs it.
var (
	buildOnce  sync.Once
	buildDir   string
	pluginPath string
	pluginSum  string
	buildErr   error
)

func TestMain(m *testing.M) {
	if p, s := os.Getenv(envHelperPlugin), os.Getenv(envHelperSum); p != "" {
		// A child started by TestParentDeathKillsPlugin: use its binary.
		buildOnce.Do(func() { pluginPath, pluginSum = p, s })
	}
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// testPlugin returns the path and the SHA-256 of the test plugin, building it first.
func testPlugin(t testing.TB) (path, sum string) {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "gopluginhost-test-"); buildErr != nil {
			return
		}
		pluginPath = filepath.Join(buildDir, "testplugin")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(build.Default.GOROOT, "bin", "go")
		}
		out, err := exec.Command(goTool, "build", "-o", pluginPath, "./testdata/testplugin").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the test plugin: %w\n%s", err, out)
			return
		}
		pluginSum, buildErr = fileSum(pluginPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginPath, pluginSum
}

// fileSum returns the hex SHA-256 of a file.
func fileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// tp returns the configuration of a test plugin named name with env (KEY=VALUE...).
func tp(t testing.TB, name string, env ...string) PluginConfig {
	t.Helper()
	path, sum := testPlugin(t)
	pc := PluginConfig{Name: name, Command: []string{path}, SHA256: sum, Env: map[string]string{}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		pc.Env[k] = v
	}
	return pc
}

// testConfig returns a configuration for tests: quick restarts, a breaker that does
// not open unless a test sets it up, generous start and call timeouts for a loaded
// machine.
func testConfig(logger *slog.Logger, plugins ...PluginConfig) Config {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return Config{
		Plugins: plugins, Logger: logger,
		StartTimeout:     30 * time.Second,
		RestartBackoff:   10 * time.Millisecond,
		BreakerThreshold: 1000,
		Timeouts: map[hooks.Point]time.Duration{
			hooks.PointPrecommit: 20 * time.Second, hooks.PointKeyFun: 20 * time.Second,
			hooks.PointLinkFun: 20 * time.Second,
		},
	}
}

// newHost returns a Host closed at the end of the test.
func newHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	h, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// lookup resolves mod:fun at p or fails the test.
func lookup[T any](t testing.TB, h *Host, mod, fun string, p hooks.Point) T {
	t.Helper()
	impl, err := h.Lookup(mod, fun, p)
	if err != nil {
		t.Fatalf("Lookup %s:%s at %s: %v", mod, fun, p, err)
	}
	v, ok := impl.(T)
	if !ok {
		t.Fatalf("Lookup %s:%s at %s: a %T", mod, fun, p, impl)
	}
	return v
}

// callKind returns the kind of a *hooks.CallError, or -1 for another error.
func callKind(err error) hooks.CallErrorKind {
	var ce *hooks.CallError
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return -1
}

// statsOf returns the stats of plugin name.
func statsOf(t testing.TB, h *Host, name string) PluginStats {
	t.Helper()
	for _, ps := range h.Stats().Plugins {
		if ps.Name == name {
			return ps
		}
	}
	t.Fatalf("no stats for plugin %q", name)
	return PluginStats{}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitUp waits until plugin name is up with a process other than notPID and returns
// its pid.
func waitUp(t testing.TB, h *Host, name string, notPID int) int {
	t.Helper()
	var pid int
	waitFor(t, 60*time.Second, name+" up", func() bool {
		ps := statsOf(t, h, name)
		pid = ps.PID
		return ps.State == StateUp && pid != 0 && pid != notPID
	})
	return pid
}

// processGone reports whether pid no longer names a live process (a zombie counts as
// gone: it runs no more, and a reaper may be slow).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS == "linux" // no /proc entry: gone
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// waitGoroutines waits until no more than base goroutines run.
func waitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logRecord is one captured log record.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// capture collects log records.
type capture struct {
	mu      sync.Mutex // guards records
	records []logRecord
}

// captureHandler is a slog.Handler writing to a capture.
type captureHandler struct {
	c     *capture
	attrs []slog.Attr
}

func newCapture() (*slog.Logger, *capture) {
	c := &capture{}
	return slog.New(&captureHandler{c: c}), c
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.c.mu.Lock()
	h.c.records = append(h.c.records, rec)
	h.c.mu.Unlock()
	return nil
}

func (h *captureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &captureHandler{c: h.c, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// find returns the records whose message contains substr.
func (c *capture) find(substr string) []logRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []logRecord
	for _, r := range c.records {
		if strings.Contains(r.msg, substr) {
			out = append(out, r)
		}
	}
	return out
}
