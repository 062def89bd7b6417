package s3api

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
)

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc64NVME is the CRC-64/NVME table (the polynomial of S3's CRC64NVME checksums).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// flexibleChecksum is one of S3's additional checksum algorithms: the header (and
// trailer) x-amz-checksum-<alg> carries the base64 of the digest, big-endian for CRCs.
type flexibleChecksum struct {
	header string // canonical header name after "X-Amz-"
	name   string // for messages: "CRC32", …
	size   int    // digest size in bytes
	hash   func() hash.Hash
}

// flexibleChecksums are the x-amz-checksum-* algorithms. botocore ≥ 1.36 sends one of
// them instead of Content-MD5, as a header or an aws-chunked trailer.
var flexibleChecksums = []flexibleChecksum{
	{"Checksum-Crc32", "CRC32", crc32.Size, func() hash.Hash { return crc32.NewIEEE() }},
	{"Checksum-Crc32c", "CRC32C", crc32.Size, func() hash.Hash { return crc32.New(castagnoli) }},
	{"Checksum-Crc64nvme", "CRC64NVME", crc64.Size, func() hash.Hash { return crc64.New(crc64NVME) }},
	{"Checksum-Sha1", "SHA1", sha1.Size, sha1.New},
	{"Checksum-Sha256", "SHA256", sha256.Size, sha256.New},
}

// wireName is the algorithm's header or trailer name in lower case.
func (fc flexibleChecksum) wireName() string { return "x-amz-" + strings.ToLower(fc.header) }

// decode parses a header or trailer value: the base64 of exactly size bytes, else 400
// InvalidRequest.
func (fc flexibleChecksum) decode(v string) ([]byte, error) {
	want, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(want) != fc.size {
		return nil, s3.Errorf(s3.InvalidRequest, "Value for %s header is invalid.", fc.wireName())
	}
	return want, nil
}

// bodyCheck is one integrity check of a request body: the digest it must have (from a
// header, or, when fromTrailer, from the aws-chunked trailer of that name, known only
// at the end of the body) and the hash that computes it as the body streams.
type bodyCheck struct {
	name        string // for messages: "Content-MD5", "CRC32", …
	want        []byte
	fromTrailer bool
	alg         flexibleChecksum // the trailer's algorithm, when fromTrailer
	h           hash.Hash
}

// mismatch is the error of a body whose digest is not the announced one.
func (b *bodyCheck) mismatch() error {
	if b.name == "Content-MD5" {
		return s3.Errorf(s3.BadDigest, "The Content-MD5 you specified did not match what we received.")
	}
	return s3.Errorf(s3.BadDigest, "The %s you specified did not match the calculated checksum.", b.name)
}

// bodyChecks returns the checks the request body must pass: Content-MD5 if withMD5
// (bad value: 400 InvalidDigest), and every flexible checksum given as an
// x-amz-checksum-* header or, for aws-chunked bodies with trailers, announced in
// x-amz-trailer (bad header value or unknown trailer: 400 InvalidRequest). All are
// checked before the body is read, so a refused upload reads nothing.
func (c *call) bodyChecks(withMD5 bool) ([]*bodyCheck, error) {
	var out []*bodyCheck
	if withMD5 {
		sum, err := c.contentMD5()
		if err != nil {
			return nil, err
		}
		if sum != nil {
			out = append(out, &bodyCheck{name: "Content-MD5", want: sum, h: md5.New()})
		}
	}
	flex, err := flexibleChecks(func(fc flexibleChecksum) string { return c.header(fc.header) })
	if err != nil {
		return nil, err
	}
	out = append(out, flex...)
	if !c.hasTrailers() {
		return out, nil
	}
	for _, t := range strings.Split(c.r.Header.Get("X-Amz-Trailer"), ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if !strings.HasPrefix(t, "x-amz-checksum-") {
			continue
		}
		i := 0
		for i < len(flexibleChecksums) && flexibleChecksums[i].wireName() != t {
			i++
		}
		if i == len(flexibleChecksums) {
			return nil, s3.Errorf(s3.InvalidRequest, "The value specified in the x-amz-trailer header is not supported")
		}
		fc := flexibleChecksums[i]
		out = append(out, &bodyCheck{name: fc.name, fromTrailer: true, alg: fc, h: fc.hash()})
	}
	return out, nil
}

// flexibleChecks returns the checks of the flexible checksums value gives (a header,
// or a POST form's field; "" when absent): a value that is not the base64 of the
// algorithm's digest is 400 InvalidRequest.
func flexibleChecks(value func(flexibleChecksum) string) ([]*bodyCheck, error) {
	var out []*bodyCheck
	for _, fc := range flexibleChecksums {
		v := value(fc)
		if v == "" {
			continue
		}
		want, err := fc.decode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, &bodyCheck{name: fc.name, want: want, h: fc.hash()})
	}
	return out, nil
}

// hasTrailers reports whether the body is aws-chunked with trailers (the only trailer
// variant this server reads is the unsigned one).
func (c *call) hasTrailers() bool {
	return c.auth.Version == 4 && c.auth.PayloadHash == streamingUnsignedTrailer
}

// checkedBody returns the request body (as c.body does) verified against checks as it
// streams: once the underlying body ends after exactly size bytes (size < 0: any
// length), every digest is compared and a mismatch is the read's error (400
// BadDigest), so a store that reads up to EOF before it commits never commits a body
// that fails its checksum.
func (c *call) checkedBody(checks []*bodyCheck, size int64) io.Reader {
	b := c.body()
	if len(checks) == 0 {
		return b
	}
	cr := &checkedReader{r: b, checks: checks, size: size}
	cr.trailer, _ = b.(*chunkedReader)
	return cr
}

// checkedReader feeds what it reads to the checks' hashes and verifies them at EOF.
type checkedReader struct {
	r       io.Reader
	checks  []*bodyCheck
	trailer *chunkedReader // where trailer values are found (nil: no trailers)
	size    int64          // the expected length, or -1
	n       int64          // bytes read so far
	err     error          // sticky: the verdict at EOF, or a read error
}

func (cr *checkedReader) Read(p []byte) (int, error) {
	if cr.err != nil {
		return 0, cr.err
	}
	n, err := cr.r.Read(p)
	for _, c := range cr.checks {
		c.h.Write(p[:n])
	}
	cr.n += int64(n)
	if errors.Is(err, io.EOF) {
		if cr.size < 0 || cr.n == cr.size {
			if verr := cr.verify(); verr != nil {
				err = verr
			}
		}
	}
	if err != nil {
		cr.err = err
	}
	return n, err
}

// verify compares every digest with the one announced.
func (cr *checkedReader) verify() error {
	for _, c := range cr.checks {
		want := c.want
		if c.fromTrailer {
			v, ok := "", false
			if cr.trailer != nil {
				v, ok = cr.trailer.trailer(c.alg.wireName())
			}
			if !ok {
				return s3.Errorf(s3.InvalidRequest, "The trailer %s announced in x-amz-trailer is missing", c.alg.wireName())
			}
			var err error
			if want, err = c.alg.decode(v); err != nil {
				return err
			}
		}
		if !bytes.Equal(c.h.Sum(nil), want) {
			return c.mismatch()
		}
	}
	return nil
}
