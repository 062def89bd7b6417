package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureWASM reads a committed module of the WebAssembly host's test fixtures.
func fixtureWASM(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "plugins", "wasmhost", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// putModule registers a module through the admin API.
func putModule(t testing.TB, s *child, name, code string, wantStatus int) *resp {
	t.Helper()
	id, secret := adminCred(t, s)
	r := s.do(t, "PUT", "/admin/modules/"+name, append(basic(id, secret), "Content-Type", "application/wasm"), code)
	expect(t, r, wantStatus, nil)
	return r
}

func TestWASMHooks(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // WebAssembly modules compile slowly under -race in process
	code := fixtureWASM(t, "hooks.wasm")
	jsonCT := hdr{"Content-Type", "application/json"}

	// Registration: info JSON, idempotent re-put, the module listed and downloadable.
	r := putModule(t, s, "fx", code, 201)
	var info struct {
		Name      string   `json:"name"`
		Kind      string   `json:"kind"`
		SHA256    string   `json:"sha256"`
		Size      int      `json:"size"`
		Functions []string `json:"functions"`
	}
	if err := json.Unmarshal(r.Body, &info); err != nil || info.Name != "fx" || info.Kind != "wasm" || info.Size != len(code) || len(info.SHA256) != 64 {
		t.Fatalf("module info %s: %v", r.Body, err)
	}
	if !strings.Contains(strings.Join(info.Functions, ","), "reject") {
		t.Fatalf("functions %v lack reject", info.Functions)
	}
	putModule(t, s, "fx", code, 200)
	id, secret := adminCred(t, s)
	r = s.do(t, "GET", "/admin/modules/fx", append(basic(id, secret), "Accept", "application/wasm"), "")
	expect(t, r, 200, &code)
	r = s.do(t, "GET", "/admin/modules", basic(id, secret), "")
	expect(t, r, 200, nil)
	if !strings.Contains(string(r.Body), `"name":"fx"`) {
		t.Errorf("list lacks fx: %s", r.Body)
	}

	// Bucket properties must name existing functions.
	r = s.do(t, "PUT", "/buckets/b/props", jsonCT, `{"props":{"precommit":[{"mod":"fx","fun":"nope"}]}}`)
	expect(t, r, 400, nil)
	if !strings.Contains(string(r.Body), "unknown_hook") {
		t.Errorf("400 body: %s", r.Body)
	}
	expect(t, s.do(t, "PUT", "/buckets/b/props", jsonCT, `{"props":{"precommit":[{"mod":"nomod","fun":"accept"}]}}`), 400, nil)

	// Reject → 403 with the reason; nothing stored.
	s.setProps(t, "rej", `{"precommit":[{"mod":"fx","fun":"accept"},{"mod":"wasm:fx","fun":"reject"}]}`)
	r = s.do(t, "PUT", "/buckets/rej/keys/k", hdr{"Content-Type", "text/plain"}, "v")
	expect(t, r, 403, ptr("rejected: no writes here"))
	expect(t, s.get(t, "/buckets/rej/keys/k"), 404, nil)

	// Replace → the hook's object is stored (value, metadata, index).
	s.setProps(t, "rep", `{"precommit":[{"mod":"fx","fun":"replace"}]}`)
	expect(t, s.do(t, "PUT", "/buckets/rep/keys/k", hdr{"Content-Type", "application/json"}, `{"a":1}`), 204, nil)
	r = s.get(t, "/buckets/rep/keys/k")
	expect(t, r, 200, ptr("replaced"))
	expectHeader(t, r, "Content-Type", "text/plain")
	expectHeader(t, r, "X-Store-Meta-By", "hook")
	expectHeader(t, r, "X-Store-Index-N_int", "7")

	// A crash, a timeout, a guest error: 500 with a message, nothing stored; the server
	// keeps serving.
	for _, fun := range []string{"trap", "loop", "fail"} {
		s.setProps(t, "bad-"+fun, `{"precommit":[{"mod":"fx","fun":"`+fun+`"}]}`)
		start := time.Now()
		r = s.do(t, "PUT", "/buckets/bad-"+fun+"/keys/k", hdr{"Content-Type", "text/plain"}, "v")
		expect(t, r, 500, nil)
		if !strings.Contains(string(r.Body), "precommit hook fx:"+fun) {
			t.Errorf("%s: 500 body %q does not name the hook", fun, r.Body)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", fun, d)
		}
		expect(t, s.get(t, "/buckets/bad-"+fun+"/keys/k"), 404, nil)
	}
	expect(t, s.get(t, "/ping"), 200, nil)

	// Deletes run the precommit too.
	s.mustPut(t, "/buckets/del/keys/k", "v", "Content-Type", "text/plain")
	s.setProps(t, "del", `{"precommit":[{"mod":"fx","fun":"reject"}]}`)
	expect(t, s.do(t, "DELETE", "/buckets/del/keys/k", nil, ""), 403, ptr("rejected: no writes here"))
	expect(t, s.get(t, "/buckets/del/keys/k"), 200, ptr("v"))

	// Postcommit failures are counted, never seen by the client.
	s.setProps(t, "post", `{"postcommit":[{"mod":"fx","fun":"fail"}]}`)
	before := statsOf(t, s)["postcommit_fail_total"].(float64)
	expect(t, s.do(t, "PUT", "/buckets/post/keys/k", hdr{"Content-Type", "text/plain"}, "v"), 204, nil)
	waitFor(t, 5*time.Second, "postcommit failure counted", func() bool {
		return statsOf(t, s)["postcommit_fail_total"].(float64) == before+1
	})
	r = s.get(t, "/metrics")
	if !strings.Contains(string(r.Body), `hook="postcommit"`) {
		t.Errorf("/metrics lacks the postcommit failure counter")
	}
	st := statsOf(t, s)
	if st["precommit_fail_total"].(float64) < 5 || st["wasm_calls_total"].(float64) < 8 {
		t.Errorf("stats: precommit_fail_total=%v wasm_calls_total=%v", st["precommit_fail_total"], st["wasm_calls_total"])
	}

	// A module in use cannot be deleted; once unused it can.
	r = s.do(t, "DELETE", "/admin/modules/fx", basic(id, secret), "")
	expect(t, r, 409, nil)
	if !strings.Contains(string(r.Body), "bucket default/rej precommit") {
		t.Errorf("409 body does not say where: %s", r.Body)
	}

	// Modules survive a restart.
	s.Stop()
	s.Restart()
	r = s.do(t, "PUT", "/buckets/rej/keys/k", hdr{"Content-Type", "text/plain"}, "v")
	expect(t, r, 403, ptr("rejected: no writes here"))

	for _, b := range []string{"rej", "rep", "bad-trap", "bad-loop", "bad-fail", "del", "post"} {
		expect(t, s.do(t, "DELETE", "/buckets/"+b+"/props", nil, ""), 204, nil)
	}
	expect(t, s.do(t, "DELETE", "/admin/modules/fx", basic(id, secret), ""), 204, nil)
	expect(t, s.do(t, "GET", "/admin/modules/fx", basic(id, secret), ""), 404, nil)
}

func TestModuleCLIAndModulesDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fromdir.wasm"), []byte(fixtureWASM(t, "hooks.wasm")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startProcess(t, "--modules-dir", dir) // WebAssembly modules compile slowly under -race in process
	s.setProps(t, "d", `{"precommit":[{"mod":"fromdir","fun":"reject"}]}`)
	expect(t, s.do(t, "PUT", "/buckets/d/keys/k", hdr{"Content-Type", "text/plain"}, "v"), 403, nil)

	wasmFile := filepath.Join(dir, "fromdir.wasm")
	code, out, errOut := runCairn(t, serverOpts{raw: true, args: []string{"module", "put", "cli", wasmFile,
		"--url", s.URL, "--data-dir", s.DataDir}})
	if code != 0 || !strings.HasPrefix(out, "cli sha256=") {
		t.Fatalf("cairn module put: exit %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = runCairn(t, serverOpts{raw: true, args: []string{"module", "list", "--url", s.URL, "--data-dir", s.DataDir}})
	if code != 0 || !strings.Contains(out, "cli") || !strings.Contains(out, "fromdir") {
		t.Fatalf("cairn module list: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runCairn(t, serverOpts{raw: true, args: []string{"module", "rm", "fromdir", "--url", s.URL, "--data-dir", s.DataDir}})
	if code != 1 || !strings.Contains(errOut, "default/d") {
		t.Fatalf("cairn module rm of a module in use: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCairn(t, serverOpts{raw: true, args: []string{"module", "rm", "cli", "--url", s.URL, "--data-dir", s.DataDir}})
	if code != 0 {
		t.Fatalf("cairn module rm: exit %d, %q", code, errOut)
	}
}
