package stats

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// referenceKeys are keys clients or operators of the reference rely on.
var referenceKeys = []string{
	"node_gets", "node_gets_total", "node_puts", "node_puts_total",
	"vnode_gets", "vnode_gets_total", "vnode_puts", "vnode_puts_total",
	"vnode_index_reads", "vnode_index_writes", "vnode_index_writes_postings",
	"vnode_index_deletes", "vnode_index_deletes_postings",
	"node_get_fsm_time_mean", "node_get_fsm_time_median", "node_get_fsm_time_95",
	"node_get_fsm_time_99", "node_get_fsm_time_100",
	"node_put_fsm_time_mean", "node_put_fsm_time_median", "node_put_fsm_time_95",
	"node_put_fsm_time_99", "node_put_fsm_time_100",
	"node_get_fsm_objsize_mean", "node_get_fsm_objsize_median", "node_get_fsm_objsize_95",
	"node_get_fsm_objsize_99", "node_get_fsm_objsize_100",
	"node_get_fsm_siblings_mean", "node_get_fsm_siblings_median", "node_get_fsm_siblings_95",
	"node_get_fsm_siblings_99", "node_get_fsm_siblings_100",
	"read_repairs", "read_repairs_total", "pbc_connects", "pbc_active",
	"index_fsm_create", "index_fsm_create_error", "list_fsm_create", "list_fsm_create_error",
	"precommit_fail", "precommit_fail_total", "postcommit_fail", "postcommit_fail_total",
	"cpu_nprocs", "cpu_avg1", "cpu_avg5", "cpu_avg15", "mem_total", "mem_allocated",
	"memory_total", "memory_processes", "memory_processes_used", "memory_system",
	"memory_atom", "memory_atom_used", "memory_binary", "memory_code", "memory_ets",
	"sys_process_count", "sys_logical_processors", "sys_wordsize", "sys_system_version",
	"nodename", "connected_nodes", "ring_members", "ring_num_partitions",
	"ring_creation_size", "ring_ownership", "storage_backend", "cairn_version",
}

func TestReportKeys(t *testing.T) {
	for _, dialect := range []string{"store", "riak"} {
		t.Run(dialect, func(t *testing.T) {
			r := New(Config{NodeName: "cairn@10.0.0.1", Version: "1.2.3"})
			rep := r.Report(dialect)
			for _, k := range append(referenceKeys,
				dialect+"_kv_version", dialect+"_core_version", dialect+"_api_version") {
				if _, ok := rep[k]; !ok {
					t.Errorf("key %q missing", k)
				}
			}
			if rep[dialect+"_core_version"] != "1.2.3" || rep["cairn_version"] != "1.2.3" {
				t.Errorf("versions: %v %v", rep[dialect+"_core_version"], rep["cairn_version"])
			}
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back["ring_ownership"] != "[{'cairn@10.0.0.1',64}]" {
				t.Errorf("ring_ownership = %v", back["ring_ownership"])
			}
			if m, ok := back["ring_members"].([]any); !ok || len(m) != 1 || m[0] != "cairn@10.0.0.1" {
				t.Errorf("ring_members = %#v", back["ring_members"])
			}
			if c, ok := back["connected_nodes"].([]any); !ok || len(c) != 0 {
				t.Errorf("connected_nodes = %#v, want []", back["connected_nodes"])
			}
			// Empty windows report 0, never "undefined", NaN or null.
			for _, k := range []string{"node_get_fsm_time_mean", "node_get_fsm_time_95", "node_get_fsm_siblings_100"} {
				if back[k] != float64(0) {
					t.Errorf("%s = %#v on an empty window, want 0", k, back[k])
				}
			}
		})
	}
}

func TestReportDefaultDialect(t *testing.T) {
	rep := New(Config{Dialect: "riak"}).Report("")
	if _, ok := rep["riak_core_version"]; !ok {
		t.Fatal("riak_core_version missing with Dialect riak")
	}
	if rep["nodename"] != DefaultNodeName || rep["storage_backend"] != DefaultStorageBackend {
		t.Fatalf("defaults: %v %v", rep["nodename"], rep["storage_backend"])
	}
}

func TestReportValues(t *testing.T) {
	clk := newFakeClock()
	r := New(Config{Clock: clk.Now})
	r.RecordGet(1500*time.Microsecond, 100, 1)
	r.RecordGet(2500*time.Microsecond, 300, 3)
	r.RecordGet(500*time.Microsecond, 0, 0) // not found: counted and timed only
	r.RecordPut(4*time.Millisecond, 10)
	r.RecordDelete(2 * time.Millisecond)
	r.IncPrecommitFail()
	r.IncPostcommitFail()
	r.IncPostcommitFail()
	r.RecordIndexWrite(3, 1)
	r.RecordIndexWrite(0, 0)
	r.RecordIndexRead()
	r.Counter(ListFSMCreate).Inc()
	r.Counter("custom_thing").Add(7)

	want := map[string]int64{
		"node_gets": 3, "node_gets_total": 3, "vnode_gets": 3,
		"node_puts": 2, "node_puts_total": 2, "vnode_puts_total": 2,
		"node_get_fsm_time_mean": 1500, "node_get_fsm_time_100": 2500,
		"node_put_fsm_time_mean": 3000, "node_put_fsm_time_100": 4000,
		"node_get_fsm_objsize_mean": 200, "node_get_fsm_objsize_100": 300,
		"node_get_fsm_siblings_mean": 2, "node_get_fsm_siblings_100": 3,
		"node_get_fsm_siblings_median": 1,
		"precommit_fail":               1, "precommit_fail_total": 1,
		"postcommit_fail": 2, "postcommit_fail_total": 2,
		"vnode_index_writes": 1, "vnode_index_writes_postings": 3,
		"vnode_index_deletes": 1, "vnode_index_deletes_postings": 1,
		"vnode_index_reads": 1, "list_fsm_create": 1,
		"custom_thing": 7, "custom_thing_total": 7,
	}
	rep := r.Report("")
	for k, v := range want {
		if rep[k] != v {
			t.Errorf("%s = %#v, want %d", k, rep[k], v)
		}
	}
	clk.Advance(time.Minute)
	rep = r.Report("")
	for k, v := range map[string]int64{
		"node_gets": 0, "node_gets_total": 3, "node_get_fsm_time_mean": 0,
		"node_get_fsm_time_100": 0, "custom_thing": 0, "custom_thing_total": 7,
	} {
		if rep[k] != v {
			t.Errorf("a minute later: %s = %#v, want %d", k, rep[k], v)
		}
	}
}

func TestReportSources(t *testing.T) {
	r := New(Config{})
	r.AddSource(func() map[string]any {
		return map[string]any{"disk": []map[string]any{{"id": "/data", "size": 10, "used": 5}},
			"bad_float": math.NaN(), "inf": float32(math.Inf(1)), "storage_backend": "override"}
	})
	r.AddSource(func() map[string]any { panic("broken source") })
	r.AddSource(nil)
	rep := r.Report("")
	if _, ok := rep["disk"]; !ok {
		t.Error("source key disk missing")
	}
	if rep["bad_float"] != float64(0) || rep["inf"] != float32(0) {
		t.Errorf("non-finite values not replaced: %v %v", rep["bad_float"], rep["inf"])
	}
	if rep["storage_backend"] != "override" {
		t.Errorf("source did not override: %v", rep["storage_backend"])
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
}

func TestProcFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loadavg", "0.52 1.00 2.50 3/389 12345\n")
	write("meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\nBuffers:          200000 kB\nCached:          3000000 kB\n")
	rep := New(Config{ProcDir: dir}).Report("")
	for k, v := range map[string]int64{
		"cpu_nprocs": 389, "cpu_avg1": 133, "cpu_avg5": 256, "cpu_avg15": 640,
		"mem_total": 16000000 * 1024, "mem_allocated": 10000000 * 1024,
	} {
		if rep[k] != v {
			t.Errorf("%s = %#v, want %d", k, rep[k], v)
		}
	}

	write("meminfo", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n")
	if rep := New(Config{ProcDir: dir}).Report(""); rep["mem_allocated"] != int64(600*1024) {
		t.Errorf("mem_allocated without MemAvailable = %v", rep["mem_allocated"])
	}

	rep = New(Config{ProcDir: filepath.Join(dir, "absent")}).Report("")
	for _, k := range []string{"cpu_nprocs", "cpu_avg1", "mem_total", "mem_allocated"} {
		if rep[k] != int64(0) {
			t.Errorf("without /proc: %s = %#v, want 0", k, rep[k])
		}
	}
	write("loadavg", "garbage")
	if rep := New(Config{ProcDir: dir}).Report(""); rep["cpu_avg1"] != int64(0) {
		t.Errorf("garbage loadavg: cpu_avg1 = %v", rep["cpu_avg1"])
	}
}

func TestPrometheus(t *testing.T) {
	r := New(Config{})
	r.RecordGet(time.Millisecond, 10, 1)
	r.RecordGet(time.Millisecond, 0, 0)
	r.RecordPut(time.Millisecond, 10)
	r.RecordDelete(time.Millisecond)
	r.IncPrecommitFail()
	r.Counter("hooks_wasm_traps").Add(2)
	r.Counter(NodeGets) // a built-in: not exported twice
	r.ObserveHTTP("kv", "object", "GET", 200, time.Millisecond)
	r.ObserveHTTP("kv", "object", "GET", 200, time.Millisecond)
	r.ObserveHTTP("kv", "unmatched", "BREW", 404, time.Millisecond)
	r.ObserveHTTP("s3", "object", "PUT", 1000, time.Millisecond)

	reg := r.Prometheus()
	got := gather(t, reg)
	want := map[string]float64{
		`cairn_object_operations_total{op="delete"}`:                                           1,
		`cairn_object_operations_total{op="get"}`:                                              2,
		`cairn_object_operations_total{op="put"}`:                                              1,
		`cairn_object_operation_duration_seconds{op="get"}`:                                    2,
		`cairn_hook_failures_total{hook="postcommit"}`:                                         0,
		`cairn_hook_failures_total{hook="precommit"}`:                                          1,
		`cairn_http_requests_total{api="kv",code="200",method="GET",route="object"}`:           2,
		`cairn_http_requests_total{api="kv",code="404",method="other",route="unmatched"}`:      1,
		`cairn_http_requests_total{api="s3",code="other",method="PUT",route="object"}`:         1,
		`cairn_http_request_duration_seconds{api="kv",code="200",method="GET",route="object"}`: 2,
		`cairn_events_total{name="hooks_wasm_traps"}`:                                          2,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, MetricEvents) && !strings.Contains(k, "hooks_wasm_traps") {
			t.Errorf("unexpected event series %s", k)
		}
		if strings.HasPrefix(k, MetricHTTPRequests) && !strings.Contains(k, `route="object"`) && !strings.Contains(k, `route="unmatched"`) {
			t.Errorf("unexpected HTTP series %s", k)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var haveGo, haveProcess bool
	for _, mf := range mfs {
		haveGo = haveGo || mf.GetName() == "go_goroutines"
		haveProcess = haveProcess || strings.HasPrefix(mf.GetName(), "process_")
	}
	if !haveGo || !haveProcess {
		t.Fatalf("go collector %v, process collector %v", haveGo, haveProcess)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := New(Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 500 {
				r.RecordGet(time.Duration(j)*time.Microsecond, j, 1+j%3)
				r.RecordPut(time.Duration(j)*time.Microsecond, j)
				r.ObserveHTTP("kv", "route"+string(rune('a'+j%4)), "GET", 200+i%2, time.Microsecond)
				r.Counter("c" + string(rune('a'+i))).Inc()
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := json.Marshal(r.Report("riak")); err != nil {
				t.Error(err)
			}
			if _, err := r.Prometheus().Gather(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if got := r.Report("")["node_gets_total"]; got != int64(4000) {
		t.Fatalf("node_gets_total = %v", got)
	}
}

func TestHotPathAllocs(t *testing.T) {
	r := New(Config{})
	r.ObserveHTTP("kv", "object", "GET", 200, time.Millisecond) // resolve the labels once
	n := testing.AllocsPerRun(1000, func() {
		r.RecordGet(time.Millisecond, 1000, 1)
		r.RecordPut(time.Millisecond, 1000)
		r.ObserveHTTP("kv", "object", "GET", 200, time.Millisecond)
	})
	if n != 0 {
		t.Fatalf("hot path allocates %v times", n)
	}
}

func BenchmarkRecordGet(b *testing.B) {
	r := New(Config{})
	b.ReportAllocs()
	for b.Loop() {
		r.RecordGet(1234*time.Microsecond, 4096, 1)
	}
}

func BenchmarkRecordGetParallel(b *testing.B) {
	r := New(Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.RecordGet(1234*time.Microsecond, 4096, 1)
		}
	})
}

func BenchmarkObserveHTTP(b *testing.B) {
	r := New(Config{})
	b.ReportAllocs()
	for b.Loop() {
		r.ObserveHTTP("kv", "object", "GET", 200, time.Millisecond)
	}
}

func BenchmarkReport(b *testing.B) {
	r := New(Config{})
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Report("riak")
	}
}

// gather returns the counters and the sample counts of histograms of reg, keyed by
// name{label="value",...} with labels in the order Prometheus sorts them.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+`="`+lp.GetValue()+`"`)
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
