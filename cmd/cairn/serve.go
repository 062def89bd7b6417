package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/cairnkv/cairn/core/server"
)

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(args, getenv, stdout)
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 2
	}
	log := newLogger(cfg, stderr)
	if err := server.PrepareDataDir(cfg.DataDir, log); err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	ext, warnShadowed, err := extensions(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	cfg.Extensions = ext
	srv, err := server.New(cfg, version(), log)
	if err != nil {
		if errors.Is(err, server.ErrDataDirLocked) {
			fmt.Fprintf(stderr, "cairn: data directory %s is in use by another cairn process; stop it or choose another --data-dir\n", cfg.DataDir)
			return 1
		}
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	warnShadowed()
	c := srv.Config()
	if c.KVTLSCert != "" || c.S3TLSCert != "" {
		stopReload := reloadTLSOnHangup(srv)
		defer stopReload()
	}
	fmt.Fprintf(stdout, "cairn %s: key-value interface listening on %s\n", version(), srv.KVURL())
	if u := srv.S3URL(); u != "" {
		fmt.Fprintf(stdout, "cairn: object-storage interface listening on %s (buckets as {bucket}.%s or /{bucket})\n", u, c.S3DataHost)
	}
	fmt.Fprintf(stdout, "cairn: data directory %s (dialect %s)\n", c.DataDir, c.Dialect)
	if err := srv.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "cairn: stopped")
	return 0
}

// reloadTLSOnHangup reloads srv's TLS certificates on every SIGHUP (ReloadTLS logs the
// outcome) until the returned function is called, which stops it and waits.
func reloadTLSOnHangup(srv *server.Server) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-hup:
				_ = srv.ReloadTLS()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-finished
	}
}

func newLogger(cfg server.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
