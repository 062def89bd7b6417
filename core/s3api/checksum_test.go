package s3api

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// checksumsOf returns the x-amz-checksum-* values (base64) of data, by algorithm.
func checksumsOf(data string) map[string]string {
	b := []byte(data)
	s1, s256 := sha1.Sum(b), sha256.Sum256(b)
	enc := base64.StdEncoding.EncodeToString
	return map[string]string{
		"crc32":     enc(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(b))),
		"crc32c":    enc(binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli))),
		"crc64nvme": enc(binary.BigEndian.AppendUint64(nil, crc64.Checksum(b, crc64NVME))),
		"sha1":      enc(s1[:]),
		"sha256":    enc(s256[:]),
	}
}

// TestFlexibleChecksumsKnownValues pins the hash constructors to published check
// values, so a wrong table or byte order cannot pass the round-trip tests below.
func TestFlexibleChecksumsKnownValues(t *testing.T) {
	want := map[string]string{ // digests of "123456789", hex
		"CRC32":     "cbf43926",
		"CRC32C":    "e3069283",
		"CRC64NVME": "ae8b14860a799888",
		"SHA1":      "f7c3bc1d808e04732adf679965ccc34ca7ae3441",
		"SHA256":    "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
	}
	for _, fc := range flexibleChecksums {
		h := fc.hash()
		io.WriteString(h, "123456789")
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want[fc.name] || h.Size() != fc.size {
			t.Errorf("%s: %s (size %d), want %s", fc.name, got, fc.size, want[fc.name])
		}
	}
}

// TestUploadChecksums: PUT object and upload part verify x-amz-checksum-* headers and
// aws-chunked checksum trailers as the body streams; a mismatch is 400 BadDigest, a
// malformed value 400 InvalidRequest, and in either case nothing is stored.
func TestUploadChecksums(t *testing.T) {
	// More than one 16-byte chunk, so the data is written before the commit.
	data := "the quick brown fox jumps over the lazy dog, twice over"
	sums := checksumsOf(data)
	wrong := checksumsOf(data + ".")
	type tc struct {
		name    string
		header  map[string]string
		trailer string // non-empty: an aws-chunked body with this trailer section
		// announce is the x-amz-trailer header of a chunked body.
		announce string
		status   int
		code     s3.Code
	}
	cases := []tc{
		{name: "none", status: 200},
		{name: "crc32 and md5", header: map[string]string{"X-Amz-Checksum-Crc32": sums["crc32"], "Content-MD5": md5b64(data)}, status: 200},
		{name: "crc32 not base64", header: map[string]string{"X-Amz-Checksum-Crc32": "!!!!"}, status: 400, code: s3.InvalidRequest},
		{name: "crc32 wrong length", header: map[string]string{"X-Amz-Checksum-Crc32": "AAAAAAAA"}, status: 400, code: s3.InvalidRequest},
		{name: "sha256 right, crc32 wrong", header: map[string]string{"X-Amz-Checksum-Sha256": sums["sha256"], "X-Amz-Checksum-Crc32": wrong["crc32"]}, status: 400, code: s3.BadDigest},
		{name: "trailer crc32", trailer: "x-amz-checksum-crc32:" + sums["crc32"], announce: "x-amz-checksum-crc32", status: 200},
		{name: "trailer crc64nvme", trailer: "X-Amz-Checksum-Crc64nvme: " + sums["crc64nvme"], announce: "x-amz-checksum-crc64nvme", status: 200},
		{name: "trailer mismatch", trailer: "x-amz-checksum-crc32:" + wrong["crc32"], announce: "x-amz-checksum-crc32", status: 400, code: s3.BadDigest},
		{name: "trailer missing", trailer: "x-amz-other:1", announce: "x-amz-checksum-sha1", status: 400, code: s3.InvalidRequest},
		{name: "trailer malformed", trailer: "x-amz-checksum-sha256:AAAA", announce: "x-amz-checksum-sha256", status: 400, code: s3.InvalidRequest},
		{name: "trailer algorithm unknown", trailer: "x-amz-checksum-md9:AAAA", announce: "x-amz-checksum-md9", status: 400, code: s3.InvalidRequest},
		{name: "trailer right, header wrong", header: map[string]string{"X-Amz-Checksum-Sha1": wrong["sha1"]},
			trailer: "x-amz-checksum-crc32:" + sums["crc32"], announce: "x-amz-checksum-crc32", status: 400, code: s3.BadDigest},
	}
	for alg, v := range sums {
		h := "X-Amz-Checksum-" + strings.ToUpper(alg[:1]) + alg[1:]
		cases = append(cases,
			tc{name: alg, header: map[string]string{h: v}, status: 200},
			tc{name: alg + " mismatch", header: map[string]string{h: wrong[alg]}, status: 400, code: s3.BadDigest})
	}
	for _, target := range []string{"object", "part"} {
		for _, c := range cases {
			t.Run(target+"/"+c.name, func(t *testing.T) {
				e := newMPEnv(t)
				e.bucket("bkt", e.alice)
				query, uploadID := "", ""
				if target == "part" {
					uploadID = e.initiate("/bkt/k", e.alice)
					query = "partNumber=1&uploadId=" + uploadID
				}
				r := httptest.NewRequest("PUT", "/bkt/k?"+query, nil)
				r.Host = "s3.localhost"
				for k, v := range c.header {
					r.Header.Set(k, v)
				}
				sreq := &sig.Request{Method: "PUT", Host: r.Host, RawPath: "/bkt/k", RawQuery: query, Header: r.Header}
				if c.trailer == "" {
					r.Body, r.ContentLength = io.NopCloser(strings.NewReader(data)), int64(len(data))
					sig.SignRequestV2(sreq, e.alice.KeyID, e.alice.KeySecret, time.Now())
				} else {
					body := fmt.Sprintf("%x\r\n%s\r\n0\r\n%s\r\n\r\n", len(data), data, c.trailer)
					r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
					r.Header.Set("Content-Encoding", "aws-chunked")
					r.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
					r.Header.Set("X-Amz-Trailer", c.announce)
					sig.SignRequestV4(sreq, e.alice.KeyID, e.alice.KeySecret, "us-east-1", time.Now(), sig.StreamingUnsignedPayload)
				}
				w := httptest.NewRecorder()
				e.api.Handler().ServeHTTP(w, r)
				if w.Code != c.status {
					t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body.String())
				}
				if c.status != 200 {
					var doc struct{ Code, Message string }
					if err := xml.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Code != string(c.code) {
						t.Fatalf("error %+v (%v), want %s: %s", doc, err, c.code, w.Body.String())
					}
				} else if got := w.Header().Get("ETag"); got != `"`+md5hex(data)+`"` {
					t.Fatalf("ETag %s", got)
				}
				stored := false
				if target == "object" {
					if g := e.do(mpReq{method: "GET", path: "/bkt/k", as: e.alice}); g.status == 200 {
						stored = true
						if g.body != data {
							t.Fatalf("stored %q", g.body)
						}
					} else if g.status != 404 {
						t.Fatalf("GET: %d %s", g.status, g.body)
					}
				} else {
					l := e.must(200, mpReq{method: "GET", path: "/bkt/k", query: "uploadId=" + uploadID, as: e.alice})
					var doc listPartsDoc
					if err := xml.Unmarshal([]byte(l.body), &doc); err != nil {
						t.Fatal(err)
					}
					stored = len(doc.Parts) > 0
					e.must(204, mpReq{method: "DELETE", path: "/bkt/k", query: "uploadId=" + uploadID, as: e.alice})
				}
				if stored != (c.status == 200) {
					t.Fatalf("stored: %v", stored)
				}
			})
		}
	}
}
