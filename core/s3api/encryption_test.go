package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

// sseC returns the SSE-C headers of a key of 32 bytes seed (prefix "" or
// "copy-source-").
func sseC(prefix string, seed byte) map[string]string {
	k := bytes.Repeat([]byte{seed}, 32)
	sum := md5.Sum(k)
	p := "X-Amz-" + prefix + "Server-Side-Encryption-Customer-"
	return map[string]string{p + "Algorithm": "AES256", p + "Key": base64.StdEncoding.EncodeToString(k),
		p + "Key-MD5": base64.StdEncoding.EncodeToString(sum[:])}
}

// with returns the union of header maps.
func with(hs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}

// TestSSES3HTTP: PUT with x-amz-server-side-encryption AES256 is echoed on PUT, GET
// and HEAD; ranges read back; aws:kms and KMS headers are 501, another algorithm 400.
func TestSSES3HTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("enc", e.alice)
	data := strings.Repeat("0123456789abcdef", 4200) // crosses a segment boundary
	sse := map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}
	r := e.must(200, mpReq{method: "PUT", path: "/enc/k", body: data, header: sse, as: e.alice})
	sum := md5.Sum([]byte(data))
	if r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" || r.header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("PUT answer headers %v", r.header)
	}
	for _, m := range []string{"GET", "HEAD"} {
		r := e.must(200, mpReq{method: m, path: "/enc/k", as: e.alice})
		if r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" || (m == "GET" && r.body != data) {
			t.Fatalf("%s: %v, body equal %v", m, r.header, r.body == data)
		}
	}
	r = e.must(206, mpReq{method: "GET", path: "/enc/k", header: map[string]string{"Range": "bytes=65530-65545"}, as: e.alice})
	if r.body != data[65530:65546] {
		t.Fatalf("range: %q", r.body)
	}
	for _, c := range []struct {
		h      map[string]string
		status int
		code   s3.Code
	}{
		{map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms"}, 501, s3.NotImplemented},
		{map[string]string{"X-Amz-Server-Side-Encryption": "AES128"}, 400, s3.InvalidArgument},
		{map[string]string{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "k"}, 501, s3.NotImplemented},
		{with(sse, sseC("", 1)), 400, s3.InvalidArgument},
	} {
		e.mustErr(c.status, c.code, mpReq{method: "PUT", path: "/enc/other", body: "x", header: c.h, as: e.alice})
	}
}

// TestSSECHTTP: an SSE-C object answers with the algorithm and key MD5, an ETag that
// is not the MD5; GET and HEAD without the key are 400 InvalidRequest, with another
// 403 AccessDenied; malformed key headers are 400 InvalidArgument; a copy needs the
// source's key in the copy-source headers; a multipart upload needs it on every part.
func TestSSECHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("enc", e.alice)
	key := sseC("", 7)
	r := e.must(200, mpReq{method: "PUT", path: "/enc/c", body: "secret data", header: key, as: e.alice})
	sum := md5.Sum([]byte("secret data"))
	if r.header.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
		r.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != key["X-Amz-Server-Side-Encryption-Customer-Key-MD5"] ||
		r.header.Get("ETag") == `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("PUT answer headers %v", r.header)
	}
	keyMD5 := key["X-Amz-Server-Side-Encryption-Customer-Key-MD5"]
	for _, m := range []string{"GET", "HEAD"} { // the MD5 echoed is the request's (none is stored)
		r := e.must(200, mpReq{method: m, path: "/enc/c", header: key, as: e.alice})
		if m == "GET" && r.body != "secret data" || r.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != keyMD5 {
			t.Fatalf("%s %q %v", m, r.body, r.header)
		}
	}
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "GET", path: "/enc/c", as: e.alice})
	e.must(400, mpReq{method: "HEAD", path: "/enc/c", as: e.alice})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/enc/c", header: sseC("", 8), as: e.alice})
	badMD5 := with(key, map[string]string{"X-Amz-Server-Side-Encryption-Customer-Key-MD5": base64.StdEncoding.EncodeToString(sum[:])})
	short := with(key, map[string]string{"X-Amz-Server-Side-Encryption-Customer-Key": base64.StdEncoding.EncodeToString([]byte("short"))})
	noMD5 := with(key)
	delete(noMD5, "X-Amz-Server-Side-Encryption-Customer-Key-MD5")
	badAlg := with(key, map[string]string{"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES128"})
	for _, h := range []map[string]string{badMD5, short, noMD5, badAlg} {
		e.mustErr(400, s3.InvalidArgument, mpReq{method: "GET", path: "/enc/c", header: h, as: e.alice})
		e.mustErr(400, s3.InvalidArgument, mpReq{method: "PUT", path: "/enc/d", body: "x", header: h, as: e.alice})
	}
	// Copy: the source's key in the copy-source headers; the copy is SSE-S3.
	copyHdr := map[string]string{"X-Amz-Copy-Source": "/enc/c", "X-Amz-Server-Side-Encryption": "AES256"}
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "PUT", path: "/enc/copy", header: copyHdr, as: e.alice})
	r = e.must(200, mpReq{method: "PUT", path: "/enc/copy", header: with(copyHdr, sseC("Copy-Source-", 7)), as: e.alice})
	if r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("copy answer headers %v", r.header)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/enc/copy", as: e.alice}); r.body != "secret data" {
		t.Fatalf("GET copy %q", r.body)
	}
	// Multipart: every part carries the upload's key.
	id := e.initiate("/enc/mp", e.alice, "X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256",
		"X-Amz-Server-Side-Encryption-Customer-Key", key["X-Amz-Server-Side-Encryption-Customer-Key"],
		"X-Amz-Server-Side-Encryption-Customer-Key-MD5", key["X-Amz-Server-Side-Encryption-Customer-Key-MD5"])
	part := mpReq{method: "PUT", path: "/enc/mp", query: "partNumber=1&uploadId=" + id, body: "part one", as: e.alice}
	e.mustErr(400, s3.InvalidRequest, part)
	part.header = key
	r = e.must(200, part)
	if r.header.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" {
		t.Fatalf("part answer headers %v", r.header)
	}
	done := e.must(200, mpReq{method: "POST", path: "/enc/mp", query: "uploadId=" + id, as: e.alice,
		body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + r.header.Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`})
	if done.header.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
		done.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != keyMD5 {
		t.Fatalf("complete answer headers %v", done.header)
	}
	if r := e.must(200, mpReq{method: "GET", path: "/enc/mp", header: key, as: e.alice}); r.body != "part one" {
		t.Fatalf("GET multipart %q", r.body)
	}
}

// TestSSECCompleteKeyHTTP: on a server without a master key, a completion that
// carries the upload's SSE-C key (as minio-go and current AWS SDKs send it) stores the
// object with a layout MAC and echoes the key's MD5; another key is 403 AccessDenied,
// malformed key headers 400 InvalidArgument, and a completion without the key is still
// accepted (AWS does not require it), its object stored without a MAC.
func TestSSECCompleteKeyHTTP(t *testing.T) {
	e := newMPEnvKey(t, nil)
	e.bucket("enc", e.alice)
	key := sseC("", 7)
	keyMD5 := key["X-Amz-Server-Side-Encryption-Customer-Key-MD5"]
	for _, c := range []struct {
		object string
		header map[string]string
		layout bool
	}{
		{"with-key", key, true},
		{"without-key", nil, false},
	} {
		id := e.initiate("/enc/"+c.object, e.alice, "X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key", key["X-Amz-Server-Side-Encryption-Customer-Key"],
			"X-Amz-Server-Side-Encryption-Customer-Key-MD5", keyMD5)
		var body strings.Builder
		body.WriteString("<CompleteMultipartUpload>")
		for n, data := range []string{"part one", "part two"} {
			r := e.must(200, mpReq{method: "PUT", path: "/enc/" + c.object, query: fmt.Sprintf("partNumber=%d&uploadId=%s", n+1, id), body: data, header: key, as: e.alice})
			fmt.Fprintf(&body, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n+1, r.header.Get("ETag"))
		}
		body.WriteString("</CompleteMultipartUpload>")
		complete := mpReq{method: "POST", path: "/enc/" + c.object, query: "uploadId=" + id, body: body.String(), as: e.alice}
		if c.header != nil {
			complete.header = sseC("", 8)
			e.mustErr(403, s3.AccessDenied, complete)
			complete.header = with(key, map[string]string{"X-Amz-Server-Side-Encryption-Customer-Key-MD5": "AAAA"})
			e.mustErr(400, s3.InvalidArgument, complete)
		}
		complete.header = c.header
		done := e.must(200, complete)
		if done.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != keyMD5 {
			t.Fatalf("%s: complete answer headers %v", c.object, done.header)
		}
		if r := e.must(200, mpReq{method: "GET", path: "/enc/" + c.object, header: key, as: e.alice}); r.body != "part onepart two" {
			t.Fatalf("%s: GET %q", c.object, r.body)
		}
		o, err := e.svc.OpenObject(context.Background(), s3.Requester{ID: e.alice.ID, DisplayName: e.alice.DisplayName}, "enc", c.object)
		if err != nil {
			t.Fatal(err)
		}
		if layout := o.Manifest.SSE.Layout != nil; layout != c.layout {
			t.Errorf("%s: layout MAC stored %v, want %v", c.object, layout, c.layout)
		}
		o.Close()
	}
}

// TestBucketEncryptionHTTP: GET ?encryption without a default is 404
// ServerSideEncryptionConfigurationNotFoundError; PUT sets AES256 (aws:kms 501, other
// documents 400), objects written after are SSE-S3; only the owner may; DELETE removes
// it; ?encryption on an object is 501.
func TestBucketEncryptionHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("enc", e.alice)
	get := mpReq{method: "GET", path: "/enc", query: "encryption", as: e.alice}
	e.mustErr(404, s3.ServerSideEncryptionConfigurationNotFoundError, get)
	doc := func(alg string) string {
		return `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>` +
			alg + `</SSEAlgorithm></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`
	}
	put := mpReq{method: "PUT", path: "/enc", query: "encryption", as: e.alice}
	for _, c := range []struct {
		body   string
		status int
		code   s3.Code
	}{
		{doc("aws:kms"), 501, s3.NotImplemented},
		{doc("DES"), 400, s3.MalformedXML},
		{"<ServerSideEncryptionConfiguration/>", 400, s3.MalformedXML},
		{"not xml", 400, s3.MalformedXML},
	} {
		put.body = c.body
		e.mustErr(c.status, c.code, put)
	}
	put.body = doc("AES256")
	badMD5 := put
	badMD5.header = map[string]string{"Content-MD5": md5b64("another body")}
	e.mustErr(400, s3.BadDigest, badMD5)
	bobPut := put
	bobPut.as = e.bob
	e.mustErr(403, s3.AccessDenied, bobPut)
	e.must(200, put)
	if r := e.must(200, get); !strings.Contains(r.body, "<SSEAlgorithm>AES256</SSEAlgorithm>") || !strings.Contains(r.body, "<BucketKeyEnabled>true</BucketKeyEnabled>") {
		t.Fatalf("GET ?encryption: %s", r.body)
	}
	if r := e.put("/enc/k", "data", e.alice); r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("PUT in a bucket with default encryption: %v", r.header)
	}
	e.mustErr(501, s3.NotImplemented, mpReq{method: "GET", path: "/enc/k", query: "encryption", as: e.alice})
	e.must(204, mpReq{method: "DELETE", path: "/enc", query: "encryption", as: e.alice})
	e.mustErr(404, s3.ServerSideEncryptionConfigurationNotFoundError, get)
	if r := e.put("/enc/k2", "data", e.alice); r.header.Get("X-Amz-Server-Side-Encryption") != "" {
		t.Fatalf("PUT after DELETE ?encryption: %v", r.header)
	}
}

// TestSSEPolicyConditionHTTP: a bucket policy that denies PUTs without
// x-amz-server-side-encryption (Null s3:x-amz-server-side-encryption) refuses a plain
// PUT of the owner and lets an SSE-S3 one through.
func TestSSEPolicyConditionHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("enc", e.alice)
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject",` +
		`"Resource":"arn:aws:s3:::enc/*","Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}}]}`
	e.must(204, mpReq{method: "PUT", path: "/enc", query: "policy", body: policy, as: e.alice})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "PUT", path: "/enc/k", body: "clear", as: e.alice})
	e.must(200, mpReq{method: "PUT", path: "/enc/k", body: "sealed", as: e.alice,
		header: map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}})
}
