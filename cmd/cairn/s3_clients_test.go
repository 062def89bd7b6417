package main

// S3 clients against a server started with no flags (no --dialect): boto3, the AWS
// CLI, s3cmd and minio-go see user metadata (an empty value included, keys in lower case
// as AWS answers), request ids on success and on error, and copy with the COPY and
// REPLACE metadata directives. A request in the spec's x-obj-* names is still answered in
// those names, and one with no hint in the default dialect's.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// startDefaultS3Server starts a server with its default flags and checks that it serves S3.
func startDefaultS3Server(t testing.TB) *child {
	t.Helper()
	s := startServer(t)
	if s.S3Addr == "" {
		t.Fatalf("the server did not announce the object-storage interface\n%s", s.output())
	}
	return s
}

// boto3Python returns a Python that can import boto3: /usr/bin/python3 (Debian's
// python3-boto3), else python3 on PATH; it skips the test (fails it under
// CAIRN_REQUIRE_TOOLCHAINS=1) when there is none.
func boto3Python(t *testing.T) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("CAIRN_BOTO3_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, py := range cands {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exec.CommandContext(ctx, py, "-c", "import boto3").Run()
		cancel()
		if err == nil {
			return py
		}
	}
	msg := "no python3 can import boto3 (Debian: apt-get install python3-boto3)"
	if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatal(msg + " and CAIRN_REQUIRE_TOOLCHAINS=1")
	}
	t.Skip(msg + "; skipping the boto3 end-to-end test")
	return ""
}

// TestS3ClientsBoto3 runs testdata/boto3/clients.py (metadata, request ids, copy
// directives; see the script) against a server with no flags.
func TestS3ClientsBoto3(t *testing.T) {
	t.Parallel()
	py := boto3Python(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "boto3@example.com", "Boto3 User")
	out := runBoto3Script(t, py, s, u, "clients.py", "boto3-clients", "PASS boto3")
	t.Logf("%s: %d checks passed", py, strings.Count(out, "\nok ")+1)
}

// runBoto3Script runs testdata/boto3/<script> with py against s as user u, the bucket
// given in CAIRN_S3_BUCKET, and requires its last line to be pass; it returns the output.
func runBoto3Script(t *testing.T, py string, s *child, u s3User, script, bucket, pass string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "boto3", script))
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"CAIRN_S3_ENDPOINT=http://" + s.S3Addr, "CAIRN_S3_KEY=" + u.KeyID, "CAIRN_S3_SECRET=" + u.KeySecret,
		"CAIRN_S3_BUCKET=" + bucket}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out.String()), pass) {
		t.Fatalf("%s %s: %v\n%s", py, script, err, tail(out.String(), 4000))
	}
	return out.String()
}

// awscliMeta is what `aws s3api head-object` prints that these tests read.
type awscliMeta struct {
	ContentType string            `json:"ContentType"`
	Metadata    map[string]string `json:"Metadata"`
}

// TestS3ClientsAwscli: the AWS CLI's metadata round trip (an empty value, mixed-case
// keys), copy with COPY and REPLACE, the self-copy refusal, and the request id it reads.
func TestS3ClientsAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-names@example.com", "Awscli Names")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-names"
	file := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(file, []byte("from the aws cli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	head := func(key string) awscliMeta {
		var m awscliMeta
		r.runJSON(t, &m, "s3api", "head-object", "--bucket", b, "--key", key)
		return m
	}
	want := map[string]string{"color": "red", "mixed-case": "Yes", "empty": ""}
	r.run(t, "s3api", "create-bucket", "--bucket", b)
	r.run(t, "s3api", "put-object", "--bucket", b, "--key", "obj", "--body", file, "--content-type", "text/x-cli",
		"--metadata", `{"color":"red","Mixed-Case":"Yes","empty":""}`)
	if m := head("obj"); !sameMap(m.Metadata, want) || m.ContentType != "text/x-cli" {
		t.Errorf("head-object: %+v, want metadata %v and text/x-cli", m, want)
	}
	r.run(t, "s3api", "copy-object", "--bucket", b, "--key", "copy", "--copy-source", b+"/obj")
	if m := head("copy"); !sameMap(m.Metadata, want) || m.ContentType != "text/x-cli" {
		t.Errorf("copy (COPY): %+v, want the source's metadata and type", m)
	}
	r.run(t, "s3api", "copy-object", "--bucket", b, "--key", "replaced", "--copy-source", b+"/obj",
		"--metadata-directive", "REPLACE", "--metadata", `{"new":"1"}`, "--content-type", "text/x-new")
	if m := head("replaced"); !sameMap(m.Metadata, map[string]string{"new": "1"}) || m.ContentType != "text/x-new" {
		t.Errorf("copy (REPLACE): %+v, want metadata {new:1} and text/x-new", m)
	}
	_, errOut, err := r.try("s3api", "copy-object", "--bucket", b, "--key", "obj", "--copy-source", b+"/obj")
	if err == nil || !strings.Contains(errOut, "InvalidRequest") {
		t.Errorf("self copy without REPLACE: %v, want InvalidRequest:\n%s", err, errOut)
	}
	// The request id botocore logs from the response headers, on an error.
	_, errOut, err = r.try("--debug", "s3api", "head-object", "--bucket", b, "--key", "missing")
	if low := strings.ToLower(errOut); err == nil || !strings.Contains(low, "'x-amz-request-id': '") || strings.Contains(low, "x-obj-") {
		t.Errorf("head-object of a missing key: %v; want x-amz-request-id in the debug log and no x-obj- header:\n%s",
			err, tail(errOut, 3000))
	}
}

// sameMap reports whether two string maps are equal (nil equals empty).
func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestS3ClientsS3cmd: s3cmd's metadata (--add-header), `info`, copy (COPY) and `modify`
// (a copy onto itself with REPLACE), with signature V2 and V4.
func TestS3ClientsS3cmd(t *testing.T) {
	t.Parallel()
	bin := s3cmdBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "s3cmd-names@example.com", "s3cmd names")
	for _, p := range []s3cmdPass{{"v2-path", true, false}, {"v4-path", false, false}} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			r := s3cmdRunner{bin: bin, cfg: s3cmdConfig(t, s, u, p), home: t.TempDir()}
			bkt := "s3cmd-names-" + p.name
			file := filepath.Join(t.TempDir(), "f.txt")
			if err := os.WriteFile(file, []byte("from s3cmd\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			r.run(t, "mb", "s3://"+bkt)
			r.run(t, "put", "--no-preserve", "--mime-type=text/x-s3cmd", "--add-header=x-amz-meta-color:red",
				"--add-header=x-amz-meta-Mixed-Case:Yes", file, "s3://"+bkt+"/obj")
			info := func(key string, want ...string) {
				t.Helper()
				out := r.run(t, "info", "s3://"+bkt+"/"+key)
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("s3cmd info %s lacks %q:\n%s", key, w, out)
					}
				}
			}
			info("obj", "x-amz-meta-color: red", "x-amz-meta-mixed-case: Yes", "text/x-s3cmd")
			r.run(t, "cp", "s3://"+bkt+"/obj", "s3://"+bkt+"/copy")
			info("copy", "x-amz-meta-color: red", "x-amz-meta-mixed-case: Yes", "text/x-s3cmd")
			// modify copies the object onto itself with the REPLACE directive.
			r.run(t, "modify", "--add-header=x-amz-meta-shade:dark", "s3://"+bkt+"/obj")
			info("obj", "x-amz-meta-shade: dark")
		})
	}
}

// TestS3ClientsMinio: minio-go's metadata round trip (an empty value), error request
// ids, copy with COPY and REPLACE and the self-copy refusal; then raw requests for what
// minio-go does not show: the names on the wire (lower-case metadata, x-amz-request-id on
// success), the spec's names for x-obj-* requests, the default for requests with no hint,
// and an unknown directive.
func TestS3ClientsMinio(t *testing.T) {
	t.Parallel()
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "minio-names@example.com", "Minio Names")
	ctx := context.Background()
	for _, combo := range []minioCombo{{"v2-path", false, false}, {"v4-host", true, true}} {
		t.Run(combo.name, func(t *testing.T) {
			t.Parallel()
			mc := newMinio(t, s, u.cred(), combo)
			b := "minio-names-" + combo.name
			if err := mc.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
				t.Fatal(err)
			}
			meta := map[string]string{"color": "red", "Mixed-Case": "Yes", "empty": ""}
			want := map[string]string{"Color": "red", "Mixed-Case": "Yes", "Empty": ""} // minio-go canonicalises
			if _, err := mc.PutObject(ctx, b, "obj", strings.NewReader("hello"), 5,
				minio.PutObjectOptions{ContentType: "text/x-minio", UserMetadata: meta}); err != nil {
				t.Fatal(err)
			}
			stat := func(key string) minio.ObjectInfo {
				t.Helper()
				oi, err := mc.StatObject(ctx, b, key, minio.StatObjectOptions{})
				if err != nil {
					t.Fatalf("stat %s: %v", key, err)
				}
				return oi
			}
			if oi := stat("obj"); !sameMap(oi.UserMetadata, want) || oi.ContentType != "text/x-minio" {
				t.Errorf("stat: %v %q, want %v text/x-minio", oi.UserMetadata, oi.ContentType, want)
			}
			_, err := mc.StatObject(ctx, b, "missing", minio.StatObjectOptions{})
			if er := minio.ToErrorResponse(err); er.StatusCode != http.StatusNotFound || er.RequestID == "" {
				t.Errorf("stat missing: %+v, want 404 with a request id", er)
			}
			src := minio.CopySrcOptions{Bucket: b, Object: "obj"}
			if _, err := mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: b, Object: "copy"}, src); err != nil {
				t.Fatal(err)
			}
			if oi := stat("copy"); !sameMap(oi.UserMetadata, want) || oi.ContentType != "text/x-minio" {
				t.Errorf("copy (COPY): %v %q, want the source's", oi.UserMetadata, oi.ContentType)
			}
			if _, err := mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: b, Object: "replaced", ReplaceMetadata: true,
				UserMetadata: map[string]string{"new": "1", "Content-Type": "text/x-new"}}, src); err != nil {
				t.Fatal(err)
			}
			if oi := stat("replaced"); !sameMap(oi.UserMetadata, map[string]string{"New": "1"}) || oi.ContentType != "text/x-new" {
				t.Errorf("copy (REPLACE): %v %q, want {New:1} text/x-new", oi.UserMetadata, oi.ContentType)
			}
			_, err = mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: b, Object: "obj"}, src)
			if er := minio.ToErrorResponse(err); er.Code != "InvalidRequest" || er.StatusCode != 400 || er.RequestID == "" {
				t.Errorf("self copy without REPLACE: %+v, want 400 InvalidRequest with a request id", er)
			}
		})
	}

	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		c := s3c{s: s, cred: u.cred(), sign: s3V4}
		c.mkBucket(t, "raw-names")
		c.put(t, "raw-names", "obj", "x", "x-amz-meta-Colour", "blue", "x-amz-meta-empty", "", "x-amz-acl", "public-read")
		// The names on the wire: lower-case metadata, x-amz-* request ids.
		conn := s3Dial(t, s)
		cred := u.cred()
		if _, err := io.WriteString(conn, s3RawRequest("GET", "/raw-names/obj", &cred, "/raw-names/obj",
			hdr{"Host", s.S3Addr, "Connection", "close"})); err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(conn)
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		for _, w := range []string{"\r\nx-amz-meta-colour: blue\r\n", "\r\nx-amz-meta-empty: \r\n", "\r\nX-Amz-Request-Id: ", "\r\nX-Amz-Id-2: "} {
			if !strings.Contains(head+"\r\n", w) {
				t.Errorf("V2-signed GET: no %q in\n%s", strings.TrimSpace(w), head)
			}
		}
		// The spec's names in, the spec's names out.
		r := c.do(t, http.MethodGet, "raw-names", "obj", "", nil, "")
		if r.Header.Get("X-Amz-Request-Id") == "" || r.Header.Get("X-Amz-Meta-Colour") != "blue" {
			t.Errorf("V4 GET: want x-amz-* names\n%s", r)
		}
		spec := c.as(u.cred())
		spec.sign = s3V2
		spec.put(t, "raw-names", "spec", "y", "x-obj-meta-shape", "round")
		r = spec.do(t, http.MethodGet, "raw-names", "spec", "", hdr{"x-obj-meta-ignored", "on a GET"}, "")
		if r.Header.Get("X-Obj-Request-Id") == "" || r.Header.Get("X-Obj-Meta-Shape") != "round" || r.Header.Get("X-Amz-Request-Id") != "" {
			t.Errorf("x-obj request: want x-obj-* names only\n%s", r)
		}
		// No hint (anonymous, no vendor header): the default dialect, store.
		r = c.anon().do(t, http.MethodGet, "raw-names", "obj", "", nil, "")
		if r.StatusCode != 200 || r.Header.Get("X-Obj-Request-Id") == "" || r.Header.Get("X-Obj-Meta-Colour") != "blue" {
			t.Errorf("anonymous GET: want x-obj-* names (the default)\n%s", r)
		}
		// An unknown directive; the error's request id is the header's.
		r = c.do(t, http.MethodPut, "raw-names", "bad", "", hdr{"x-amz-copy-source", "/raw-names/obj", "x-amz-metadata-directive", "MOVE"}, "")
		e := expectS3Error(t, r, http.StatusBadRequest, "InvalidArgument")
		if e.RequestID == "" || e.RequestID != r.Header.Get("X-Amz-Request-Id") {
			t.Errorf("RequestId %q, x-amz-request-id %q", e.RequestID, r.Header.Get("X-Amz-Request-Id"))
		}
	})
}
