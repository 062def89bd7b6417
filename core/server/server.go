// Package server builds Cairn from its configuration: it opens the store, creates the
// services and the HTTP interfaces with their middleware, listens, and shuts everything
// down in order.
package server

import (
	"context"
	"crypto/tls"
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

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/jsblob"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/mapreduce"
	"github.com/cairnkv/cairn/core/modules"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api"
	"github.com/cairnkv/cairn/core/security"
	"github.com/cairnkv/cairn/core/stats"
	"github.com/cairnkv/cairn/core/storage"
)

// Server is a running (or ready to run) Cairn.
type Server struct {
	cfg Config
	log *slog.Logger
	db  storage.Store
	// node is the cluster node (nil standalone); db is then its replicated store.
	node *cluster.Node
	// jsBlobs is the S3 blob store in cluster mode (nil standalone).
	jsBlobs *jsblob.Store
	kv      *kv.Service
	mods    *modules.Service // nil without a module runtime
	stats   *stats.Registry
	ext     *Extensions
	handler http.Handler
	s3      *s3.Service
	// grants are the KV access-control grants (nil when the user store is not open).
	grants *security.Store
	// s3Handler is the object-storage interface with its middleware (nil when not served).
	s3Handler http.Handler
	// s3API is the object-storage interface itself (nil when not served).
	s3API *s3api.API

	kvSrv, s3Srv *http.Server
	kvLn, s3Ln   *httpx.ConnLimiter
	// kvCert and s3Cert are the listeners' TLS certificates (nil: plain HTTP).
	kvCert, s3Cert *certificate
	// bodyMemory is the budget of the KV interface's request bodies.
	bodyMemory *httpx.BodyMemory
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
	db, node, err := openStore(cfg, log)
	if err != nil {
		return nil, err
	}
	if node != nil {
		cfg.NodeName = cfg.ClusterNodeName()
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
		MaxValueSize: cfg.MaxObjectSize, ObjectCacheSize: cfg.ObjectCacheSize, Logger: log, Observer: st, Hooks: reg,
		MaxMetaEntries: cfg.MaxObjectMetaEntries, MaxHeaderBytes: cfg.MaxObjectHeaderBytes})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, log: log, db: db, kv: svc, stats: st, ext: ext, node: node}
	if node != nil {
		s.wireCluster(svc)
	}
	var mods *modules.Service
	if ext != nil && ext.Loader != nil {
		mods = modules.New(db, modules.Config{Loader: ext.Loader, Registry: reg, References: svc.ModuleReferences, Logger: log})
		s.mods = mods
		if err := s.loadModules(mods); err != nil {
			s.Close()
			return nil, err
		}
	}
	st.AddSource(func() map[string]any {
		reaped, reapedMinute := svc.ExpiredReaped()
		return map[string]any{"object_cache_bytes": svc.CacheBytes(), "postcommit_dropped_total": svc.PostcommitDropped(),
			"expired_reaped_total": reaped, "expired_reaped_one": reapedMinute,
			"expired_backlog_seconds": svc.ExpiryBacklog().Seconds()}
	})
	if err := s.prepareHTTP(); err != nil {
		s.Close()
		return nil, err
	}
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
		MaxResultBytes: cfg.MapReduceMaxResultSize, MaxJobBytes: cfg.MapReduceMaxJobSize, Logger: log,
		MaxJobsPerClient: cfg.MapReduceMaxJobsPerClient})
	api := kvapi.New(svc, kvapi.Config{Dialect: d, Version: version, Stats: st.Report, Logger: log,
		Metrics: promhttp.HandlerFor(st.Prometheus(), promhttp.HandlerOpts{}),
		Modules: mods, AdminCheck: cred.Matches, MapReduce: mr, Cluster: s.clusterStatus(), Membership: s.clusterMembership(),
		Guard: s.kvGuard(cred), RequireAuth: cfg.KVAuth, AllowInsecure: cfg.KVAuthAllowInsecure})
	s.handler = httpx.Chain(api.Handler(),
		httpx.RequestID,
		httpx.Recover(log, kvapi.WriteInternalError),
		httpx.AccessLog(log, httpx.AccessLogOptions{}),
		httpx.Metrics(st, "kv"),
		httpx.GuardBody(s.bodyLimits(s.bodyMemory)),
	)
	if cfg.S3Listen != "" {
		s.newS3API()
	}
	return s, nil
}

// openS3 builds the object-storage service and makes sure the admin user (the admin
// credential's key pair) exists.
func (s *Server) openS3(cred Credential) error {
	blobs, err := s.openBlobs()
	if err != nil {
		return err
	}
	mk, err := s.masterKey()
	if err != nil {
		return err
	}
	svc, err := s3.New(s.db, s3.Config{MaxObjectSize: s.cfg.S3MaxObjectSize, Region: s.cfg.S3Region, Logger: s.log, Blobs: blobs,
		UploadTTL: s.cfg.S3UploadTTL, LifecycleInterval: s.cfg.LifecycleInterval, LifecycleDay: s.cfg.LifecycleDay,
		MasterKey: mk, Node: s.cfg.NodeName})
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
	s.stats.AddSource(svc.LifecycleStats)
	return nil
}

// newS3API builds the object-storage interface over the service openS3 built.
func (s *Server) newS3API() {
	api := s3api.New(s.s3, s3api.Config{DataHost: s.cfg.S3DataHost, Dialect: s.cfg.Dialect, Logger: s.log})
	s.s3API = api
	s.s3Handler = httpx.Chain(api.Handler(),
		httpx.RequestID,
		httpx.Recover(s.log, api.WriteInternalError),
		httpx.AccessLog(s.log, httpx.AccessLogOptions{}),
		httpx.Metrics(s.stats, "s3"),
		httpx.GuardBody(s.bodyLimits(nil)), // objects stream through; small bodies are bounded
	)
}

// BlobsDir is the directory, in the data directory, of the S3 interface's blob files.
const BlobsDir = "blobs"

// LevelDBDir is the directory, in the data directory, of the LevelDB store.
const LevelDBDir = storage.StoreDir

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
	limits := s.connLimits(1 + btoi(s3ln != nil))
	s.serveErr = make(chan error, 2)
	limits.Refusal = httpx.RefusalResponse(kvapi.StatusPage(http.StatusServiceUnavailable))
	limits.TLS = s.kvCert.config()
	s.kvLn = httpx.LimitListener(ln, limits)
	if s3ln != nil {
		limits.Refusal, limits.NewRefusal = nil, s.s3API.BusyResponse
		limits.IgnoreUnknownExpect = true // AWS ignores expectations it does not know
		limits.TLS = s.s3Cert.config()
		s.s3Ln = httpx.LimitListener(s3ln, limits)
	}
	// Both listeners are set before either serves: /stats reads them (httpStats).
	s.kvSrv = s.httpServer(s.handler, s.kvLn)
	s.kvSrv.ConnContext = kvapi.ConnContext // the client's identity, once per connection
	s.serveOn(s.kvSrv, s.kvLn)
	if s.s3Ln != nil {
		s.s3Srv = s.httpServer(s.s3Handler, s.s3Ln)
		s.serveOn(s.s3Srv, s.s3Ln)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) httpServer(h http.Handler, ln *httpx.ConnLimiter) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		IdleTimeout:       120 * time.Second,
		ConnState:         ln.ConnState,
		// HTTP/1.1 only, over TLS too: the connection limits count connections, which
		// HTTP/2 would multiplex.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
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

// KVURL returns the base URL of the KV interface (https when it serves TLS); "" before
// Start.
func (s *Server) KVURL() string { return baseURL(s.KVAddr(), s.kvCert != nil) }

// S3URL returns the base URL of the object-storage interface; "" before Start or when
// it is not served.
func (s *Server) S3URL() string { return baseURL(s.S3Addr(), s.s3Cert != nil) }

func baseURL(a net.Addr, tls bool) string {
	switch {
	case a == nil:
		return ""
	case tls:
		return "https://" + a.String()
	default:
		return "http://" + a.String()
	}
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

// Close stops accepting requests and shuts down within the shutdown timeout, plus a
// bounded margin: in-flight requests get until the deadline (then their connections
// are closed), queued postcommit hooks run until it (then they are cancelled and
// dropped, and postcommitCancelGrace more is allowed), and the extension runtimes get
// what is left, at least extensionCloseMin. Then it closes the store. It is safe to call
// on a server that was never started.
func (s *Server) Close() error {
	var errs []error
	deadline := time.Now().Add(s.cfg.ShutdownTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for _, srv := range []*http.Server{s.kvSrv, s.s3Srv} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("server: shutdown: %w", err))
			srv.Close()
		}
	}
	for ; s.serving > 0; s.serving-- {
		if err := <-s.serveErr; err != nil {
			errs = append(errs, err)
		}
	}
	s.kvSrv, s.s3Srv = nil, nil
	if s.grants != nil {
		s.grants.Close() // stops following the store
		s.grants = nil
	}
	if s.s3 != nil {
		errs = append(errs, s.s3.Close())
		s.s3 = nil
	}
	if s.jsBlobs != nil {
		errs = append(errs, s.jsBlobs.Close()) // before the node's connection closes
		s.jsBlobs = nil
	}
	if s.kv != nil {
		errs = append(errs, s.kv.Shutdown(ctx))
		s.kv = nil
	}
	if s.mods != nil {
		s.mods.Close() // stops following the store before the runtimes close
		s.mods = nil
	}
	if s.ext != nil && s.ext.Close != nil {
		ctx, cancel := context.WithDeadline(context.Background(), later(deadline, time.Now().Add(extensionCloseMin)))
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

// extensionCloseMin is the least time the extension runtimes get to stop (plugin
// processes to exit) when the shutdown deadline has already passed.
const extensionCloseMin = time.Second

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
