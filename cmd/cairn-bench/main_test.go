package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTiny runs every phase end to end against a real Cairn with the built-in
// generator, with tiny sizes (a smoke test of the orchestration, not a measurement).
func TestRunTiny(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	common := []string{"--loadgen", "builtin", "--duration", "150ms", "--warmup", "30ms", "--after", "100ms",
		"--conns", "4", "--burst-writers", "2", "--keys", "200", "--burst", "300", "--settle-max", "1ms", "--query-keys", "3000",
		"--hook-module", filepath.Join("..", "..", "wasm-examples", "c", "malicious", "malicious.wasm"),
		"--hook-module-heavy", filepath.Join("..", "..", "wasm-examples", "rust", "json-schema-precommit", "json-schema-precommit.wasm"),
		"--mr-objects", "300", "--mr-module", filepath.Join("..", "..", "wasm-examples", "go", "wordcount-map", "wordcount-map.wasm"),
		"--mr-fixture", filepath.Join("..", "..", "plugins", "wasmhost", "testdata", "hooks.wasm")}
	args := append([]string{"--slices", "3", "--data-dir", filepath.Join(dir, "data"), "--json", jsonPath}, common...)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"GOMAXPROCS=", "nproc=", "loadgen: builtin", "share this machine", "get-cairn",
		"put-dw0-cairn", "put-dw0-store", "put-dw0-store-rw", "store reference (put phase)", "PUT dw=0 cairn/store", "put-dw1-c4", "put-dw1-c4-sim2ms", "get-during-burst", "get-after-burst", "put-precommit-c", "put-precommit-rust", "instance pool of bench_rust", "keys=stream", "2i range http", "RSS above idle",
		"put-precommit-plugin", "mapred-values-plugin", "mapred-wordcount-wasm", "process plugin (accept, gRPC)", "targets met:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line is not the JSON result: %v\n%s", err, lines[len(lines)-1])
	}
	file, err := os.ReadFile(jsonPath)
	if err != nil || strings.TrimSpace(string(file)) != lines[len(lines)-1] {
		t.Fatalf("--json file: %v %q", err, file)
	}
	if len(res.Phases) != 29 || len(res.Ratios) != 17 || len(res.Limits) != 1 || res.Burst == nil || res.Burst.Requests != 300 || res.Slices != 3 {
		t.Fatalf("result: %+v", res)
	}
	for _, p := range res.Phases {
		if p.Requests == 0 || p.RPS <= 0 || p.Errors != 0 {
			t.Errorf("phase %+v", p)
		}
	}

	// --cpuprofile: one profile per measured phase (pairs run one after the other);
	// --put-refs=false: the put phase measures the bare handler and Cairn only.
	args = append([]string{"--phases", "get,put", "--put-refs=false", "--cpuprofile", filepath.Join(dir, "prof")}, common...)
	stdout.Reset()
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	for _, name := range []string{"prof.get-bare.pprof", "prof.get-cairn.pprof", "prof.put-dw0-bare.pprof", "prof.put-dw0-cairn.pprof"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", name, err)
		}
	}
	lines = strings.Split(strings.TrimSpace(stdout.String()), "\n")
	res = result{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 4 || res.Phases[2].Name != "put-dw0-bare" || res.Phases[3].Name != "put-dw0-cairn" ||
		len(res.Ratios) != 2 || res.Ratios[1].Target != 0.5 || strings.Contains(stdout.String(), "store reference") {
		t.Fatalf("--put-refs=false: %+v\n%s", res, &stdout)
	}
}

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "--keys", "500", "--phases", "get,burst"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Keys != 500 || o.Burst != 20000 || o.Duration.Seconds() != 1 || !o.Phases["get"] || o.Phases["put"] || !o.PutRefs {
		t.Fatalf("%+v", o)
	}
	if o, err := parseFlags([]string{"--put-refs=false"}, &bytes.Buffer{}); err != nil || o.PutRefs {
		t.Errorf("--put-refs=false: %v, PutRefs %v", err, o.PutRefs)
	}
	for _, bad := range [][]string{{"--loadgen", "ab"}, {"--phases", "get,nope"}, {"--conns", "0"}, {"extra"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if code := run(context.Background(), []string{"--loadgen", "nope"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
}
