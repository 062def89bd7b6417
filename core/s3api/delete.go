package s3api

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"io"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// maxDeleteBody bounds the body of a multi-object delete (1000 keys of 1024 bytes fit).
const maxDeleteBody = 2 << 20

// codeNoSuchVersion is the per-key error of a multi-object delete naming a version other
// than "null" (objects here have no other version).
const codeNoSuchVersion s3.Code = "NoSuchVersion"

// deleteObjects answers POST Bucket ?delete: every object the Delete document names is
// deleted as DELETE Object would, and the answer reports each key as Deleted (left out
// in quiet mode) or as an Error with its code and message. The body must come with an
// integrity header (see bodyDigests), is at most maxDeleteBody bytes and names at most
// 1000 objects (else 400 MalformedXML). A missing bucket is 404 NoSuchBucket for the
// whole request; permission is checked per key (AccessDenied entries).
func (c *call) deleteObjects() {
	ctx := c.r.Context()
	if _, err := c.a.svc.Bucket(ctx, c.bucket); err != nil {
		c.fail(err)
		return
	}
	digests, err := c.bodyDigests()
	if err != nil {
		c.fail(err)
		return
	}
	if err := c.checkPayload(); err != nil {
		c.fail(err)
		return
	}
	httpx.LimitRequestBody(c.w, c.r, maxDeleteBody)
	body, err := io.ReadAll(c.body())
	if err != nil {
		c.fail(err)
		return
	}
	for _, d := range digests {
		if err := d.check(body); err != nil {
			c.fail(err)
			return
		}
	}
	req, err := s3xml.ParseDelete(body)
	if err != nil {
		c.fail(err)
		return
	}
	outcomes := make([]s3xml.DeleteOutcome, 0, len(req.Objects))
	for _, o := range req.Objects {
		if err := ctx.Err(); err != nil {
			c.fail(err) // the client is gone; what was deleted stays deleted
			return
		}
		out := s3xml.DeleteOutcome{Key: o.Key, VersionID: o.VersionID}
		if o.VersionID != "" && o.VersionID != "null" {
			out.Code, out.Message = codeNoSuchVersion, "The specified version does not exist."
		} else if err := c.a.svc.DeleteObject(ctx, c.who, c.bucket, o.Key); err != nil {
			e := s3.AsError(err)
			if e == nil {
				c.a.log.Error("s3: multi-object delete", "bucket", c.bucket, "key", o.Key,
					"request_id", httpx.RequestIDFrom(ctx), "err", err)
				e = &s3.Error{Code: s3.InternalError, Message: "We encountered an internal error. Please try again."}
			}
			out.Code, out.Message = e.Code, e.Message
		}
		outcomes = append(outcomes, out)
	}
	c.writeXML(s3xml.MarshalDeleteResult(req.Quiet, outcomes))
}

// bodyDigest is one integrity header of a request body: the digest it announces and
// how to compute it.
type bodyDigest struct {
	name string // for messages: "Content-MD5", "CRC32", …
	want []byte
	sum  func([]byte) []byte
}

// check compares the body's digest with the announced one (400 BadDigest on mismatch).
func (d bodyDigest) check(body []byte) error {
	if bytes.Equal(d.sum(body), d.want) {
		return nil
	}
	if d.name == "Content-MD5" {
		return s3.Errorf(s3.BadDigest, "The Content-MD5 you specified did not match what we received.")
	}
	return s3.Errorf(s3.BadDigest, "The %s you specified did not match the calculated checksum.", d.name)
}

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc64NVME is the CRC-64/NVME table (the polynomial of S3's CRC64NVME checksums).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// flexibleChecksums are the x-amz-checksum-* headers (name after the prefix), their
// digests and sizes. botocore ≥ 1.36 sends one of them instead of Content-MD5.
var flexibleChecksums = []struct {
	header, name string
	size         int
	sum          func([]byte) []byte
}{
	{"Checksum-Crc32", "CRC32", 4, func(b []byte) []byte { return binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(b)) }},
	{"Checksum-Crc32c", "CRC32C", 4, func(b []byte) []byte { return binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli)) }},
	{"Checksum-Crc64nvme", "CRC64NVME", 8, func(b []byte) []byte { return binary.BigEndian.AppendUint64(nil, crc64.Checksum(b, crc64NVME)) }},
	{"Checksum-Sha1", "SHA1", sha1.Size, func(b []byte) []byte { s := sha1.Sum(b); return s[:] }},
	{"Checksum-Sha256", "SHA256", sha256.Size, func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }},
}

// bodyDigests returns the integrity checks a request body must pass, for requests that
// require one (multi-object delete): Content-MD5 (bad value: 400 InvalidDigest) and the
// flexible checksums x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1 and -sha256
// (base64; bad value: 400 InvalidRequest), every one present being checked. A checksum
// announced as an aws-chunked trailer (x-amz-trailer) also satisfies the requirement,
// unverified. With none of these the answer is 400 InvalidRequest "Missing required
// header for this request: Content-MD5".
func (c *call) bodyDigests() ([]bodyDigest, error) {
	var out []bodyDigest
	sum, err := c.contentMD5()
	if err != nil {
		return nil, err
	}
	if sum != nil {
		out = append(out, bodyDigest{name: "Content-MD5", want: sum, sum: func(b []byte) []byte { s := md5.Sum(b); return s[:] }})
	}
	for _, fc := range flexibleChecksums {
		v := c.header(fc.header)
		if v == "" {
			continue
		}
		want, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(want) != fc.size {
			return nil, s3.Errorf(s3.InvalidRequest, "Value for x-amz-%s header is invalid.", strings.ToLower(fc.header))
		}
		out = append(out, bodyDigest{name: fc.name, want: want, sum: fc.sum})
	}
	if len(out) == 0 && !strings.Contains(strings.ToLower(c.r.Header.Get("X-Amz-Trailer")), "x-amz-checksum-") {
		return nil, s3.Errorf(s3.InvalidRequest, "Missing required header for this request: Content-MD5")
	}
	return out, nil
}
