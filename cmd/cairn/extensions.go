package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/server"
	"github.com/cairnkv/cairn/plugins/jsvm"
	"github.com/cairnkv/cairn/plugins/native"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

// extensions builds the extension runtimes the server runs hooks with: the native
// built-ins first, then the WebAssembly host, whose compilation cache lives under the
// data directory, then the JavaScript runtime (which has no module names: it serves
// {"name": N} hooks and JavaScript MapReduce phases).
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
	js, err := jsvm.New(jsvm.Config{
		SourceDir:   cfg.JSSourceDir,
		MemoryLimit: int64(cfg.JSMemoryMB) << 20,
		Timeout:     cfg.JSTimeout,
		HookTimeout: cfg.JSHookTimeout,
		Dialect:     cfg.Dialect,
		Logger:      log,
	})
	if err != nil {
		_ = host.Close(ctx)
		return nil, fmt.Errorf("javascript runtime: %w", err)
	}
	return &server.Extensions{
		Providers: []hooks.Provider{native.New(native.Options{Dialect: cfg.Dialect}), host, js},
		Loader:    host,
		Stats: func() map[string]any {
			m := wasmStats(host.Stats())
			maps.Copy(m, jsStats(js.Stats()))
			return m
		},
		Close: func(ctx context.Context) error {
			return errors.Join(host.Close(ctx), js.Close(ctx))
		},
	}, nil
}

// jsStats turns the JavaScript runtime's counters into /stats keys.
func jsStats(st jsvm.Stats) map[string]any {
	var calls, failures int64
	for _, n := range st.Calls {
		calls += n
	}
	for _, n := range st.Failures {
		failures += n
	}
	return map[string]any{
		"js_calls_total": calls, "js_failures_total": failures, "js_vms": st.VMs, "js_vms_idle": st.Idle,
		"js_vms_created_total": st.Created, "js_vms_recycled_total": st.Recycled,
	}
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
