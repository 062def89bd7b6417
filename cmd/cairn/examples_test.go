package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exampleWASM reads the committed module of wasm-examples/<dir>.
func exampleWASM(t testing.TB, dir string) string {
	t.Helper()
	name := filepath.Base(dir)
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm-examples", dir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExampleHooksThroughServer runs the example modules where they belong: registered
// on a running server and named in bucket properties.
func TestExampleHooksThroughServer(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // WebAssembly modules compile slowly under -race in process
	jsonCT := hdr{"Content-Type", "application/json"}

	t.Run("go/email-precommit", func(t *testing.T) {
		putModule(t, s, "email", exampleWASM(t, "go/email-precommit"), 201)
		s.setProps(t, "users", `{"precommit":[{"mod":"email","fun":"normalize_email"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/users/keys/u1", jsonCT, `{"name":"Alice","email":" Alice@Example.COM"}`), 204, nil)
		r := s.get(t, "/buckets/users/keys/u1")
		expect(t, r, 200, ptr(`{"email":"alice@example.com","name":"Alice"}`))
		expectHeader(t, r, "X-Store-Index-Email_bin", "alice@example.com")
		r = s.do(t, "PUT", "/buckets/users/keys/u2", hdr{"Content-Type", "text/plain"}, "not json")
		expect(t, r, 403, ptr("the value must be a JSON object"))
		expect(t, s.get(t, "/buckets/users/keys/u2"), 404, nil)
	})

	t.Run("rust/json-schema-precommit", func(t *testing.T) {
		putModule(t, s, "schema", exampleWASM(t, "rust/json-schema-precommit"), 201)
		s.setProps(t, "people", `{"precommit":[{"mod":"schema","fun":"validate"}]}`)
		expect(t, s.do(t, "PUT", "/buckets/people/keys/p1", jsonCT, `{"name":"Bob","email":"bob@example.com","age":42,"role":"member"}`), 204, nil)
		r := s.do(t, "PUT", "/buckets/people/keys/p2", jsonCT, `{"name":"Eve","email":"eve@example.com","age":"old"}`)
		expect(t, r, 403, nil)
		if !strings.Contains(string(r.Body), "$.age") {
			t.Errorf("the reason does not name the failing path: %q", r.Body)
		}
		expect(t, s.get(t, "/buckets/people/keys/p2"), 404, nil)
		expect(t, s.do(t, "DELETE", "/buckets/people/keys/p1", nil, ""), 204, nil)
	})

	t.Run("assemblyscript/prefix-keyfun", func(t *testing.T) {
		putModule(t, s, "prefix", exampleWASM(t, "assemblyscript/prefix-keyfun"), 201)
		s.setProps(t, "acct", `{"chash_keyfun":{"mod":"prefix","fun":"prefix_hash"}}`)
		a := s.get(t, "/buckets/acct/keys/user42:profile/preflist")
		b := s.get(t, "/buckets/acct/keys/user42:orders/preflist")
		expect(t, a, 200, nil)
		if string(a.Body) != string(b.Body) {
			t.Errorf("related keys placed apart: %s vs %s", a.Body, b.Body)
		}
		spread := map[string]bool{}
		for _, u := range []string{"user1", "user2", "user3", "user4", "user5", "user6"} {
			spread[string(s.get(t, "/buckets/acct/keys/"+u+":profile/preflist").Body)] = true
		}
		if len(spread) < 2 {
			t.Errorf("six prefixes all placed in one partition: the keyfun does not spread keys")
		}
	})
}

// vmKB reads a field (VmRSS, VmHWM) of a process's /proc status, in KiB.
func vmKB(t testing.TB, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestMaliciousModuleContained registers wasm-examples/c/malicious and runs its
// infinite loop, memory bomb and unbounded recursion as precommits of a running server:
// each write fails with 500 and stores nothing, the server answers other requests
// meanwhile, and its memory stays within the instances' caps plus a margin.
func TestMaliciousModuleContained(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // its memory is measured
	putModule(t, s, "evil", exampleWASM(t, "c/malicious"), 201)
	for _, fun := range []string{"ok", "spin", "bomb", "deep"} {
		s.setProps(t, "evil-"+fun, `{"precommit":[{"mod":"evil","fun":"`+fun+`"}]}`)
	}
	pid := s.cmd.Process.Pid
	baseline := vmKB(t, pid, "VmRSS")

	// Attack with 8 concurrent writers while a reader keeps reading.
	s.mustPut(t, "/buckets/plain/keys/k", "still here", "Content-Type", "text/plain")
	done := make(chan struct{})
	var reads, readFailures atomic.Int64
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			r, err := s.tryGet(t, "/buckets/plain/keys/k")
			if err != nil || r.StatusCode != 200 {
				readFailures.Add(1)
			}
			reads.Add(1)
		}
	}()
	var wg sync.WaitGroup
	statuses := make(chan string, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, fun := range []string{"spin", "bomb", "deep", "bomb", "spin"} {
				key := "/buckets/evil-" + fun + "/keys/k" + strconv.Itoa(i*10+j)
				req, _ := http.NewRequest("PUT", s.URL+key, strings.NewReader("x"))
				req.Header.Set("Content-Type", "text/plain")
				resp, err := httpClient.Do(req)
				if err != nil {
					statuses <- fun + ": " + err.Error()
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 500 || !strings.Contains(string(body), "precommit hook evil:"+fun) {
					statuses <- fmt.Sprintf("%s: %d %q", fun, resp.StatusCode, body)
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	close(statuses)
	for st := range statuses {
		t.Errorf("malicious write answered %s, want 500 naming the hook", st)
	}
	if reads.Load() == 0 || readFailures.Load() > 0 {
		t.Errorf("during the attack: %d reads, %d failed", reads.Load(), readFailures.Load())
	}
	// Nothing was stored, the well-behaved function still works, the server is healthy.
	for _, fun := range []string{"spin", "bomb", "deep"} {
		expect(t, s.get(t, "/buckets/evil-"+fun+"/keys/k0"), 404, nil)
	}
	expect(t, s.do(t, "PUT", "/buckets/evil-ok/keys/k", hdr{"Content-Type", "text/plain"}, "fine"), 204, nil)
	expect(t, s.get(t, "/ping"), 200, nil)

	// Memory: at most the pool's instances (2 x GOMAXPROCS) of 16 MiB each, plus a margin.
	peak := vmKB(t, pid, "VmHWM")
	const capKB, margin = 16 << 10, 48 << 10
	if limit := baseline + 2*runtime.NumCPU()*capKB + margin; peak > limit {
		t.Errorf("peak RSS %d KiB, above baseline %d KiB + instances' caps + margin = %d KiB", peak, baseline, limit)
	}
	t.Logf("RSS baseline %d KiB, peak during the attack %d KiB", baseline, peak)
}

// TestAuditPostcommit checks the C audit example through a running server: every write
// logs one audit line, and the client never waits for it.
func TestAuditPostcommit(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // WebAssembly modules compile slowly under -race in process
	putModule(t, s, "audit", exampleWASM(t, "c/audit-postcommit"), 201)
	s.setProps(t, "users", `{"postcommit":[{"mod":"audit","fun":"audit"}]}`)
	expect(t, s.do(t, "PUT", "/buckets/users/keys/u1", hdr{"Content-Type", "application/json"}, `{"name":"Alice"}`), 204, nil)
	expect(t, s.do(t, "DELETE", "/buckets/users/keys/u1", nil, ""), 204, nil)
	waitFor(t, 5*time.Second, "two audit lines in the log", func() bool {
		out := s.stderr.String()
		return strings.Contains(out, `\"op\":\"put\",\"bucket_type\":\"default\",\"bucket\":\"users\",\"key\":\"u1\"`) &&
			strings.Contains(out, `\"op\":\"delete\"`)
	})
}
