package main

import (
	"encoding/base64"
	"hash/crc32"
	"net/http"
	"testing"
)

// TestS3Checksums: x-amz-checksum-* headers are checked as the body streams; a
// mismatch answers 400 BadDigest and stores nothing, a right one stores the object. A
// key that is not UTF-8 is refused.
func TestS3Checksums(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "checksums@example.com", "Checksums")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "sums")
	body := "the body whose checksum is sent"
	sum := crc32.ChecksumIEEE([]byte(body))
	good := base64.StdEncoding.EncodeToString([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	bad := base64.StdEncoding.EncodeToString([]byte{0, 0, 0, 0})

	expectS3Error(t, c.do(t, http.MethodPut, "sums", "bad", "", hdr{"x-amz-checksum-crc32", bad}, body), 400, "BadDigest")
	expectS3Error(t, c.do(t, http.MethodGet, "sums", "bad", "", nil, ""), 404, "NoSuchKey")
	expectS3Error(t, c.do(t, http.MethodPut, "sums", "garbled", "", hdr{"x-amz-checksum-crc32", "!!"}, body), 400, "InvalidRequest")

	c.must(t, http.StatusOK, http.MethodPut, "sums", "good", "", hdr{"x-amz-checksum-crc32", good}, body)
	if r := c.must(t, http.StatusOK, http.MethodGet, "sums", "good", "", nil, ""); string(r.Body) != body {
		t.Errorf("GET good: %q", r.Body)
	}

	r := s3Do(t, s, s3Req{method: http.MethodPut, bucket: "sums", rawPath: "/sums/bad%FFkey", sign: s3V2, cred: u.cred(), body: "x"})
	expectS3Error(t, r, 400, "InvalidArgument")
}
