package gopluginhost

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// Config configures a Host. Every duration and count has a default; only Plugins is
// needed.
type Config struct {
	// Plugins are the plugins to run; their names must be unique.
	Plugins []PluginConfig
	// Logger receives the supervisor's messages, go-plugin's own and every line the
	// plugins write to standard error, each with a "plugin" attribute (default
	// slog.Default()).
	Logger *slog.Logger

	// StartTimeout bounds one start of a plugin: the launch, go-plugin's handshake and
	// the Describe call (default 10s).
	StartTimeout time.Duration
	// Timeouts is the deadline of one call per extension point, applied when the
	// caller's context has none or a later one; missing points get the defaults:
	// DefaultCommitTimeout for precommit, chash_keyfun and linkfun,
	// DefaultPostcommitTimeout for postcommit, DefaultMapReduceTimeout for reduce and
	// for each input of a map stream.
	Timeouts map[hooks.Point]time.Duration

	// MapStreams is the number of gRPC streams a map stream spreads its inputs over
	// (default 2).
	MapStreams int
	// MapWindow is the most inputs one of those gRPC streams has in flight (sent and
	// not yet received); Send blocks beyond it (default 128).
	MapWindow int

	// RestartBackoff is the wait before the first restart after a crash or a failed
	// start; it doubles after each further failure up to RestartBackoffMax (defaults
	// 100ms and 10s).
	RestartBackoff    time.Duration
	RestartBackoffMax time.Duration
	// StableAfter is how long a plugin must stay up for its backoff to start again at
	// RestartBackoff and for a half-open circuit breaker to close (default 30s).
	StableAfter time.Duration
	// BreakerThreshold failures (crashes or failed starts) within BreakerWindow open a
	// plugin's circuit breaker: it is not restarted for BreakerCooldown, then tried
	// once (half-open); a failure before StableAfter opens it again (defaults 5, 1m
	// and 1m).
	BreakerThreshold int
	BreakerWindow    time.Duration
	BreakerCooldown  time.Duration
	// HangAfter is the number of calls of one plugin in a row that must run past their
	// point's deadline (Timeouts; a map stream counts each input), with none answered
	// in between, for its process to be considered hung: it is killed (SIGKILL), and
	// the supervisor restarts it as after a crash, with the backoff, and the failure
	// counts toward the circuit breaker. Any answer (a result, a rejection, the
	// plugin's own error) starts the count again; calls that end because the caller's
	// context ended (a sooner deadline, a cancellation) do not count. Default
	// DefaultHangAfter (3); a negative value turns hang detection off.
	HangAfter int
}

// The default call timeouts. Plugins run out of process, so every call pays a gRPC
// round trip and may wait for a busy machine to schedule another process: the
// defaults are ten times those of WebAssembly modules (sdk/abi) for the points on the
// request path and five times for postcommit; map and reduce keep 5s per call.
const (
	DefaultCommitTimeout     = time.Second
	DefaultPostcommitTimeout = 5 * time.Second
	DefaultMapReduceTimeout  = 5 * time.Second
)

// DefaultHangAfter is the default of Config.HangAfter: three calls in a row past
// their deadline kill a plugin process as hung.
const DefaultHangAfter = 3

// PluginConfig configures one plugin: a hashicorp/go-plugin program serving the Hooks
// service of sdk/goplugin.
type PluginConfig struct {
	// Name is the module name bucket properties call the plugin by ({"mod": NAME}):
	// 1 to hooks.MaxModuleNameLen characters from A-Z a-z 0-9 _ . - (not starting with
	// . or -): hooks.ValidModuleName, the rule of registered WebAssembly modules too.
	Name string
	// Command is the program and its arguments: Command[0] is the executable (a path,
	// or a name looked up in PATH).
	Command []string
	// SHA256 is the hex SHA-256 of the executable, checked before every start.
	// Required.
	SHA256 string
	// Env adds variables to the plugin's environment. A plugin inherits the server's
	// environment except the variables whose names start with "CAIRN_" (the server's
	// own settings, credentials among them); Env may set any variable, those included.
	// go-plugin adds its own (the magic cookie CAIRN_PLUGIN, PLUGIN_*), which Env
	// cannot override.
	Env map[string]string
}

// parseSHA256 decodes a 64-digit hex SHA-256 (either case).
func parseSHA256(s string) ([]byte, error) {
	if len(s) != 64 {
		return nil, fmt.Errorf("sha256 %q is not 64 hex digits", s)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("sha256 %q is not 64 hex digits", s)
	}
	return b, nil
}

// validate checks one plugin's configuration and returns its decoded checksum.
func (pc PluginConfig) validate() ([]byte, error) {
	switch {
	case !hooks.ValidModuleName(pc.Name):
		return nil, fmt.Errorf("invalid plugin name %q: use 1 to %d characters from A-Z a-z 0-9 _ . - (not starting with . or -)", pc.Name, hooks.MaxModuleNameLen)
	case len(pc.Command) == 0 || pc.Command[0] == "":
		return nil, fmt.Errorf("plugin %q has no command", pc.Name)
	case pc.SHA256 == "":
		return nil, fmt.Errorf("plugin %q has no sha256: the program's checksum is required", pc.Name)
	}
	sum, err := parseSHA256(pc.SHA256)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", pc.Name, err)
	}
	for k := range pc.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("plugin %q: invalid environment variable name %q", pc.Name, k)
		}
	}
	return sum, nil
}

// withDefaults fills in the defaults of cfg and checks its values.
func (cfg Config) withDefaults() (Config, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.StartTimeout, 10*time.Second)
	def(&cfg.RestartBackoff, 100*time.Millisecond)
	def(&cfg.RestartBackoffMax, 10*time.Second)
	def(&cfg.StableAfter, 30*time.Second)
	def(&cfg.BreakerWindow, time.Minute)
	def(&cfg.BreakerCooldown, time.Minute)
	if cfg.MapStreams == 0 {
		cfg.MapStreams = 2
	}
	if cfg.MapWindow == 0 {
		cfg.MapWindow = 128
	}
	if cfg.BreakerThreshold == 0 {
		cfg.BreakerThreshold = 5
	}
	if cfg.HangAfter == 0 {
		cfg.HangAfter = DefaultHangAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	for _, d := range []time.Duration{cfg.StartTimeout, cfg.RestartBackoff, cfg.RestartBackoffMax,
		cfg.StableAfter, cfg.BreakerWindow, cfg.BreakerCooldown} {
		if d < 0 {
			return cfg, errors.New("gopluginhost: negative duration in the configuration")
		}
	}
	if cfg.MapStreams < 0 || cfg.MapWindow < 0 || cfg.BreakerThreshold < 0 {
		return cfg, errors.New("gopluginhost: negative map stream count, window or breaker threshold")
	}
	if cfg.RestartBackoffMax < cfg.RestartBackoff {
		cfg.RestartBackoffMax = cfg.RestartBackoff
	}
	timeouts := map[hooks.Point]time.Duration{
		hooks.PointPrecommit:  DefaultCommitTimeout,
		hooks.PointPostcommit: DefaultPostcommitTimeout,
		hooks.PointKeyFun:     DefaultCommitTimeout,
		hooks.PointLinkFun:    DefaultCommitTimeout,
		hooks.PointMap:        DefaultMapReduceTimeout,
		hooks.PointReduce:     DefaultMapReduceTimeout,
	}
	for p, d := range cfg.Timeouts {
		if _, ok := timeouts[p]; !ok || d <= 0 {
			return cfg, fmt.Errorf("gopluginhost: bad timeout %v for point %s", d, p)
		}
		timeouts[p] = d
	}
	cfg.Timeouts = timeouts
	return cfg, nil
}

// SumsFile is the name of the checksum file of a plugins directory.
const SumsFile = "SHA256SUMS"

// FromDir returns the plugins of a plugins directory: every executable regular file
// NAME in dir (symbolic links followed; dotfiles and SumsFile excepted) is plugin
// NAME, run without arguments, and its SHA-256 is read from dir/SHA256SUMS in the
// output format of sha256sum ("HEX  NAME" or "HEX *NAME" per line; blank lines, lines
// starting with # and escaped names, which no plugin has, are skipped). A plugin file whose name is not a valid plugin
// name or that has no line in SHA256SUMS, a missing SHA256SUMS when dir has a plugin
// file, and a malformed SHA256SUMS are errors that name the file. Lines for files
// that are not there are ignored. The result is sorted by name; its commands are
// absolute paths.
func FromDir(dir string) ([]PluginConfig, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gopluginhost: plugins directory %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("gopluginhost: plugins directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == SumsFile {
			continue
		}
		fi, err := os.Stat(filepath.Join(abs, name))
		if err != nil {
			return nil, fmt.Errorf("gopluginhost: plugins directory: %w", err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if !hooks.ValidModuleName(name) {
			return nil, fmt.Errorf("gopluginhost: plugin file %s: %q is not a valid plugin name (1 to %d characters from A-Z a-z 0-9 _ . -, not starting with . or -)",
				filepath.Join(abs, name), name, hooks.MaxModuleNameLen)
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	sumsPath := filepath.Join(abs, SumsFile)
	raw, err := os.ReadFile(sumsPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gopluginhost: plugin file %s: no %s in %s to take its checksum from", filepath.Join(abs, names[0]), SumsFile, abs)
	}
	if err != nil {
		return nil, fmt.Errorf("gopluginhost: %w", err)
	}
	sums, err := parseSums(raw)
	if err != nil {
		return nil, fmt.Errorf("gopluginhost: %s: %w", sumsPath, err)
	}
	slices.Sort(names)
	out := make([]PluginConfig, 0, len(names))
	for _, name := range names {
		path := filepath.Join(abs, name)
		sum, ok := sums[name]
		if !ok {
			return nil, fmt.Errorf("gopluginhost: plugin file %s has no line in %s", path, sumsPath)
		}
		out = append(out, PluginConfig{Name: name, Command: []string{path}, SHA256: sum})
	}
	return out, nil
}

// parseSums reads the output of sha256sum: file name -> lower-case hex checksum.
func parseSums(raw []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, `\`) {
			// Blank, a comment, or a name sha256sum had to escape (it holds a
			// backslash or a newline), which no plugin name does.
			continue
		}
		// HEX, one space, then ' ' (text mode) or '*' (binary mode), then the name.
		if len(line) < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') {
			return nil, fmt.Errorf("line %d: want \"HEX  NAME\" or \"HEX *NAME\" with a 64-digit SHA-256", n)
		}
		if _, err := parseSHA256(line[:64]); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		sum, name := strings.ToLower(line[:64]), line[66:]
		if prev, ok := sums[name]; ok && prev != sum {
			return nil, fmt.Errorf("line %d: a second, different checksum for %q", n, name)
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return sums, nil
}
