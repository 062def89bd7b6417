package main

// End-to-end tests of "nothing silently accepted": the sub-resources and server-side
// encryption headers Cairn does not implement answer 501 NotImplemented naming what was
// asked, store nothing, and are logged with the method, path and query.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/encrypt"
)

// TestS3UnservedSubResources: every AWS sub-resource Cairn does not serve answers 501
// NotImplemented naming it, on the bucket and on an object, for GET, PUT, POST and
// DELETE (GET ?attributes used to return the object's body); the 501 is logged with
// method, path and query (a presigned URL's credentials redacted); an unknown query parameter that is not a sub-resource is
// ignored; ?versionId=null reads the one version an unversioned bucket keeps.
func TestS3UnservedSubResources(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "unserved@example.com", "Unserved")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "unserved")
	c.put(t, "unserved", "obj", "the body")
	bucketOnly := []string{"accelerate", "analytics", "cors", "encryption", "intelligent-tiering", "inventory",
		"lifecycle", "logging", "metadataTable", "metrics", "notification", "ownershipControls",
		"publicAccessBlock", "replication", "requestPayment", "website", "legal-hold", "retention"}
	objectOnly := []string{"attributes", "restore", "select", "torrent", "object-lock",
		"renameObject", "location", "policy", "policyStatus", "versioning", "versions", "delete"}
	type target struct {
		key  string
		subs []string
	}
	for _, tg := range []target{{"", bucketOnly}, {"obj", objectOnly}} {
		for _, sub := range tg.subs {
			for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete} {
				body := ""
				if m == http.MethodPut || m == http.MethodPost {
					body = "<X/>"
				}
				r := c.do(t, m, "unserved", tg.key, sub, nil, body)
				name, _, _ := strings.Cut(sub, "=")
				e := expectS3Error(t, r, http.StatusNotImplemented, "NotImplemented")
				if !strings.HasSuffix(e.Message, ": ?"+name) {
					t.Errorf("%s /unserved/%s?%s: message %q does not name ?%s", m, tg.key, sub, e.Message, name)
				}
			}
		}
	}
	// ?versionId is served: a malformed id is 400, and a PUT takes none.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		expectS3Error(t, c.do(t, m, "unserved", "obj", "versionId=3HL4kqtJlcpXroDTDmJ", nil, "<X/>"), http.StatusBadRequest, "InvalidArgument")
	}
	expectS3Error(t, c.do(t, http.MethodPut, "unserved", "obj", "versionId=null", nil, "<X/>"), http.StatusBadRequest, "InvalidArgument")
	// A HEAD gets the status alone.
	if r := c.do(t, http.MethodHead, "unserved", "obj", "attributes", nil, ""); r.StatusCode != http.StatusNotImplemented {
		t.Errorf("HEAD ?attributes: %d, want 501", r.StatusCode)
	}
	// Logged with method, path and query.
	waitFor(t, 5*time.Second, "the 501 to be logged", func() bool {
		for _, l := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(l, "not implemented") && strings.Contains(l, "method=GET") &&
				strings.Contains(l, "path=/unserved/obj") && strings.Contains(l, `query="attributes="`) {
				return true
			}
		}
		return false
	})
	// A presigned URL's credentials are not logged.
	ps := "attributes&" + s3V2Presign(u.cred(), http.MethodGet, s3V2Resource("/unserved/obj", "attributes", ""), time.Now().Add(time.Hour))
	expectS3Error(t, psDo(t, psClient(t, s), http.MethodGet, s.S3URL+"/unserved/obj?"+ps, nil), http.StatusNotImplemented, "NotImplemented")
	pq, _ := url.ParseQuery(ps)
	waitFor(t, 5*time.Second, "the presigned 501 to be logged", func() bool {
		return strings.Contains(s.stderr.String(), "Signature=REDACTED")
	})
	if out := s.stderr.String(); strings.Contains(out, url.QueryEscape(pq.Get("Signature"))) || strings.Contains(out, pq.Get("Signature")) {
		t.Errorf("the log shows a presigned URL's signature")
	}
	// Nothing was changed: the object reads as before, no object was made by a POST or PUT.
	if r := c.must(t, http.StatusOK, http.MethodGet, "unserved", "obj", "", nil, ""); string(r.Body) != "the body" {
		t.Errorf("object after the refused requests: %q", r.Body)
	}
	if keys := s3ParseList(t, c.must(t, http.StatusOK, http.MethodGet, "unserved", "", "", nil, "")).keys(); len(keys) != 1 {
		t.Errorf("bucket after the refused requests holds %q", keys)
	}
	// Parameters that are not sub-resources are ignored; versionId=null is the object.
	for _, q := range []string{"x-id=GetObject", "foo=bar&baz", "versionId=null"} {
		if r := c.must(t, http.StatusOK, http.MethodGet, "unserved", "obj", q, nil, ""); string(r.Body) != "the body" {
			t.Errorf("GET ?%s: %q", q, r.Body)
		}
	}
	c.must(t, http.StatusOK, http.MethodGet, "unserved", "", "x-id=ListObjects&list-type=2", nil, "")
}

// TestS3EncryptionHeadersRefused: server-side encryption headers (SSE-S3/KMS on writes,
// SSE-C on writes and reads, a copy source's SSE-C key) answer 501 NotImplemented
// naming the header, in either vendor prefix, and nothing is stored in clear under the
// client's belief that it is encrypted.
func TestS3EncryptionHeadersRefused(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "sse@example.com", "SSE")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "sse")
	c.put(t, "sse", "src", "source")
	uploadID := mpInitiate(t, c, "sse", "mp")
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes, base64
	writes := []string{"x-amz-server-side-encryption", "x-amz-server-side-encryption-aws-kms-key-id",
		"x-amz-server-side-encryption-context", "x-amz-server-side-encryption-bucket-key-enabled",
		"x-amz-server-side-encryption-customer-algorithm", "x-amz-server-side-encryption-customer-key",
		"x-amz-server-side-encryption-customer-key-md5", "x-obj-server-side-encryption"}
	copySource := []string{"x-amz-copy-source-server-side-encryption-customer-algorithm",
		"x-amz-copy-source-server-side-encryption-customer-key", "x-amz-copy-source-server-side-encryption-customer-key-md5"}
	type op struct {
		name, method, key, query string
		h                        hdr
		body                     string
	}
	ops := []op{
		{"PUT", http.MethodPut, "new", "", nil, "secret"},
		{"copy", http.MethodPut, "copy", "", hdr{"x-amz-copy-source", "/sse/src"}, ""},
		{"create upload", http.MethodPost, "new-mp", "uploads", nil, ""},
		{"upload part", http.MethodPut, "mp", mpQuery(uploadID, 1), nil, "part"},
	}
	check := func(o op, name, value string) {
		t.Helper()
		r := c.do(t, o.method, "sse", o.key, o.query, append(hdr{name, value}, o.h...), o.body)
		e := expectS3Error(t, r, http.StatusNotImplemented, "NotImplemented")
		if !strings.HasSuffix(e.Message, ": "+name) {
			t.Errorf("%s with %s: message %q does not name the header", o.name, name, e.Message)
		}
	}
	for _, o := range ops {
		for _, h := range writes {
			check(o, h, map[bool]string{true: key, false: "AES256"}[strings.HasSuffix(h, "-key")])
		}
	}
	for _, h := range copySource {
		check(ops[1], h, "AES256")
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		for _, h := range writes[4:7] {
			r := c.do(t, m, "sse", "src", "", hdr{h, "AES256"}, "")
			if m == http.MethodHead {
				if r.StatusCode != http.StatusNotImplemented {
					t.Errorf("HEAD with %s: %d, want 501", h, r.StatusCode)
				}
				continue
			}
			check(op{"GET", m, "src", "", nil, ""}, h, "AES256")
		}
	}
	// Nothing was stored; the upload has no part; reads without the headers work.
	for _, k := range []string{"new", "copy", "new-mp"} {
		expectS3Error(t, c.do(t, http.MethodGet, "sse", k, "", nil, ""), http.StatusNotFound, "NoSuchKey")
	}
	if r := c.must(t, http.StatusOK, http.MethodGet, "sse", "mp", mpUploadQuery(uploadID), nil, ""); strings.Contains(string(r.Body), "<Part>") {
		t.Errorf("the upload has a part after the refused upload:\n%s", r.Body)
	}
	if r := c.must(t, http.StatusOK, http.MethodGet, "sse", "src", "", nil, ""); string(r.Body) != "source" {
		t.Errorf("GET src: %q", r.Body)
	}
}

// TestS3UnservedMinio: through minio-go, an SSE-S3 upload, GetObjectAttributes,
// GetBucketLifecycle and GetBucketEncryption answer NotImplemented; nothing is stored in
// clear for the refused upload.
func TestS3UnservedMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "unserved-minio@example.com", "UnservedMinio")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "unserved-minio")
	c.put(t, "unserved-minio", "obj", "the body")
	ctx := context.Background()
	for _, combo := range minioCombos {
		mc := newMinio(t, s, u.cred(), combo)
		_, err := mc.PutObject(ctx, "unserved-minio", "sse-"+combo.name, strings.NewReader("secret"), 6,
			minio.PutObjectOptions{ServerSideEncryption: encrypt.NewSSE()})
		if minioCode(err) != "NotImplemented" {
			t.Errorf("%s: PutObject with SSE-S3: %v, want NotImplemented", combo.name, err)
		}
		if _, err := mc.StatObject(ctx, "unserved-minio", "sse-"+combo.name, minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
			t.Errorf("%s: the refused SSE upload is stored: %v", combo.name, err)
		}
		_, err = mc.GetObjectAttributes(ctx, "unserved-minio", "obj", minio.ObjectAttributesOptions{})
		if minioCode(err) != "NotImplemented" {
			t.Errorf("%s: GetObjectAttributes: %v, want NotImplemented", combo.name, err)
		}
		if _, err := mc.GetBucketLifecycle(ctx, "unserved-minio"); minioCode(err) != "NotImplemented" {
			t.Errorf("%s: GetBucketLifecycle: %v, want NotImplemented", combo.name, err)
		}
		if _, err := mc.GetBucketEncryption(ctx, "unserved-minio"); minioCode(err) != "NotImplemented" {
			t.Errorf("%s: GetBucketEncryption: %v, want NotImplemented", combo.name, err)
		}
	}
}
