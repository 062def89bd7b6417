package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
)

// clusterHTTPTimeout bounds `cairn cluster status` (a digest reads every key).
const clusterHTTPTimeout = 2 * time.Minute

// maxClusterStatusBytes bounds the status body read.
const maxClusterStatusBytes = 16 << 20

// clusterUsage is the usage of `cairn cluster`.
const clusterUsage = `usage: cairn cluster status [--url URL] [--digest] [--json]
       cairn cluster members [--url URL] [admin key flags]
       cairn cluster retire NODE [--wait SECONDS] [--url URL] [admin key flags]
       cairn cluster forget NODE [--url URL] [admin key flags]

status shows a running node's GET /cluster. members lists the cluster's servers;
retire moves every stream replica held by NODE to the other servers (waiting up to
--wait seconds, default 60; run it again to follow a move that takes longer); once
retired, stop NODE, then forget removes it from the cluster. See docs/cluster.md.

Admin key flags (members, retire, forget): --admin-key-id ID and --admin-key-secret
SECRET (env CAIRN_ADMIN_KEY_ID, CAIRN_ADMIN_KEY_SECRET), or --data-dir DIR of the node
asked (its admin-credentials.json).
`

// clusterCmd runs `cairn cluster status|members|retire|forget`.
func clusterCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprint(stderr, clusterUsage)
		return 2
	}
	if len(args) < 1 {
		return usage()
	}
	switch args[0] {
	case "status":
	case "members", "retire", "forget":
		return clusterAdminCmd(ctx, args[0], args[1:], getenv, stdout, stderr)
	default:
		return usage()
	}
	fs := flag.NewFlagSet("cairn cluster status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("url", envOr(getenv, "CAIRN_URL", "http://127.0.0.1:8098"), "")
	digest := fs.Bool("digest", false, "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		return usage()
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

// clusterAdminCmd runs `cairn cluster members|retire|forget`, clients of the node's
// /admin/cluster routes.
func clusterAdminCmd(ctx context.Context, sub string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn cluster "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("url", envOr(getenv, "CAIRN_URL", "http://127.0.0.1:8098"), "")
	keyID := fs.String("admin-key-id", getenv("CAIRN_ADMIN_KEY_ID"), "")
	keySecret := fs.String("admin-key-secret", getenv("CAIRN_ADMIN_KEY_SECRET"), "")
	dataDir := fs.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "")
	wait := fs.Int("wait", 60, "")
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "cairn cluster %s: %s\n%s", sub, msg, clusterUsage)
		return 2
	}
	pos, err := parseInterspersed(fs, args)
	switch {
	case err != nil:
		return usageErr(err.Error())
	case sub == "members" && len(pos) != 0, sub != "members" && len(pos) != 1:
		return usageErr("wrong number of arguments")
	case *wait < 0 || *wait > 600:
		return usageErr("--wait must be from 0 to 600 seconds")
	case (*keyID == "") != (*keySecret == ""):
		return usageErr("give both --admin-key-id and --admin-key-secret, or neither")
	}
	c, err := newAdminClient(*baseURL, *keyID, *keySecret, *dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	c.http.Timeout = time.Duration(*wait)*time.Second + clusterHTTPTimeout
	var resp *http.Response
	switch sub {
	case "members":
		resp, err = c.do(ctx, http.MethodGet, "/admin/cluster/members", nil, nil, http.StatusOK)
	case "retire":
		resp, err = c.do(ctx, http.MethodPost, "/admin/cluster/retire/"+url.PathEscape(pos[0])+"?wait="+strconv.Itoa(*wait), nil, nil,
			http.StatusOK, http.StatusAccepted)
	case "forget":
		resp, err = c.do(ctx, http.MethodPost, "/admin/cluster/forget/"+url.PathEscape(pos[0]), nil, nil, http.StatusNoContent)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cairn: cluster %s: %v\n", sub, err)
		return 1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClusterStatusBytes))
	if err != nil {
		fmt.Fprintf(stderr, "cairn: cluster %s: %v\n", sub, err)
		return 1
	}
	switch {
	case sub == "forget":
		fmt.Fprintf(stdout, "%s removed from the cluster\n", pos[0])
	case sub == "retire" && resp.StatusCode == http.StatusAccepted:
		fmt.Fprintf(stdout, "%s\nstill moving: run `cairn cluster retire %s` again to follow it\n", strings.TrimSpace(string(body)), pos[0])
		return 3
	case sub == "retire":
		fmt.Fprintf(stdout, "%s\n%s holds no stream replica: stop it, then run `cairn cluster forget %s` on another node\n",
			strings.TrimSpace(string(body)), pos[0], pos[0])
	default:
		_, _ = stdout.Write(body)
		fmt.Fprintln(stdout)
	}
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
