// Package coretest runs Cairn's HTTP side in a test's process: core/server builds the KV
// and S3 interfaces with all their middleware over a fresh store, exactly as the binary
// does, and serves them on free loopback ports with its own listeners (connection limits,
// the Expect filter, header timeouts), so HTTP clients and raw-socket tests talk to it
// over real TCP. What the binary's flags set is a server.Config field here.
//
// Use it from the external test package of an HTTP package (package kvapi_test,
// s3api_test, ...), which may import core/server:
//
//	s := coretest.Start(t, coretest.Config(t))
//	r := s.Do(t, "PUT", "/buckets/b/keys/k", coretest.Hdr{"Content-Type", "text/plain"}, "v")
//
// A test needs the real binary (cmd/cairn's harness) only for what a process has: the
// command line, signals, being killed, its memory, plugin processes.
package coretest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/server"
)

// Version is the version the servers report (the binary's tests use the same).
const Version = "0.0.0-e2e"

// Config returns the binary's default configuration with both interfaces on free
// loopback ports and a fresh private data directory.
func Config(t testing.TB) server.Config {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.KVListen, cfg.S3Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	if err := os.Chmod(cfg.DataDir, 0o700); err != nil { // as docs/operating.md asks
		t.Fatal(err)
	}
	return cfg
}

// Server is Cairn's HTTP side running in the test's process.
type Server struct {
	t   testing.TB
	cfg server.Config
	srv *server.Server
	log *LogBuffer

	// URL and Addr are the KV interface's base URL and host:port; S3URL and S3Addr the
	// object-storage interface's ("" when cfg.S3Listen is empty).
	URL, Addr     string
	S3URL, S3Addr string
	// DataDir is the data directory (absolute).
	DataDir string
}

// Start builds the server from cfg (see Config), starts listening, and stops it at the
// end of the test.
func Start(t testing.TB, cfg server.Config) *Server {
	t.Helper()
	s := &Server{t: t, cfg: cfg, log: &LogBuffer{}}
	s.start()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("coretest: closing the server: %v", err)
		}
	})
	return s
}

// start runs server.New and Start on s.cfg, as cmd/cairn serve does.
func (s *Server) start() {
	s.t.Helper()
	var level slog.Level
	_ = level.UnmarshalText([]byte(s.cfg.LogLevel)) // validated by server.New
	logger := slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: level}))
	if err := server.PrepareDataDir(s.cfg.DataDir, logger); err != nil {
		s.t.Fatalf("coretest: %v", err)
	}
	srv, err := server.New(s.cfg, Version, logger)
	if err != nil {
		s.t.Fatalf("coretest: %v", err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Close()
		s.t.Fatalf("coretest: %v", err)
	}
	s.srv = srv
	s.DataDir = srv.Config().DataDir
	s.URL, s.Addr = srv.KVURL(), srv.KVAddr().String()
	s.S3URL, s.S3Addr = srv.S3URL(), ""
	if a := srv.S3Addr(); a != nil {
		s.S3Addr = a.String()
	}
}

// Close shuts the server down gracefully (as SIGTERM does); closing twice is a no-op.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	s.srv = nil
	return err
}

// Restart closes the server and builds a new one on the same data directory and
// configuration (on new free ports).
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.Close(); err != nil {
		s.t.Fatalf("coretest: restart: %v", err)
	}
	s.cfg.DataDir = s.DataDir
	s.start()
}

// Server returns the running core/server (for its services: KV, S3).
func (s *Server) Server() *server.Server { return s.srv }

// Log returns what the server has logged so far (text format, from cfg.LogLevel up).
func (s *Server) Log() string { return s.log.String() }

// Admin returns the admin credential: the configured one, or the one the server created
// in its data directory.
func (s *Server) Admin() server.Credential {
	s.t.Helper()
	if s.cfg.AdminKeyID != "" {
		return server.Credential{KeyID: s.cfg.AdminKeyID, KeySecret: s.cfg.AdminKeySecret}
	}
	b, err := os.ReadFile(filepath.Join(s.DataDir, server.AdminCredentialsFile))
	if err != nil {
		s.t.Fatalf("coretest: admin credential: %v", err)
	}
	var c server.Credential
	if err := json.Unmarshal(b, &c); err != nil || c.KeyID == "" {
		s.t.Fatalf("coretest: admin credential %q: %v", b, err)
	}
	return c
}

// CreateType creates the bucket type name with props (a JSON object of properties, ""
// for none), as `cairn bucket-type create` does.
func (s *Server) CreateType(name, props string) {
	s.t.Helper()
	m := map[string]json.RawMessage{}
	if props != "" {
		if err := json.Unmarshal([]byte(props), &m); err != nil {
			s.t.Fatalf("coretest: bucket type %s props %q: %v", name, props, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.KV().CreateType(ctx, name, m); err != nil {
		s.t.Fatalf("coretest: create bucket type %s: %v", name, err)
	}
}

// LogBuffer is a goroutine-safe log capture.
type LogBuffer struct {
	mu  sync.Mutex // guards buf
	buf strings.Builder
}

var _ io.Writer = (*LogBuffer)(nil)

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
