// Package stats keeps Cairn's operational statistics and serves them in two shapes:
//
//   - Report: the flat JSON object of the reference system's GET /stats, with its key
//     names (node_gets, node_get_fsm_time_95, riak_core_version, ...).
//   - Prometheus: a private *prometheus.Registry (not the global default) that the server
//     exposes at /metrics.
//
// The building blocks are cheap enough for the request hot path:
//
//   - Window is a sliding 60-second histogram (60 one-second slots of log-linear buckets
//     with atomic counters). Observe takes no lock and allocates nothing; Snapshot gives
//     count, mean, median, 95th, 99th and 100th percentile over the last minute with a
//     relative error below 1/16 (6.25%).
//   - Counter keeps a total since start and a count over the last minute, the pair the
//     reference reports as node_gets_total and node_gets.
//
// A Registry is owned by the server and passed to the packages that feed it: core/kv calls
// RecordGet, RecordPut and RecordDelete; core/hooks calls IncPrecommitFail and
// IncPostcommitFail; core/httpx's Metrics middleware calls ObserveHTTP; anything else asks
// for a named Counter or adds a source of extra keys with AddSource, and may register its
// own Prometheus collectors on Prometheus(). Each event is recorded once: HTTP-level
// metrics come only from the middleware, object-level metrics only from Record*.
//
// The package does no HTTP itself; the server mounts promhttp and the /stats resource.
//
// # Empty windows
//
// The reference documents the string "undefined" for histograms with no samples, but its
// 2.x releases report 0 and typed clients parse these keys as numbers. Report therefore
// emits 0 for every statistic of an empty window; all values it produces are JSON-encodable
// (no NaN or infinities, also for values from extra sources).
//
// # Mapping of VM statistics
//
// The reference reports Erlang VM figures; Report fills the same keys from the Go runtime:
//
//	memory_total          runtime.MemStats.Sys (all memory obtained from the OS)
//	memory_processes      HeapInuse + StackInuse (memory held for goroutines' data)
//	memory_processes_used HeapAlloc + StackInuse (of that, live objects and stacks)
//	memory_system         memory_total - memory_processes (runtime metadata, GC, idle spans)
//	memory_atom, memory_atom_used, memory_binary, memory_code, memory_ets
//	                      0 (Go has no separate atom table, binary heap, code area or ETS;
//	                      byte slices and tables live on the heap, in memory_processes)
//	sys_process_count     runtime.NumGoroutine()
//	sys_logical_processors runtime.NumCPU()
//	sys_wordsize          the size of a machine word in bytes (8 on 64-bit)
//	sys_system_version    runtime.Version() plus GOOS/GOARCH
//	cpu_nprocs            the number of OS processes/threads (4th field of /proc/loadavg)
//	cpu_avg1/5/15         the load averages ×256, rounded, as the reference's cpu_sup does
//	mem_total             MemTotal from /proc/meminfo, bytes
//	mem_allocated         MemTotal - MemAvailable (MemFree+Buffers+Cached when absent)
//
// OS figures are 0 where /proc is not available.
package stats
