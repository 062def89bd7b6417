package main

// End-to-end tests of server-side encryption (SSE-S3, SSE-C, bucket default
// encryption) through boto3 (testdata/boto3/sse.py), the AWS CLI and minio-go, and of
// what is on disk.

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"
	"github.com/minio/minio-go/v7/pkg/sse"
)

// TestS3SSEBoto3 runs testdata/boto3/sse.py (SSE-S3, SSE-C with and without the key,
// copies, multipart, presigned SSE-C, bucket default encryption; see the script).
func TestS3SSEBoto3(t *testing.T) {
	t.Parallel()
	py := boto3Python(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "boto3-sse@example.com", "Boto3 SSE")
	runBoto3Script(t, py, s, u, "sse.py", "boto3-sse", "PASS boto3 sse")
}

// TestS3SSEAwscli: `aws s3 cp --sse AES256` and `--sse-c` (a multipart upload: 9 MiB)
// store encrypted objects that head-object reports and that download whole (SSE-C only
// with the key); `aws s3api put-bucket-encryption` makes later uploads SSE-S3.
func TestS3SSEAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-sse@example.com", "Awscli SSE")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-sse"
	r.run(t, "s3api", "create-bucket", "--bucket", b)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(small, bytes.Repeat([]byte("small file "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte("0123456789abcdef"), 9<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "0123456789abcdef0123456789abcdef" // 32 bytes
	r.run(t, "s3", "cp", small, "s3://"+b+"/s3", "--sse", "AES256")
	r.run(t, "s3", "cp", big, "s3://"+b+"/c", "--sse-c", "AES256", "--sse-c-key", key)
	var head struct {
		ServerSideEncryption string `json:"ServerSideEncryption"`
		SSECustomerAlgorithm string `json:"SSECustomerAlgorithm"`
	}
	r.runJSON(t, &head, "s3api", "head-object", "--bucket", b, "--key", "s3")
	if head.ServerSideEncryption != "AES256" {
		t.Errorf("head-object of the --sse upload: %+v", head)
	}
	r.runJSON(t, &head, "s3api", "head-object", "--bucket", b, "--key", "c", "--sse-customer-algorithm", "AES256", "--sse-customer-key", key)
	if head.SSECustomerAlgorithm != "AES256" {
		t.Errorf("head-object of the --sse-c upload: %+v", head)
	}
	sameFile := func(a, b string) {
		t.Helper()
		x, _ := os.ReadFile(a)
		y, _ := os.ReadFile(b)
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs from %s (%d and %d bytes)", b, a, len(x), len(y))
		}
	}
	r.run(t, "s3", "cp", "s3://"+b+"/s3", filepath.Join(dir, "s3.out"))
	sameFile(small, filepath.Join(dir, "s3.out"))
	if _, errOut, err := r.try("s3", "cp", "s3://"+b+"/c", filepath.Join(dir, "nokey.out")); err == nil {
		t.Errorf("downloaded the SSE-C object without its key\n%s", errOut)
	}
	r.run(t, "s3", "cp", "s3://"+b+"/c", filepath.Join(dir, "c.out"), "--sse-c", "AES256", "--sse-c-key", key)
	sameFile(big, filepath.Join(dir, "c.out"))
	r.run(t, "s3api", "put-bucket-encryption", "--bucket", b, "--server-side-encryption-configuration",
		`{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}`)
	r.run(t, "s3", "cp", small, "s3://"+b+"/dflt")
	head.ServerSideEncryption = ""
	r.runJSON(t, &head, "s3api", "head-object", "--bucket", b, "--key", "dflt")
	if head.ServerSideEncryption != "AES256" {
		t.Errorf("head-object of an upload into a bucket with default encryption: %+v", head)
	}
}

// TestS3SSEMinio: through minio-go (every signature and addressing combination), an
// SSE-S3 upload reads back and reports its encryption; bucket encryption is set, read
// and removed. (minio-go refuses SSE-C over plain HTTP on its own side.)
func TestS3SSEMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "sse-minio@example.com", "SSE Minio")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "sse-minio")
	ctx := context.Background()
	for _, combo := range minioCombos {
		mc := newMinio(t, s, u.cred(), combo)
		key := "sse-" + combo.name
		if _, err := mc.PutObject(ctx, "sse-minio", key, strings.NewReader("secret"), 6,
			minio.PutObjectOptions{ServerSideEncryption: encrypt.NewSSE()}); err != nil {
			t.Fatalf("%s: PutObject SSE-S3: %v", combo.name, err)
		}
		o, err := mc.GetObject(ctx, "sse-minio", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o)
		if err != nil || string(got) != "secret" {
			t.Errorf("%s: GetObject: %q %v", combo.name, got, err)
		}
		st, err := mc.StatObject(ctx, "sse-minio", key, minio.StatObjectOptions{})
		if err != nil || st.Metadata.Get("X-Amz-Server-Side-Encryption") != "AES256" {
			t.Errorf("%s: StatObject: %v %v", combo.name, st.Metadata, err)
		}
		if _, err := mc.GetBucketEncryption(ctx, "sse-minio"); minioCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
			t.Errorf("%s: GetBucketEncryption without one: %v", combo.name, err)
		}
		if err := mc.SetBucketEncryption(ctx, "sse-minio", sse.NewConfigurationSSES3()); err != nil {
			t.Fatalf("%s: SetBucketEncryption: %v", combo.name, err)
		}
		cfg, err := mc.GetBucketEncryption(ctx, "sse-minio")
		if err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Apply.SSEAlgorithm != "AES256" {
			t.Errorf("%s: GetBucketEncryption: %+v %v", combo.name, cfg, err)
		}
		if err := mc.RemoveBucketEncryption(ctx, "sse-minio"); err != nil {
			t.Errorf("%s: RemoveBucketEncryption: %v", combo.name, err)
		}
	}
}

// TestS3SSEAtRest: the plaintext of SSE-S3 and SSE-C objects (in LevelDB chunk records
// and in blob files) appears nowhere in the data directory, while an unencrypted
// control object's does; the master key file is 0600; `cairn check` unwraps the SSE-S3
// keys and says it cannot check SSE-C ones; a --sse-master-key file readable by others
// stops the server with a message saying so (the data directory's own is made private
// at start, as everything in it).
func TestS3SSEAtRest(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "sse-disk@example.com", "SSE Disk")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "sse-disk")
	marker := func(name string, n int) string {
		unit := "PLAINTEXT-" + name + "-MARKER;"
		return strings.Repeat(unit, n/len(unit)+1)[:n]
	}
	ckey := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes, base64
	cmd5 := "hRasmdxgYDKV3nvbahU1MA=="                     // base64 MD5 of those bytes
	sseC := []string{"x-amz-server-side-encryption-customer-algorithm", "AES256",
		"x-amz-server-side-encryption-customer-key", ckey, "x-amz-server-side-encryption-customer-key-md5", cmd5}
	for _, size := range []int{1000, 300 << 10} { // a chunk record, a blob file
		c.put(t, "sse-disk", fmt.Sprint("s3-", size), marker("sses3", size), "x-amz-server-side-encryption", "AES256")
		c.must(t, http.StatusOK, http.MethodPut, "sse-disk", fmt.Sprint("c-", size), "", hdr(sseC), marker("ssec", size))
		c.put(t, "sse-disk", fmt.Sprint("clear-", size), marker("clear", size))
	}
	s.Stop()
	found := map[string]bool{}
	err := filepath.WalkDir(s.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range []string{"sses3", "ssec", "clear"} {
			if bytes.Contains(b, []byte("PLAINTEXT-"+m+"-MARKER;PLAINTEXT-"+m)) {
				found[m] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found["sses3"] || found["ssec"] || !found["clear"] {
		t.Errorf("plaintext found on disk: %v (want only the unencrypted control)", found)
	}
	keyFile := filepath.Join(s.DataDir, "sse-master.key")
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("master key file: %v %v", fi, err)
	}
	code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	if code != 0 || !strings.Contains(out, "2 SSE-S3 data keys unwrap") || !strings.Contains(out, "2 SSE-C objects") {
		t.Errorf("cairn check: %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(t.TempDir(), "loose.key")
	if err := os.WriteFile(loose, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCairn(t, serverOpts{args: []string{"--data-dir", s.DataDir, "--sse-master-key", loose,
		"--kv-listen", "127.0.0.1:0", "--s3-listen", "127.0.0.1:0"}})
	if code == 0 || !strings.Contains(out+errOut, "readable by its owner only") {
		t.Errorf("a world-readable master key: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestS3SSECMinioTLS: over TLS (minio-go sends SSE-C keys over HTTPS only), an SSE-C
// object written by minio-go, whole and as a multipart upload, reads back with its key
// and is refused without it or with another; a copy decrypts it with the copy-source key
// into an SSE-S3 object.
func TestS3SSECMinioTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "s3.pem"), filepath.Join(dir, "s3.key")
	ca.issue(t, cert, key, 301)
	s := startServerOpts(t, serverOpts{tlsRoots: ca.pool, args: []string{"--dialect", "riak", "--s3-tls-cert", cert, "--s3-tls-key", key}})
	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V4}
	admin.mkBucket(t, "ssec")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}
	t.Cleanup(tr.CloseIdleConnections)
	mc, err := minio.New(s.S3Addr, &minio.Options{Creds: credentials.NewStaticV4(admin.cred.KeyID, admin.cred.Secret, ""),
		Secure: true, Region: "us-east-1", Transport: tr, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sseC, err := encrypt.NewSSEC(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := encrypt.NewSSEC(bytes.Repeat([]byte{8}, 32))
	small := bytes.Repeat([]byte("minio sse-c "), 1000)
	big := bytes.Repeat([]byte("a multipart upload under a customer key "), 300_000) // 12 MB: 3 parts of 5 MiB
	for name, data := range map[string][]byte{"small": small, "big": big} {
		if _, err := mc.PutObject(ctx, "ssec", name, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{ServerSideEncryption: sseC, PartSize: 5 << 20}); err != nil {
			t.Fatalf("PutObject %s: %v", name, err)
		}
		o, err := mc.GetObject(ctx, "ssec", name, minio.GetObjectOptions{ServerSideEncryption: sseC})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("GetObject %s with the key: %v (%d bytes)", name, err, len(got))
		}
		if _, err := mc.StatObject(ctx, "ssec", name, minio.StatObjectOptions{}); err == nil {
			t.Errorf("StatObject %s without the key succeeded", name)
		}
		if _, err := mc.StatObject(ctx, "ssec", name, minio.StatObjectOptions{ServerSideEncryption: other}); minioCode(err) != "AccessDenied" {
			t.Errorf("StatObject %s with another key: %v", name, err)
		}
	}
	_, err = mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: "ssec", Object: "copy", Encryption: encrypt.NewSSE()},
		minio.CopySrcOptions{Bucket: "ssec", Object: "small", Encryption: encrypt.SSECopy(sseC)})
	if err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	o, err := mc.GetObject(ctx, "ssec", "copy", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(o); err != nil || !bytes.Equal(got, small) {
		t.Errorf("GetObject of the SSE-S3 copy: %v", err)
	}
}
