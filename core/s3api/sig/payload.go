package sig

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// ValidPayloadHash reports whether v may stand in x-amz-content-sha256: 64 lower-case hex
// digits, UNSIGNED-PAYLOAD, or one of the STREAMING-… values.
func ValidPayloadHash(v string) bool {
	switch v {
	case UnsignedPayload, StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedPayload,
		StreamingECDSAPayload, StreamingECDSAPayloadTrailer:
		return true
	}
	return IsHexSHA256(v)
}

// IsHexSHA256 reports whether v is a hex SHA-256 digest (64 lower-case hex digits), the
// case in which the body must be checked with NewPayloadVerifier.
func IsHexSHA256(v string) bool {
	if len(v) != 2*sha256.Size {
		return false
	}
	return strings.IndexFunc(v, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'f')
	}) < 0
}

// NewPayloadVerifier returns a reader that reads body, hashing what it reads, and at the end
// of body returns, instead of io.EOF, a *s3types.Error with code XAmzContentSHA256Mismatch when
// the SHA-256 of the body is not hexSHA256. The error sticks: later reads return it again.
func NewPayloadVerifier(body io.Reader, hexSHA256 string) io.Reader {
	return &payloadVerifier{body: body, hash: sha256.New(), want: hexSHA256}
}

type payloadVerifier struct {
	body io.Reader
	hash hash.Hash
	want string
	err  error // sticky end state: io.EOF or the mismatch
}

// Read implements io.Reader.
func (v *payloadVerifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.body.Read(p)
	v.hash.Write(p[:n])
	if err == io.EOF {
		if hex.EncodeToString(v.hash.Sum(nil)) != v.want {
			err = &s3types.Error{Code: s3types.XAmzContentSHA256Mismatch, Message: msgPayload}
		}
		v.err = err
	}
	return n, err
}
