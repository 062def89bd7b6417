package main

// Item 2: the serve command — flags, CAIRN_* environment, config file, what it prints,
// graceful shutdown, the data-directory lock — and `cairn version`.

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCairn(t, serverOpts{args: []string{"version"}})
	if code != 0 || out != "cairn "+testVersion+"\n" || errOut != "" {
		t.Fatalf("cairn version: exit %d, stdout %q, stderr %q; want 0, %q, empty", code, out, errOut, "cairn "+testVersion+"\n")
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCairn(t, serverOpts{args: []string{"frobnicate"}})
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr %q; want 2 and the unknown command named", code, errOut)
	}
}

// TestServePrintsWhereAndStops checks the two start-up lines, and that SIGTERM and
// SIGINT both end the server gracefully (exit 0, "cairn: stopped") with its writes kept.
func TestServePrintsWhereAndStops(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			// A relative --data-dir is printed as an absolute path.
			s := startServerOpts(t, serverOpts{raw: true, dir: work, dataDir: filepath.Join(work, "rel"),
				args: []string{"--kv-listen", "127.0.0.1:0", "--s3-listen", "127.0.0.1:0", "--data-dir", "rel", "--dialect", "riak"}})
			lines := strings.Split(strings.TrimSuffix(s.stdout.String(), "\n"), "\n")
			wantFirst := regexp.MustCompile(`^cairn ` + regexp.QuoteMeta(testVersion) + `: key-value interface listening on http://127\.0\.0\.1:[1-9][0-9]*$`)
			wantS3 := regexp.MustCompile(`^cairn: object-storage interface listening on http://127\.0\.0\.1:[1-9][0-9]* \(buckets as \{bucket\}\.s3\.localhost or /\{bucket\}\)$`)
			if len(lines) < 3 || !wantFirst.MatchString(lines[0]) || !wantS3.MatchString(lines[1]) {
				t.Fatalf("start-up output:\n%s", s.output())
			}
			abs, _ := filepath.EvalSymlinks(work)
			wantSecond := []string{
				"cairn: data directory " + filepath.Join(work, "rel") + " (dialect riak)",
				"cairn: data directory " + filepath.Join(abs, "rel") + " (dialect riak)",
			}
			if lines[2] != wantSecond[0] && lines[2] != wantSecond[1] {
				t.Fatalf("third line %q, want %q", lines[2], wantSecond[0])
			}
			if _, err := os.Stat(filepath.Join(work, "rel")); err != nil {
				t.Fatalf("data directory not created: %v", err)
			}
			s.mustPut(t, "/buckets/b/keys/k", "kept")
			code := s.Signal(sig)
			if code != 0 || !strings.HasSuffix(s.stdout.String(), "cairn: stopped\n") {
				t.Fatalf("after %v: exit %d, want 0 and \"cairn: stopped\"\n%s", sig, code, s.output())
			}
			s.Restart()
			expect(t, s.get(t, "/buckets/b/keys/k"), 200, ptr("kept"))
			s.Stop()
		})
	}
}

func TestSecondProcessOnSameDataDirRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	code, out, errOut := runCairn(t, serverOpts{args: []string{"--kv-listen", "127.0.0.1:0", "--data-dir", s.DataDir}})
	want := "cairn: data directory " + s.DataDir + " is in use by another cairn process; stop it or choose another --data-dir\n"
	if code != 1 || errOut != want {
		t.Fatalf("second process: exit %d, stderr %q, stdout %q; want exit 1 and %q", code, errOut, out, want)
	}
	if strings.Contains(out, "listening") {
		t.Fatalf("the second process claims to listen: %q", out)
	}
	// The first one is unaffected.
	expect(t, s.get(t, "/ping"), 200, ptr("OK"))
	s.Stop()
}

// statsOf returns the /stats report.
func statsOf(t testing.TB, s *child) map[string]any {
	t.Helper()
	r := s.get(t, "/stats")
	expect(t, r, 200, nil)
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("/stats is not JSON: %v\n%s", err, r)
	}
	return m
}

// TestConfigSources checks every source of settings and their precedence: embedded
// defaults < config file (JSON keys are the flag names) < CAIRN_* environment < flags.
// The node name (shown in /stats), the dialect and the object size limit show the
// effective values.
func TestConfigSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeConfig := func(name string, m map[string]any) string {
		b, _ := json.Marshal(m)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfgFile := writeConfig("cairn.json", map[string]any{
		"kv-listen": "127.0.0.1:0", "node-name": "file@host", "dialect": "riak",
		"max-object-size": 100, "delete-reap-delay": "1s", "log-level": "warn",
	})
	type check struct {
		node, dialect string
		maxSize       int
	}
	cases := []struct {
		name string
		o    serverOpts
		want check
	}{
		{"flags", serverOpts{args: []string{"--node-name", "flag@host", "--dialect", "riak", "--max-object-size", "1KiB"}},
			check{"flag@host", "riak", 1024}},
		{"env", serverOpts{raw: true, env: []string{"CAIRN_KV_LISTEN=127.0.0.1:0", "CAIRN_S3_LISTEN=127.0.0.1:0", "CAIRN_DATA_DIR=" + filepath.Join(dir, "env"),
			"CAIRN_NODE_NAME=env@host", "CAIRN_DIALECT=riak", "CAIRN_MAX_OBJECT_SIZE=200"}},
			check{"env@host", "riak", 200}},
		{"config-flag", serverOpts{args: []string{"--config", cfgFile}}, check{"file@host", "riak", 100}},
		{"config-env", serverOpts{env: []string{"CAIRN_CONFIG=" + writeConfig("sizes.json", map[string]any{"node-name": "file2@host", "max-object-size": "1KiB"})}},
			check{"file2@host", "store", 1024}},
		{"env-over-file", serverOpts{args: []string{"--config=" + cfgFile}, env: []string{"CAIRN_NODE_NAME=env@host", "CAIRN_MAX_OBJECT_SIZE=300"}},
			check{"env@host", "riak", 300}},
		{"flag-over-env-and-file", serverOpts{args: []string{"--config", cfgFile, "--dialect", "store", "--node-name", "flag@host"},
			env: []string{"CAIRN_NODE_NAME=env@host", "CAIRN_DIALECT=riak"}},
			check{"flag@host", "store", 100}},
		{"defaults", serverOpts{}, check{"cairn@127.0.0.1", "store", 50 << 20}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startServerOpts(t, c.o)
			st := statsOf(t, s)
			if st["nodename"] != c.want.node {
				t.Errorf("nodename %v, want %q", st["nodename"], c.want.node)
			}
			if _, ok := st[c.want.dialect+"_core_version"]; !ok {
				t.Errorf("no %s_core_version in /stats: dialect not %s", c.want.dialect, c.want.dialect)
			}
			if !strings.Contains(s.stdout.String(), "(dialect "+c.want.dialect+")") {
				t.Errorf("start-up output does not name dialect %s:\n%s", c.want.dialect, s.output())
			}
			if c.want.maxSize < 1<<20 {
				expect(t, s.do(t, http.MethodPut, "/buckets/b/keys/at", hdr{"Content-Type", "text/plain"}, strings.Repeat("x", c.want.maxSize)), 204, nil)
				expect(t, s.do(t, http.MethodPut, "/buckets/b/keys/over", hdr{"Content-Type", "text/plain"}, strings.Repeat("x", c.want.maxSize+1)), 413, nil)
			}
			s.Stop()
		})
	}

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		bad := writeConfig("bad.json", map[string]any{"kv-listen": "127.0.0.1:0", "no-such-setting": 1})
		notJSON := filepath.Join(dir, "not.json")
		_ = os.WriteFile(notJSON, []byte("kv-listen = 1"), 0o644)
		for _, c := range []struct {
			name string
			o    serverOpts
			want string
		}{
			{"unknown-key", serverOpts{args: []string{"--config", bad}}, `unknown setting "no-such-setting"`},
			{"not-json", serverOpts{args: []string{"--config", notJSON}}, "config file " + notJSON},
			{"missing-file", serverOpts{args: []string{"--config", filepath.Join(dir, "nope.json")}}, "config file"},
			{"bad-dialect", serverOpts{args: []string{"--dialect", "mongo"}}, `dialect must be store or riak, not "mongo"`},
			{"bad-env", serverOpts{env: []string{"CAIRN_MAX_OBJECT_SIZE=lots"}}, "CAIRN_MAX_OBJECT_SIZE"},
			{"bad-flag", serverOpts{args: []string{"--no-such-flag"}}, "flag provided but not defined"},
			{"extra-args", serverOpts{args: []string{"--dialect", "store", "extra"}}, "unexpected arguments"},
			{"bad-log-level", serverOpts{args: []string{"--log-level", "loud"}}, `log-level must be debug, info, warn or error, not "loud"`},
			{"bad-size", serverOpts{args: []string{"--max-object-size", "0"}}, "max-object-size must be positive"},
			{"bad-duration", serverOpts{args: []string{"--delete-reap-delay", "soon"}}, "delete-reap-delay"},
		} {
			args := append([]string{"serve", "--data-dir", filepath.Join(dir, "d-"+c.name)}, c.o.args...)
			code, out, errOut := runCairn(t, serverOpts{args: args, env: c.o.env})
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(out, "listening") {
				t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, errOut, c.want)
			}
		}
	})

	t.Run("help", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCairn(t, serverOpts{args: []string{"serve", "-h"}})
		for _, f := range []string{"kv-listen", "data-dir", "dialect", "delete-reap-delay", "max-object-size", "log-level", "config", "CAIRN_KV_LISTEN"} {
			if !strings.Contains(out, f) {
				t.Errorf("serve -h does not mention %s on stdout:\n%s", f, out)
			}
		}
		if code != 0 || errOut != "" {
			t.Errorf("serve -h: exit %d, stderr %q; want 0 and nothing", code, errOut)
		}
	})
}

// TestListenAddressInUse: a server that cannot listen exits 1 and says why.
func TestListenAddressInUse(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	code, out, errOut := runCairn(t, serverOpts{args: []string{"--kv-listen", s.Addr, "--data-dir", t.TempDir()}})
	if code != 1 || !strings.Contains(errOut, "listen on "+s.Addr) || strings.Contains(out, "listening") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 naming the address", code, out, errOut)
	}
	expect(t, s.get(t, "/ping"), 200, ptr("OK"))
}

// TestLogFormatJSON: --log-format json writes one JSON object per line.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--log-format", "json", "--log-level", "debug")
	s.get(t, "/ping", "X-Request-Id", "json-log-id")
	s.Stop()
	found := false
	for _, l := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		if m["msg"] == "http request" && m["path"] == "/ping" && m["request_id"] == "json-log-id" {
			found = true
		}
	}
	if !found {
		t.Errorf("no JSON access log line for /ping naming its request id:\n%s", s.stderr.String())
	}
}

// TestLogLevel checks --log-level: debug logs every request (the access log), error logs
// none of them.
func TestLogLevel(t *testing.T) {
	t.Parallel()
	for _, lv := range []string{"debug", "error"} {
		t.Run(lv, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "--log-level", lv)
			s.get(t, "/ping")
			s.Stop()
			logged := strings.Contains(s.stderr.String(), "path=/ping")
			if (lv == "debug") != logged {
				t.Errorf("log level %s: request logged = %v\n%s", lv, logged, s.output())
			}
		})
	}
}

// TestShutdownFinishesInFlightRequests sends SIGTERM while a store is half-sent: the
// server waits for it, answers it, then exits 0 with the value stored.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	s := startProcess(t)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", s.URL+"/buckets/b/keys/slow", pr)
	req.Header.Set("Content-Type", "text/plain")
	req.ContentLength = 10
	done := make(chan *http.Response, 1)
	errc := make(chan error, 1)
	go func() {
		r, err := httpClient.Do(req)
		if err != nil {
			errc <- err
			return
		}
		r.Body.Close()
		done <- r
	}()
	if _, err := pw.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the handler is now reading the body
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case <-s.waited:
		t.Fatalf("exited with a request in flight\n%s", s.output())
	default:
	}
	if _, err := pw.Write([]byte("-half")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	select {
	case r := <-done:
		if r.StatusCode != 204 {
			t.Fatalf("in-flight store answered %d", r.StatusCode)
		}
	case err := <-errc:
		t.Fatalf("in-flight store failed: %v\n%s", err, s.output())
	case <-time.After(20 * time.Second):
		t.Fatal("in-flight store not answered")
	}
	if code, err := s.wait(20 * time.Second); code != 0 || err != nil {
		t.Fatalf("exit %d (%v) after SIGTERM\n%s", code, err, s.output())
	}
	if !strings.HasSuffix(s.stdout.String(), "cairn: stopped\n") {
		t.Fatalf("no \"cairn: stopped\"\n%s", s.output())
	}
	s.Restart()
	expect(t, s.get(t, "/buckets/b/keys/slow"), 200, ptr("first-half"))
	s.Stop()
}
