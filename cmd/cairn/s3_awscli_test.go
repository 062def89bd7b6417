package main

// End-to-end test of the object-storage interface with awscli (the `aws` command; Debian
// package awscli), which signs with V4 and, against a custom endpoint, addresses buckets
// in path style: `aws s3 cp` of a 100 MiB file up (a multipart upload in 8 MiB parts)
// and down (ranged GETs in parallel), with the bytes compared, plus `s3 ls`, `s3api
// head-object`, `s3api delete-objects`, `s3 rm` and `s3 rb`.
//
// The command is `aws` from PATH, or the one CAIRN_AWSCLI names. It runs with a clean
// environment: a temporary HOME, configuration and credential files of its own, and no
// instance metadata lookups.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// awscliTimeout bounds one aws command.
const awscliTimeout = 5 * time.Minute

// awscliSize is the size of the file copied up and down (awscli splits it into 13 parts
// of 8 MiB, its default multipart_chunksize, the last one 4 MiB).
const awscliSize = 100 << 20

// awscliRunner runs the aws command against one server.
type awscliRunner struct {
	bin, endpoint string
	env           []string
	dir           string
}

// awscliBinary returns the aws command to test, or skips (fails under
// CAIRN_REQUIRE_TOOLCHAINS=1) when there is none.
func awscliBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CAIRN_AWSCLI"); p != "" {
		return p
	}
	p, err := exec.LookPath("aws")
	if err != nil {
		if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("awscli is not installed (Debian: apt-get install awscli) and CAIRN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("awscli is not installed (Debian: apt-get install awscli); skipping the awscli end-to-end test")
	}
	return p
}

// newAwscliRunner writes awscli's configuration for the user (region us-east-1, path
// style, no retries that could hide a failed request) into a temporary directory.
func newAwscliRunner(t *testing.T, bin string, s *child, cred s3Cred) awscliRunner {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config")
	creds := filepath.Join(dir, "credentials")
	cfg := "[default]\nregion = us-east-1\noutput = json\ncli_pager =\nmax_attempts = 1\nretry_mode = standard\n" +
		"s3 =\n    addressing_style = path\n"
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cr := "[default]\naws_access_key_id = " + cred.KeyID + "\naws_secret_access_key = " + cred.Secret + "\n"
	if err := os.WriteFile(creds, []byte(cr), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"AWS_CONFIG_FILE=" + config,
		"AWS_SHARED_CREDENTIALS_FILE=" + creds,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
	}
	return awscliRunner{bin: bin, endpoint: "http://" + s.S3Addr, env: env, dir: dir}
}

// try runs `aws --endpoint-url URL ARGS...` and returns its stdout, stderr and error.
func (r awscliRunner) try(args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), awscliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{"--endpoint-url", r.endpoint}, args...)...)
	cmd.Env = r.env
	cmd.Dir = r.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", awscliTimeout, err)
	}
	return out.String(), errb.String(), err
}

// run runs an aws command that must succeed and returns its stdout.
func (r awscliRunner) run(t *testing.T, args ...string) string {
	t.Helper()
	start := time.Now()
	out, errOut, err := r.try(args...)
	if err != nil {
		t.Fatalf("aws %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, tail(out, 3000), tail(errOut, 3000))
	}
	t.Logf("aws %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out
}

// runJSON runs an aws command that must succeed and decodes its JSON output into v.
func (r awscliRunner) runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := r.run(t, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("aws %s: output %q: %v", strings.Join(args, " "), tail(out, 2000), err)
	}
}

// awscliSHA256 is the hex SHA-256 of a file.
func awscliSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestS3Awscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startS3Server(t)
	u := s3CreateUser(t, s, "awscli@example.com", "Awscli User")
	r := newAwscliRunner(t, bin, s, u.cred())
	if out, errOut, err := r.try("--version"); err == nil {
		t.Logf("aws --version: %s%s", strings.TrimSpace(out), strings.TrimSpace(errOut))
	}
	const b = "awscli-bucket"
	dir := t.TempDir()

	// A bucket, a 100 MiB file up (multipart) and a small one (a single PUT).
	r.run(t, "s3", "mb", "s3://"+b)
	data := randomBytes(awscliSize)
	up := filepath.Join(dir, "up.bin")
	if err := os.WriteFile(up, data, 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.txt")
	if err := os.WriteFile(small, []byte("a small file from awscli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.run(t, "s3", "cp", up, "s3://"+b+"/dir/big file.bin")
	r.run(t, "s3", "cp", small, "s3://"+b+"/dir/small.txt")

	// The upload was a multipart one of 8 MiB parts: its ETag says so.
	var head struct {
		ContentLength int64  `json:"ContentLength"`
		ETag          string `json:"ETag"`
		ContentType   string `json:"ContentType"`
	}
	r.runJSON(t, &head, "s3api", "head-object", "--bucket", b, "--key", "dir/big file.bin")
	wantETag := `"` + mpETag(mpSplit(data, 8<<20)...) + `"`
	if head.ContentLength != awscliSize || head.ETag != wantETag {
		t.Errorf("head-object: ContentLength %d ETag %s, want %d %s (13 parts of 8 MiB)", head.ContentLength, head.ETag,
			awscliSize, wantETag)
	}
	t.Logf("head-object: %+v", head)

	// No upload was left in progress.
	var uploads struct {
		Uploads []struct{ Key, UploadId string } `json:"Uploads"`
	}
	if out := r.run(t, "s3api", "list-multipart-uploads", "--bucket", b); strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &uploads); err != nil {
			t.Errorf("list-multipart-uploads: %q: %v", out, err)
		}
		if len(uploads.Uploads) != 0 {
			t.Errorf("uploads left in progress: %+v", uploads.Uploads)
		}
	}

	// Listings.
	if out := r.run(t, "s3", "ls"); !strings.Contains(out, " "+b+"\n") {
		t.Errorf("aws s3 ls does not list %s:\n%s", b, out)
	}
	out := r.run(t, "s3", "ls", "s3://"+b+"/dir/")
	if !strings.Contains(out, " "+strconv.Itoa(awscliSize)+" big file.bin\n") || !strings.Contains(out, " 25 small.txt\n") {
		t.Errorf("aws s3 ls s3://%s/dir/:\n%s", b, out)
	}
	if out := r.run(t, "s3", "ls", "s3://"+b+"/"); !strings.Contains(out, "PRE dir/") {
		t.Errorf("aws s3 ls s3://%s/ lacks the dir/ prefix:\n%s", b, out)
	}

	// Down again: the bytes are the same.
	down := filepath.Join(dir, "down.bin")
	r.run(t, "s3", "cp", "s3://"+b+"/dir/big file.bin", down)
	if got, want := awscliSHA256(t, down), awscliSHA256(t, up); got != want {
		fi, _ := os.Stat(down)
		t.Fatalf("downloaded file: SHA-256 %s (%d bytes), uploaded %s (%d bytes)", got, fi.Size(), want, awscliSize)
	}
	smallDown := filepath.Join(dir, "small-down.txt")
	r.run(t, "s3", "cp", "s3://"+b+"/dir/small.txt", smallDown)
	if got, want := awscliSHA256(t, smallDown), awscliSHA256(t, small); got != want {
		t.Errorf("downloaded small file differs")
	}

	// Multi-object delete (newer awscli sends a CRC32 checksum instead of Content-MD5).
	r.run(t, "s3", "cp", small, "s3://"+b+"/del/one")
	r.run(t, "s3", "cp", small, "s3://"+b+"/del/two")
	var del struct {
		Deleted []struct{ Key string } `json:"Deleted"`
		Errors  []struct{ Key, Code string }
	}
	r.runJSON(t, &del, "s3api", "delete-objects", "--bucket", b, "--delete",
		`{"Objects":[{"Key":"del/one"},{"Key":"del/two"},{"Key":"del/absent"}]}`)
	if len(del.Deleted) != 3 || len(del.Errors) != 0 {
		t.Errorf("delete-objects: %+v", del)
	}

	// Remove the objects and the bucket.
	r.run(t, "s3", "rm", "s3://"+b+"/dir/big file.bin")
	if _, errOut, err := r.try("s3api", "head-object", "--bucket", b, "--key", "dir/big file.bin"); err == nil ||
		!strings.Contains(errOut, "404") {
		t.Errorf("head-object after rm: %v\n%s", err, errOut)
	}
	r.run(t, "s3", "rm", "s3://"+b+"/dir/small.txt")
	if out := r.run(t, "s3", "ls", "s3://"+b+"/", "--recursive"); strings.TrimSpace(out) != "" {
		t.Errorf("objects left:\n%s", out)
	}
	r.run(t, "s3", "rb", "s3://"+b)
	_, errOut, err := r.try("s3", "ls", "s3://"+b+"/")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(errOut, "NoSuchBucket") {
		t.Errorf("aws s3 ls of the removed bucket: %v\n%s", err, errOut)
	}

	// The store is clean: every part's data went with the object.
	sum := waitS3Clean(t, s)
	if want := (s3CheckSummary{Users: 2}); sum != want {
		t.Errorf("cairn check: %+v, want %+v", sum, want)
	}
}
