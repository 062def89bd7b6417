package main

// End-to-end tests of `cairn user`. Requests to the object-storage interface go through
// the shared S3 harness (s3harness_test.go); the helpers here run the command.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// userCLI runs `cairn user ARGS...` against s's object-storage interface with s's data
// directory (so the admin key comes from its credential file).
func userCLI(t testing.TB, s *child, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// The flags go first, so that a command may end its flags with "--" (a key id may
	// start with "-").
	argv := append([]string{"user", "--url", "http://" + s.S3Addr, "--data-dir", s.DataDir}, args...)
	return runCairn(t, serverOpts{args: argv})
}

// mustUserJSON runs a `cairn user` command that must succeed and decodes its output into v.
func mustUserJSON(t testing.TB, s *child, v any, args ...string) {
	t.Helper()
	code, out, errOut := userCLI(t, s, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("cairn user %v: exit %d, stderr %q, stdout %q", args, code, errOut, out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("cairn user %v: output %q: %v", args, out, err)
	}
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("cairn user %v: output does not end in a newline: %q", args, out)
	}
}

// cliCreateUser creates a user with `cairn user create` and returns its record.
func cliCreateUser(t testing.TB, s *child, name, email string) s3User {
	t.Helper()
	var u s3User
	mustUserJSON(t, s, &u, "create", "--name", name, "--email", email)
	if u.KeyID == "" || u.KeySecret == "" {
		t.Fatalf("cairn user create: no key pair in %+v", u)
	}
	return u
}

var (
	keyIDRE     = regexp.MustCompile(`^[A-Z0-9_-]{20}$`)
	keySecretRE = regexp.MustCompile(`^[A-Za-z0-9_=-]{40}$`)
	canonicalRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func TestUserCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	// create
	alice := cliCreateUser(t, s, "Alice Liddell", "alice@example.com")
	if alice.Email != "alice@example.com" || alice.Name != "Alice Liddell" || alice.DisplayName != "alice" ||
		alice.Status != "enabled" || !keyIDRE.MatchString(alice.KeyID) || !keySecretRE.MatchString(alice.KeySecret) ||
		!canonicalRE.MatchString(alice.ID) {
		t.Errorf("created user: %+v", alice)
	}
	bob := cliCreateUser(t, s, "Bob", "bob@example.com")

	// The new key pair works on the S3 API.
	c := s3c{s: s, cred: alice.cred(), sign: s3V2}
	c.mkBucket(t, "alice-bucket")

	// list: the admin, alice and bob.
	var all []s3User
	mustUserJSON(t, s, &all, "list")
	emails := map[string]s3User{}
	for _, u := range all {
		emails[u.Email] = u
	}
	if len(all) != 3 || emails["alice@example.com"] != alice || emails["bob@example.com"] != bob {
		t.Errorf("user list: %+v", all)
	}
	var disabled []s3User
	mustUserJSON(t, s, &disabled, "list", "--status", "disabled")
	if len(disabled) != 0 {
		t.Errorf("user list --status disabled before any disable: %+v", disabled)
	}

	// disable: the key stops working and the user is listed as disabled.
	var u s3User
	mustUserJSON(t, s, &u, "disable", "--", alice.KeyID)
	if want := alice; u.Status != "disabled" || u.KeyID != want.KeyID || u.Email != want.Email {
		t.Errorf("disable: %+v", u)
	}
	expectS3Error(t, c.do(t, http.MethodGet, "", "", "", nil, ""), http.StatusForbidden, "InvalidAccessKeyId")
	mustUserJSON(t, s, &disabled, "--status=disabled", "list") // flags before the command too
	if len(disabled) != 1 || disabled[0].KeyID != alice.KeyID {
		t.Errorf("user list --status disabled: %+v", disabled)
	}
	var enabled []s3User
	mustUserJSON(t, s, &enabled, "list", "--status", "enabled")
	if len(enabled) != 2 {
		t.Errorf("user list --status enabled: %+v", enabled)
	}

	// enable
	mustUserJSON(t, s, &u, "enable", "--", alice.KeyID)
	if u.Status != "enabled" {
		t.Errorf("enable: %+v", u)
	}
	c.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")

	// rotate: same key id, new secret; the old secret no longer signs.
	mustUserJSON(t, s, &u, "rotate", "--", alice.KeyID)
	if u.KeyID != alice.KeyID || u.KeySecret == alice.KeySecret || !keySecretRE.MatchString(u.KeySecret) || u.Status != "enabled" {
		t.Errorf("rotate: %+v (was %+v)", u, alice)
	}
	expectS3Error(t, c.do(t, http.MethodGet, "", "", "", nil, ""), http.StatusForbidden, "SignatureDoesNotMatch")
	alice.KeySecret = u.KeySecret
	c.as(alice.cred()).must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")

	// The key given on the command line (no data dir), and the URL from CAIRN_S3_URL.
	admin := s3AdminCred(t, s)
	code, out, errOut := runCairn(t, serverOpts{
		args: []string{"user", "list", "--key-id", admin.KeyID, "--key-secret", admin.Secret, "--data-dir", t.TempDir()},
		env:  []string{"CAIRN_S3_URL=http://" + s.S3Addr},
	})
	if code != 0 || !strings.HasPrefix(out, "[") || errOut != "" {
		t.Errorf("user list with --key-id and CAIRN_S3_URL: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestUserCLIErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	bob := cliCreateUser(t, s, "Bob", "bob@example.com")
	url := "http://" + s.S3Addr

	tests := []struct {
		name string
		args []string
		code int
		// stderr must match this expression.
		stderr string
	}{
		{"duplicate email", []string{"create", "--name", "B", "--email", "bob@example.com", "--url", url, "--data-dir", s.DataDir},
			1, `^cairn: UserAlreadyExists: The specified email address has already been registered\. .*\n$`},
		{"bad email", []string{"create", "--name", "B", "--email", "nobody", "--url", url, "--data-dir", s.DataDir},
			1, `^cairn: InvalidUserField: .*\n$`},
		{"unknown key id", []string{"disable", "NOSUCHKEY0000000000", "--url", url, "--data-dir", s.DataDir},
			1, `^cairn: NoSuchUser: .*\n$`},
		{"not the admin", []string{"list", "--url", url, "--key-id", bob.KeyID, "--key-secret", bob.KeySecret},
			1, `^cairn: AccessDenied: Access Denied\n$`},
		{"wrong secret", []string{"list", "--url", url, "--key-id", bob.KeyID, "--key-secret", otherFirstByte(bob.KeySecret)},
			1, `^cairn: SignatureDoesNotMatch: .*\n$`},
		{"unknown key", []string{"list", "--url", url, "--key-id", "NOSUCHKEY0000000000", "--key-secret", "s"},
			1, `^cairn: InvalidAccessKeyId: .*\n$`},
		{"no admin credentials", []string{"list", "--url", url, "--data-dir", t.TempDir()},
			1, `^cairn: no admin key: .*admin-credentials\.json.*\n$`},
		{"unreachable", []string{"list", "--url", "http://127.0.0.1:1", "--data-dir", s.DataDir},
			1, `^cairn: cannot reach the server: .*\n$`},
		{"bad url", []string{"list", "--url", "ftp://x", "--data-dir", s.DataDir},
			1, `^cairn: --url "ftp://x" is not an http\(s\) URL\n$`},

		{"no command", []string{"--url", url}, 2, `^cairn user: missing command\nusage:`},
		{"unknown command", []string{"delete", "X"}, 2, `^cairn user: unknown command "delete"\nusage:`},
		{"missing key id", []string{"disable"}, 2, `^cairn user: disable takes 1 argument\(s\), got 0\n`},
		{"extra argument", []string{"list", "x"}, 2, `^cairn user: list takes 0 argument\(s\), got 1\n`},
		{"create without email", []string{"create", "--name", "x"}, 2, `^cairn user: create needs --name and --email\n`},
		{"name outside create", []string{"enable", "K", "--name", "x"}, 2, `^cairn user: --name and --email apply to create only\n`},
		{"status outside list", []string{"enable", "K", "--status", "enabled"}, 2, `^cairn user: --status applies to list only\n`},
		{"bad status", []string{"list", "--status", "gone"}, 2, `^cairn user: --status must be enabled or disabled, not "gone"\n`},
		{"half a key", []string{"list", "--key-id", "K"}, 2, `^cairn user: give both --key-id and --key-secret, or neither\n`},
		{"unknown flag", []string{"list", "--nope"}, 2, `^cairn user: flag provided but not defined: -nope\n`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCairn(t, serverOpts{args: append([]string{"user"}, tc.args...)})
			if code != tc.code || out != "" || !regexp.MustCompile(tc.stderr).MatchString(errOut) {
				t.Errorf("cairn user %v: exit %d (want %d), stdout %q, stderr %q (want to match %q)",
					tc.args, code, tc.code, out, errOut, tc.stderr)
			}
		})
	}

	t.Run("help", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCairn(t, serverOpts{args: []string{"user", "-h"}})
		if code != 0 || !strings.HasPrefix(out, "usage:\n  cairn user create") || errOut != "" {
			t.Errorf("cairn user -h: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
}

func TestUserParseS3Error(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"s3 error", 409, `<?xml version="1.0" encoding="UTF-8"?>` +
			`<Error><Code>UserAlreadyExists</Code><Message>taken</Message><Resource>/riak-cs/user</Resource><RequestId>1</RequestId></Error>`,
			"UserAlreadyExists: taken"},
		{"no message", 403, `<Error><Code>AccessDenied</Code></Error>`, "AccessDenied"},
		{"message spaces", 400, "<Error><Code>X</Code><Message>\n m \n</Message></Error>", "X: m"},
		{"plain text", 502, "bad gateway\n", "HTTP 502: bad gateway"},
		{"empty", 500, "", "HTTP 500: Internal Server Error"},
		{"xml without code", 500, "<Error></Error>", "HTTP 500: <Error></Error>"},
		{"long text", 500, strings.Repeat("a", 300), "HTTP 500: " + strings.Repeat("a", 200) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := parseS3Error(tc.status, []byte(tc.body))
			if err == nil || err.Error() != tc.want {
				t.Errorf("parseS3Error(%d, %q) = %v, want %q", tc.status, tc.body, err, tc.want)
			}
			var se *apiError
			if isS3 := errors.As(err, &se); isS3 != strings.Contains(tc.body, "<Code>") {
				t.Errorf("parseS3Error(%d, %q): *apiError %v", tc.status, tc.body, isS3)
			}
		})
	}
}

func TestUserPrintJSON(t *testing.T) {
	tests := []struct {
		name string
		body string
		list bool
		want string
		bad  bool
	}{
		{"user", `{"email":"a@b","status":"enabled"}`, false, "{\n  \"email\": \"a@b\",\n  \"status\": \"enabled\"\n}\n", false},
		{"list", `[{"email":"a@b"}]`, true, "[\n  {\n    \"email\": \"a@b\"\n  }\n]\n", false},
		{"empty list", `[]`, true, "[]\n", false},
		{"null list", `null`, true, "[]\n", false},
		{"array for a user", `[]`, false, "", true},
		{"object for a list", `{}`, true, "", true},
		{"not json", `<Error/>`, false, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := printUserJSON(&buf, []byte(tc.body), tc.list)
			if (err != nil) != tc.bad || buf.String() != tc.want {
				t.Errorf("printUserJSON(%q, %v) = %q, %v; want %q (error %v)", tc.body, tc.list, buf.String(), err, tc.want, tc.bad)
			}
		})
	}
}

// otherFirstByte returns secret with its first character changed (so it is certainly a
// wrong secret).
func otherFirstByte(secret string) string {
	if secret[0] == 'x' {
		return "y" + secret[1:]
	}
	return "x" + secret[1:]
}
