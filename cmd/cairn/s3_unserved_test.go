package main

// End-to-end tests of "nothing silently accepted": the sub-resources and KMS
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
	bucketOnly := []string{"accelerate", "analytics", "intelligent-tiering", "inventory",
		"logging", "metadataTable", "metrics", "notification", "ownershipControls",
		"publicAccessBlock", "replication", "requestPayment", "website", "legal-hold", "retention"}
	objectOnly := []string{"attributes", "restore", "select", "torrent", "object-lock",
		"renameObject", "location", "policy", "policyStatus", "versioning", "versions", "delete", "encryption"}
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

// TestS3KMSRefused: the KMS encryption headers (a KMS key id, an encryption context) on
// writes answer 501 NotImplemented naming the header, in either vendor prefix, as does
// x-amz-server-side-encryption: aws:kms (KMS is not offered); nothing is stored in
// clear under the client's belief that it is encrypted.
func TestS3KMSRefused(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "sse@example.com", "SSE")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "sse")
	c.put(t, "sse", "src", "source")
	uploadID := mpInitiate(t, c, "sse", "mp")
	kms := []string{"x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-context",
		"x-obj-server-side-encryption-aws-kms-key-id"}
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
	for _, o := range ops {
		for _, name := range kms {
			r := c.do(t, o.method, "sse", o.key, o.query, append(hdr{name, "k"}, o.h...), o.body)
			e := expectS3Error(t, r, http.StatusNotImplemented, "NotImplemented")
			if !strings.HasSuffix(e.Message, ": "+name) {
				t.Errorf("%s with %s: message %q does not name the header", o.name, name, e.Message)
			}
		}
		if o.name == "upload part" {
			continue // x-amz-server-side-encryption is not an upload part header
		}
		r := c.do(t, o.method, "sse", o.key, o.query, append(hdr{"x-amz-server-side-encryption", "aws:kms"}, o.h...), o.body)
		if e := expectS3Error(t, r, http.StatusNotImplemented, "NotImplemented"); !strings.Contains(e.Message, "aws:kms") {
			t.Errorf("%s with aws:kms: message %q", o.name, e.Message)
		}
	}
	// Nothing was stored; the upload has no part; reads work.
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

// TestS3UnservedMinio: through minio-go, GetObjectAttributes and GetBucketReplication
// answer NotImplemented.
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
		_, err := mc.GetObjectAttributes(ctx, "unserved-minio", "obj", minio.ObjectAttributesOptions{})
		if minioCode(err) != "NotImplemented" {
			t.Errorf("%s: GetObjectAttributes: %v, want NotImplemented", combo.name, err)
		}
		if _, err := mc.GetBucketReplication(ctx, "unserved-minio"); minioCode(err) != "NotImplemented" {
			t.Errorf("%s: GetBucketReplication: %v, want NotImplemented", combo.name, err)
		}
	}
}
