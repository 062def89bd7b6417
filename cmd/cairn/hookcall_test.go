package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookFixture is a WAT fixture of plugins/wasmhost, committed as .wasm.
func hookFixture(name string) string {
	return filepath.Join("..", "..", "plugins", "wasmhost", "testdata", name+".wasm")
}

func TestHookCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small.json", `{"op":"put","object":{"bucket":"b","key":"k","vclock":"Y2xvY2s=","values":[{"metadata":{"content-type":"text/plain"},"data":"small"}]}}`)
	big := write("big.json", `{"op":"put","object":{"bucket":"b","key":"k","values":[{"data":"`+strings.Repeat("x", 2000)+`"}]}}`)
	keyIn := write("key.json", `{"bucket_type":"t","bucket":"b","key":"k"}`)
	linkIn := write("link.json", `{"object":{"bucket":"b","key":"k","values":[]},"spec":{"bucket":"_","tag":"friend"}}`)
	mapIn := write("map.json", `{"not_found":{"bucket":"b","key":"k"},"keydata":null,"arg":{"x":1}}`)
	reduceIn := write("reduce.json", `{"values":[1,2],"arg":null}`)
	badOp := write("badop.json", `{"op":"patch","object":{"bucket":"b","key":"k","values":[]}}`)
	notJSON := write("notjson.json", `{"op":`)
	badObj := write("badobj.json", `{"op":"put","object":{"values":[{"data":1}]}}`)
	noObj := write("noobj.json", `{"op":"put"}`)

	maxsize, hooks := hookFixture("maxsize"), hookFixture("hooks")
	const replaced = `{"bucket_type":"default","bucket":"b","key":"k","vclock":"Y2xvY2s=","values":[{"metadata":{"content-type":"text/plain",%s:{%s-By":"hook"},"index":{"n_int":7}},"data":"replaced"}]}`
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // exact
		stderr string // substring
	}{
		{"doc example accepts", []string{maxsize, "max_1k", "--input", small}, 0, "accept\n", ""},
		{"doc example rejects", []string{maxsize, "max_1k", "--input", big}, 1, "reject: too large: the object JSON is over 1 KiB\n", ""},
		{"replace", []string{hooks, "replace", "--input", small}, 0,
			"replace: " + strings.ReplaceAll(strings.Replace(replaced, "%s", `"X-Store-Meta"`, 1), "%s", `"X-Store-Meta`) + "\n", ""},
		{"replace riak", []string{"--dialect", "riak", hooks, "replace", "--input", small}, 0,
			"replace: " + strings.ReplaceAll(strings.Replace(replaced, "%s", `"X-Riak-Meta"`, 1), "%s", `"X-Riak-Meta`) + "\n", ""},
		{"delete ignores a replacement", []string{hooks, "replace", "--input", write("del.json", strings.Replace(hookReadFile(t, small), "put", "delete", 1))}, 0, "accept\n", ""},
		{"precommit fails", []string{hooks, "fail", "--input", small}, 2, "", "hook hooks:fail failed: something broke"},
		{"timeout", []string{hooks, "loop", "--timeout", "30ms", "--input", small}, 2, "", "hook hooks:loop timed out: no result within 30ms"},
		{"trap", []string{hooks, "trap", "--input", small}, 2, "", "crashed: wasm error: unreachable"},
		{"postcommit", []string{hooks, "accept", "--point", "postcommit", "--input", small}, 0, "ok\n", ""},
		{"keyfun", []string{hooks, "keyhash", "--point", "keyfun", "--input", keyIn}, 0, "303132333435363738396162636465666768696a\n", ""},
		{"keyfun is deterministic", []string{hooks, "clock", "--point", "chash_keyfun", "--input", keyIn}, 0, strings.Repeat("0", 32) + "1d000000\n", ""},
		{"keyfun bad result", []string{hooks, "keyempty", "--point", "keyfun", "--input", keyIn}, 2, "", "returns 1 to 20 bytes, not 0"},
		{"linkfun", []string{hooks, "links", "--point", "linkfun", "--input", linkIn}, 0, `[["b","k","t"]]` + "\n", ""},
		{"map", []string{hooks, "values", "--point", "map", "--input", mapIn}, 0, `[1,"two",{"three":3}]` + "\n", ""},
		{"reduce", []string{hooks, "values", "--point", "reduce", "--input", reduceIn}, 0, `[1,"two",{"three":3}]` + "\n", ""},
		{"guest log", []string{hooks, "hello", "--point", "postcommit", "--input", small}, 0, "ok\n", `msg="hello from stdout" stream=stdout module=hooks function=hello`},
		{"raw echo", []string{"--raw", hooks, "echo", "--input", badOp}, 0, hookReadFile(t, badOp), ""},
		{"raw reject", []string{hooks, "reject", "--raw", "--input", small}, 1, "rejected: no writes here", "status 1 (reject)"},
		{"raw error", []string{hooks, "grow", "--raw", "--point", "map", "--memory-pages", "4", "--input", small}, 2, "\x04\x00\x00\x00", "status 2 (error)"},
		{"raw crash", []string{hooks, "status7", "--raw", "--input", small}, 2, "", "ABI violation: unknown status 7"},
		{"invalid module", []string{hookFixture("nomarker"), "run", "--input", small}, 2, "", `nomarker.wasm: invalid module: it does not export "cairn_abi_v1"`},
		{"no such function", []string{hooks, "nope", "--input", small}, 2, "", "no such function"},
		{"no such file", []string{filepath.Join(dir, "missing.wasm"), "f", "--input", small}, 2, "", "no such file"},
		{"not json", []string{hooks, "accept", "--input", notJSON}, 2, "", "the input is not a precommit input object"},
		{"bad op", []string{hooks, "accept", "--input", badOp}, 2, "", `the input's "op" is "patch"`},
		{"bad object", []string{hooks, "accept", "--input", badObj}, 2, "", "the input: hookjson: object: values: [0]: data: offset 19: want a string, have a number"},
		{"no object", []string{hooks, "accept", "--input", noObj}, 2, "", `the input has no "object"`},
		{"usage", nil, 2, "", "the only command is: call"},
		{"usage arity", []string{hooks}, 2, "", "call takes FILE.wasm and FUNCTION, got 1"},
		{"usage point", []string{hooks, "accept", "--point", "nope"}, 2, "", `unknown point "nope"`},
		{"usage pages", []string{hooks, "accept", "--memory-pages", "0"}, 2, "", "--memory-pages between 1 and 65536"},
		{"usage dialect", []string{hooks, "accept", "--dialect", "x", "--input", small}, 2, "", `unknown dialect "x"`},
		{"usage flag", []string{hooks, "accept", "--bogus"}, 2, "", "flag provided but not defined: -bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			args := append([]string{"hook"}, tc.args...)
			if tc.name != "usage" {
				args = append([]string{"hook", "call"}, tc.args...)
			}
			code := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
			if code != tc.code || stdout.String() != tc.stdout || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("cairn %s\nexit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q",
					strings.Join(args, " "), code, tc.code, stdout.String(), tc.stdout, stderr.String(), tc.stderr)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"hook", "--help"}, func(string) string { return "" }, &stdout, &stderr); code != 0 ||
			!strings.Contains(stdout.String(), "cairn hook call FILE.wasm FUNCTION") {
			t.Errorf("help: exit %d, %q", code, stdout.String())
		}
	})
}

func hookReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
