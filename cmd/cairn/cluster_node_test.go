package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// freeRoutePort returns a free loopback host:port for an embedded NATS route listener.
func freeRoutePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestClusterOneNodeServe: `cairn serve --cluster-name` alone is a working one-node
// cluster: it stores and reads, and reports itself at GET /cluster, in /stats and
// through `cairn cluster status`.
func TestClusterOneNodeServe(t *testing.T) {
	t.Parallel()
	route := freeRoutePort(t)
	s := startServer(t, "--cluster-name", "solo", "--cluster-listen", route, "--cluster-partitions", "4")
	s.mustPut(t, "/buckets/b/keys/k", "hello")
	expect(t, s.get(t, "/buckets/b/keys/k"), 200, ptr("hello"))

	r := s.get(t, "/cluster?digest=true")
	expect(t, r, 200, nil)
	var st struct {
		Cluster, Node string
		Partitions    int
		Streams       []struct {
			Name          string
			Applied, Lag  uint64
			LastSeq       uint64 `json:"last_seq"`
			Digest, Error string
		}
	}
	if err := json.Unmarshal(r.Body, &st); err != nil {
		t.Fatalf("GET /cluster: %v\n%s", err, r)
	}
	if st.Cluster != "solo" || st.Node != "cairn@"+route || st.Partitions != 4 || len(st.Streams) != 5 {
		t.Fatalf("GET /cluster: %+v", st)
	}
	for _, ss := range st.Streams {
		if ss.Error != "" || ss.Lag != 0 || len(ss.Digest) != 64 {
			t.Fatalf("stream %+v", ss)
		}
	}
	if r := s.get(t, "/cluster?digest=maybe"); r.StatusCode != 400 {
		t.Fatalf("digest=maybe: %s", r)
	}
	stats := s.get(t, "/stats")
	if !strings.Contains(string(stats.Body), `"cluster_name":"solo"`) || !strings.Contains(string(stats.Body), `"cluster_commits_total"`) ||
		!strings.Contains(string(stats.Body), `"cluster_read_index_rounds_total"`) {
		t.Fatalf("/stats lacks the cluster lines:\n%s", stats.Body)
	}
	// Prometheus: the replication lag per stream and the commit counters.
	metrics := string(s.get(t, "/metrics").Body)
	for _, want := range []string{`cairn_cluster_apply_lag_messages{stream="CAIRN_META"} 0`,
		`cairn_cluster_applied_sequence{stream="CAIRN_META"}`, "cairn_cluster_commits_total ",
		"cairn_cluster_commit_conflicts_total 0", "cairn_cluster_commit_outcome_unknown_total 0",
		"cairn_cluster_records_applied_total ", "cairn_cluster_servers_reached 1", "cairn_cluster_servers 1"} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	if strings.Contains(metrics, "cairn_cluster_commits_total 0") {
		t.Fatalf("/metrics counts no commit after a PUT:\n%s", metrics)
	}
	code, out, errOut := runCairn(t, serverOpts{args: []string{"cluster", "status", "--url", s.URL}})
	if code != 0 || !strings.Contains(out, "cluster solo, node cairn@"+route) || !strings.Contains(out, "CAIRN_META") {
		t.Fatalf("cairn cluster status: %d\n%s\n%s", code, out, errOut)
	}
}

// TestClusterFlagsStandalone: without cluster flags there is no /cluster; cluster
// flags without a name, and bad partition counts, are refused at start.
func TestClusterFlagsStandalone(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	if r := s.get(t, "/cluster"); r.StatusCode != 404 {
		t.Fatalf("standalone GET /cluster: %s", r)
	}
	if strings.Contains(string(s.get(t, "/metrics").Body), "cairn_cluster_") {
		t.Fatal("standalone /metrics has cluster metrics")
	}
	code, _, errOut := runCairn(t, serverOpts{args: []string{"cluster", "status", "--url", s.URL}})
	if code != 1 || !strings.Contains(errOut, "cluster mode") {
		t.Fatalf("cairn cluster status on a standalone server: %d %s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-listen", "127.0.0.1:7999"}, "need cluster-name"},
		{[]string{"--cluster-name", "c"}, "needs cluster-listen"},
		{[]string{"--cluster-name", "c", "--cluster-listen", "127.0.0.1:7999", "--cluster-partitions", "6"}, "a power of two"},
		{[]string{"--cluster-name", "c d", "--cluster-listen", "127.0.0.1:7999"}, "cluster name"},
		{[]string{"--cluster-name", "c", "--cluster-listen", "nowhere"}, "listen address"},
	} {
		args := append([]string{"serve", "--kv-listen", "127.0.0.1:0", "--s3-listen", "", "--data-dir", privateTempDir(t)}, tc.args...)
		code, _, errOut := runCairn(t, serverOpts{args: args})
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Fatalf("%v: exit %d, stderr %q; want an error with %q", tc.args, code, errOut, tc.want)
		}
	}
}
