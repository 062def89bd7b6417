package sig

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

func TestVerifyAnonymous(t *testing.T) {
	lookup := func(string) (string, error) { t.Fatal("lookup called"); return "", nil }
	for _, h := range []map[string][]string{nil, hdr(), hdr("Authorization", ""), hdr("Authorization", "   "), hdr("Date", "garbage")} {
		req := &Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", RawQuery: "acl&Expires=1", HostBucket: "bkt", Header: h}
		res, err := Verify(req, lookup, time.Now())
		if err != nil || res.KeyID != "" || res.Version != 0 {
			t.Fatalf("%v: %+v %v", h, res, err)
		}
	}
}

// v2Header is a V2 header-signed request made at signed, with extra headers.
func v2Header(signed time.Time, kv ...string) *Request {
	req := &Request{Method: "PUT", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr(kv...)}
	SignRequestV2(req, "AKID", "secret", signed)
	return req
}

func TestVerifyErrors(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	gmt := now.Format(httpTimeFormat)
	lookup := staticLookup("AKID", "secret")
	withAuth := func(auth string, kv ...string) *Request {
		return &Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr(append([]string{"Authorization", auth}, kv...)...)}
	}
	withDate := func(name, value string) *Request {
		r := v2Header(now, name, value)
		return r
	}
	tests := []struct {
		name string
		req  *Request
		code s3types.Code
		msg  string
	}{
		{"garbled V2", withAuth("AWS HAHAHA", "Date", gmt), s3types.InvalidArgument, msgV2Header},
		{"bare AWS", withAuth("AWS", "Date", gmt), s3types.InvalidArgument, msgV2Header},
		{"other scheme", withAuth("Bearer abc", "Date", gmt), s3types.InvalidArgument, msgUnsupported},
		{"unreadable", withAuth("\x07", "Date", gmt), s3types.InvalidArgument, msgUnsupported},
		{"sigv4a", withAuth("AWS4-ECDSA-P256-SHA256 Credential=x", "Date", gmt), s3types.InvalidRequest, msgMechanism},
		{"two mechanisms", &Request{Method: "GET", RawPath: "/k", RawQuery: "X-Amz-Algorithm=AWS4-HMAC-SHA256", HostBucket: "b", Header: hdr("Authorization", "AWS a:b")}, s3types.InvalidArgument, msgOneMechanism},
		{"two mechanisms V2", &Request{Method: "GET", RawPath: "/k", RawQuery: "Signature=x", HostBucket: "b", Header: hdr("Authorization", "AWS a:b")}, s3types.InvalidArgument, msgOneMechanism},
		{"unknown key", withAuth("AWS NOPE:c2ln", "Date", gmt), s3types.InvalidAccessKeyID, ""},
		{"unknown key beats bad date", withAuth("AWS NOPE:c2ln", "Date", "Bad Date"), s3types.InvalidAccessKeyID, ""},
		{"bad Date", withDate("Date", "Bad Date"), s3types.AccessDenied, msgNoDate},
		{"empty Date", withDate("Date", ""), s3types.AccessDenied, msgNoDate},
		{"bad x-amz-date", withDate("X-Amz-Date", "Bad Date"), s3types.AccessDenied, msgNoDate},
		{"empty x-amz-date", withDate("X-Amz-Date", ""), s3types.AccessDenied, msgNoDate},
		{"no date", withAuth("AWS AKID:c2ln"), s3types.AccessDenied, msgNoDate},
		{"before epoch", withDate("X-Amz-Date", "Tue, 07 Jul 1950 21:53:04 GMT"), s3types.AccessDenied, msgNoDate},
		{"before today", withDate("X-Amz-Date", "Tue, 07 Jul 2010 21:53:04 GMT"), s3types.RequestTimeTooSkewed, msgSkew},
		{"after today", withDate("X-Amz-Date", "Tue, 07 Jul 2030 21:53:04 GMT"), s3types.RequestTimeTooSkewed, msgSkew},
		{"after end", withDate("X-Amz-Date", "Tue, 07 Jul 9999 21:53:04 GMT"), s3types.RequestTimeTooSkewed, msgSkew},
		{"skewed Date", v2Header(now.Add(-MaxSkew - time.Second)), s3types.RequestTimeTooSkewed, msgSkew},
		{"skew beats signature", withAuth("AWS AKID:c2ln", "Date", now.Add(time.Hour).Format(httpTimeFormat)), s3types.RequestTimeTooSkewed, msgSkew},
		{"wrong signature", withAuth("AWS AKID:c2ln", "Date", gmt), s3types.SignatureDoesNotMatch, msgSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.req, lookup, now)
			e := s3types.AsError(err)
			if e == nil || e.Code != tt.code || (tt.msg != "" && e.Message != tt.msg) {
				t.Fatalf("got %v, want %s %q", err, tt.code, tt.msg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("secret in error: %v", err)
			}
		})
	}
}

// TestVerifySkewEdges accepts exactly MaxSkew either way.
func TestVerifySkewEdges(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	for _, d := range []time.Duration{-MaxSkew, 0, MaxSkew} {
		if _, err := Verify(v2Header(now.Add(d)), staticLookup("AKID", "secret"), now); err != nil {
			t.Errorf("skew %v: %v", d, err)
		}
	}
}

func TestLookupFailure(t *testing.T) {
	boom := errors.New("store unavailable")
	req := v2Header(time.Now())
	_, err := Verify(req, func(string) (string, error) { return "", boom }, time.Now())
	if !errors.Is(err, boom) || s3types.AsError(err) != nil {
		t.Fatalf("got %v", err)
	}
	disabled := s3types.Errorf(s3types.InvalidAccessKeyID, "disabled")
	_, err = Verify(req, func(string) (string, error) { return "", disabled }, time.Now())
	if !errors.Is(err, disabled) {
		t.Fatalf("got %v", err)
	}
}

// TestSignatureErrorDetails checks what a mismatch reports, and that it hides the secret.
func TestSignatureErrorDetails(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	req := v2Header(now)
	_, err := Verify(req, staticLookup("AKID", "hunter2"), now)
	var se *SignatureError
	if !errors.As(err, &se) {
		t.Fatalf("got %v", err)
	}
	want := "PUT\n\n\n" + now.Format(httpTimeFormat) + "\n/bkt/k"
	if se.StringToSign != want || se.AccessKeyID != "AKID" || se.CanonicalRequest != "" {
		t.Fatalf("details %+v", se)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(se.StringToSign, "hunter2") {
		t.Fatal("secret leaked")
	}

	v4 := v4Request(now, nil)
	_, err = Verify(v4, staticLookup("AKID", "hunter2"), now)
	if !errors.As(err, &se) || !strings.HasPrefix(se.CanonicalRequest, "PUT\n/bkt/dir/k%20y\npartNumber=2&uploadId=u1\n") ||
		!strings.HasPrefix(se.StringToSign, "AWS4-HMAC-SHA256\n20261121T140239Z\n20261121/us-east-1/s3/aws4_request\n") {
		t.Fatalf("V4 details %+v", se)
	}
}

func TestParseDate(t *testing.T) {
	want := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	for _, v := range []string{
		"Sat, 21 Nov 2026 14:02:39 GMT",
		"Sat, 21 Nov 2026 14:02:39 +0000",
		"Sat, 21 Nov 2026 07:02:39 -0700",
		"Saturday, 21-Nov-26 14:02:39 GMT",
		"Sat Nov 21 14:02:39 2026",
		"20261121T140239Z",
		" Sat, 21 Nov 2026 14:02:39 GMT ",
	} {
		got, ok := ParseDate(v)
		if !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v", v, got, ok)
		}
	}
	for _, v := range []string{"", "Bad Date", "2026-11-21", "1795299064"} {
		if _, ok := ParseDate(v); ok {
			t.Errorf("%q parsed", v)
		}
	}
}

// TestManyHeaders makes sure canonicalisation stays fast with a huge header set and a huge
// SignedHeaders list (both bounded only by the server's header size limit).
func TestManyHeaders(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	h := hdr("Date", now.Format(httpTimeFormat), "X-Amz-Content-Sha256", EmptySHA256, "X-Amz-Date", now.Format(ISO8601Basic))
	signed := []string{"host"}
	for i := range 50000 {
		name := "X-Amz-Meta-" + strings.Repeat("a", i%7) + string(rune('a'+i%26)) + strings.Repeat("b", i/26%50)
		h[name] = append(h[name], "v")
		signed = append(signed, strings.ToLower(name))
	}
	start := time.Now()
	req := &Request{Method: "GET", Host: "h", RawPath: "/b/k", Header: h}
	_ = StringToSignV2(req, "", CanonicalResourceV2(req))
	h["Authorization"] = []string{"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request,SignedHeaders=" +
		strings.Join(signed, ";") + ",Signature=00"}
	if _, err := Verify(req, staticLookup("AKID", "secret"), now); err == nil {
		t.Fatal("accepted")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
