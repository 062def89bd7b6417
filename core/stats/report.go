package stats

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Report returns the reference's flat /stats object. prefix names the dialect of the
// application version keys (prefix_kv_version, prefix_core_version, prefix_api_version):
// "store" or "riak"; "" means the Config's Dialect. Values are int64, float64 (never NaN
// or infinite), string or []string, plus whatever the extra sources add; the map is new
// on every call and json.Marshal always succeeds on it.
func (r *Registry) Report(prefix string) map[string]any {
	if prefix == "" {
		prefix = r.cfg.Dialect
	}
	m := make(map[string]any, 160)

	r.mu.RLock()
	for name, c := range r.counters {
		m[name] = c.LastMinute()
		m[name+"_total"] = c.Total()
	}
	sources := r.sources
	r.mu.RUnlock()

	// A single node holds the one copy of every object: vnode operations mirror the
	// coordinated ones.
	m["vnode_gets"], m["vnode_gets_total"] = m[NodeGets], m[NodeGets+"_total"]
	m["vnode_puts"], m["vnode_puts_total"] = m[NodePuts], m[NodePuts+"_total"]

	putSummary(m, "node_get_fsm_time", r.getTime.Snapshot())
	putSummary(m, "node_put_fsm_time", r.putTime.Snapshot())
	putSummary(m, "node_get_fsm_objsize", r.getSize.Snapshot())
	putSummary(m, "node_get_fsm_siblings", r.getSiblings.Snapshot())

	// Features of a cluster this node does not have, reported as idle.
	for _, k := range []string{"pbc_connects", "pbc_connects_total", "pbc_active", "coord_redirs_total"} {
		m[k] = int64(0)
	}

	r.osStats(m)
	memStats(m)

	node := r.cfg.NodeName
	m["nodename"] = node
	m["connected_nodes"] = []string{}
	m["ring_members"] = []string{node}
	m["ring_num_partitions"] = int64(r.cfg.RingSize)
	m["ring_creation_size"] = int64(r.cfg.RingSize)
	m["ring_ownership"] = "[{'" + node + "'," + strconv.Itoa(r.cfg.RingSize) + "}]"
	m["storage_backend"] = r.cfg.StorageBackend

	m["sys_process_count"] = int64(runtime.NumGoroutine())
	m["sys_logical_processors"] = int64(runtime.NumCPU())
	m["sys_wordsize"] = int64(strconv.IntSize / 8)
	m["sys_system_version"] = runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH

	v := r.cfg.Version
	m[prefix+"_kv_version"] = v
	m[prefix+"_core_version"] = v
	m[prefix+"_api_version"] = v
	m["cairn_version"] = v

	for _, src := range sources {
		mergeSource(m, src)
	}
	return m
}

// putSummary adds the reference's five keys of a distribution: NAME_mean, _median, _95,
// _99 and _100, integers, 0 when the window is empty.
func putSummary(m map[string]any, name string, s Summary) {
	m[name+"_mean"] = int64(math.Round(s.Mean))
	m[name+"_median"] = s.Median
	m[name+"_95"] = s.P95
	m[name+"_99"] = s.P99
	m[name+"_100"] = s.Max
}

// mergeSource copies the keys of one extra source into m, replacing non-finite floats
// by 0. A panicking source contributes nothing.
func mergeSource(m map[string]any, src func() map[string]any) {
	defer func() { _ = recover() }()
	for k, v := range src() {
		switch f := v.(type) {
		case float64:
			if math.IsNaN(f) || math.IsInf(f, 0) {
				v = float64(0)
			}
		case float32:
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				v = float32(0)
			}
		}
		m[k] = v
	}
}

// osStats adds the cpu_ and mem_ keys from /proc, 0 where unavailable.
func (r *Registry) osStats(m map[string]any) {
	var nprocs, avg1, avg5, avg15 int64
	if b, err := os.ReadFile(filepath.Join(r.cfg.ProcDir, "loadavg")); err == nil {
		nprocs, avg1, avg5, avg15 = parseLoadavg(b)
	}
	m["cpu_nprocs"] = nprocs
	m["cpu_avg1"] = avg1
	m["cpu_avg5"] = avg5
	m["cpu_avg15"] = avg15

	var total, allocated int64
	if f, err := os.Open(filepath.Join(r.cfg.ProcDir, "meminfo")); err == nil {
		total, allocated = parseMeminfo(f)
		_ = f.Close()
	}
	m["mem_total"] = total
	m["mem_allocated"] = allocated
}

// parseLoadavg reads "0.52 0.58 0.59 1/389 12345": the number of processes (after the
// slash) and the three load averages scaled by 256.
func parseLoadavg(b []byte) (nprocs, avg1, avg5, avg15 int64) {
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0, 0, 0, 0
	}
	load := func(s string) int64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return int64(math.Round(x * 256))
	}
	if _, n, ok := strings.Cut(f[3], "/"); ok {
		nprocs, _ = strconv.ParseInt(n, 10, 64)
	}
	return nprocs, load(f[0]), load(f[1]), load(f[2])
}

// parseMeminfo returns MemTotal and the memory in use, in bytes: MemTotal - MemAvailable,
// or MemTotal - (MemFree + Buffers + Cached) on kernels without MemAvailable.
func parseMeminfo(f *os.File) (total, allocated int64) {
	vals := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(name) {
		case "MemTotal", "MemAvailable", "MemFree", "Buffers", "Cached":
		default:
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && string(fields[1]) == "kB" {
			n *= 1024
		}
		vals[string(name)] = n
	}
	total = vals["MemTotal"]
	free, ok := vals["MemAvailable"]
	if !ok {
		free = vals["MemFree"] + vals["Buffers"] + vals["Cached"]
	}
	if total == 0 {
		return 0, 0
	}
	return total, max(total-free, 0)
}

// memStats adds the memory_ keys, mapped from the Go runtime (see the package docs).
func memStats(m map[string]any) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := int64(ms.Sys)
	procs := int64(ms.HeapInuse + ms.StackInuse)
	m["memory_total"] = total
	m["memory_processes"] = procs
	m["memory_processes_used"] = int64(ms.HeapAlloc + ms.StackInuse)
	m["memory_system"] = max(total-procs, 0)
	for _, k := range []string{"memory_atom", "memory_atom_used", "memory_binary", "memory_code", "memory_ets"} {
		m[k] = int64(0)
	}
}
