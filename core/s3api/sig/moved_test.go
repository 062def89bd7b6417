package sig

import (
	"testing"
	"time"
)

// TestVerifyMovedHeaders: a V4 signature covering transfer-encoding and content-length
// verifies when net/http has moved them out of the header map (Transfer-Encoding into
// r.TransferEncoding; a Content-Length known only as r.ContentLength), and fails when
// the moved value differs from the signed one or is missing.
func TestVerifyMovedHeaders(t *testing.T) {
	now := time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)
	const keyID, secret = "AKID", "secret"
	payload := UnsignedPayload
	sign := func(signed []string, sent map[string][]string) string {
		req := &Request{Method: "PUT", Host: "s3.localhost:8080", RawPath: "/b/k", Header: sent}
		cred := Credential{KeyID: keyID, Date: now.Format(scopeDate), Region: "us-east-1", Service: serviceS3}
		key := SigningKeyV4(secret, cred.Date, cred.Region, cred.Service)
		sts := StringToSignV4(now.Format(ISO8601Basic), cred.Scope(), CanonicalRequestV4(req, signed, payload, false))
		return AuthorizationV4{Credential: cred, SignedHeaders: signed, Signature: SignV4(key, sts)}.String()
	}
	base := func() map[string][]string {
		return map[string][]string{"X-Amz-Date": {now.Format(ISO8601Basic)}, "X-Amz-Content-Sha256": {payload}}
	}
	withSent := func(extra ...string) map[string][]string {
		h := base()
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = []string{extra[i+1]}
		}
		return h
	}
	teAuth := sign([]string{"host", "transfer-encoding", "x-amz-content-sha256", "x-amz-date"},
		withSent("Transfer-Encoding", "chunked"))
	clAuth := sign([]string{"content-length", "host", "x-amz-content-sha256", "x-amz-date"},
		withSent("Content-Length", "42"))
	tests := []struct {
		name string
		auth string
		te   []string
		cl   int64
		ok   bool
	}{
		{"transfer-encoding moved", teAuth, []string{"chunked"}, -1, true},
		{"transfer-encoding missing", teAuth, nil, -1, false},
		{"transfer-encoding other", teAuth, []string{"gzip"}, -1, false},
		{"content-length moved", clAuth, nil, 42, true},
		{"content-length other", clAuth, nil, 41, false},
		{"content-length unknown", clAuth, []string{"chunked"}, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base()
			h["Authorization"] = []string{tt.auth}
			req := &Request{Method: "PUT", Host: "s3.localhost:8080", RawPath: "/b/k", Header: h,
				TransferEncoding: tt.te, ContentLength: tt.cl}
			res, err := Verify(req, staticLookup(keyID, secret), now)
			if tt.ok && (err != nil || res.KeyID != keyID) {
				t.Fatalf("want verified, got %+v, %v", res, err)
			}
			if !tt.ok && err == nil {
				t.Fatal("verified a request whose moved header differs from the signed one")
			}
		})
	}
}
