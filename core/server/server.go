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
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api"
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
	s3      *s3.Service
	// s3Handler is the object-storage interface with its middleware (nil when not served).
	s3Handler http.Handler

	kvSrv, s3Srv *http.Server
	kvLn, s3Ln   net.Listener
	// serveErr receives the results of the listeners' Serve calls.
	serveErr chan error
	serving  int
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
		log.Info("admin credentials (the KV /admin API and the S3 admin user)", "file", filepath.Join(dir, AdminCredentialsFile))
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
	if cfg.S3Listen != "" || cfg.KVAuth {
		// The object-storage service holds the users, KV access control's too.
		if err := s.openS3(cred); err != nil {
			s.Close()
			return nil, err
		}
	}
	mr := mapreduce.New(svc, reg, mapreduce.Config{MaxJobs: cfg.MapReduceMaxJobs,
		MaxResultBytes: cfg.MapReduceMaxResultSize, MaxJobBytes: cfg.MapReduceMaxJobSize, Logger: log})
	api := kvapi.New(svc, kvapi.Config{Dialect: d, Version: version, Stats: st.Report, Logger: log,
		Metrics: promhttp.HandlerFor(st.Prometheus(), promhttp.HandlerOpts{}),
		Modules: mods, AdminCheck: cred.Matches, MapReduce: mr,
		Guard: s.kvGuard(cred), RequireAuth: cfg.KVAuth, AllowInsecure: cfg.KVAuthAllowInsecure})
	s.handler = httpx.Chain(api.Handler(),
		httpx.RequestID,
		httpx.Recover(log, kvapi.WriteInternalError),
		httpx.AccessLog(log, httpx.AccessLogOptions{}),
		httpx.Metrics(st, "kv"),
	)
	if cfg.S3Listen != "" {
		s.newS3API()
	}
	return s, nil
}

// openS3 builds the object-storage service and makes sure the admin user (the admin
// credential's key pair) exists.
func (s *Server) openS3(cred Credential) error {
	blobs, err := storage.OpenBlobs(filepath.Join(s.cfg.DataDir, BlobsDir))
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	svc, err := s3.New(s.db, s3.Config{MaxObjectSize: s.cfg.S3MaxObjectSize, Region: s.cfg.S3Region, Logger: s.log, Blobs: blobs,
		UploadTTL: s.cfg.S3UploadTTL})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.s3 = svc
	if _, err := svc.EnsureAdmin(context.Background(), cred.KeyID, cred.KeySecret); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.stats.AddSource(func() map[string]any {
		chunks, blobs := svc.Collected()
		return map[string]any{"s3_chunks_collected_total": chunks, "s3_blobs_collected_total": blobs}
	})
	return nil
}

// newS3API builds the object-storage interface over the service openS3 built.
func (s *Server) newS3API() {
	api := s3api.New(s.s3, s3api.Config{DataHost: s.cfg.S3DataHost, Dialect: s.cfg.Dialect, Logger: s.log})
	s.s3Handler = httpx.Chain(api.Handler(),
		httpx.RequestID,
		httpx.Recover(s.log, api.WriteInternalError),
		httpx.AccessLog(s.log, httpx.AccessLogOptions{}),
		httpx.Metrics(s.stats, "s3"),
	)
}

// BlobsDir is the directory, in the data directory, of the S3 interface's blob files.
const BlobsDir = "blobs"

// S3Handler returns the object-storage interface with its middleware (nil when
// S3Listen is empty), for in-process tests and benchmarks.
func (s *Server) S3Handler() http.Handler { return s.s3Handler }

// S3 returns the object-storage service (nil when neither served nor needed by KV
// access control, which authenticates its users).
func (s *Server) S3() *s3.Service { return s.s3 }

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
	var s3ln net.Listener
	if s.s3Handler != nil {
		if s3ln, err = net.Listen("tcp", s.cfg.S3Listen); err != nil {
			ln.Close()
			return fmt.Errorf("server: listen on %s: %w", s.cfg.S3Listen, err)
		}
	}
	s.serveErr = make(chan error, 2)
	s.kvLn, s.kvSrv = ln, s.httpServer(s.handler)
	s.serveOn(s.kvSrv, ln)
	if s3ln != nil {
		s.s3Ln, s.s3Srv = s3ln, s.httpServer(s.s3Handler)
		s.serveOn(s.s3Srv, s3ln)
	}
	return nil
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// serveOn serves srv on ln in a goroutine that Close waits for (through serveErr).
func (s *Server) serveOn(srv *http.Server, ln net.Listener) {
	s.serving++
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.serveErr <- err
	}()
}

// S3Addr returns the address the object-storage interface listens on (nil before
// Start or when it is not served).
func (s *Server) S3Addr() net.Addr {
	if s.s3Ln == nil {
		return nil
	}
	return s.s3Ln.Addr()
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
		s.serving--
	}
	return errors.Join(serveErr, s.Close())
}

// Close stops accepting requests, waits up to the shutdown timeout for in-flight ones,
// then stops the services and closes the store. It is safe to call on a server that was
// never started.
func (s *Server) Close() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	for _, srv := range []*http.Server{s.kvSrv, s.s3Srv} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("server: shutdown: %w", err))
			srv.Close()
		}
	}
	cancel()
	for ; s.serving > 0; s.serving-- {
		if err := <-s.serveErr; err != nil {
			errs = append(errs, err)
		}
	}
	s.kvSrv, s.s3Srv = nil, nil
	if s.s3 != nil {
		errs = append(errs, s.s3.Close())
		s.s3 = nil
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
