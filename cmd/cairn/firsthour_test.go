package main

// Issue 16 §3, the first hour as a new user tries it: the global --version and -h/--help
// flags, serve's own flag list, and `cairn check` on a directory that holds no store
// (which it must neither create nor change).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestGlobalHelpAndVersionFlags: `cairn --version` answers as `cairn version` and
// `cairn -h`/`--help` as `cairn help` (the command list on stdout, exit 0, nothing on
// stderr), while `cairn serve -h` lists serve's flags on stdout.
func TestGlobalHelpAndVersionFlags(t *testing.T) {
	t.Parallel()
	_, helpOut, _ := runCairn(t, serverOpts{args: []string{"help"}})
	if !strings.HasPrefix(helpOut, "Usage:\n") || !strings.Contains(helpOut, "cairn check") || !strings.Contains(helpOut, "--version") {
		t.Fatalf("cairn help printed %q; want the command list", helpOut)
	}
	version := "cairn " + testVersion + "\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, version},
		{[]string{"--version"}, version},
		{[]string{"-version"}, version},
		{[]string{"help"}, helpOut},
		{[]string{"-h"}, helpOut},
		{[]string{"-help"}, helpOut},
		{[]string{"--help"}, helpOut},
	} {
		code, out, errOut := runCairn(t, serverOpts{args: c.args})
		if code != 0 || out != c.want || errOut != "" {
			t.Errorf("cairn %v: exit %d, stdout %q, stderr %q; want 0, %q, nothing", c.args, code, out, errOut, c.want)
		}
	}

	code, out, errOut := runCairn(t, serverOpts{args: []string{"serve", "--help"}})
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: cairn [serve] [flags]\n") ||
		!strings.Contains(out, "-data-dir") || !strings.Contains(out, "CAIRN_S3_LISTEN") || strings.Contains(out, "cairn check") {
		t.Errorf("cairn serve --help: exit %d, stderr %q, stdout:\n%s\nwant 0, nothing, serve's flags", code, errOut, out)
	}
}

// TestServeFlagErrorIsShort: a mistyped flag is named in one line that points to
// `cairn serve -h`, not buried under the whole flag list.
func TestServeFlagErrorIsShort(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCairn(t, serverOpts{args: []string{"--data-dir", t.TempDir(), "--data-dri"}})
	want := `cairn: flag provided but not defined: -data-dri ("cairn serve -h" lists the flags)` + "\n"
	if code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, errOut, want)
	}
}

// TestCheckWithoutStore: `cairn check` on a directory that does not exist, is a file,
// holds no leveldb directory, or an empty one, fails (exit 1) with a message naming
// the problem, and leaves the directory as it was (nothing created).
func TestCheckWithoutStore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	empty := filepath.Join(root, "empty")
	file := filepath.Join(root, "file")
	emptyDB := filepath.Join(root, "emptydb")
	for _, err := range []error{os.Mkdir(empty, 0o700), os.WriteFile(file, nil, 0o600), os.MkdirAll(filepath.Join(emptyDB, "leveldb"), 0o700)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, dir string
		env       bool // pass the directory as CAIRN_DATA_DIR, not --data-dir
		want      string
	}{
		{"missing", missing, false, "cairn: data directory " + missing + " does not exist (give the server's --data-dir, or set CAIRN_DATA_DIR)\n"},
		{"missing env", missing, true, "cairn: data directory " + missing + " does not exist (give the server's --data-dir, or set CAIRN_DATA_DIR)\n"},
		{"file", file, false, "cairn: data directory " + file + " is not a directory\n"},
		{"empty", empty, false, "cairn: data directory " + empty + " holds no cairn store (no leveldb directory in it); is it the server's --data-dir?\n"},
		{"empty leveldb", emptyDB, false, "cairn: data directory " + emptyDB + " holds no cairn store (no " +
			filepath.Join(emptyDB, "leveldb", "LOCK") + ": a server creates it when it first opens the store)\n"},
	} {
		before := treeState(t, root)
		o := serverOpts{args: []string{"check", "--data-dir", c.dir}}
		if c.env {
			o = serverOpts{args: []string{"check"}, env: []string{"CAIRN_DATA_DIR=" + c.dir}}
		}
		code, out, errOut := runCairn(t, o)
		if code != 1 || out != "" || errOut != c.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1, nothing, %q", c.name, code, out, errOut, c.want)
		}
		if after := treeState(t, root); after != before {
			t.Errorf("%s: cairn check changed the directory:\nbefore:\n%s\nafter:\n%s", c.name, before, after)
		}
	}
}

// TestCheckChangesNothing: `cairn check` on the store of a killed server (its last
// writes only in the journal, a tombstone awaiting its reap) reports it consistent and
// leaves every file, mode and modification time as it was: it opens the store read-only.
func TestCheckChangesNothing(t *testing.T) {
	t.Parallel()
	s := startProcess(t, "--delete-reap-delay", "1h")
	s.mustPut(t, "/buckets/b/keys/kept", "kept")
	s.mustPut(t, "/buckets/b/keys/gone", "gone")
	expect(t, s.do(t, "DELETE", "/buckets/b/keys/gone", nil, ""), 204, nil)
	s.Kill()
	before := treeState(t, s.DataDir)
	code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	if code != 0 || !strings.Contains(out, "cairn: kv: 2 objects") || !strings.HasSuffix(out, " is consistent\n") || errOut != "" {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want 0, 2 objects (one a tombstone), consistent", code, out, errOut)
	}
	if after := treeState(t, s.DataDir); after != before {
		t.Errorf("cairn check changed the data directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	s.Restart() // the store still opens for writing and holds what was acknowledged
	expect(t, s.get(t, "/buckets/b/keys/kept"), 200, ptr("kept"))
	expect(t, s.get(t, "/buckets/b/keys/gone"), 404, nil)
}

// treeState describes every entry under root (path, type, mode, size, modification
// time, and a regular file's SHA-256), one line each in path order.
func treeState(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v %d %d", path, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
