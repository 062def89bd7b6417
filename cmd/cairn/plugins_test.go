package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// End-to-end tests of process plugins: the example plugins of plugins/examples and the
// test plugin testdata/pointsplugin are built, listed in a plugins directory with their
// checksums, and run by the server.

// pluginSources are the plugins the tests build, by name.
var pluginSources = map[string]string{
	"changelog": "../../plugins/examples/changelog",
	"quota":     "../../plugins/examples/quota",
	"wordcount": "../../plugins/examples/wordcount",
	"points":    "./testdata/pointsplugin",
}

var pluginBuild struct {
	once sync.Once
	dir  string
	err  error
}

// pluginsDir returns a directory holding every plugin of pluginSources, built once per
// test run, and their SHA256SUMS.
func pluginsDir(t testing.TB) string {
	t.Helper()
	pluginBuild.once.Do(func() {
		// Beside the binary under test, in the directory runTests removes.
		dir := filepath.Join(filepath.Dir(cairnBin), "plugins")
		if err := os.Mkdir(dir, 0o755); err != nil {
			pluginBuild.err = err
			return
		}
		pluginBuild.dir = dir
		var sums strings.Builder
		names := make([]string, 0, len(pluginSources))
		for name := range pluginSources {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			out := filepath.Join(dir, name)
			cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out, pluginSources[name])
			if msg, err := cmd.CombinedOutput(); err != nil {
				pluginBuild.err = fmt.Errorf("building plugin %s: %w\n%s", name, err, msg)
				return
			}
			sum, err := fileSHA256(out)
			if err != nil {
				pluginBuild.err = err
				return
			}
			fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		}
		pluginBuild.err = os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o644)
	})
	if pluginBuild.err != nil {
		t.Fatal(pluginBuild.err)
	}
	return pluginBuild.dir
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// startPluginServer starts a server with every test plugin, their working directory
// (change log, quota file) in work.
func startPluginServer(t *testing.T, work string, args ...string) *child {
	t.Helper()
	dir := pluginsDir(t)
	return startServerOpts(t, serverOpts{
		process: true, // the plugin processes get the server's environment
		args:    append([]string{"--plugins-dir", dir}, args...),
		env: []string{
			"CHANGELOG_PATH=" + filepath.Join(work, "changelog.jsonl"),
			"QUOTA_FILE=" + filepath.Join(work, "quota.json"),
		},
	})
}

// pluginStat reads one plugin figure from /stats.
func pluginStat(t testing.TB, s *child, name, what string) any {
	t.Helper()
	return statsOf(t, s)["plugin_"+name+"_"+what]
}

// pluginPID returns the running process of plugin name, from /stats (0 when it is down).
func pluginPID(t testing.TB, s *child, name string) int {
	t.Helper()
	pid, _ := pluginStat(t, s, name, "pid").(float64)
	return int(pid)
}

// processGone reports whether pid has exited (a zombie counts as gone).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// TestPluginPoints runs every extension point through process plugins: the change-log
// postcommit and the quota precommit examples, a rewriting precommit, a keyfun, a
// linkfun, and the word count map and reduce (compared with the WebAssembly twin).
func TestPluginPoints(t *testing.T) {
	work := t.TempDir()
	s := startPluginServer(t, work)

	t.Run("precommit and postcommit examples", func(t *testing.T) {
		s.setProps(t, "photos", `{"precommit":[{"mod":"quota","fun":"check"}],"postcommit":[{"mod":"plugin:changelog","fun":"append"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/photos/keys/p1", hdr{"Content-Type", "text/plain"}, "one"), 204, nil)
		// The quota file now says the bucket is full.
		quota := `{"buckets": {"photos": {"full": true, "message": "photos is over its plan"}}}`
		if err := os.WriteFile(filepath.Join(work, "quota.json"), []byte(quota), 0o644); err != nil {
			t.Fatal(err)
		}
		r := s.do(t, "PUT", "/buckets/photos/keys/p2", hdr{"Content-Type", "text/plain"}, "two")
		expect(t, r, 403, nil)
		if !strings.Contains(string(r.Body), "photos is over its plan") {
			t.Errorf("the rejection does not carry the quota's message: %s", r)
		}
		expect(t, s.get(t, "/buckets/photos/keys/p2"), 404, nil)
		// Deletes free space: always accepted.
		expect(t, s.do(t, "DELETE", "/buckets/photos/keys/p1", nil, ""), 204, nil)
		if err := os.Remove(filepath.Join(work, "quota.json")); err != nil {
			t.Fatal(err)
		}
		expect(t, s.do(t, "PUT", "/buckets/photos/keys/p3", hdr{"Content-Type", "text/plain"}, "three!"), 204, nil)

		// The change log has one line per committed write. Postcommit hooks run
		// asynchronously on a pool of workers (as in Riak), so lines of writes made in
		// quick succession may come in either order: compare them as a set.
		var lines []map[string]any
		waitFor(t, 10*time.Second, "three change-log lines", func() bool {
			b, _ := os.ReadFile(filepath.Join(work, "changelog.jsonl"))
			lines = nil
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) == nil {
					lines = append(lines, m)
				}
			}
			return len(lines) >= 3
		})
		want := []struct {
			op, key string
			size    float64
		}{{"put", "p1", 3}, {"delete", "p1", 0}, {"put", "p3", 6}}
		if len(lines) != len(want) {
			t.Fatalf("%d change-log lines, want %d: %v", len(lines), len(want), lines)
		}
		for _, w := range want {
			found := false
			for _, l := range lines {
				found = found || l["op"] == w.op && l["key"] == w.key && l["bucket"] == "photos" && l["size"] == w.size
			}
			if !found {
				t.Errorf("no change-log line with op %s key %s size %v in %v", w.op, w.key, w.size, lines)
			}
		}
	})

	t.Run("rewriting precommit", func(t *testing.T) {
		s.setProps(t, "stamped", `{"precommit":[{"mod":"points","fun":"stamp"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/stamped/keys/k", hdr{"Content-Type", "text/plain", "X-Riak-Meta-Owner", "bob"}, "v"), 204, nil)
		r := s.get(t, "/buckets/stamped/keys/k")
		expect(t, r, 200, ptr("v"))
		expectHeader(t, r, "X-Store-Meta-Stamped", "yes")
		expectHeader(t, r, "X-Store-Meta-Owner", "bob")
		expect(t, s.get(t, "/buckets/stamped/index/stamped_bin/yes"), 200, ptr(`{"keys":["k"]}`))
	})

	t.Run("a large object through a rewriting precommit", func(t *testing.T) {
		big := strings.Repeat("0123456789abcdef", 6<<16) // 6 MiB, above gRPC's default 4 MiB
		expect(t, s.do(t, "PUT", "/buckets/stamped/keys/big", hdr{"Content-Type", "text/plain"}, big), 204, nil)
		r := s.get(t, "/buckets/stamped/keys/big")
		expect(t, r, 200, nil)
		if string(r.Body) != big {
			t.Errorf("the large object came back with %d bytes, want %d", len(r.Body), len(big))
		}
		expectHeader(t, r, "X-Store-Meta-Stamped", "yes")
	})

	t.Run("failing precommits", func(t *testing.T) {
		s.setProps(t, "failing", `{"precommit":[{"mod":"points","fun":"fail"}]}`)
		r := s.do(t, "PUT", "/buckets/failing/keys/k", hdr{"Content-Type", "text/plain"}, "v")
		expect(t, r, 500, nil)
		if !strings.Contains(string(r.Body), "the fail hook always fails") {
			t.Errorf("the failure does not carry the plugin's message: %s", r)
		}
		s.setProps(t, "slow", `{"precommit":[{"mod":"points","fun":"slow"}]}`)
		r = s.do(t, "PUT", "/buckets/slow/keys/k", hdr{"Content-Type", "text/plain"}, "v")
		expect(t, r, 500, nil)
		if !strings.Contains(string(r.Body), "timed out") {
			t.Errorf("a precommit past its deadline: %s", r)
		}
		expect(t, s.get(t, "/buckets/failing/keys/k"), 404, nil)
		expect(t, s.get(t, "/buckets/slow/keys/k"), 404, nil)
	})

	t.Run("unknown names are refused when set", func(t *testing.T) {
		for _, props := range []string{
			`{"precommit":[{"mod":"points","fun":"nope"}]}`,
			`{"precommit":[{"mod":"plugin:nope","fun":"check"}]}`,
			`{"postcommit":[{"mod":"quota","fun":"check"}]}`, // a precommit, not a postcommit
			`{"chash_keyfun":{"mod":"points","fun":"stamp"}}`,
		} {
			r := s.do(t, "PUT", "/buckets/refused/props", hdr{"Content-Type", "application/json"}, `{"props":`+props+`}`)
			expect(t, r, 400, nil)
		}
	})

	t.Run("keyfun", func(t *testing.T) {
		s.setProps(t, "placed", `{"chash_keyfun":{"mod":"points","fun":"first_byte"}}`)
		a := s.get(t, "/buckets/placed/keys/apple/preflist")
		b := s.get(t, "/buckets/placed/keys/avocado/preflist")
		c := s.get(t, "/buckets/placed/keys/zucchini/preflist")
		expect(t, a, 200, nil)
		if string(a.Body) != string(b.Body) || string(a.Body) == string(c.Body) {
			t.Errorf("first-byte placement: apple %s, avocado %s, zucchini %s", a.Body, b.Body, c.Body)
		}
	})

	t.Run("linkfun", func(t *testing.T) {
		s.setProps(t, "graph", `{"linkfun":{"mod":"points","fun":"json_links"}}`)
		s.mustPut(t, "/buckets/graph/keys/a", `{"links":[["graph","b","next"],["graph","c","other"]]}`, "Content-Type", "application/json")
		s.mustPut(t, "/buckets/graph/keys/b", `{"links":[]}`, "Content-Type", "application/json")
		s.mustPut(t, "/buckets/graph/keys/c", `{}`, "Content-Type", "application/json")
		r := s.get(t, "/buckets/graph/keys/a/_,next,1")
		expect(t, r, 200, nil)
		if !strings.Contains(string(r.Body), "Location: /buckets/graph/keys/b") || strings.Contains(string(r.Body), "/keys/c") {
			t.Errorf("walk through the plugin's linkfun:\n%s", r)
		}
	})

	t.Run("map and reduce", func(t *testing.T) {
		docs := map[string]string{
			"d1": "the quick brown fox", "d2": "The lazy dog; the END", "d3": "fox and dog and fox",
		}
		for k, v := range docs {
			s.mustPut(t, "/buckets/docs/keys/"+k, v, "Content-Type", "text/plain")
		}
		putModule(t, s, "wc", exampleWASM(t, "go/wordcount-map"), 201)
		job := func(lang, mod string) string {
			return `{"inputs":"docs","query":[{"map":{"language":"` + lang + `","module":"` + mod + `","function":"wordcount","arg":{"min_length":3}}},` +
				`{"reduce":{"language":"` + lang + `","module":"` + mod + `","function":"sum_counts"}}]}`
		}
		var results []map[string]float64
		for _, j := range []string{job("erlang", "wordcount"), job("erlang", "plugin:wordcount"), job("wasm", "wc")} {
			r := s.do(t, "POST", "/mapred", hdr{"Content-Type", "application/json"}, j)
			expect(t, r, 200, nil)
			var out []map[string]float64
			if err := json.Unmarshal(r.Body, &out); err != nil || len(out) != 1 {
				t.Fatalf("job %s: %v\n%s", j, err, r)
			}
			results = append(results, out[0])
		}
		want := map[string]float64{"the": 3, "quick": 1, "brown": 1, "fox": 3, "lazy": 1, "dog": 2, "end": 1, "and": 2}
		for i, got := range results {
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("job %d counted %v, want %v", i, got, want)
			}
		}
	})
}

// TestPluginKilledUnderLoad kills a precommit plugin while writers hammer its bucket:
// the server stays up, the plugin comes back, and every write is whole or absent (an
// acknowledged write has the precommit's rewrite and its index posting; a refused one
// left nothing).
func TestPluginKilledUnderLoad(t *testing.T) {
	s := startPluginServer(t, t.TempDir())
	s.setProps(t, "load", `{"precommit":[{"mod":"points","fun":"stamp"}]}`)
	pid := pluginPID(t, s, "points")
	if pid == 0 {
		t.Fatalf("no pid for the points plugin in /stats: %v", statsOf(t, s))
	}

	const writers = 8
	var (
		stop     atomic.Bool
		mu       sync.Mutex // guards statuses
		statuses = map[string]int{}
		wg       sync.WaitGroup
		errs     = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				key := fmt.Sprintf("w%d-%05d", w, n)
				req, _ := http.NewRequest("PUT", s.URL+"/buckets/load/keys/"+key, strings.NewReader("value of "+key))
				req.Header.Set("Content-Type", "text/plain")
				r, err := s.trySend(t, req)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				statuses[key] = r.StatusCode
				mu.Unlock()
			}
		}()
	}
	count := func(code int) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range statuses {
			if c == code {
				n++
			}
		}
		return n
	}
	waitFor(t, 30*time.Second, "writes before the kill", func() bool { return count(204) >= 200 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := count(204)
	waitFor(t, 60*time.Second, "the plugin back and writes succeeding again", func() bool {
		p := pluginPID(t, s, "points")
		return p != 0 && p != pid && count(204) >= before+200
	})
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a writer lost its connection: %v", err)
	}
	expect(t, s.get(t, "/ping"), 200, nil)

	mu.Lock()
	defer mu.Unlock()
	var ok []string
	for key, code := range statuses {
		switch code {
		case 204:
			ok = append(ok, key)
			r := s.get(t, "/buckets/load/keys/"+key)
			expect(t, r, 200, ptr("value of "+key))
			expectHeader(t, r, "X-Store-Meta-Stamped", "yes")
		case 500:
			expect(t, s.get(t, "/buckets/load/keys/"+key), 404, nil)
		default:
			t.Errorf("PUT %s answered %d", key, code)
		}
	}
	sort.Strings(ok)
	want, _ := json.Marshal(map[string][]string{"keys": ok})
	r := s.get(t, "/buckets/load/index/stamped_bin/yes")
	var got map[string][]string
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("index query: %v\n%s", err, r)
	}
	sort.Strings(got["keys"])
	if g, _ := json.Marshal(got); string(g) != string(want) {
		t.Errorf("the index does not list exactly the acknowledged writes (%d acknowledged, %d listed)", len(ok), len(got["keys"]))
	}
	t.Logf("%d writes acknowledged, %d refused while the plugin was down; restarts: %v",
		len(ok), len(statuses)-len(ok), pluginStat(t, s, "points", "restarts_total"))
}

// TestPluginLifecycle: plugins stop with the server, and die with it when it is killed;
// a plugin whose checksum does not match is refused at start.
func TestPluginLifecycle(t *testing.T) {
	s := startPluginServer(t, t.TempDir())
	var pids []int
	for name := range pluginSources {
		pid := pluginPID(t, s, name)
		if pid == 0 {
			t.Fatalf("plugin %s has no pid in /stats", name)
		}
		pids = append(pids, pid)
	}
	s.Stop()
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("plugin process %d outlived the server's shutdown", pid)
		}
	}

	s.Restart()
	pids = pids[:0]
	for name := range pluginSources {
		pid := pluginPID(t, s, name)
		if pid == 0 {
			t.Fatalf("plugin %s has no pid in /stats after the restart", name)
		}
		pids = append(pids, pid)
	}
	s.Kill()
	waitFor(t, 10*time.Second, "plugins to exit after the server was killed", func() bool {
		for _, pid := range pids {
			if !processGone(pid) {
				return false
			}
		}
		return true
	})

	// A checksum that does not match: the server refuses to start.
	dir := t.TempDir()
	src := pluginsDir(t)
	b, err := os.ReadFile(filepath.Join(src, "quota"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "quota"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := strings.Repeat("0", 64) + "  quota\n"
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCairn(t, serverOpts{args: []string{"serve", "--kv-listen", "127.0.0.1:0", "--s3-listen", "",
		"--data-dir", t.TempDir(), "--plugins-dir", dir}})
	if code == 0 || !strings.Contains(stderr, "quota") || !strings.Contains(stderr, "does not match its sha256") {
		t.Errorf("a plugin with a wrong checksum: exit %d, stderr %s", code, stderr)
	}
}

// TestPluginConfigFile configures a plugin in the config file instead of a directory.
func TestPluginConfigFile(t *testing.T) {
	dir := pluginsDir(t)
	sum, err := fileSHA256(filepath.Join(dir, "quota"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cfg := map[string]any{"plugins": []map[string]any{{
		"name": "limits", "command": []string{filepath.Join(dir, "quota")}, "sha256": sum,
		"env": map[string]string{"QUOTA_FILE": filepath.Join(work, "q.json")},
	}}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(work, "cairn.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "q.json"), []byte(`{"buckets":{"full":{"full":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startProcess(t, "--config", path)
	s.setProps(t, "full", `{"precommit":[{"mod":"limits","fun":"check"}]}`)
	r := s.do(t, "PUT", "/buckets/full/keys/k", hdr{"Content-Type", "text/plain"}, "v")
	expect(t, r, 403, nil)
	if !strings.Contains(string(r.Body), "bucket full is full") {
		t.Errorf("rejection: %s", r)
	}
}

// TestPluginNames: a WebAssembly module may not be registered under a plugin's name; one
// stored before the plugin was configured shadows it for unprefixed names, which the
// server warns about at start, and plugin:NAME still reaches the plugin.
func TestPluginNames(t *testing.T) {
	work := t.TempDir()
	s := startPluginServer(t, work)
	putModule(t, s, "quota", fixtureWASM(t, "hooks.wasm"), 409)

	plain := startServer(t)
	putModule(t, plain, "quota", fixtureWASM(t, "hooks.wasm"), 201)
	plain.Stop()
	s2 := startServerOpts(t, serverOpts{process: true, dataDir: plain.DataDir, args: []string{"--plugins-dir", pluginsDir(t)},
		env: []string{"QUOTA_FILE=" + filepath.Join(work, "q.json"), "CHANGELOG_PATH=" + filepath.Join(work, "changelog.jsonl")}})
	// stderr is copied from its own pipe: the warning may land after the address line.
	waitFor(t, 10*time.Second, "a warning about the shadowed plugin", func() bool {
		e := s2.stderr.String()
		return strings.Contains(e, "module name shadowed") && strings.Contains(e, "module=quota")
	})
	if err := os.WriteFile(filepath.Join(work, "q.json"), []byte(`{"buckets":{"b":{"full":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s2.setProps(t, "b", `{"precommit":[{"mod":"quota","fun":"accept"}]}`) // the module's function
	expect(t, s2.do(t, "PUT", "/buckets/b/keys/k", hdr{"Content-Type", "text/plain"}, "v"), 204, nil)
	s2.setProps(t, "b", `{"precommit":[{"mod":"plugin:quota","fun":"check"}]}`)
	expect(t, s2.do(t, "PUT", "/buckets/b/keys/k", hdr{"Content-Type", "text/plain"}, "v"), 403, nil)
}

// TestPluginExitsMidCall: a precommit whose process exits in the middle of the call
// answers 500 and stores nothing; the plugin is restarted and serves again.
func TestPluginExitsMidCall(t *testing.T) {
	s := startPluginServer(t, t.TempDir())
	s.setProps(t, "exits", `{"precommit":[{"mod":"points","fun":"exit"}]}`)
	s.setProps(t, "stamps", `{"precommit":[{"mod":"points","fun":"stamp"}]}`)
	pid := pluginPID(t, s, "points")
	r := s.do(t, "PUT", "/buckets/exits/keys/k", hdr{"Content-Type", "text/plain"}, "v")
	expect(t, r, 500, nil)
	if !strings.Contains(string(r.Body), "points:exit") {
		t.Errorf("the failure does not name the hook: %s", r)
	}
	expect(t, s.get(t, "/buckets/exits/keys/k"), 404, nil)
	waitFor(t, 30*time.Second, "the plugin restarted and serving", func() bool {
		p := pluginPID(t, s, "points")
		if p == 0 || p == pid {
			return false
		}
		req, _ := http.NewRequest("PUT", s.URL+"/buckets/stamps/keys/k", strings.NewReader("v"))
		req.Header.Set("Content-Type", "text/plain")
		r, err := s.trySend(t, req)
		return err == nil && r.StatusCode == 204
	})
	expectHeader(t, s.get(t, "/buckets/stamps/keys/k"), "X-Store-Meta-Stamped", "yes")
}
