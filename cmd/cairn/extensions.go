package main

import (
	"context"

	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/server"
	"github.com/cairnkv/cairn/plugins/native"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

// extensions builds the extension runtimes the server runs hooks with: the native
// built-ins first, then the WebAssembly host, whose compilation cache lives under the
// data directory.
func extensions(ctx context.Context, cfg server.Config, log *slog.Logger) (*server.Extensions, error) {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	host, err := wasmhost.New(ctx, wasmhost.Config{
		CacheDir:    filepath.Join(dir, "wasm-cache"),
		MemoryPages: uint32(cfg.WASMMemoryPages),
		Dialect:     cfg.Dialect,
		Logger:      log,
	})
	if err != nil {
		return nil, fmt.Errorf("webassembly host: %w", err)
	}
	return &server.Extensions{
		Providers: []hooks.Provider{native.New(native.Options{Dialect: cfg.Dialect}), host},
		Loader:    host,
		Stats:     func() map[string]any { return wasmStats(host.Stats()) },
		Close:     host.Close,
	}, nil
}

// wasmStats turns the host's counters into /stats keys: totals over modules, plus the
// largest instance pool seen (which stays bounded by the pool size under any load).
func wasmStats(st wasmhost.Stats) map[string]any {
	var calls, failures, live, idle, created, maxLive int64
	for _, m := range st.Modules {
		calls += m.Calls
		for _, n := range m.Failures {
			failures += n
		}
		live += m.Live
		idle += m.Idle
		created += m.Created
		maxLive = max(maxLive, m.MaxLive)
	}
	return map[string]any{
		"wasm_modules": len(st.Modules), "wasm_calls_total": calls, "wasm_failures_total": failures,
		"wasm_instances": live, "wasm_instances_idle": idle, "wasm_instances_created_total": created,
		"wasm_instances_max": maxLive,
	}
}
