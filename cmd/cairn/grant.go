package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// grantClientArgs locate the key-value interface and the admin key.
type grantClientArgs struct {
	url, id, secret, dataDir string
}

// grantBody is the body of a grant or revoke (core/kvapi's /admin/grants).
type grantBody struct {
	Permissions []string `json:"permissions"`
	Any         bool     `json:"any,omitempty"`
	Type        string   `json:"type,omitempty"`
	Bucket      string   `json:"bucket,omitempty"`
}

// grantsAnswer is the server's answer: a user's grants.
type grantsAnswer struct {
	User   string `json:"user"`
	Grants []struct {
		Any         bool     `json:"any"`
		Type        string   `json:"type"`
		Bucket      string   `json:"bucket"`
		Permissions []string `json:"permissions"`
	} `json:"grants"`
}

// grantCmd runs `cairn user grant|revoke|grants`, a client of the key-value interface's
// /admin/grants API, and prints the user's grants after the change. Usage errors exit
// 2, failures 1 with the server's message.
func grantCmd(ctx context.Context, cmd subcommand, sub string, pos []string, ca grantClientArgs, stdout, stderr io.Writer) int {
	var (
		body   *grantBody
		method = http.MethodGet
	)
	switch sub {
	case "grants":
		if pos[0] == "" {
			return cmd.fail("the key id is empty")
		}
	default:
		var err error
		if body, err = parseGrantArgs(pos); err != nil {
			return cmd.fail("%s: %v", sub, err)
		}
		method = http.MethodPut
		if sub == "revoke" {
			method = http.MethodDelete
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	c, err := newAdminClient(ca.url, ca.id, ca.secret, ca.dataDir)
	if err != nil {
		return fail(err)
	}
	var payload []byte
	if body != nil {
		payload, _ = json.Marshal(body)
	}
	resp, err := c.do(ctx, method, "/admin/grants/"+url.PathEscape(pos[0]), payload,
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}, http.StatusOK)
	if err != nil {
		return fail(fmt.Errorf("user %s %s: %w", sub, pos[0], err))
	}
	defer resp.Body.Close()
	var ans grantsAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&ans); err != nil {
		return fail(fmt.Errorf("user %s %s: the server's answer: %w", sub, pos[0], err))
	}
	if err := printGrants(stdout, ans); err != nil {
		return fail(err)
	}
	return 0
}

// parseGrantArgs parses KEYID PERM[,PERM...] on (any | TYPE [BUCKET]), as Riak's
// `riak-admin security grant PERMS on ...` does ("on" in any case).
func parseGrantArgs(pos []string) (*grantBody, error) {
	const shape = "want KEYID PERM[,PERM...] on TYPE [BUCKET], or KEYID PERM[,PERM...] on any"
	if len(pos) < 4 || len(pos) > 5 || !strings.EqualFold(pos[2], "on") {
		return nil, fmt.Errorf("%s", shape)
	}
	if pos[0] == "" {
		return nil, fmt.Errorf("the key id is empty")
	}
	b := &grantBody{}
	for _, p := range strings.Split(pos[1], ",") {
		if p = strings.TrimSpace(p); p != "" {
			b.Permissions = append(b.Permissions, p)
		}
	}
	if len(b.Permissions) == 0 {
		return nil, fmt.Errorf("no permission named (%s)", shape)
	}
	switch {
	case strings.EqualFold(pos[3], "any") && len(pos) == 4:
		b.Any = true
	case strings.EqualFold(pos[3], "any"):
		return nil, fmt.Errorf("a grant on any names no bucket (%s)", shape)
	case pos[3] == "":
		return nil, fmt.Errorf("the bucket type is empty")
	default:
		b.Type = pos[3]
		if len(pos) == 5 {
			if pos[4] == "" {
				return nil, fmt.Errorf("the bucket is empty")
			}
			b.Bucket = pos[4]
		}
	}
	return b, nil
}

// printGrants prints a user's grants as a table, "*" standing for every type or bucket
// (as riak-admin security print-user does).
func printGrants(w io.Writer, ans grantsAnswer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tBUCKET\tPERMISSIONS")
	for _, g := range ans.Grants {
		typ, bucket := "*", "*"
		if !g.Any {
			typ = shown(g.Type)
			if g.Bucket != "" {
				bucket = shown(g.Bucket)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", typ, bucket, strings.Join(g.Permissions, ","))
	}
	return tw.Flush()
}

// shown prints a name as it is, or quoted when it could be mistaken in the table
// (empty, "*", spaces, control or non-printing characters, invalid UTF-8).
func shown(s string) string {
	if s == "" || s == "*" || !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
