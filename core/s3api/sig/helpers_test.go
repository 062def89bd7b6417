package sig

import (
	"crypto/sha256"
	"encoding/hex"
	"net/textproto"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func canonicalKey(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

// staticLookup knows one key.
func staticLookup(keyID, secret string) Lookup {
	return func(id string) (string, error) {
		if id != keyID {
			return "", s3types.Errorf(s3types.InvalidAccessKeyID, "The AWS Access Key Id you provided does not exist in our records.")
		}
		return secret, nil
	}
}

func mustDate(t *testing.T, v string) time.Time {
	t.Helper()
	d, ok := ParseDate(v)
	if !ok {
		t.Fatalf("bad date %q", v)
	}
	return d
}

// isDenied reports whether err is AccessDenied with the message msg.
func isDenied(err error, msg string) bool {
	e := s3types.AsError(err)
	return e != nil && e.Code == s3types.AccessDenied && e.Message == msg
}
