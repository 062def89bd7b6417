// Package server builds Cairn from its configuration: it opens the store, creates the
// services and the HTTP interfaces with their middleware, listens, and shuts everything
// down in order.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/modules"
	"github.com/cairnkv/cairn/core/stats"
	"github.com/cairnkv/cairn/core/storage"
)

// Server is a running (or ready to run) Cairn.
type Server struct {
	cfg     Config
	log     *slog.Logger
	db      *storage.DB
	kv      *kv.Service
	stats   *stats.Registry
	ext     *Extensions
	handler http.Handler

	kvSrv *http.Server
	kvLn  net.Listener
	// serveErr receives the result of the KV listener's Serve.
	serveErr chan error
}

// ErrDataDirLocked is returned (wrapped) by New when another process uses the data
// directory.
var ErrDataDirLocked = storage.ErrLocked

// New opens the store in cfg.DataDir and builds the services and handlers. It does not
// listen yet.
func New(cfg Config, version string, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := wire.ParseDialect(cfg.Dialect)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("server: data dir: %w", err)
	}
	cfg.DataDir = dir
	db, err := storage.Open(filepath.Join(dir, "leveldb"), storage.Options{BlockCacheSize: cfg.CacheSize, SyncLatency: cfg.SyncLatency})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	st := stats.New(stats.Config{NodeName: cfg.NodeName, Version: version, Dialect: cfg.Dialect,
		StorageBackend: "cairn_leveldb_backend", RingSize: 64})
	st.AddSource(db.Stats)
	if cfg.ObjectCacheSize == 0 {
		cfg.ObjectCacheSize = AutoObjectCacheSize()
	}
	cred := Credential{KeyID: cfg.AdminKeyID, KeySecret: cfg.AdminKeySecret}
	if cred.KeyID == "" {
		if cred, err = loadOrCreateCredential(dir); err != nil {
			db.Close()
			return nil, err
		}
	}
	var reg *hooks.Registry
	ext := cfg.Extensions
	if ext != nil {
		reg = hooks.NewRegistry(ext.Providers...)
	}
	svc, err := kv.New(db, kv.Config{NodeName: cfg.NodeName, Dialect: cfg.Dialect, ReapDelay: cfg.DeleteReapDelay,
		MaxValueSize: cfg.MaxObjectSize, ObjectCacheSize: cfg.ObjectCacheSize, Logger: log, Observer: st, Hooks: reg})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, log: log, db: db, kv: svc, stats: st, ext: ext}
	var mods *modules.Service
	if ext != nil && ext.Loader != nil {
		mods = modules.New(db, modules.Config{Loader: ext.Loader, Registry: reg, References: svc.ModuleReferences, Logger: log})
		if err := s.loadModules(mods); err != nil {
			s.Close()
			return nil, err
		}
	}
	st.AddSource(func() map[string]any {
		return map[string]any{"object_cache_bytes": svc.CacheBytes(), "postcommit_dropped_total": svc.PostcommitDropped()}
	})
	if ext != nil && ext.Stats != nil {
		st.AddSource(ext.Stats)
	}
	mr := mapreduce.New(svc, reg, mapreduce.Config{MaxJobs: cfg.MapReduceMaxJobs,
		MaxResultBytes: cfg.MapReduceMaxResultSize, MaxJobBytes: cfg.MapReduceMaxJobSize, Logger: log})
	api := kvapi.New(svc, kvapi.Config{Dialect: d, Version: version, Stats: st.Report, Logger: log,
		Metrics: promhttp.HandlerFor(st.Prometheus(), promhttp.HandlerOpts{}),
		Modules: mods, AdminCheck: cred.Matches, MapReduce: mr})
	s.handler = httpx.Chain(api.Handler(),
		httpx.RequestID,
		httpx.Recover(log, kvapi.WriteInternalError),
		httpx.AccessLog(log, httpx.AccessLogOptions{}),
		httpx.Metrics(st, "kv"),
	)
	return s, nil
}

// Handler returns the KV interface with its middleware (for in-process tests and
// benchmarks).
func (s *Server) Handler() http.Handler { return s.handler }

// KV returns the key-value service.
func (s *Server) KV() *kv.Service { return s.kv }

// Config returns the effective configuration (DataDir made absolute).
func (s *Server) Config() Config { return s.cfg }

// Start listens on the configured addresses and serves in the background. Use KVAddr for
// the bound address (a port of 0 picks a free one).
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.KVListen)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.cfg.KVListen, err)
	}
	s.kvLn = ln
	s.kvSrv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.serveErr = make(chan error, 1)
	go func() {
		err := s.kvSrv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.serveErr <- err
	}()
	return nil
}

// KVAddr returns the address the KV interface listens on (nil before Start).
func (s *Server) KVAddr() net.Addr {
	if s.kvLn == nil {
		return nil
	}
	return s.kvLn.Addr()
}

// Wait blocks until ctx is done or the listener fails, then shuts down.
func (s *Server) Wait(ctx context.Context) error {
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-s.serveErr:
		s.serveErr = nil
	}
	return errors.Join(serveErr, s.Close())
}

// Close stops accepting requests, waits up to the shutdown timeout for in-flight ones,
// then stops the services and closes the store. It is safe to call on a server that was
// never started.
func (s *Server) Close() error {
	var errs []error
	if s.kvSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		if err := s.kvSrv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("server: shutdown: %w", err))
			s.kvSrv.Close()
		}
		cancel()
		if s.serveErr != nil {
			if err := <-s.serveErr; err != nil {
				errs = append(errs, err)
			}
		}
		s.kvSrv = nil
	}
	if s.kv != nil {
		errs = append(errs, s.kv.Close())
		s.kv = nil
	}
	if s.ext != nil && s.ext.Close != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		errs = append(errs, s.ext.Close(ctx))
		cancel()
		s.ext = nil
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
		s.db = nil
	}
	return errors.Join(errs...)
}

// loadModules installs the stored modules, then registers the *.wasm files of the
// modules directory.
func (s *Server) loadModules(mods *modules.Service) error {
	ctx := context.Background()
	if err := mods.LoadAll(ctx); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.cfg.ModulesDir == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(s.cfg.ModulesDir, "*.wasm"))
	if err != nil {
		return fmt.Errorf("server: modules dir: %w", err)
	}
	for _, f := range files {
		code, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("server: modules dir: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".wasm")
		info, _, err := mods.Put(ctx, name, code)
		if err != nil {
			return fmt.Errorf("server: module %s: %w", f, err)
		}
		s.log.Info("module registered from the modules directory", "module", name, "sha256", info.SHA256, "functions", info.Functions)
	}
	return nil
}
