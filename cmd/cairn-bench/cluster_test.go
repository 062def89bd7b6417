package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/server"
)

func TestWorkloadQuery(t *testing.T) {
	cases := []struct {
		dw    int
		query string
		want  string
	}{
		{-1, "", ""},
		{0, "", "?dw=0"},
		{-1, "w=quorum", "?w=quorum"},
		{1, "w=quorum", "?dw=1&w=quorum"},
	}
	for _, c := range cases {
		w := workload{Method: http.MethodGet, Bucket: "b", KeyPrefix: "k", Keys: 10, DW: c.dw, Query: c.query}
		line := string(w.raw("h:1")(nil, rand.New(rand.NewPCG(1, 1)), 0))
		line = line[:strings.Index(line, "\r\n")]
		if !strings.HasPrefix(line, "GET /buckets/b/keys/k") || !strings.HasSuffix(line, c.want+" HTTP/1.1") {
			t.Errorf("dw %d, query %q: request line %q, want the query %q", c.dw, c.query, line, c.want)
		}
		if script := wrkScript(w); !strings.Contains(script, `%08d`+c.want+`"`) {
			t.Errorf("dw %d, query %q: the wrk script does not send %q:\n%s", c.dw, c.query, c.want, script)
		}
	}
}

func TestClusterOptions(t *testing.T) {
	cases := []struct {
		args    []string
		cluster bool
		keys    int
		err     string
	}{
		{nil, false, 20000, ""},
		{[]string{"--phases", "cluster"}, true, 20000, ""},
		{[]string{"--quick", "--phases", "get,cluster"}, true, 2000, ""},
		{[]string{"--cluster-partitions", "48"}, false, 0, "power of two"},
		{[]string{"--cluster-keys", "0"}, false, 0, "--cluster-keys"},
	}
	for _, c := range cases {
		o, err := parseFlags(c.args, io.Discard)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%v: %v", c.args, err)
		case o.Phases["cluster"] != c.cluster || o.ClusterKeys != c.keys || o.ClusterPartitions != 64:
			t.Errorf("%v: cluster phase %v, keys %d, partitions %d; want %v, %d, 64", c.args, o.Phases["cluster"], o.ClusterKeys, o.ClusterPartitions, c.cluster, c.keys)
		}
	}
}

func TestSideSplitsConnections(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} // nothing listens: the runs only count errors
	for _, c := range []struct{ conns, want0, want2 int }{{64, 22, 21}, {2, 1, 1}, {3, 1, 1}} {
		rs := side{conns: c.conns, addrs: addrs, w: workload{Method: http.MethodGet, Bucket: "b", KeyPrefix: "k", Keys: 1, DW: -1}}.start()
		rs.stop()
		if len(rs) != 3 || rs[0].b.Conns != c.want0 || rs[2].b.Conns != c.want2 {
			t.Errorf("%d conns over 3: %d, %d, %d", c.conns, rs[0].b.Conns, rs[1].b.Conns, rs[2].b.Conns)
		}
	}
}

func TestClusterStatusCaughtUp(t *testing.T) {
	cases := []struct {
		json string
		want bool
	}{
		{`{"streams":[]}`, false},
		{`{"streams":[{"name":"p0","leader":"n1","last_seq":5,"applied":5}]}`, true},
		{`{"streams":[{"name":"p0","leader":"n1","last_seq":5,"applied":4}]}`, false},
		{`{"streams":[{"name":"p0","leader":"","last_seq":0,"applied":0}]}`, false},
	}
	for _, c := range cases {
		var st benchClusterStatus
		if err := json.Unmarshal([]byte(c.json), &st); err != nil {
			t.Fatal(err)
		}
		if got := st.caughtUp(); got != c.want {
			t.Errorf("%s: caught up %v, want %v", c.json, got, c.want)
		}
	}
}

// TestConditionalCost runs the conditional-write measurement against a standalone
// server in this process: writers on keys of their own never conflict, writers on one
// key do, and the note gives the extra cost per conflict.
func TestConditionalCost(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.KVListen, cfg.S3Listen, cfg.LogLevel = t.TempDir(), "127.0.0.1:0", "", "error"
	srv, err := server.New(cfg, "bench", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	b := &bench{log: io.Discard, started: time.Now()}
	if err := b.conditionalCost(context.Background(), "test", []string{srv.KVAddr().String()}, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(b.phases) != 2 {
		t.Fatalf("phases %+v", b.phases)
	}
	for _, p := range b.phases {
		if p.Requests == 0 || p.Errors != 0 || p.P50ms <= 0 {
			t.Errorf("phase %+v", p)
		}
	}
	if len(b.notes) != 1 || !strings.Contains(b.notes[0], "extra per conflict") {
		t.Errorf("notes %q: want the extra cost per conflict", b.notes)
	}
	free, err := casLoad(context.Background(), []string{srv.KVAddr().String()}, 200*time.Millisecond, func(w int) string { return "own" + strconv.Itoa(w) })
	if err != nil || free.ok == 0 || free.conflicts != 0 {
		t.Errorf("writers on their own keys: %+v, %v; want successes and no conflict", free, err)
	}
}

// TestClusterPhaseTiny runs the cluster phase with small settings: it builds cairn and
// starts three cluster nodes and a standalone node as processes.
func TestClusterPhaseTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn and starts four processes; skipped with -short")
	}
	args := []string{"--phases", "cluster", "--loadgen", "builtin", "--keys", "20", "--conns", "6", "--settle-max", "1ms",
		"--warmup", "100ms", "--duration", "600ms", "--slices", "2", "--cluster-keys", "300", "--cluster-partitions", "4"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"get-standalone", "get-cluster3", "get-r1-cluster3", "put-wq-standalone", "put-wq-cluster3",
		"cas-one-key-cluster3", "cas-own-keys-standalone", "GET cluster/standalone", "PUT w=quorum cluster/standalone",
		"extra per conflict", "targets met:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line is not the JSON result: %v", err)
	}
	if len(res.Phases) != 9 || len(res.Ratios) != 3 {
		t.Fatalf("result: %+v", res)
	}
	for _, p := range res.Phases {
		if p.Requests == 0 || p.RPS <= 0 || p.Errors != 0 {
			t.Errorf("phase %+v", p)
		}
	}
}
