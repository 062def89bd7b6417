package main

// Crash test: a child server takes concurrent durable writes, is killed with SIGKILL in
// the middle of them and restarted on the same data directory. The store must open, and
// every write that was acknowledged must be there with its value.

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// crashWrite is one attempted write and whether the server acknowledged it.
type crashWrite struct {
	key, value string
	acked      bool
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	s := startProcess(t)
	// A client of its own: the kill breaks its connections.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}, Timeout: 10 * time.Second}
	put := func(base, path, value string) bool {
		req, err := http.NewRequest("PUT", base+path, strings.NewReader(value))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "text/plain")
		r, err := client.Do(req)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return err == nil && r.StatusCode/100 == 2
	}

	const (
		writers     = 24 // distinct keys each
		overwriters = 4  // one key each, rewritten with increasing sequence numbers
		loadFor     = 1500 * time.Millisecond
	)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		attempts []crashWrite
		// per overwriter: last acknowledged and last attempted sequence number
		lastAcked = make([]int, overwriters)
		lastTried = make([]int, overwriters)
	)
	base := s.URL
	deadline := time.Now().Add(10 * time.Second) // writers stop at the first failure, or then
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			dw := "1"
			if w%4 == 0 {
				dw = "all"
			}
			for i := 0; time.Now().Before(deadline); i++ {
				k := fmt.Sprintf("w%02d-%06d", w, i)
				v := fmt.Sprintf("value of %s: %s", k, strings.Repeat(string(rune('a'+w%26)), 50+i%200))
				ok := put(base, "/buckets/crash/keys/"+k+"?dw="+dw, v)
				mu.Lock()
				attempts = append(attempts, crashWrite{k, v, ok})
				mu.Unlock()
				if !ok {
					return
				}
			}
		}(w)
	}
	for o := 0; o < overwriters; o++ {
		wg.Add(1)
		go func(o int) {
			defer wg.Done()
			for seq := 1; time.Now().Before(deadline); seq++ {
				mu.Lock()
				lastTried[o] = seq
				mu.Unlock()
				if !put(base, fmt.Sprintf("/buckets/crash/keys/ow-%d?dw=1", o), strconv.Itoa(seq)) {
					return
				}
				mu.Lock()
				lastAcked[o] = seq
				mu.Unlock()
			}
		}(o)
	}
	time.Sleep(loadFor)
	mu.Lock()
	before := len(attempts)
	mu.Unlock()
	s.Kill() // mid-load: the writers are still going
	wg.Wait()
	if before == 0 {
		t.Fatal("no write attempted before the kill")
	}

	s.Restart()
	if strings.Contains(s.stderr.String(), "level=ERROR") {
		t.Errorf("errors on restart:\n%s", s.output())
	}

	acked, inflight := 0, 0
	var failures []string
	var fmu sync.Mutex
	fail := func(f string, a ...any) {
		fmu.Lock()
		failures = append(failures, fmt.Sprintf(f, a...))
		fmu.Unlock()
	}
	jobs := make(chan crashWrite)
	var rg sync.WaitGroup
	for i := 0; i < 16; i++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for w := range jobs {
				r, err := s.tryGet(t, "/buckets/crash/keys/"+w.key)
				switch {
				case err != nil:
					fail("reading %s after the restart: %v", w.key, err)
				case r.StatusCode == 200 && string(r.Body) == w.value:
				case !w.acked && r.StatusCode == 404:
					// an unacknowledged write may be lost
				case w.acked:
					fail("acknowledged write %s lost: %d %q", w.key, r.StatusCode, r.Body)
				default:
					fail("unacknowledged write %s reads back wrong: %d %q", w.key, r.StatusCode, r.Body)
				}
			}
		}()
	}
	for _, w := range attempts {
		if w.acked {
			acked++
		} else {
			inflight++
		}
		jobs <- w
	}
	close(jobs)
	rg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	for o := 0; o < overwriters; o++ {
		r := s.get(t, fmt.Sprintf("/buckets/crash/keys/ow-%d", o))
		if lastAcked[o] == 0 && r.StatusCode == 404 {
			continue
		}
		got, err := strconv.Atoi(string(r.Body))
		if r.StatusCode != 200 || err != nil || got < lastAcked[o] || got > lastTried[o] {
			t.Errorf("overwritten key ow-%d: %d %q; want the last acknowledged value %d or the in-flight %d",
				o, r.StatusCode, r.Body, lastAcked[o], lastTried[o])
		}
	}
	t.Logf("%d writes acknowledged, %d unacknowledged, before SIGKILL", acked, inflight)
	if acked < writers {
		t.Errorf("only %d writes acknowledged: the load did not run", acked)
	}

	// The restarted store takes writes, shuts down cleanly and opens again.
	s.mustPut(t, "/buckets/crash/keys/after", "after restart")
	s.Stop()
	s.Restart()
	expect(t, s.get(t, "/buckets/crash/keys/after"), 200, ptr("after restart"))
	s.Stop()

	// Offline, the recovered store's objects, index postings and reaps agree.
	out, err := exec.Command(cairnBin, "check", "--data-dir", s.DataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn check after crash recovery: %v\n%s", err, out)
	}
}
