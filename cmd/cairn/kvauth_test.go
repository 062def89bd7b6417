package main

// End-to-end tests of KV access control (--kv-auth): users made with `cairn user`,
// grants made with `cairn user grant|revoke`, and what each permission opens.

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// grantCLI runs `cairn user SUB -- ARGS...` against s's key-value interface with s's
// data directory (the admin key comes from its credential file). The arguments follow
// "--": a key id may start with "-".
func grantCLI(t testing.TB, s *child, sub string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	argv := append([]string{"user", "--kv-url", s.URL, "--url", "http://" + s.S3Addr, "--data-dir", s.DataDir, sub, "--"}, args...)
	// The server's environment carries SSL_CERT_FILE when its certificate is a test CA's.
	return runCairn(t, serverOpts{args: argv, env: s.opts.env})
}

// mustGrantCLI runs a `cairn user` command that must succeed and returns its output.
func mustGrantCLI(t testing.TB, s *child, sub string, args ...string) string {
	t.Helper()
	code, out, errOut := grantCLI(t, s, sub, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("cairn user %s %v: exit %d, stderr %q, stdout %q", sub, args, code, errOut, out)
	}
	return out
}

// kvOp is one KV operation, the permission that opens it (on the default type) and the
// status it answers when allowed.
type kvOp struct {
	perm          string
	method, path  string
	ctype, body   string
	wantWhenAllow int
}

// kvOps is one operation or more for each permission, on bucket b of the default type
// (the server must hold b/k, b/d, a counter b/c, and allow_mult on b).
var kvOps = []kvOp{
	{"get", "GET", "/buckets/b/keys/k", "", "", 200},
	{"get", "GET", "/riak/b/k", "", "", 200},
	{"get", "GET", "/buckets/b/props", "", "", 200},
	{"get", "GET", "/buckets/b/keys/k/preflist", "", "", 200},
	{"get", "GET", "/buckets/b/counters/c", "", "", 200},
	{"get", "GET", "/buckets/b/keys/k/_,_,1", "", "", 200},
	{"get", "GET", "/types/default/props", "", "", 200},
	{"put", "PUT", "/buckets/b/keys/p", "text/plain", "v", 204},
	{"put", "POST", "/buckets/b/keys", "text/plain", "v", 201},
	{"put", "POST", "/buckets/b/counters/c", "", "1", 204},
	{"delete", "DELETE", "/buckets/b/keys/d", "", "", 204},
	{"list_keys", "GET", "/buckets/b/keys?keys=true", "", "", 200},
	{"list_buckets", "GET", "/buckets?buckets=true", "", "", 200},
	{"mapreduce", "POST", "/mapred", "application/json", `{"inputs":[["b","k"]],"query":[]}`, 200},
	{"index", "GET", "/buckets/b/index/f_bin/v", "", "", 200},
	{"set_props", "PUT", "/buckets/b/props", "application/json", `{"props":{"n_val":3,"allow_mult":true}}`, 204},
	{"admin", "PUT", "/types/default/props", "application/json", `{"props":{"n_val":3}}`, 204},
}

func (op kvOp) do(t testing.TB, s *child, auth hdr) *resp {
	t.Helper()
	h := append(hdr{}, auth...)
	if op.ctype != "" {
		h = append(h, "Content-Type", op.ctype)
	}
	return s.do(t, op.method, op.path, h, op.body)
}

// seedKVOps stores what kvOps read, as the admin.
func seedKVOps(t testing.TB, s *child, admin hdr) {
	t.Helper()
	for _, r := range []struct{ method, path, ctype, body string }{
		{"PUT", "/buckets/b/props", "application/json", `{"props":{"allow_mult":true}}`},
		{"PUT", "/buckets/b/keys/k", "text/plain", "value"},
		{"PUT", "/buckets/b/keys/d", "text/plain", "doomed"},
		{"POST", "/buckets/b/counters/c", "", "1"},
	} {
		if got := s.do(t, r.method, r.path, append(hdr{"Content-Type", r.ctype}, admin...), r.body); got.StatusCode/100 != 2 {
			t.Fatalf("seeding: %s", got)
		}
	}
}

// TestKVAuthPermissions: a user without grants is refused everything (403, Riak's text);
// each permission, granted alone with `cairn user grant` on the default type, opens
// exactly its operations, and `cairn user revoke` closes them again; the admin
// credential does everything; missing or wrong credentials and a disabled user are 401.
func TestKVAuthPermissions(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--kv-auth", "--kv-auth-allow-insecure")
	adminID, adminSecret := adminCred(t, s)
	admin := basic(adminID, adminSecret)
	seedKVOps(t, s, admin)
	u := cliCreateUser(t, s, "Kay", "kay@example.com")
	user := basic(u.KeyID, u.KeySecret)

	t.Run("unauthenticated", func(t *testing.T) {
		for _, h := range []hdr{nil, basic(u.KeyID, u.KeySecret+"x"), basic("NOSUCHKEY", u.KeySecret), basic(u.KeyID, "")} {
			r := kvOps[0].do(t, s, h)
			expect(t, r, http.StatusUnauthorized, nil)
			expectHeader(t, r, "WWW-Authenticate", `Basic realm="Cairn"`)
		}
		// Open resources answer without credentials.
		for _, p := range []string{"/ping", "/stats", "/"} {
			expect(t, s.do(t, "GET", p, nil, ""), http.StatusOK, nil)
		}
	})

	t.Run("no grants", func(t *testing.T) {
		for _, op := range kvOps {
			r := op.do(t, s, user)
			if r.StatusCode != http.StatusForbidden || !strings.HasPrefix(string(r.Body), "Permission denied: User '"+u.KeyID+"' does not have '") {
				t.Errorf("%s %s without grants:\n%s", op.method, op.path, r)
			}
		}
		if out := mustGrantCLI(t, s, "grants", u.KeyID); out != "TYPE  BUCKET  PERMISSIONS\n" {
			t.Errorf("grants of a new user:\n%s", out)
		}
	})

	perms := []string{"get", "put", "delete", "list_keys", "list_buckets", "mapreduce", "index", "set_props", "admin"}
	for _, perm := range perms {
		t.Run(perm, func(t *testing.T) {
			out := mustGrantCLI(t, s, "grant", u.KeyID, perm, "on", "default")
			if want := "default  *       " + perm + "\n"; !strings.HasSuffix(out, want) {
				t.Errorf("grant output:\n%s\nwant a line %q", out, want)
			}
			for _, op := range kvOps {
				r := op.do(t, s, user)
				switch {
				case op.perm == perm && r.StatusCode != op.wantWhenAllow:
					t.Errorf("with %s: %s %s:\n%s", perm, op.method, op.path, r)
				case op.perm != perm && r.StatusCode != http.StatusForbidden:
					t.Errorf("with only %s: %s %s (needs %s) not refused:\n%s", perm, op.method, op.path, op.perm, r)
				}
			}
			mustGrantCLI(t, s, "revoke", u.KeyID, perm, "on", "default")
			if r := kvOps[0].do(t, s, user); r.StatusCode != http.StatusForbidden {
				t.Errorf("after revoking %s:\n%s", perm, r)
			}
			// The delete removed b/d; put it back for the admin's turn.
			if perm == "delete" {
				s.do(t, "PUT", "/buckets/b/keys/d", append(hdr{"Content-Type", "text/plain"}, admin...), "doomed")
			}
		})
	}

	t.Run("bucket grant", func(t *testing.T) {
		// On one bucket: the bucket opens, another bucket and the type-level ops do not.
		mustGrantCLI(t, s, "grant", u.KeyID, "riak_kv.get,list_buckets", "on", "default", "b")
		expect(t, s.do(t, "GET", "/buckets/b/keys/k", user, ""), http.StatusOK, nil)
		r := s.do(t, "GET", "/buckets/other/keys/k", user, "")
		expect(t, r, http.StatusForbidden, ptr("Permission denied: User '"+u.KeyID+`' does not have 'riak_kv.get' on {<<"default">>,<<"other">>}`))
		expect(t, s.do(t, "GET", "/buckets?buckets=true", user, ""), http.StatusForbidden, nil)
		out := mustGrantCLI(t, s, "grants", u.KeyID)
		if !strings.Contains(out, "default  b       get,list_buckets\n") {
			t.Errorf("grants:\n%s", out)
		}
		mustGrantCLI(t, s, "revoke", u.KeyID, "get,list_buckets", "on", "default", "b")
	})

	t.Run("admin on any opens modules", func(t *testing.T) {
		expect(t, s.do(t, "GET", "/admin/modules", user, ""), http.StatusForbidden, ptr("Permission denied: User '"+u.KeyID+"' does not have 'cairn.admin' on ANY"))
		mustGrantCLI(t, s, "grant", u.KeyID, "admin", "on", "any")
		expect(t, s.do(t, "GET", "/admin/modules", user, ""), http.StatusOK, nil)
		// Grants stay the admin credential's.
		expect(t, s.do(t, "GET", "/admin/grants/"+u.KeyID, user, ""), http.StatusForbidden, nil)
		mustGrantCLI(t, s, "revoke", u.KeyID, "admin", "on", "any")
	})

	t.Run("disabled user", func(t *testing.T) {
		mustGrantCLI(t, s, "grant", u.KeyID, "get", "on", "any")
		expect(t, s.do(t, "GET", "/buckets/b/keys/k", user, ""), http.StatusOK, nil)
		mustGrantCLI(t, s, "disable", u.KeyID)
		expect(t, s.do(t, "GET", "/buckets/b/keys/k", user, ""), http.StatusUnauthorized, nil)
		mustGrantCLI(t, s, "enable", u.KeyID)
		expect(t, s.do(t, "GET", "/buckets/b/keys/k", user, ""), http.StatusOK, nil)
	})

	t.Run("admin credential", func(t *testing.T) {
		for _, op := range kvOps {
			if r := op.do(t, s, admin); r.StatusCode != op.wantWhenAllow {
				t.Errorf("as the admin: %s %s:\n%s", op.method, op.path, r)
			}
		}
	})

	t.Run("cli errors", func(t *testing.T) {
		for _, c := range []struct {
			sub  string
			args []string
			code int
			want string
		}{
			{"grant", []string{u.KeyID, "fly", "on", "default"}, 1, "unknown permission"},
			{"grant", []string{"NOSUCHKEY", "get", "on", "default"}, 1, "no such user"},
			{"grant", []string{u.KeyID, "get", "default"}, 2, "want KEYID PERM"},
			{"grant", []string{u.KeyID, "get", "on", "any", "b"}, 2, "a grant on any names no bucket"},
			{"grant", []string{u.KeyID, "get", "on", ""}, 2, "the bucket type is empty"},
			{"grants", nil, 2, "grants takes 1 argument"},
		} {
			code, _, errOut := grantCLI(t, s, c.sub, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("cairn user %s %v: exit %d, stderr %q; want %d and %q", c.sub, c.args, code, errOut, c.code, c.want)
			}
		}
	})
	assertServing(t, s)
}

// TestKVAuthPlainHTTPRefused: with --kv-auth and no TLS, a KV request is refused with
// 426 and Riak's text even with the admin credential; open resources still answer.
func TestKVAuthPlainHTTPRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--kv-auth")
	id, secret := adminCred(t, s)
	const msg = "Security is enabled and Cairn does not accept credentials over HTTP. Try HTTPS instead."
	expect(t, s.do(t, "GET", "/buckets/b/keys/k", basic(id, secret), ""), http.StatusUpgradeRequired, ptr(msg))
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", hdr{"Content-Type", "text/plain"}, "v"), http.StatusUpgradeRequired, ptr(msg))
	expect(t, s.do(t, "GET", "/stats", nil, ""), http.StatusOK, nil)
	assertServing(t, s)
}

// TestKVAuthOffAndRestart: without --kv-auth nothing changes (anonymous requests are
// served) but grants can be made ready; restarted with --kv-auth and without the S3
// listener, the user store still authenticates the user and the grants apply.
func TestKVAuthOffAndRestart(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", hdr{"Content-Type", "text/plain"}, "v"), http.StatusNoContent, nil)
	expect(t, s.do(t, "GET", "/buckets/b/keys/k", nil, ""), http.StatusOK, ptr("v"))
	expect(t, s.do(t, "GET", "/buckets?buckets=true", nil, ""), http.StatusOK, nil)
	u := cliCreateUser(t, s, "Off", "off@example.com")
	mustGrantCLI(t, s, "grant", u.KeyID, "get", "on", "default", "b")
	// Credentials are not needed, nor looked at.
	expect(t, s.do(t, "GET", "/buckets/b/keys/k", basic("bogus", "bogus"), ""), http.StatusOK, ptr("v"))
	s.Stop()

	s2 := startServerOpts(t, serverOpts{dataDir: s.DataDir, args: []string{"--kv-auth", "--kv-auth-allow-insecure", "--s3-listen", ""}})
	user := basic(u.KeyID, u.KeySecret)
	expect(t, s2.do(t, "GET", "/buckets/b/keys/k", user, ""), http.StatusOK, ptr("v"))
	expect(t, s2.do(t, "PUT", "/buckets/b/keys/k", append(hdr{"Content-Type", "text/plain"}, user...), "w"), http.StatusForbidden, nil)
	expect(t, s2.do(t, "GET", "/buckets/b/keys/k", nil, ""), http.StatusUnauthorized, nil)
	if s2.S3Addr != "" {
		t.Errorf("the S3 interface is served at %s with --s3-listen \"\"", s2.S3Addr)
	}
	assertServing(t, s2)
}

// TestRealClientsAuth runs riak-js, unmodified, with Basic credentials in its headers
// option against a server with --kv-auth over TLS, as Riak's security requires. riak-js
// only speaks plain HTTP, so the script hands its requests to Node's https.request (the
// transport; riak-js's own code runs as published), trusting the test CA through
// NODE_EXTRA_CA_CERTS. The grants are made with `cairn user grant` over HTTPS, which
// trusts the CA through SSL_CERT_FILE as any Go program does.
func TestRealClientsAuth(t *testing.T) {
	node, modules, scripts := realClientsSetup(t, filepath.Join("auth", "*.js"))
	ca := newTestCA(t)
	dir := t.TempDir()
	caFile, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "kv.pem"), filepath.Join(dir, "kv.key")
	writePEM(t, caFile, "CERTIFICATE", ca.cert.Raw)
	ca.issue(t, cert, key, 7)
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startServerOpts(t, serverOpts{tlsRoots: ca.pool, env: []string{"SSL_CERT_FILE=" + caFile},
				args: []string{"--dialect", "riak", "--kv-auth", "--kv-tls-cert", cert, "--kv-tls-key", key}})
			if !strings.HasPrefix(s.URL, "https://") {
				t.Fatalf("the KV interface is not served over TLS: %s", s.URL)
			}
			u := cliCreateUser(t, s, "Riak JS", name+"@example.com")
			mustGrantCLI(t, s, "grant", u.KeyID, "get,put,delete,list_keys", "on", "default", "rjs")
			mustGrantCLI(t, s, "grant", u.KeyID, "mapreduce", "on", "any")
			runClientScript(t, s, node, script, modules, "RIAK_PROTOCOL=https", "NODE_EXTRA_CA_CERTS="+caFile,
				"RIAK_USER="+u.KeyID, "RIAK_PASSWORD="+u.KeySecret, "RIAK_BUCKET=rjs")
		})
	}
}

// TestKVAuthFlags: the switches take a bare flag, an explicit value, the environment
// and the config file, and refuse what is not a boolean.
func TestKVAuthFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "cairn.json")
	if err := os.WriteFile(file, []byte(`{"kv-auth": true, "kv-auth-allow-insecure": "1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                string
		args                []string
		env                 map[string]string
		auth, insecure, bad bool
	}{
		{"default", nil, nil, false, false, false},
		{"bare", []string{"--kv-auth"}, nil, true, false, false},
		{"both bare", []string{"--kv-auth", "--kv-auth-allow-insecure"}, nil, true, true, false},
		{"explicit false", []string{"--kv-auth=false"}, map[string]string{"CAIRN_KV_AUTH": "true"}, false, false, false},
		{"env", nil, map[string]string{"CAIRN_KV_AUTH": "true", "CAIRN_KV_AUTH_ALLOW_INSECURE": "TRUE"}, true, true, false},
		{"config file", []string{"--config", file}, nil, true, true, false},
		{"bad env", nil, map[string]string{"CAIRN_KV_AUTH": "yes please"}, false, false, true},
		{"bad flag", []string{"--kv-auth=maybe"}, nil, false, false, true},
	} {
		cfg, err := loadConfig(c.args, func(k string) string { return c.env[k] }, io.Discard)
		if (err != nil) != c.bad || (!c.bad && (cfg.KVAuth != c.auth || cfg.KVAuthAllowInsecure != c.insecure)) {
			t.Errorf("%s: kv-auth %v, allow-insecure %v, err %v; want %v, %v, error %v", c.name, cfg.KVAuth, cfg.KVAuthAllowInsecure, err,
				c.auth, c.insecure, c.bad)
		}
	}
}
