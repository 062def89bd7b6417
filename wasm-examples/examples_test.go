// Package examples checks every example module: each committed .wasm is loaded by the
// server's WebAssembly host (validation included) and the cases of its expect.json are
// run through it. The end-to-end tests through a running server are in cmd/cairn.
package examples

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

// exampleCase is one entry of an example's expect.json.
type exampleCase struct {
	Function       string          `json:"function"`
	Point          string          `json:"point"`
	Input          json.RawMessage `json:"input"`
	Status         int             `json:"status"`
	OutputContains string          `json:"output_contains"`
	// OutputHex, when set, is the exact output in lower-case hex (keyfun hashes).
	OutputHex string `json:"output_hex"`
	// Crash, when set, says the call must fail in the host: "timeout" (stopped at its
	// deadline) or "trap" (a trap, a stack overflow, the memory cap); the error's text
	// then contains OutputContains.
	Crash string `json:"crash"`
}

var crashKinds = map[string]hooks.CallErrorKind{"timeout": hooks.TimedOut, "trap": hooks.Crashed}

var points = map[string]hooks.Point{
	"precommit": hooks.PointPrecommit, "postcommit": hooks.PointPostcommit, "keyfun": hooks.PointKeyFun,
	"chash_keyfun": hooks.PointKeyFun, "linkfun": hooks.PointLinkFun, "map": hooks.PointMap, "reduce": hooks.PointReduce,
}

func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("*/*/expect.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	ctx := context.Background()
	host, err := wasmhost.New(ctx, wasmhost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close(ctx)
	for _, expectFile := range dirs {
		dir := filepath.Dir(expectFile)
		t.Run(dir, func(t *testing.T) {
			wasms, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
			if len(wasms) != 1 {
				t.Fatalf("want exactly one committed .wasm in %s, found %v", dir, wasms)
			}
			code, err := os.ReadFile(wasms[0])
			if err != nil {
				t.Fatal(err)
			}
			name := strings.ReplaceAll(filepath.Base(dir), "-", "_")
			info, err := host.Load(ctx, name, code)
			if err != nil {
				t.Fatalf("the host refuses %s: %v", wasms[0], err)
			}
			b, err := os.ReadFile(expectFile)
			if err != nil {
				t.Fatal(err)
			}
			var cases []exampleCase
			if err := json.Unmarshal(b, &cases); err != nil || len(cases) == 0 {
				t.Fatalf("%s: %v (%d cases)", expectFile, err, len(cases))
			}
			for i, c := range cases {
				p, ok := points[c.Point]
				if !ok {
					t.Fatalf("case %d: unknown point %q", i, c.Point)
				}
				if !contains(info.Functions, c.Function) {
					t.Fatalf("case %d: %s does not export %s (exports %v)", i, wasms[0], c.Function, info.Functions)
				}
				// The host sends compact JSON: so does the test (a hash of the input's
				// bytes, as hello-keyfun computes, depends on it).
				var input bytes.Buffer
				if err := json.Compact(&input, c.Input); err != nil {
					t.Fatalf("case %d: input: %v", i, err)
				}
				st, out, err := host.Call(ctx, name, c.Function, p, input.Bytes())
				if c.Crash != "" {
					var ce *hooks.CallError
					if !errors.As(err, &ce) || ce.Kind != crashKinds[c.Crash] || !strings.Contains(err.Error(), c.OutputContains) {
						t.Errorf("case %d (%s): %v; want a %s error containing %q", i, c.Function, err, c.Crash, c.OutputContains)
					}
					continue
				}
				if err != nil {
					t.Errorf("case %d (%s): %v", i, c.Function, err)
					continue
				}
				if c.OutputHex != "" && hex.EncodeToString(out) != c.OutputHex {
					t.Errorf("case %d (%s): output %x, want %s", i, c.Function, out, c.OutputHex)
				}
				if int(st) != c.Status || !bytes.Contains(out, []byte(c.OutputContains)) {
					t.Errorf("case %d (%s): status %d output %q; want status %d and output containing %q",
						i, c.Function, st, out, c.Status, c.OutputContains)
				}
				if c.OutputContains == "" && c.OutputHex == "" && c.Status == 0 && p == hooks.PointPrecommit && len(out) != 0 {
					t.Errorf("case %d (%s): want no output (accept unchanged), got %q", i, c.Function, out)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
