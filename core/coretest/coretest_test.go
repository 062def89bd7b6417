package coretest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/coretest"
)

// TestServer drives the harness the way an HTTP test does: bucket types and properties,
// writes and reads, a raw exchange, the log, a restart on the same store, the admin
// credential.
func TestServer(t *testing.T) {
	t.Parallel()
	cfg := coretest.Config(t)
	cfg.AdminKeyID, cfg.AdminKeySecret = "ADMINKEYID", "admin-secret"
	s := coretest.Start(t, cfg)
	if s.S3Addr == "" || !strings.HasPrefix(s.S3URL, "http://") || !strings.HasPrefix(s.URL, "http://") {
		t.Fatalf("addresses: KV %s, S3 %s %s", s.URL, s.S3URL, s.S3Addr)
	}
	s.CreateType("multi", `{"allow_mult":true}`)
	s.SetProps(t, "b", `{"n_val":2}`)
	s.MustPut(t, "/buckets/b/keys/k", `{"a":1}`, "Content-Type", "application/json")
	s.MustPut(t, "/types/multi/buckets/b/keys/k", "one")
	s.MustPut(t, "/types/multi/buckets/b/keys/k", "two")

	r := s.Do(t, http.MethodGet, "/buckets/b/keys/k", nil, "")
	if r.StatusCode != http.StatusOK || string(r.Body) != `{"a":1}` || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET: %s", r)
	}
	r = s.Do(t, http.MethodGet, "/types/multi/buckets/b/keys/k", nil, "")
	if r.StatusCode != http.StatusMultipleChoices {
		t.Errorf("GET of two siblings: %s", r)
	}
	raw := coretest.RawExchange(t, s.Addr, "GET /buckets/b/props HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(raw, "HTTP/1.1 200 OK\r\n") || !strings.Contains(raw, `"n_val":2`) {
		t.Errorf("props: %q", raw)
	}
	if admin := s.Admin(); admin.KeyID != "ADMINKEYID" || admin.KeySecret != "admin-secret" {
		t.Errorf("admin credential %+v", admin)
	}
	s.Restart()
	r = s.Do(t, http.MethodGet, "/buckets/b/keys/k", coretest.Hdr{"Host", "cairn.example"}, "")
	if r.StatusCode != http.StatusOK || string(r.Body) != `{"a":1}` {
		t.Errorf("GET after the restart: %s", r)
	}
	if s.Server() == nil || s.DataDir != cfg.DataDir {
		t.Errorf("after the restart: server %v, data dir %s (want %s)", s.Server(), s.DataDir, cfg.DataDir)
	}
}

// TestAdminCreated shows the admin credential the server creates when none is
// configured, read back from the data directory, and the log that says where it is.
func TestAdminCreated(t *testing.T) {
	t.Parallel()
	s := coretest.Start(t, coretest.Config(t))
	if a := s.Admin(); len(a.KeyID) < 16 || len(a.KeySecret) < 16 {
		t.Errorf("created admin credential %+v", a)
	}
	coretest.WaitFor(t, "the log line about the admin credential", func() bool {
		return strings.Contains(s.Log(), "admin-credentials.json")
	})
}

// recorder is a testing.TB that records Errorf calls.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckFraming pins the framing rule the helpers check on every response.
func TestCheckFraming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		header http.Header
		te     []string
		body   string
		errors int
	}{
		{"content-length", 200, http.Header{"Content-Length": {"2"}}, nil, "OK", 0},
		{"no content-length", 200, http.Header{}, nil, "OK", 1},
		{"chunked", 200, http.Header{"Content-Length": {"2"}}, []string{"chunked"}, "OK", 1},
		{"204 empty", 204, http.Header{}, nil, "", 0},
		{"304 with a body", 304, http.Header{}, nil, "x", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/x"}}
			r := &coretest.Response{Response: &http.Response{StatusCode: c.status, Header: c.header,
				TransferEncoding: c.te, Request: req}, Body: []byte(c.body)}
			rec := &recorder{TB: t}
			coretest.CheckFraming(rec, r)
			if len(rec.errors) != c.errors {
				t.Errorf("%d errors %q, want %d", len(rec.errors), rec.errors, c.errors)
			}
		})
	}
}
