package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
)

// clusterHTTPTimeout bounds `cairn cluster status` (a digest reads every key).
const clusterHTTPTimeout = 2 * time.Minute

// maxClusterStatusBytes bounds the status body read.
const maxClusterStatusBytes = 16 << 20

// clusterCmd runs `cairn cluster status [--url URL] [--digest] [--json]`: the GET
// /cluster of a running node, printed as a table (or as its JSON).
func clusterCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprint(stderr, "usage: cairn cluster status [--url URL] [--digest] [--json]\n")
	}
	if len(args) < 1 || args[0] != "status" {
		usage()
		return 2
	}
	fs := flag.NewFlagSet("cairn cluster status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("url", envOr(getenv, "CAIRN_URL", "http://127.0.0.1:8098"), "")
	digest := fs.Bool("digest", false, "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		usage()
		return 2
	}
	body, err := fetchClusterStatus(ctx, *baseURL, *digest)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: cluster status: %v\n", err)
		return 1
	}
	if *asJSON {
		_, _ = stdout.Write(body)
		return 0
	}
	var st cluster.Status
	if err := json.Unmarshal(body, &st); err != nil {
		fmt.Fprintf(stderr, "cairn: cluster status: unreadable answer: %v\n", err)
		return 1
	}
	printClusterStatus(stdout, st)
	return 0
}

// fetchClusterStatus GETs /cluster from the node at baseURL.
func fetchClusterStatus(ctx context.Context, baseURL string, digest bool) ([]byte, error) {
	u := strings.TrimRight(baseURL, "/") + "/cluster"
	if digest {
		u += "?digest=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: clusterHTTPTimeout}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClusterStatusBytes))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: not found (is the node in cluster mode?)", u)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// printClusterStatus prints st as tables.
func printClusterStatus(w io.Writer, st cluster.Status) {
	mode := "embedded NATS"
	if !st.Embedded {
		mode = "external NATS"
	}
	fmt.Fprintf(w, "cluster %s, node %s (%s), %d partitions, max apply lag %d\n\n", st.Cluster, st.Node, mode, st.Partitions, st.MaxLag)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tLAST SEEN")
	for _, s := range st.Servers {
		state := "down"
		if s.Up {
			state = "up"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, state, s.LastSeen)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tREPLICAS\tLEADER\tPEERS\tLAST SEQ\tAPPLIED\tLAG\tDIGEST")
	for _, s := range st.Streams {
		digest := s.Digest
		if len(digest) > 16 {
			digest = digest[:16]
		}
		if s.Error != "" {
			digest = "error: " + s.Error
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%s\n", s.Name, s.Replicas, s.Leader, strings.Join(s.Peers, ","),
			s.LastSeq, s.Applied, s.Lag, digest)
	}
	_ = tw.Flush()
}
