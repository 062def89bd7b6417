package main

// The hostile-input suite: every attack of docs/operating.md's "Limits and security" runs
// against the real binary in a TestHostile* test (hostile_*_test.go), and each ends by
// asserting, with assertServing, that the server still answers on both interfaces.

import (
	"net/http"
	"testing"
	"time"
)

// pingClient asks on a new connection each time: an attack on connections must not
// hide behind one kept open from before.
var pingClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// assertServing fails the test unless the server still answers GET /ping on the
// key-value interface and GET /riak-cs/ping on the object-storage interface (when it is
// served), each within 5 seconds on a new connection, and the process has not exited.
func assertServing(t testing.TB, s *child) {
	t.Helper()
	select {
	case <-s.waited:
		t.Fatalf("the server exited (%v)\n%s", s.waitErr, s.output())
	default:
	}
	cl := s.client(pingClient)
	urls := []string{s.URL + "/ping"}
	if s.S3Addr != "" {
		urls = append(urls, s.S3URL+"/riak-cs/ping")
	}
	for _, u := range urls {
		resp, err := cl.Get(u)
		if err != nil {
			t.Fatalf("the server no longer answers %s: %v\n%s", u, err, s.output())
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d after the attack, want 200\n%s", u, resp.StatusCode, s.output())
		}
	}
}
