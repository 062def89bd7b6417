package main

// Real Riak HTTP clients against the riak dialect: the pinned npm releases of nodiak and
// riak-js are installed once into a temporary directory, and each script in
// testdata/realclients drives one of them, unmodified, against its own
// `cairn --dialect riak`. A script prints one line per check and exits non-zero on the
// first failed one; its last line is "PASS <name>".
//
// Without node or npm, or when npm cannot install the packages (no network), the test
// is skipped; CAIRN_REQUIRE_REAL_CLIENTS=1 turns that into a failure.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realClients are the pinned client releases.
var realClients = []struct{ name, version string }{{"nodiak", "0.4.4"}, {"riak-js", "1.1.0"}}

const (
	realClientsInstallTimeout = 90 * time.Second
	realClientScriptTimeout   = 45 * time.Second
)

// realClientsOldURLs are the clients that address objects with /riak/... URLs: they are
// answered in the riak names without --dialect riak, so they run against a server with no
// flags too; their script reads the default names of the resources that carry no hint
// (/stats, /) from CAIRN_DEFAULT_NAMES. (nodiak uses the /buckets/... form and sends no
// X-Riak-* header on reads: without a hint the server answers in its default names, so
// it needs --dialect riak.)
var realClientsOldURLs = map[string]bool{"riak-js": true}

func TestRealClients(t *testing.T) {
	node, modules, scripts := realClientsSetup(t, "*.js")
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "--dialect", "riak")
			runClientScript(t, s, node, script, modules)
		})
		if realClientsOldURLs[name] {
			t.Run(name+"/no-dialect", func(t *testing.T) {
				t.Parallel()
				s := startServer(t)
				runClientScript(t, s, node, script, modules, "CAIRN_DEFAULT_NAMES=store")
			})
		}
	}
}

// realClientsSetup finds node and npm, installs the pinned clients and returns node,
// their node_modules directory and the scripts of testdata/realclients matching glob.
// Without node, npm or the packages it skips the test (fails it with
// CAIRN_REQUIRE_REAL_CLIENTS=1).
func realClientsSetup(t *testing.T, glob string) (node, modules string, scripts []string) {
	t.Helper()
	required := os.Getenv("CAIRN_REQUIRE_REAL_CLIENTS") == "1"
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if required {
			t.Fatalf("real Riak clients unavailable: %s (CAIRN_REQUIRE_REAL_CLIENTS=1)", msg)
		}
		t.Skipf("real Riak clients unavailable, skipping: %s (set CAIRN_REQUIRE_REAL_CLIENTS=1 to fail instead)", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node not found on PATH")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable("npm not found on PATH")
	}
	scripts, err = filepath.Glob(filepath.Join("testdata", "realclients", glob))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no client scripts %s in testdata/realclients (%v)", glob, err)
	}
	// node reads the scripts, not this process: read them here too, so that go test's
	// result cache notices when one changes.
	helpers, _ := filepath.Glob(filepath.Join("testdata", "realclients", "lib", "*.js"))
	for _, f := range append(append([]string(nil), scripts...), helpers...) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return node, installRealClients(t, npm, unavailable), scripts
}

// installRealClients installs the pinned clients into a temporary directory (removed
// when the test ends) and returns its node_modules directory. An install that fails or
// times out is reported through unavailable; a wrong version is a failure.
func installRealClients(t *testing.T, npm string, unavailable func(string, ...any)) string {
	t.Helper()
	dir := t.TempDir()
	// A package.json of its own keeps npm from adopting a project further up the tree.
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"cairn-real-clients","private":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"install", "--no-audit", "--no-fund", "--ignore-scripts"}
	for _, c := range realClients {
		args = append(args, c.name+"@"+c.version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), realClientsInstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	// Without a registry npm's default retries take over a minute: fail faster, unless
	// the environment sets these itself (later entries win).
	cmd.Env = append([]string{"npm_config_fetch_retries=1", "npm_config_fetch_retry_mintimeout=1000",
		"npm_config_fetch_retry_maxtimeout=3000", "npm_config_fetch_timeout=30000", "npm_config_update_notifier=false"},
		os.Environ()...)
	cmd.WaitDelay = 5 * time.Second // npm's own children may hold the output pipes
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", realClientsInstallTimeout)
		}
		unavailable("npm %s: %v\n%s", strings.Join(args, " "), err, tail(out.String(), 2000))
	}
	modules := filepath.Join(dir, "node_modules")
	for _, c := range realClients {
		b, err := os.ReadFile(filepath.Join(modules, c.name, "package.json"))
		if err != nil {
			t.Fatalf("npm install reported success but %s is missing: %v\n%s", c.name, err, out.String())
		}
		var pkg struct{ Version string }
		if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != c.version {
			t.Fatalf("%s: installed version %q (%v), want %s", c.name, pkg.Version, err, c.version)
		}
	}
	t.Logf("npm %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return modules
}

// runClientScript runs one client script with node against s, with env added to its
// environment, and fails the test with the script's and the server's output when the
// script fails.
func runClientScript(t *testing.T, s *child, node, script, modules string, env ...string) {
	t.Helper()
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), realClientScriptTimeout)
	defer cancel()
	logged := len(s.stderr.String()) // what the server logged before (a cluster node's start)
	// --no-deprecation: both clients use APIs Node now warns about (new Buffer, ...).
	cmd := exec.CommandContext(ctx, node, "--no-deprecation", abs)
	cmd.Dir = filepath.Dir(abs)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+modules, "RIAK_HOST="+host, "RIAK_PORT="+port), env...)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	output := out.String()
	t.Logf("node %s:\n%s", filepath.Base(script), output)
	name := strings.TrimSuffix(filepath.Base(script), ".js")
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not finish within %v\n%s", filepath.Base(script), realClientScriptTimeout, s.output())
	case err != nil:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running node: %v", err)
		}
		t.Fatalf("%s failed (%v): %s\n%s", filepath.Base(script), err, failureLine(output), s.output())
	case !strings.HasSuffix(strings.TrimRight(output, "\n"), "PASS "+name):
		t.Fatalf("%s exited 0 without its closing \"PASS %s\" line\n%s", filepath.Base(script), name, s.output())
	}
	// The server must not have hit an internal error while the client ran.
	if strings.Contains(s.stderr.String()[logged:], "level=ERROR") {
		t.Errorf("the server logged errors during the %s run\n%s", name, s.output())
	}
}

// failureLine picks the script's FAIL line out of its output.
func failureLine(output string) string {
	for _, l := range strings.Split(output, "\n") {
		if strings.HasPrefix(l, "FAIL") {
			return l
		}
	}
	return "(no FAIL line; see the output above)"
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
