package main

// TestDocsExamples runs the shell examples of the documentation against a fresh server
// and compares their output with the text shown.
//
// In README.md and docs/*.md, a fenced code block whose info string is exactly `console`
// is an example session: a line starting with "$ " is a command (a line ending in "\"
// continues it on the next line), and the lines after it, up to the next command or the
// end of the block, are its expected output. Each block runs in one `sh -c` (so shell
// variables set by one command are seen by the next), against a server started for that
// file, after replacing localhost:8098 and 127.0.0.1:8098 by the server's address; the
// built cairn binary is first on PATH. Expected output matches when every line matches,
// where a line "..." matches any number of lines and "<...>" inside a line matches any
// run of characters. Trailing carriage returns (curl -i prints CRLF headers) and
// trailing empty lines are ignored.
//
// The sessions of README.md and docs/*.md run from the repository root, as a user runs
// them: in a scratch directory that mirrors it (a symbolic link to each top-level entry,
// bin/cairn the binary under test, data the server's data directory), so that what they
// write stays out of the checkout. A fenced block whose info string is `LANG file=PATH`
// (GitHub shows it as LANG) is a file the page asks the reader to write: it is written
// to PATH in that directory before the sessions run. A line
// `<!-- docs-test: needs TOOL... -->` names the commands (or absolute paths) the page's
// sessions need: without one of them, the page is skipped with a message, unless
// CAIRN_REQUIRE_TOOLCHAINS=1 (CI installs them), when it fails; `needs-optional` names
// tools CI does not install, which only ever skip. A line
// `<!-- docs-test: bucket-type NAME PROPS-JSON -->` (PROPS-JSON without spaces) creates
// that bucket type, as `cairn bucket-type create NAME PROPS-JSON` does, before the page's
// server starts. Other pages (READMEs of examples and SDKs) run in their own directory.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docCommand is one "$ " command of an example and its expected output.
type docCommand struct {
	line   int    // line of the command in the file
	cmd    string // without the "$ ", continuation lines joined with "\n"
	expect []string
}

// docBlock is one console block.
type docBlock struct {
	line     int
	commands []docCommand
}

// parseConsoleBlocks returns the console blocks of a Markdown file.
func parseConsoleBlocks(text string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	inOther := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	continuing := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && !inOther && strings.HasPrefix(trimmed, "```"):
			if strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "console" {
				cur = &docBlock{line: n}
			} else {
				inOther = true
			}
			continue
		case inOther:
			if trimmed == "```" {
				inOther = false
			}
			continue
		case cur == nil:
			continue
		case trimmed == "```" && !continuing:
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		if continuing {
			c := &cur.commands[len(cur.commands)-1]
			c.cmd += "\n" + line
			continuing = strings.HasSuffix(line, `\`)
			continue
		}
		if strings.HasPrefix(line, "$ ") {
			cur.commands = append(cur.commands, docCommand{line: n, cmd: strings.TrimPrefix(line, "$ ")})
			continuing = strings.HasSuffix(line, `\`)
			continue
		}
		if len(cur.commands) == 0 {
			continue // text before the first command is not checked
		}
		c := &cur.commands[len(cur.commands)-1]
		c.expect = append(c.expect, line)
	}
	return blocks
}

// outputLines splits command output into lines, dropping trailing CRs and trailing empty
// lines.
func outputLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matchOutput reports whether got matches the expected lines ("..." and "<...>"
// wildcards).
func matchOutput(expect, got []string) bool {
	for len(expect) > 0 && expect[len(expect)-1] == "" {
		expect = expect[:len(expect)-1]
	}
	pats := make([]*regexp.Regexp, len(expect))
	for i, e := range expect {
		if e == "..." {
			continue
		}
		parts := strings.Split(e, "<...>")
		for j, p := range parts {
			parts[j] = regexp.QuoteMeta(p)
		}
		pats[i] = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	}
	var match func(i, j int) bool
	memo := map[[2]int]bool{}
	match = func(i, j int) bool {
		if i == len(expect) {
			return j == len(got)
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var ok bool
		if pats[i] == nil { // "...": skip zero or more lines
			for jj := j; jj <= len(got) && !ok; jj++ {
				ok = match(i+1, jj)
			}
		} else {
			ok = j < len(got) && pats[i].MatchString(got[j]) && match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	return match(0, 0)
}

const docMarker = "@@cairn-docs-example@@"

// docEnv is what an example's shell knows of the server it runs against: the addresses
// (CAIRN_URL, CAIRN_S3_URL), the data directory (CAIRN_DATA_DIR) and the admin credential
// (CAIRN_ADMIN_KEY_ID, CAIRN_ADMIN_KEY_SECRET), as a user's shell next to `make run` has
// them in ./data; and the directory the commands run in.
type docEnv struct {
	addr, s3Addr, dataDir, keyID, keySecret, dir string
}

// runConsoleBlock runs a block's commands in one shell and returns each command's output.
func runConsoleBlock(ctx context.Context, b docBlock, de docEnv, binDir string) ([]string, error) {
	addr := de.addr
	var script strings.Builder
	for i, c := range b.commands {
		fmt.Fprintf(&script, "printf '\\n%s %d\\n'\n%s\n", docMarker, i, replaceAddr(c.cmd, addr))
	}
	fmt.Fprintf(&script, "printf '\\n%s end\\n'\n", docMarker)
	cmd := exec.CommandContext(ctx, "sh", "-c", script.String())
	env := childEnv(nil)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + binDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	if de.dataDir != "" {
		env = append(env, "CAIRN_URL=http://"+addr, "CAIRN_S3_URL=http://"+de.s3Addr, "CAIRN_DATA_DIR="+de.dataDir,
			"CAIRN_ADMIN_KEY_ID="+de.keyID, "CAIRN_ADMIN_KEY_SECRET="+de.keySecret)
	}
	cmd.Env = env
	cmd.Dir = de.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("block did not finish: %w\n%s", ctx.Err(), out.String())
	}
	outputs := make([]string, len(b.commands))
	text := out.String()
	for i := range b.commands {
		startM := fmt.Sprintf("\n%s %d\n", docMarker, i)
		endM := fmt.Sprintf("\n%s %d\n", docMarker, i+1)
		if i == len(b.commands)-1 {
			endM = fmt.Sprintf("\n%s end\n", docMarker)
		}
		s := strings.Index(text, startM)
		e := strings.Index(text, endM)
		if s < 0 || e < s {
			if err == nil {
				err = errors.New("exit status 0")
			}
			return nil, fmt.Errorf("the shell stopped early (%w):\n%s", err, text)
		}
		outputs[i] = text[s+len(startM) : e]
	}
	return outputs, nil
}

func replaceAddr(s, addr string) string {
	s = strings.ReplaceAll(s, "localhost:8098", addr)
	return strings.ReplaceAll(s, "127.0.0.1:8098", addr)
}

// docPage is what a page gives the runner besides its sessions: the files its
// `file=` blocks write and the tools its sessions need.
type docPage struct {
	files    map[string]string // path relative to the session directory → content
	needs    []string          // required in CI (CAIRN_REQUIRE_TOOLCHAINS=1)
	optional []string          // skip when absent, even in CI
	types    map[string]string // bucket types created before the server starts: name → props
}

// parseDocPage reads a page's file blocks and docs-test directives.
func parseDocPage(text string) (docPage, error) {
	p := docPage{files: map[string]string{}, types: map[string]string{}}
	var name string // the file block being read, "" outside one
	var body strings.Builder
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inFence && strings.HasPrefix(trimmed, "<!-- docs-test:"):
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(trimmed, "<!-- docs-test:"), "-->"))
			if len(f) < 2 || (f[0] != "needs" && f[0] != "needs-optional" && f[0] != "bucket-type") ||
				(f[0] == "bucket-type" && len(f) != 3) {
				return p, fmt.Errorf("bad docs-test directive %q", trimmed)
			}
			switch f[0] {
			case "bucket-type":
				p.types[f[1]] = f[2]
			case "needs":
				p.needs = append(p.needs, f[1:]...)
			default:
				p.optional = append(p.optional, f[1:]...)
			}
		case !inFence && strings.HasPrefix(trimmed, "```"):
			inFence = true
			for _, w := range strings.Fields(strings.TrimPrefix(trimmed, "```")) {
				if v, ok := strings.CutPrefix(w, "file="); ok {
					name = filepath.Clean(v)
				}
			}
			if name != "" && (filepath.IsAbs(name) || strings.HasPrefix(name, "..")) {
				return p, fmt.Errorf("file block %q: want a path inside the session directory", name)
			}
		case inFence && trimmed == "```":
			inFence = false
			if name != "" {
				if _, dup := p.files[name]; dup {
					return p, fmt.Errorf("two file blocks write %s", name)
				}
				p.files[name] = body.String()
			}
			name = ""
			body.Reset()
		case inFence && name != "":
			body.WriteString(line + "\n")
		}
	}
	return p, nil
}

// needTools skips the test (fails it under CAIRN_REQUIRE_TOOLCHAINS=1, for required
// tools) when one of the page's tools is missing.
func needTools(t *testing.T, path string, p docPage) {
	t.Helper()
	missing := func(tool string) bool {
		if filepath.IsAbs(tool) {
			_, err := os.Stat(tool)
			return err != nil
		}
		_, err := exec.LookPath(tool)
		return err != nil
	}
	for _, tool := range p.needs {
		if missing(tool) {
			if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
				t.Fatalf("%s needs %s, which is not installed, and CAIRN_REQUIRE_TOOLCHAINS=1", path, tool)
			}
			t.Skipf("%s needs %s, which is not installed; skipping its examples", path, tool)
		}
	}
	for _, tool := range p.optional {
		if missing(tool) {
			t.Skipf("%s needs %s, which is not installed (CI does not install it); skipping its examples", path, tool)
		}
	}
}

// mirrorRoot makes a scratch directory that looks like the repository root to a
// session: a symbolic link to each top-level entry of the repository, plus bin (bin/cairn
// is the binary under test) and data (the server's data directory, as `make run` keeps
// it). In a git checkout only tracked entries are linked, so that a session never writes
// through a link into what a developer made there (a guide's own title-hook, say).
func mirrorRoot(t *testing.T, root, dataDir string) string {
	t.Helper()
	dir := t.TempDir()
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"bin": filepath.Dir(cairnBin), "data": dataDir}
	for _, n := range topLevelEntries(t, absRoot) {
		if n != ".git" && links[n] == "" {
			links[n] = filepath.Join(absRoot, n)
		}
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// topLevelEntries names the entries of root that git tracks, or all of them when root
// is not a git checkout.
func topLevelEntries(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--", ".")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil && len(out) > 0 {
		seen := map[string]bool{}
		var names []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if n, _, _ := strings.Cut(f, "/"); !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		return names
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// writeDocFiles writes a page's file blocks under dir.
func writeDocFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkDocFile runs every console block of one file against a fresh server: from a
// mirror of the repository root when root is set, otherwise from the file's directory.
func checkDocFile(t *testing.T, path, root string) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseConsoleBlocks(string(text))
	if len(blocks) == 0 {
		t.Skipf("%s has no console examples", path)
	}
	page, err := parseDocPage(string(text))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	needTools(t, path, page)
	// As a user runs it (the examples register WebAssembly modules), on a data directory
	// holding the page's bucket types.
	dataDir := privateTempDir(t)
	for name, props := range page.types {
		createType(t, dataDir, name, props)
	}
	s := startServerOpts(t, serverOpts{dataDir: dataDir, process: true})
	id, secret := adminCred(t, s)
	dir, _ := filepath.Abs(filepath.Dir(path))
	if root != "" {
		dir = mirrorRoot(t, root, s.DataDir)
	}
	if root == "" && len(page.files) > 0 {
		t.Fatalf("%s: file blocks need a page that runs from the repository root", path)
	}
	writeDocFiles(t, dir, page.files)
	de := docEnv{addr: s.Addr, s3Addr: s.S3Addr, dataDir: s.DataDir, keyID: id, keySecret: secret, dir: dir}
	for _, b := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a session may build a module
		outs, err := runConsoleBlock(ctx, b, de, filepath.Dir(cairnBin))
		cancel()
		if err != nil {
			t.Errorf("%s:%d: %v", path, b.line, err)
			continue
		}
		for i, c := range b.commands {
			want := make([]string, len(c.expect))
			for j, e := range c.expect {
				want[j] = replaceAddr(e, s.Addr)
			}
			got := outputLines(outs[i])
			if !matchOutput(want, got) {
				t.Errorf("%s:%d: $ %s\n--- want:\n%s\n--- got:\n%s", path, c.line, c.cmd,
					strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		}
	}
}

func TestDocsExamples(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed; the documentation examples use it")
	}
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	for _, pattern := range []string{"wasm-examples/*/*/README.md", "sdk/*/README.md"} {
		more, _ := filepath.Glob(filepath.Join(root, pattern))
		files = append(files, more...)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		sessionRoot := root // README.md and docs/*.md run from the repository root
		if strings.Count(rel, string(filepath.Separator)) > 1 {
			sessionRoot = "" // a README of an example or an SDK runs in its directory
		}
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			checkDocFile(t, f, sessionRoot)
		})
	}
}

// TestDocsRunner checks the runner itself on a fixture whose examples all pass, and its
// matcher and parser on cases that must fail.
func TestDocsRunner(t *testing.T) {
	t.Parallel()
	t.Run("fixture", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		checkDocFile(t, filepath.Join("testdata", "docs", "fixture.md"), "")
	})
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		dir := filepath.Join("testdata", "docs")
		checkDocFile(t, filepath.Join(dir, "files.md"), dir)
	})
	t.Run("page", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name, text string
			files      map[string]string
			needs, opt []string
			bad        bool
		}{
			{"none", "# t\n```console\n$ true\n```\n", map[string]string{}, nil, nil, false},
			{"file", "```go file=a/b.go\npackage b\n\n```\n```go\nnot a file\n```\n",
				map[string]string{"a/b.go": "package b\n\n"}, nil, nil, false},
			{"directives", "<!-- docs-test: needs clang /usr/lib/x -->\n<!-- docs-test: needs-optional asc -->\n",
				map[string]string{}, []string{"clang", "/usr/lib/x"}, []string{"asc"}, false},
			{"directive in a block", "```sh\n<!-- docs-test: needs clang -->\n```\n", map[string]string{}, nil, nil, false},
			{"unknown directive", "<!-- docs-test: wants clang -->\n", nil, nil, nil, true},
			{"empty directive", "<!-- docs-test: needs -->\n", nil, nil, nil, true},
			{"bucket type without props", "<!-- docs-test: bucket-type maps -->\n", nil, nil, nil, true},
			{"escaping file", "```c file=../x.c\n```\n", nil, nil, nil, true},
			{"absolute file", "```c file=/tmp/x.c\n```\n", nil, nil, nil, true},
			{"twice", "```c file=x.c\n```\n```c file=./x.c\n```\n", nil, nil, nil, true},
		} {
			p, err := parseDocPage(c.text)
			if (err != nil) != c.bad {
				t.Errorf("%s: error %v, want error %v", c.name, err, c.bad)
				continue
			}
			if c.bad {
				continue
			}
			if fmt.Sprint(p.files) != fmt.Sprint(c.files) || fmt.Sprint(p.needs) != fmt.Sprint(c.needs) || fmt.Sprint(p.optional) != fmt.Sprint(c.opt) {
				t.Errorf("%s: files %q needs %q optional %q; want %q, %q, %q", c.name, p.files, p.needs, p.optional, c.files, c.needs, c.opt)
			}
		}
		p, err := parseDocPage(`<!-- docs-test: bucket-type maps {"props":{"datatype":"map"}} -->` + "\n")
		if err != nil || len(p.types) != 1 || p.types["maps"] != `{"props":{"datatype":"map"}}` {
			t.Errorf("bucket-type directive: %v %q", err, p.types)
		}
	})
	t.Run("parse", func(t *testing.T) {
		t.Parallel()
		text, err := os.ReadFile(filepath.Join("testdata", "docs", "fixture.md"))
		if err != nil {
			t.Fatal(err)
		}
		blocks := parseConsoleBlocks(string(text))
		var got []string
		for _, b := range blocks {
			for _, c := range b.commands {
				got = append(got, strconv.Itoa(c.line)+": "+c.cmd+" => "+strings.Join(c.expect, "|"))
			}
		}
		want := []string{
			"9: curl -s localhost:8098/ping => OK",
			"11: curl -s -o /dev/null -w '%{http_code}\\n' 127.0.0.1:8098/ping => 200",
			"16: curl -s -XPUT localhost:8098/buckets/fixture/keys/k -H 'Content-Type: text/plain' \\\n  -d 'two words' => ",
			"18: curl -si localhost:8098/buckets/fixture/keys/k => HTTP/1.1 200 OK|...|Content-Type: text/plain|...|X-Store-Vclock: <...>|...||two words",
			"30: clock=$(curl -si localhost:8098/buckets/fixture/keys/k | grep -i '^x-store-vclock' | cut -d' ' -f2 | tr -d '\\r') => ",
			"31: test -n \"$clock\" && echo \"have a clock\" => have a clock",
			"33: curl -s -w '\\n%{http_code}\\n' localhost:8098/buckets/fixture/keys/missing => not found||404",
			"37: echo to-stderr >&2; cairn version => to-stderr|cairn <...>",
			"40: printf 'a\\nb\\nc\\n' => ...",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("parsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("match", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			expect, got string
			ok          bool
		}{
			{"a\nb", "a\nb", true},
			{"a\nb", "a\nc", false},
			{"a", "a\nb", false},
			{"a\nb", "a", false},
			{"...", "", true},
			{"...", "x\ny", true},
			{"a\n...\nd", "a\nb\nc\nd", true},
			{"a\n...\nd", "a\nd", true},
			{"a\n...\nd", "a\nb\nc", false},
			{"x: <...>", "x: 123", true},
			{"x: <...>", "x: ", true},
			{"x: <...>!", "x: 123", false},
			{"<...>-<...>", "a-b-c", true},
			{"a.b", "axb", false},
			{"a\n", "a", true},
			{"", "", true},
			{"not found\n\n404", "not found\n\n404", true},
			{"not found\n\n404", "not found\n404", false},
		} {
			if got := matchOutput(strings.Split(c.expect, "\n"), outputLines(c.got)); got != c.ok {
				t.Errorf("match(%q, %q) = %v, want %v", c.expect, c.got, got, c.ok)
			}
		}
		if got := outputLines("a\r\nb\r\n\r\n\n"); strings.Join(got, "|") != "a|b" {
			t.Errorf("outputLines: %q", got)
		}
	})
}
