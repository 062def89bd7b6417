// Package sdk holds the guest SDKs. This test runs each non-Go SDK's own tests (and those
// of the examples written with it) with its toolchain: cargo for Rust, gcc and make for
// C, npm for AssemblyScript. A missing toolchain skips its part with a message, unless
// CAIRN_REQUIRE_TOOLCHAINS=1 (set by CI, which installs them), when it fails.
package sdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// need returns the path of tool, or skips (fails under CAIRN_REQUIRE_TOOLCHAINS=1).
func need(t *testing.T, tool, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if _, serr := os.Stat(tool); serr == nil {
			return tool
		}
		if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("%s is not installed (%s) and CAIRN_REQUIRE_TOOLCHAINS=1", tool, install)
		}
		t.Skipf("%s is not installed (%s); skipping", tool, install)
	}
	return p
}

// runIn runs a command in dir and fails the test with its output when it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
}

func TestRustSDK(t *testing.T) {
	t.Parallel()
	rustc := need(t, "/usr/bin/rustc", "apt-get install rustc cargo libstd-rust-dev-wasm32 librust-serde-json-dev librust-serde-derive-dev")
	cargo := need(t, "/usr/bin/cargo", "apt-get install cargo")
	env := []string{"RUSTC=" + rustc, "RUSTDOC=/usr/bin/rustdoc", "CARGO_TARGET_DIR=" + filepath.Join(t.TempDir(), "target")}
	runIn(t, "rust", env, cargo, "test", "--offline", "--quiet")
	examples, _ := filepath.Glob(filepath.Join("..", "wasm-examples", "rust", "*", "Cargo.toml"))
	for _, m := range examples {
		runIn(t, filepath.Dir(m), env, cargo, "test", "--offline", "--quiet")
	}
}

func TestCSDK(t *testing.T) {
	t.Parallel()
	need(t, "gcc", "apt-get install gcc")
	mk := need(t, "make", "apt-get install make")
	runIn(t, "c", nil, mk, "test")
	tests, _ := filepath.Glob(filepath.Join("..", "wasm-examples", "c", "*", "test.sh"))
	for _, sh := range tests {
		runIn(t, filepath.Dir(sh), nil, "sh", "./test.sh")
	}
}

func TestAssemblyScriptSDK(t *testing.T) {
	t.Parallel()
	npm := need(t, "npm", "apt-get install nodejs npm")
	if _, err := os.Stat(filepath.Join("assemblyscript", "node_modules", "assemblyscript")); err != nil {
		runIn(t, "assemblyscript", nil, npm, "ci", "--no-audit", "--no-fund")
	}
	runIn(t, "assemblyscript", nil, npm, "test")
}
