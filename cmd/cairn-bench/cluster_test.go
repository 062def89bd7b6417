package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
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
		{`{"streams":[{"name":"p0","leader":"n1","last_seq":5,"applied_seq":5}]}`, true},
		{`{"streams":[{"name":"p0","leader":"n1","last_seq":5,"applied_seq":4}]}`, false},
		{`{"streams":[{"name":"p0","leader":"","last_seq":0,"applied_seq":0}]}`, false},
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
