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

// docEnv is what an example's shell knows of the server it runs against: the address
// (CAIRN_URL), the data directory (CAIRN_DATA_DIR) and the admin credential
// (CAIRN_ADMIN_KEY_ID, CAIRN_ADMIN_KEY_SECRET), as a user's shell next to `make run` has
// them in ./data; and the directory the commands run in.
type docEnv struct {
	addr, dataDir, keyID, keySecret, dir string
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
		env = append(env, "CAIRN_URL=http://"+addr, "CAIRN_DATA_DIR="+de.dataDir,
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

// checkDocFile runs every console block of one file against a fresh server.
func checkDocFile(t *testing.T, path string) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseConsoleBlocks(string(text))
	if len(blocks) == 0 {
		t.Skipf("%s has no console examples", path)
	}
	s := startServer(t)
	id, secret := adminCred(t, s)
	dir, _ := filepath.Abs(filepath.Dir(path))
	de := docEnv{addr: s.Addr, dataDir: s.DataDir, keyID: id, keySecret: secret, dir: dir}
	for _, b := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			checkDocFile(t, f)
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
		checkDocFile(t, filepath.Join("testdata", "docs", "fixture.md"))
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
