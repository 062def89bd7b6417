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
	"github.com/cairnkv/cairn/plugins/gopluginhost"
	"github.com/cairnkv/cairn/plugins/jsvm"
	"github.com/cairnkv/cairn/plugins/native"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

// extensions builds the extension runtimes the server runs hooks with: the native
// built-ins first, then the WebAssembly host, whose compilation cache lives under the
// data directory, then the process plugins (started now), then the JavaScript runtime
// (which has no module names: it serves {"name": N} hooks and JavaScript MapReduce
// phases).
//
// The returned function, called once the server has loaded its registered modules,
// warns about process plugins that a built-in or WebAssembly module of the same name
// shadows.
func extensions(ctx context.Context, cfg server.Config, log *slog.Logger) (*server.Extensions, func(), error) {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	host, err := wasmhost.New(ctx, wasmhost.Config{
		CacheDir:    filepath.Join(dir, "wasm-cache"),
		MemoryPages: uint32(cfg.WASMMemoryPages),
		Dialect:     cfg.Dialect,
		Logger:      log,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("webassembly host: %w", err)
	}
	plugins, err := processPlugins(ctx, cfg, log)
	if err != nil {
		_ = host.Close(ctx)
		return nil, nil, err
	}
	js, err := jsvm.New(jsvm.Config{
		SourceDir:   cfg.JSSourceDir,
		MemoryLimit: int64(cfg.JSMemoryMB) << 20,
		Timeout:     cfg.JSTimeout,
		HookTimeout: cfg.JSHookTimeout,
		Dialect:     cfg.Dialect,
		Logger:      log,

		MaxVMsPerClient: cfg.JSMaxVMsPerClient,
	})
	if err != nil {
		_ = host.Close(ctx)
		_ = plugins.Close(ctx)
		return nil, nil, fmt.Errorf("javascript runtime: %w", err)
	}
	providers := []hooks.Provider{native.New(native.Options{Dialect: cfg.Dialect}), host, plugins, js}
	shadowed := func() {
		for _, sh := range hooks.NewRegistry(providers...).Shadowed() {
			log.Warn("module name shadowed: bucket properties naming it without a prefix reach the "+sh.By+
				" module, not the "+sh.Kind+" one; write "+sh.Kind+":NAME or rename one of them", "module", sh.Name)
		}
	}
	return &server.Extensions{
		Providers: providers,
		Loader:    host,
		Stats: func() map[string]any {
			m := wasmStats(host.Stats())
			maps.Copy(m, jsStats(js.Stats()))
			maps.Copy(m, pluginStats(plugins.Stats()))
			return m
		},
		Close: func(ctx context.Context) error {
			return errors.Join(host.Close(ctx), plugins.Close(ctx), js.Close(ctx))
		},
	}, shadowed, nil
}

// processPlugins starts the process plugins of --plugins-dir and of the config file.
// With none configured the host runs nothing.
func processPlugins(ctx context.Context, cfg server.Config, log *slog.Logger) (*gopluginhost.Host, error) {
	var pcs []gopluginhost.PluginConfig
	if cfg.PluginsDir != "" {
		fromDir, err := gopluginhost.FromDir(cfg.PluginsDir)
		if err != nil {
			return nil, fmt.Errorf("plugins dir: %w", err)
		}
		pcs = append(pcs, fromDir...)
	}
	for _, p := range cfg.Plugins {
		pcs = append(pcs, gopluginhost.PluginConfig{Name: p.Name, Command: p.Command, SHA256: p.SHA256, Env: p.Env})
	}
	h, err := gopluginhost.New(ctx, gopluginhost.Config{Plugins: pcs, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("process plugins: %w", err)
	}
	for _, name := range h.Names() {
		log.Info("process plugin configured", "plugin", name)
	}
	return h, nil
}

// pluginStats turns the plugin host's figures into /stats keys: totals, and per plugin
// its state, process id, restarts, calls and failures.
func pluginStats(st gopluginhost.Stats) map[string]any {
	var calls, failures int64
	m := map[string]any{"plugins": len(st.Plugins)}
	for _, p := range st.Plugins {
		var f int64
		for _, n := range p.Failures {
			f += n
		}
		calls += p.Calls
		failures += f
		pre := "plugin_" + p.Name + "_"
		m[pre+"state"] = string(p.State)
		m[pre+"pid"] = p.PID
		m[pre+"restarts_total"] = p.Restarts
		m[pre+"hangs_total"] = p.Hangs
		m[pre+"calls_total"] = p.Calls
		m[pre+"failures_total"] = f
	}
	m["plugin_calls_total"] = calls
	m["plugin_failures_total"] = failures
	return m
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
