package main

// `cairn module put|list|get|rm` against a fake of the server's /admin/modules API.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

const (
	fakeKeyID     = "admin-id"
	fakeKeySecret = "admin-secret"
)

// fakeWasm returns bytes the fake admin API accepts as a module: the WebAssembly
// header followed by the comma-separated names of its functions.
func fakeWasm(funcs string) []byte {
	return append([]byte("\x00asm\x01\x00\x00\x00"), funcs...)
}

func fakeSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fakeAdmin fakes the server's module admin API, authentication included.
type fakeAdmin struct {
	mu      sync.Mutex        // guards modules and plugins
	modules map[string][]byte // name -> module bytes
	plugins map[string]bool   // names owned by another runtime
	inUse   map[string]string // name -> the bucket properties naming it
}

func newFakeAdmin(t *testing.T) (*fakeAdmin, *httptest.Server) {
	f := &fakeAdmin{
		modules: map[string][]byte{
			"audit": fakeWasm("validate,audit"),
			"keys":  fakeWasm("place"),
			"empty": fakeWasm(""),
		},
		plugins: map[string]bool{"geo": true},
		inUse:   map[string]string{"keys": "types/maps/props chash_keyfun"},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAdmin) info(name string, b []byte) map[string]any {
	funcs := []string{}
	if s := string(b[8:]); s != "" {
		funcs = strings.Split(s, ",")
	}
	return map[string]any{"name": name, "kind": "wasm", "sha256": fakeSum(b), "size": len(b),
		"functions": funcs, "wasi": false, "imports": []string{"cairn.output"}}
}

func (f *fakeAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	switch {
	case !ok:
		http.Error(w, "admin credentials required", http.StatusUnauthorized)
		return
	case id != fakeKeyID || secret != fakeKeySecret:
		http.Error(w, "wrong admin key", http.StatusForbidden)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.URL.Path == "/admin/modules" && r.Method == http.MethodGet {
		names := make([]string, 0, len(f.modules))
		for n := range f.modules {
			names = append(names, n)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(names))) // the client sorts
		list := []map[string]any{}
		for _, n := range names {
			list = append(list, f.info(n, f.modules[n]))
		}
		writeJSON(http.StatusOK, map[string]any{"modules": list})
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/admin/modules/")
	if !ok || name == "" || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	b, exists := f.modules[name]
	switch r.Method {
	case http.MethodPut:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/wasm" {
			http.Error(w, "Content-Type must be application/wasm", http.StatusUnsupportedMediaType)
			return
		}
		if f.plugins[name] {
			http.Error(w, "module name "+name+" belongs to the plugin runtime", http.StatusConflict)
			return
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		if !bytes.HasPrefix(body.Bytes(), []byte("\x00asm\x01\x00\x00\x00")) {
			http.Error(w, "invalid module: not a WebAssembly binary", http.StatusBadRequest)
			return
		}
		f.modules[name] = body.Bytes()
		code := http.StatusCreated
		if exists {
			code = http.StatusOK
		}
		writeJSON(code, f.info(name, body.Bytes()))
	case http.MethodGet:
		if !exists {
			http.Error(w, "no module "+name, http.StatusNotFound)
			return
		}
		if r.Header.Get("Accept") == "application/wasm" {
			w.Header().Set("Content-Type", "application/wasm")
			_, _ = w.Write(b)
			return
		}
		writeJSON(http.StatusOK, f.info(name, b))
	case http.MethodDelete:
		switch {
		case !exists:
			http.Error(w, "no module "+name, http.StatusNotFound)
		case f.inUse[name] != "":
			http.Error(w, "module "+name+" is named by "+f.inUse[name], http.StatusConflict)
		default:
			delete(f.modules, name)
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (f *fakeAdmin) module(name string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.modules[name]
	return b, ok
}

func TestModuleCommand(t *testing.T) {
	t.Parallel()
	newWasm := fakeWasm("check,score")
	newSum := fakeSum(newWasm)[:12]
	auditSum := fakeSum(fakeWasm("validate,audit"))
	creds := `{"key_id":"` + fakeKeyID + `","key_secret":"` + fakeKeySecret + `"}`
	key := []string{"--admin-key-id", fakeKeyID, "--admin-key-secret", fakeKeySecret}

	tests := []struct {
		name string
		// args after "module"; URL, DIR and FILE are replaced by the fake server's
		// URL, a temporary directory holding the credential file (when creds is set),
		// and the path of a file holding newWasm.
		args     []string
		env      map[string]string
		creds    string // the content of DIR/admin-credentials.json; "" for none
		wantCode int
		wantOut  string // exact stdout, or a regexp when it starts with "^"
		wantErr  string // a substring of stderr ("" = stderr empty)
		check    func(t *testing.T, f *fakeAdmin, dir string)
	}{
		{name: "put creates", args: append([]string{"put", "score", "FILE", "--url", "URL"}, key...),
			wantOut: "score sha256=" + newSum + " functions=check,score (created)\n",
			check: func(t *testing.T, f *fakeAdmin, _ string) {
				if b, ok := f.module("score"); !ok || !bytes.Equal(b, newWasm) {
					t.Fatalf("server has %q, %v; want the file's bytes", b, ok)
				}
			}},
		{name: "put replaces, flags first", args: append(append([]string{"--url", "URL"}, key...), "put", "audit", "FILE"),
			wantOut: "audit sha256=" + newSum + " functions=check,score (replaced)\n",
			check: func(t *testing.T, f *fakeAdmin, _ string) {
				if b, _ := f.module("audit"); !bytes.Equal(b, newWasm) {
					t.Fatalf("server has %q; want the file's bytes", b)
				}
			}},
		{name: "put, flags between arguments, key from env", args: []string{"put", "--url=URL", "score", "FILE"},
			env:     map[string]string{"CAIRN_ADMIN_KEY_ID": fakeKeyID, "CAIRN_ADMIN_KEY_SECRET": fakeKeySecret},
			wantOut: "score sha256=" + newSum + " functions=check,score (created)\n"},
		{name: "url from env, key from --data-dir", args: []string{"list", "--data-dir", "DIR"}, creds: creds,
			env:     map[string]string{"CAIRN_URL": "URL"},
			wantOut: "^NAME +SHA256 +SIZE +FUNCTIONS\naudit +" + auditSum[:12] + " +22 +validate,audit\nempty +[0-9a-f]{12} +8 +-\nkeys +[0-9a-f]{12} +13 +place\n$"},
		{name: "key from CAIRN_DATA_DIR", args: []string{"rm", "audit", "--url", "URL"}, creds: creds,
			env: map[string]string{"CAIRN_DATA_DIR": "DIR"},
			check: func(t *testing.T, f *fakeAdmin, _ string) {
				if _, ok := f.module("audit"); ok {
					t.Fatal("module audit still registered")
				}
			}},
		{name: "flags override env", args: append([]string{"rm", "audit", "--url", "URL"}, key...),
			env: map[string]string{"CAIRN_ADMIN_KEY_ID": "other", "CAIRN_ADMIN_KEY_SECRET": "other", "CAIRN_URL": "http://127.0.0.1:1"}},
		{name: "url without scheme", args: append([]string{"get", "keys", "--url", "HOSTPORT"}, key...),
			wantOut: "^\\{\n  \"functions\": \\[\n    \"place\"\n  \\],\n  \"imports\": \\[\n    \"cairn.output\"\n  \\],\n  \"kind\": \"wasm\",\n  \"name\": \"keys\",\n  \"sha256\": \"[0-9a-f]{64}\",\n  \"size\": 13,\n  \"wasi\": false\n\\}\n$"},
		{name: "get -o writes the bytes", args: append([]string{"get", "audit", "-o", "DIR/out.wasm", "--url", "URL"}, key...),
			check: func(t *testing.T, _ *fakeAdmin, dir string) {
				b, err := os.ReadFile(filepath.Join(dir, "out.wasm"))
				if err != nil || !bytes.Equal(b, fakeWasm("validate,audit")) {
					t.Fatalf("out.wasm = %q, %v", b, err)
				}
			}},
		{name: "get --output - writes to stdout", args: append([]string{"--output", "-", "get", "audit", "--url", "URL"}, key...),
			wantOut: string(fakeWasm("validate,audit"))},
		{name: "after --, all positional", args: append(append([]string{"--url", "URL"}, key...), "rm", "--", "-o"),
			wantCode: 1, wantErr: "cairn: module rm -o: no module -o (HTTP 404)\n"},

		// Failures the server reports.
		{name: "wrong key", args: []string{"list", "--url", "URL", "--admin-key-id", fakeKeyID, "--admin-key-secret", "nope"},
			wantCode: 1, wantErr: "cairn: module list: wrong admin key (HTTP 403; check the admin key)\n"},
		{name: "wrong key in the credential file", args: []string{"list", "--url", "URL", "--data-dir", "DIR"},
			creds: `{"key_id":"x","key_secret":"y"}`, wantCode: 1, wantErr: "wrong admin key (HTTP 403"},
		{name: "invalid module", args: append([]string{"put", "bad", "DIR/admin-credentials.json", "--url", "URL"}, key...),
			creds: creds, wantCode: 1, wantErr: "cairn: module put bad: invalid module: not a WebAssembly binary (HTTP 400)\n",
			check: func(t *testing.T, f *fakeAdmin, _ string) {
				if _, ok := f.module("bad"); ok {
					t.Fatal("module bad registered")
				}
			}},
		{name: "name of another runtime", args: append([]string{"put", "geo", "FILE", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "module name geo belongs to the plugin runtime (HTTP 409)"},
		{name: "get missing", args: append([]string{"get", "nope", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "cairn: module get nope: no module nope (HTTP 404)\n"},
		{name: "get -o missing writes nothing", args: append([]string{"get", "nope", "-o", "DIR/x.wasm", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "no module nope (HTTP 404)",
			check: func(t *testing.T, _ *fakeAdmin, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "x.wasm")); !os.IsNotExist(err) {
					t.Fatalf("x.wasm exists (%v)", err)
				}
			}},
		{name: "rm missing", args: append([]string{"rm", "nope", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "no module nope (HTTP 404)"},
		{name: "rm in use", args: append([]string{"rm", "keys", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "cairn: module rm keys: module keys is named by types/maps/props chash_keyfun (HTTP 409)\n",
			check: func(t *testing.T, f *fakeAdmin, _ string) {
				if _, ok := f.module("keys"); !ok {
					t.Fatal("module keys removed")
				}
			}},

		// Failures before any request.
		{name: "no key and no credential file", args: []string{"list", "--url", "URL", "--data-dir", "DIR"},
			wantCode: 1, wantErr: "no admin key: give --admin-key-id and --admin-key-secret"},
		{name: "credential file without secret", args: []string{"list", "--url", "URL", "--data-dir", "DIR"},
			creds: `{"key_id":"x"}`, wantCode: 1, wantErr: "key_id or key_secret is missing"},
		{name: "credential file not JSON", args: []string{"list", "--url", "URL", "--data-dir", "DIR"},
			creds: `key=x`, wantCode: 1, wantErr: "admin-credentials.json: invalid character"},
		{name: "missing file", args: append([]string{"put", "m", "DIR/none.wasm", "--url", "URL"}, key...),
			wantCode: 1, wantErr: "cairn: module put m: open "},
		{name: "server unreachable", args: append([]string{"list", "--url", "http://127.0.0.1:1"}, key...),
			wantCode: 1, wantErr: "cairn: module list: cannot reach the server"},
		{name: "bad url", args: append([]string{"list", "--url", "ftp://x"}, key...),
			wantCode: 1, wantErr: `--url "ftp://x" is not an http(s) URL`},

		// Usage errors.
		{name: "no command", args: nil, wantCode: 2, wantErr: "cairn module: missing command\nusage:"},
		{name: "unknown command", args: []string{"frob"}, wantCode: 2, wantErr: `unknown command "frob"`},
		{name: "put without file", args: []string{"put", "m"}, wantCode: 2, wantErr: "put takes 2 argument(s), got 1"},
		{name: "list with argument", args: []string{"list", "x"}, wantCode: 2, wantErr: "list takes 0 argument(s), got 1"},
		{name: "rm two names", args: []string{"rm", "a", "b"}, wantCode: 2, wantErr: "rm takes 1 argument(s), got 2"},
		{name: "-o with list", args: []string{"list", "-o", "x"}, wantCode: 2, wantErr: "-o applies to get only"},
		{name: "unknown flag", args: []string{"list", "--frob"}, wantCode: 2, wantErr: "flag provided but not defined: -frob"},
		{name: "flag without value", args: []string{"list", "--url"}, wantCode: 2, wantErr: "flag needs an argument: -url"},
		{name: "id without secret", args: []string{"list", "--admin-key-id", "x"}, wantCode: 2,
			wantErr: "give both --admin-key-id and --admin-key-secret, or neither"},
		{name: "help", args: []string{"-h"}, wantOut: moduleUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeAdmin(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "new.wasm")
			if err := os.WriteFile(file, newWasm, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.creds != "" {
				if err := os.WriteFile(filepath.Join(dir, adminCredentialsFile), []byte(tc.creds), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			subst := strings.NewReplacer("HOSTPORT", strings.TrimPrefix(srv.URL, "http://"),
				"URL", srv.URL, "DIR", dir, "FILE", file)
			args := []string{"module"}
			for _, a := range tc.args {
				args = append(args, subst.Replace(a))
			}
			getenv := func(k string) string { return subst.Replace(tc.env[k]) }
			var out, errb bytes.Buffer
			code := run(context.Background(), args, getenv, &out, &errb)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out.String(), errb.String())
			}
			if strings.HasPrefix(tc.wantOut, "^") {
				if !regexp.MustCompile(tc.wantOut).MatchString(out.String()) {
					t.Fatalf("stdout %q does not match %q", out.String(), tc.wantOut)
				}
			} else if out.String() != tc.wantOut {
				t.Fatalf("stdout %q, want %q", out.String(), tc.wantOut)
			}
			if tc.wantErr == "" && errb.Len() > 0 || !strings.Contains(errb.String(), tc.wantErr) {
				t.Fatalf("stderr %q, want it to contain %q", errb.String(), tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, f, dir)
			}
		})
	}
}

// TestModuleFakeAuth checks the fake itself refuses requests without the admin key,
// so that the command's successes above prove it sends the key.
func TestModuleFakeAuth(t *testing.T) {
	t.Parallel()
	_, srv := newFakeAdmin(t)
	tests := []struct {
		name       string
		id, secret string
		want       int
	}{
		{"none", "", "", http.StatusUnauthorized},
		{"wrong", fakeKeyID, "x", http.StatusForbidden},
		{"right", fakeKeyID, fakeKeySecret, http.StatusOK},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/modules", nil)
		if tc.id != "" {
			req.SetBasicAuth(tc.id, tc.secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}
