package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3api/sig"
)

const userUsage = `usage:
  cairn user create --name NAME --email EMAIL   create a user; prints it with its key pair
  cairn user list [--status enabled|disabled]   list the users (a JSON array)
  cairn user disable KEYID                      disable a user (its key stops working)
  cairn user enable KEYID                       enable a disabled user
  cairn user rotate KEYID                       give a user a new key secret
These print the server's JSON. KV access control (docs/kv-security.md):
  cairn user grant KEYID PERM[,PERM...] on TYPE [BUCKET]   grant permissions on a bucket
  cairn user grant KEYID PERM[,PERM...] on any             type, a bucket of it, or any
  cairn user revoke KEYID PERM[,PERM...] on TYPE [BUCKET]  revoke them (from that scope only)
  cairn user revoke KEYID PERM[,PERM...] on any
  cairn user grants KEYID                                  list a user's grants
  PERM: get put delete list_keys list_buckets mapreduce index set_props admin
  (Riak's names, riak_kv.get..., work too). These print the user's grants as a table.
flags (before or after the arguments; a KEYID that starts with "-" goes after "--"):
  --url URL            the object-storage interface (env CAIRN_S3_URL, default http://127.0.0.1:8080)
  --kv-url URL         the key-value interface, for grants (env CAIRN_URL, default http://127.0.0.1:8098)
  --key-id ID          admin key id (env CAIRN_ADMIN_KEY_ID)
  --key-secret SECRET  admin key secret (env CAIRN_ADMIN_KEY_SECRET)
  --data-dir DIR       without a key, read DIR/admin-credentials.json
                       (env CAIRN_DATA_DIR, default ./data)
`

// userCmd runs `cairn user create|list|disable|enable|rotate`, a client of the
// object-storage interface's user administration API (/riak-cs/user...), signing its
// requests with signature V2 and the admin key. It prints the server's JSON. Usage
// errors exit 2; failures exit 1 with "cairn: Code: Message" for the server's S3 errors.
func userCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn user", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseURL := fs.String("url", envOr(getenv, "CAIRN_S3_URL", "http://127.0.0.1:8080"), "")
	kvURL := fs.String("kv-url", envOr(getenv, "CAIRN_URL", "http://127.0.0.1:8098"), "")
	var keyID, keySecret string
	// The --admin-key-* names of `cairn module` work too (the same admin key).
	for _, name := range []string{"key-id", "admin-key-id"} {
		fs.StringVar(&keyID, name, getenv("CAIRN_ADMIN_KEY_ID"), "")
	}
	for _, name := range []string{"key-secret", "admin-key-secret"} {
		fs.StringVar(&keySecret, name, getenv("CAIRN_ADMIN_KEY_SECRET"), "")
	}
	dataDir := fs.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "")
	name := fs.String("name", "", "")
	email := fs.String("email", "", "")
	status := fs.String("status", "", "")

	cmd := subcommand{name: "cairn user", usage: userUsage, stderr: stderr}
	usageErr := cmd.fail
	sub, pos, code, ok := cmd.parse(fs, args, map[string]int{"create": 0, "list": 0, "disable": 1, "enable": 1, "rotate": 1,
		"grant": -1, "revoke": -1, "grants": 1}, stdout)
	if !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case sub == "create" && (*name == "" || *email == ""):
		return usageErr("create needs --name and --email")
	case sub != "create" && (set["name"] || set["email"]):
		return usageErr("--name and --email apply to create only")
	case sub != "list" && set["status"]:
		return usageErr("--status applies to list only")
	case sub == "list" && *status != "" && *status != "enabled" && *status != "disabled":
		return usageErr("--status must be enabled or disabled, not %q", *status)
	case len(pos) == 1 && pos[0] == "":
		return usageErr("the key id is empty")
	case (keyID == "") != (keySecret == ""):
		return usageErr("give both --key-id and --key-secret, or neither")
	}
	if sub == "grant" || sub == "revoke" || sub == "grants" {
		return grantCmd(ctx, cmd, sub, pos, grantClientArgs{url: *kvURL, id: keyID, secret: keySecret, dataDir: *dataDir}, stdout, stderr)
	}

	fail := func(err error) int {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	// newAdminClient checks the URL and finds the admin key; the requests are signed
	// here, not with its basic authentication.
	c, err := newAdminClient(*baseURL, keyID, keySecret, *dataDir)
	if err != nil {
		return fail(err)
	}
	var (
		method = http.MethodPut
		path   string
		body   any
		list   bool
	)
	switch sub {
	case "create":
		method, path = http.MethodPost, "/riak-cs/user"
		body = map[string]string{"name": *name, "email": *email}
	case "list":
		method, path, list = http.MethodGet, "/riak-cs/users", true
		if *status != "" {
			path += "?status=" + url.QueryEscape(*status)
		}
	case "disable", "enable":
		path = userPath(pos[0])
		body = map[string]string{"status": sub + "d"}
	case "rotate":
		path = userPath(pos[0])
		body = map[string]bool{"new_key_secret": true}
	}
	out, err := userRequest(ctx, c, method, path, body)
	if err != nil {
		return fail(err)
	}
	if err := printUserJSON(stdout, out, list); err != nil {
		return fail(fmt.Errorf("user %s: the server's answer: %w", sub, err))
	}
	return 0
}

// userPath is the administration path of the user with key id keyID.
func userPath(keyID string) string {
	return "/riak-cs/user/" + url.PathEscape(keyID)
}

// apiError is the XML error body of the object-storage interface.
type apiError struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// Error renders the error as "Code: Message".
func (e *apiError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// parseS3Error turns an error response into an error: the S3 XML body's code and
// message when there is one, else the status and the body's text.
func parseS3Error(status int, body []byte) error {
	var e apiError
	if err := xml.Unmarshal(body, &e); err == nil && e.Code != "" {
		e.Message = strings.TrimSpace(e.Message)
		return &e
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	return fmt.Errorf("HTTP %d: %s", status, text)
}

// signV2 signs req in place with signature V2 (Date and Authorization headers) at time
// t, path style (the administration API names no bucket).
func signV2(req *http.Request, keyID, secret string, t time.Time) {
	path := req.URL.EscapedPath()
	if req.URL.Opaque != "" {
		path = req.URL.Opaque
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	sig.SignRequestV2(&sig.Request{Method: req.Method, Host: host, RawPath: path, RawQuery: req.URL.RawQuery,
		Header: req.Header}, keyID, secret, t)
}

// userRequest sends one signed request (body, when not nil, as JSON) and returns the
// 2xx response's body.
func userRequest(ctx context.Context, c *adminClient, method, path string, body any) ([]byte, error) {
	var (
		rd      io.Reader
		payload []byte
	)
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	signV2(req, c.id, c.secret, time.Now())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the server: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, parseS3Error(resp.StatusCode, b)
	}
	return b, nil
}

// printUserJSON writes the server's JSON indented: an array when list is set (null
// becomes []), else one user object.
func printUserJSON(w io.Writer, body []byte, list bool) error {
	body = bytes.TrimSpace(body)
	if list {
		var users []json.RawMessage
		if err := json.Unmarshal(body, &users); err != nil {
			return err
		}
		if users == nil {
			body = []byte("[]")
		}
	} else {
		var user map[string]json.RawMessage
		if err := json.Unmarshal(body, &user); err != nil {
			return err
		}
		if user == nil {
			return errors.New("no user in the answer")
		}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}
