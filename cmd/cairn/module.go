package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

const moduleUsage = `usage:
  cairn module put NAME FILE.wasm   register a WebAssembly module, or replace it
  cairn module list                 list the registered modules
  cairn module get NAME [-o FILE]   show a module, or save its bytes to FILE ("-": stdout)
  cairn module rm NAME              remove a module (refused while bucket properties name it)
flags (before or after the arguments):
  --url URL                  the server (env CAIRN_URL, default http://127.0.0.1:8098)
  --admin-key-id ID          admin key id (env CAIRN_ADMIN_KEY_ID)
  --admin-key-secret SECRET  admin key secret (env CAIRN_ADMIN_KEY_SECRET)
  --data-dir DIR             without a key, read DIR/admin-credentials.json
                             (env CAIRN_DATA_DIR, default ./data)
`

// adminCredentialsFile is the file in the data directory where the server writes its
// admin key.
const adminCredentialsFile = "admin-credentials.json"

// moduleHTTPTimeout bounds one admin request, so that a stuck server cannot hang the
// command.
const moduleHTTPTimeout = 2 * time.Minute

// moduleInfo is the part of the server's module description that the command shows.
type moduleInfo struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	SHA256    string   `json:"sha256"`
	Size      int64    `json:"size"`
	Functions []string `json:"functions"`
}

// moduleCmd runs `cairn module put|list|get|rm`, a client of the server's
// /admin/modules API. Usage errors exit 2, failures 1 with the server's message.
func moduleCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn module", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("url", envOr(getenv, "CAIRN_URL", "http://127.0.0.1:8098"), "")
	keyID := fs.String("admin-key-id", getenv("CAIRN_ADMIN_KEY_ID"), "")
	keySecret := fs.String("admin-key-secret", getenv("CAIRN_ADMIN_KEY_SECRET"), "")
	dataDir := fs.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "")
	var out string
	fs.StringVar(&out, "o", "", "")
	fs.StringVar(&out, "output", "", "")

	cmd := subcommand{name: "cairn module", usage: moduleUsage, stderr: stderr}
	usageErr := cmd.fail
	sub, pos, code, ok := cmd.parse(fs, args, map[string]int{"put": 2, "list": 0, "get": 1, "rm": 1}, stdout)
	if !ok {
		return code
	}
	if out != "" && sub != "get" {
		return usageErr("-o applies to get only")
	}
	if (*keyID == "") != (*keySecret == "") {
		return usageErr("give both --admin-key-id and --admin-key-secret, or neither")
	}

	fail := func(err error) int {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	c, err := newAdminClient(*baseURL, *keyID, *keySecret, *dataDir)
	if err != nil {
		return fail(err)
	}
	switch sub {
	case "put":
		err = c.put(ctx, pos[0], pos[1], stdout)
	case "list":
		err = c.list(ctx, stdout)
	case "get":
		err = c.get(ctx, pos[0], out, stdout)
	case "rm":
		err = c.remove(ctx, pos[0])
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

// parseInterspersed parses fs over args, letting flags come before, between and after
// the positional arguments, which it returns in order. Everything after "--" is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// adminClient calls the server's admin API with the admin key.
type adminClient struct {
	base       string // scheme://host[:port], no trailing slash
	id, secret string
	http       *http.Client
}

// newAdminClient returns a client of the server at base. Without a key id and secret
// it reads them from the data directory's credential file.
func newAdminClient(base, id, secret, dataDir string) (*adminClient, error) {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q is not an http(s) URL", base)
	}
	if id == "" {
		id, secret, err = readAdminCredentials(filepath.Join(dataDir, adminCredentialsFile))
		if err != nil {
			return nil, err
		}
	}
	return &adminClient{
		base:   strings.TrimSuffix(base, "/"),
		id:     id,
		secret: secret,
		http:   &http.Client{Timeout: moduleHTTPTimeout},
	}, nil
}

// readAdminCredentials reads the admin key the server wrote to path.
func readAdminCredentials(path string) (id, secret string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("no admin key: give --admin-key-id and --admin-key-secret "+
			"(or CAIRN_ADMIN_KEY_ID and CAIRN_ADMIN_KEY_SECRET), or --data-dir of the server: %w", err)
	}
	var c struct {
		KeyID     string `json:"key_id"`
		KeySecret string `json:"key_secret"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return "", "", fmt.Errorf("admin credentials %s: %w", path, err)
	}
	if c.KeyID == "" || c.KeySecret == "" {
		return "", "", fmt.Errorf("admin credentials %s: key_id or key_secret is missing", path)
	}
	return c.KeyID, c.KeySecret, nil
}

// do sends one admin request and returns the response when its status is one of ok;
// otherwise it returns an error carrying the server's message.
func (c *adminClient) do(ctx context.Context, method, path string, body []byte, header http.Header, ok ...int) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.SetBasicAuth(c.id, c.secret)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the server: %w", err)
	}
	if slices.Contains(ok, resp.StatusCode) {
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	text := strings.TrimSpace(string(msg))
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	hint := ""
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		hint = "; check the admin key"
	}
	return nil, fmt.Errorf("%s (HTTP %d%s)", text, resp.StatusCode, hint)
}

func modulePath(name string) string {
	return "/admin/modules/" + url.PathEscape(name)
}

// put uploads the module in file under name.
func (c *adminClient) put(ctx context.Context, name, file string, stdout io.Writer) error {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("module put %s: %w", name, err)
	}
	resp, err := c.do(ctx, http.MethodPut, modulePath(name), wasm,
		http.Header{"Content-Type": {"application/wasm"}}, http.StatusCreated, http.StatusOK)
	if err != nil {
		return fmt.Errorf("module put %s: %w", name, err)
	}
	defer resp.Body.Close()
	var info moduleInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return fmt.Errorf("module put %s: the server's answer: %w", name, err)
	}
	if info.Name == "" {
		info.Name = name
	}
	what := "replaced"
	if resp.StatusCode == http.StatusCreated {
		what = "created"
	}
	fmt.Fprintf(stdout, "%s sha256=%s functions=%s (%s)\n", info.Name, shortHash(info.SHA256), strings.Join(info.Functions, ","), what)
	return nil
}

// list prints the registered modules as a table.
func (c *adminClient) list(ctx context.Context, stdout io.Writer) error {
	resp, err := c.do(ctx, http.MethodGet, "/admin/modules", nil, http.Header{"Accept": {"application/json"}}, http.StatusOK)
	if err != nil {
		return fmt.Errorf("module list: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Modules []moduleInfo `json:"modules"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("module list: the server's answer: %w", err)
	}
	slices.SortFunc(body.Modules, func(a, b moduleInfo) int { return strings.Compare(a.Name, b.Name) })
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSHA256\tSIZE\tFUNCTIONS")
	for _, m := range body.Modules {
		funcs := strings.Join(m.Functions, ",")
		if funcs == "" {
			funcs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", m.Name, shortHash(m.SHA256), m.Size, funcs)
	}
	return tw.Flush()
}

// get prints the description of module name, or with out set writes its bytes there
// ("-" is stdout).
func (c *adminClient) get(ctx context.Context, name, out string, stdout io.Writer) error {
	accept := "application/json"
	if out != "" {
		accept = "application/wasm"
	}
	resp, err := c.do(ctx, http.MethodGet, modulePath(name), nil, http.Header{"Accept": {accept}}, http.StatusOK)
	if err != nil {
		return fmt.Errorf("module get %s: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("module get %s: %w", name, err)
	}
	if out == "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
			return fmt.Errorf("module get %s: the server's answer: %w", name, err)
		}
		buf.WriteByte('\n')
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/wasm" {
		return fmt.Errorf("module get %s: the server answered %q, not the module's bytes", name, resp.Header.Get("Content-Type"))
	}
	if out == "-" {
		_, err = stdout.Write(body)
		return err
	}
	if err := os.WriteFile(out, body, 0o644); err != nil {
		return fmt.Errorf("module get %s: %w", name, err)
	}
	return nil
}

// remove deletes module name.
func (c *adminClient) remove(ctx context.Context, name string) error {
	resp, err := c.do(ctx, http.MethodDelete, modulePath(name), nil, nil, http.StatusNoContent, http.StatusOK)
	if err != nil {
		return fmt.Errorf("module rm %s: %w", name, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// shortHash returns the first 12 characters of a hex digest.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
