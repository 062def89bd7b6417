package main

// End-to-end test of the object-storage interface with a real S3 client: s3cmd (Debian
// package s3cmd), in host style through its proxy settings (no DNS needed: requests go
// to the server with an absolute URI and Host: {bucket}.s3.localhost) and in path style,
// signing with V2 and with V4.

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// s3cmdTimeout bounds one s3cmd run.
const s3cmdTimeout = 2 * time.Minute

// s3cmdPass is one way of running s3cmd against the server.
type s3cmdPass struct {
	name      string
	v2        bool // signature_v2 = True
	hostStyle bool // {bucket}.s3.localhost through proxy_host, else path style
}

// s3cmdBinary returns the s3cmd command, or skips the test (fails it under
// CAIRN_REQUIRE_TOOLCHAINS=1) when it is not installed.
func s3cmdBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("s3cmd")
	if err != nil {
		if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("s3cmd is not installed (Debian: apt-get install s3cmd) and CAIRN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("s3cmd is not installed (Debian: apt-get install s3cmd); skipping the s3cmd end-to-end test")
	}
	return bin
}

func TestS3cmd(t *testing.T) {
	t.Parallel()
	bin := s3cmdBinary(t)
	s := startS3Server(t)
	u := s3CreateUser(t, s, "s3cmd@example.com", "s3cmd user")
	for _, p := range []s3cmdPass{
		{"v2-host", true, true},
		{"v2-path", true, false},
		{"v4-host", false, true},
		{"v4-path", false, false},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			runS3cmdPass(t, bin, s, u, p)
		})
	}
}

// s3cmdConfig writes an s3cmd configuration for the pass and returns its path.
func s3cmdConfig(t *testing.T, s *child, u s3User, p s3cmdPass) string {
	t.Helper()
	host, port, err := net.SplitHostPort(s.S3Addr)
	if err != nil {
		t.Fatal(err)
	}
	var addressing string
	if p.hostStyle {
		addressing = fmt.Sprintf("host_base = s3.localhost\nhost_bucket = %%(bucket)s.s3.localhost\nproxy_host = %s\nproxy_port = %s\n", host, port)
	} else {
		addressing = fmt.Sprintf("host_base = %s\nhost_bucket = %s\n", s.S3Addr, s.S3Addr)
	}
	sigV2 := "False"
	if p.v2 {
		sigV2 = "True"
	}
	cfg := "[default]\n" +
		"access_key = " + u.KeyID + "\n" +
		"secret_key = " + u.KeySecret + "\n" +
		addressing +
		"use_https = False\n" +
		"signature_v2 = " + sigV2 + "\n" +
		"bucket_location = US\n" +
		"enable_multipart = False\n" +
		"progress_meter = False\n" +
		"max_retries = 1\n" +
		"socket_timeout = 60\n"
	path := filepath.Join(t.TempDir(), "s3cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// s3cmdRunner runs s3cmd with one configuration.
type s3cmdRunner struct {
	bin, cfg, home string
}

// run runs s3cmd ARGS and returns its output; a non-zero exit fails the test.
func (r s3cmdRunner) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.try(args...)
	if err != nil {
		t.Fatalf("s3cmd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// try runs s3cmd ARGS and returns its combined output and the exit error.
func (r s3cmdRunner) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s3cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{"-c", r.cfg}, args...)...)
	// A clean environment: no proxy or AWS settings of the host leak in.
	cmd.Env = []string{"HOME=" + r.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func runS3cmdPass(t *testing.T, bin string, s *child, u s3User, p s3cmdPass) {
	r := s3cmdRunner{bin: bin, cfg: s3cmdConfig(t, s, u, p), home: t.TempDir()}
	bucket := "s3cmd-" + p.name
	dir := t.TempDir()
	small := []byte("hello from s3cmd\n")
	big := make([]byte, 5<<20)
	_, _ = rand.Read(big)
	smallFile, bigFile := filepath.Join(dir, "small.txt"), filepath.Join(dir, "big.bin")
	if err := os.WriteFile(smallFile, small, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bigFile, big, 0o644); err != nil {
		t.Fatal(err)
	}
	smallURI, bigURI := "s3://"+bucket+"/small.txt", "s3://"+bucket+"/dir/big.bin"

	// anonymous GET of key, in the pass's addressing style.
	anon := s3c{s: s, sign: s3Anon, host: p.hostStyle}
	anonGet := func(key string) *resp {
		t.Helper()
		return anon.do(t, http.MethodGet, bucket, key, "", nil, "")
	}

	out := r.run(t, "mb", "s3://"+bucket)
	if !strings.Contains(out, "Bucket 's3://"+bucket+"/' created") {
		t.Errorf("mb: %s", out)
	}
	if out := r.run(t, "ls"); !strings.Contains(out, "s3://"+bucket+"\n") {
		t.Errorf("ls does not list the bucket:\n%s", out)
	}
	if out := r.run(t, "info", "s3://"+bucket); !strings.Contains(out, "ACL:       s3cmd: FULL_CONTROL") {
		t.Errorf("info of the bucket:\n%s", out)
	}

	r.run(t, "put", smallFile, smallURI)
	r.run(t, "put", "--disable-multipart", bigFile, bigURI)

	out = r.run(t, "ls", "--recursive", "s3://"+bucket)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\S+ \S+ +17 +` + regexp.QuoteMeta(smallURI) + `$`),
		regexp.MustCompile(`(?m)^\S+ \S+ +5242880 +` + regexp.QuoteMeta(bigURI) + `$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("ls --recursive: no line matching %s in\n%s", want, out)
		}
	}
	// Without --recursive, dir/ is a common prefix.
	if out := r.run(t, "ls", "s3://"+bucket); !strings.Contains(out, "DIR  s3://"+bucket+"/dir/\n") || !strings.Contains(out, smallURI) {
		t.Errorf("ls:\n%s", out)
	}

	for _, c := range []struct {
		uri  string
		data []byte
	}{{smallURI, small}, {bigURI, big}} {
		dst := filepath.Join(dir, "got")
		r.run(t, "get", "--force", c.uri, dst)
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, c.data) {
			t.Errorf("get %s: %d bytes (MD5 %s), want %d bytes (MD5 %s)", c.uri, len(got), s3MD5Hex(got), len(c.data), s3MD5Hex(c.data))
		}
	}

	out = r.run(t, "info", bigURI)
	for _, want := range []string{"File size: 5242880", "MD5 sum:   " + s3MD5Hex(big), "ACL:       s3cmd: FULL_CONTROL"} {
		if !strings.Contains(out, want) {
			t.Errorf("info: no %q in\n%s", want, out)
		}
	}

	// Private by default; public after setacl --acl-public; private again after
	// --acl-private.
	if got := anonGet("small.txt"); got.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous GET of a private object: want 403, got\n%s", got)
	}
	r.run(t, "setacl", "--acl-public", smallURI)
	if got := anonGet("small.txt"); got.StatusCode != http.StatusOK || !bytes.Equal(got.Body, small) {
		t.Errorf("anonymous GET after setacl --acl-public: want 200 and the data, got\n%s", got)
	}
	if out := r.run(t, "info", smallURI); !strings.Contains(out, "ACL:       *anon*: READ") {
		t.Errorf("info after setacl --acl-public: no anonymous READ grant in\n%s", out)
	}
	r.run(t, "setacl", "--acl-private", smallURI)
	// After setacl --acl-private: 403 AccessDenied.
	expectS3Error(t, anonGet("small.txt"), http.StatusForbidden, "AccessDenied")

	// rb refuses a bucket with objects; del empties it.
	if out, err := r.try("rb", "s3://"+bucket); err == nil || !strings.Contains(out, "BucketNotEmpty") {
		t.Errorf("rb of a bucket with objects: want BucketNotEmpty, got %v\n%s", err, out)
	}
	r.run(t, "del", smallURI)
	r.run(t, "del", bigURI)
	if out := r.run(t, "ls", "--recursive", "s3://"+bucket); strings.TrimSpace(out) != "" {
		t.Errorf("ls after del:\n%s", out)
	}
	if got := anonGet("small.txt"); got.StatusCode != http.StatusForbidden && got.StatusCode != http.StatusNotFound {
		t.Errorf("anonymous GET of a deleted object: got\n%s", got)
	}
	out = r.run(t, "rb", "s3://"+bucket)
	if !strings.Contains(out, "Bucket 's3://"+bucket+"/' removed") {
		t.Errorf("rb: %s", out)
	}
	if out := r.run(t, "ls"); strings.Contains(out, "s3://"+bucket+"\n") {
		t.Errorf("ls still lists the removed bucket:\n%s", out)
	}
}
