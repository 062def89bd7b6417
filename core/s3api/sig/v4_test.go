package sig

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// The examples of AWS's "Signature Version 4: authenticating requests" pages for S3.
const (
	awsKeyID  = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	awsScope  = "20130524/us-east-1/s3/aws4_request"
)

var awsTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func awsAuth(signed, sig string) string {
	return "AWS4-HMAC-SHA256 Credential=" + awsKeyID + "/" + awsScope + ",SignedHeaders=" + signed + ",Signature=" + sig
}

func TestAWSDocumentationV4(t *testing.T) {
	tests := []struct {
		name string
		req  Request
	}{
		{"GET object with Range", Request{Method: "GET", Host: "examplebucket.s3.amazonaws.com", RawPath: "/test.txt", HostBucket: "examplebucket", Header: hdr(
			"Range", "bytes=0-9", "X-Amz-Content-Sha256", EmptySHA256, "X-Amz-Date", "20130524T000000Z",
			"Authorization", awsAuth("host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))}},
		{"PUT object", Request{Method: "PUT", Host: "examplebucket.s3.amazonaws.com", RawPath: "/test%24file.text", HostBucket: "examplebucket", Header: hdr(
			"Date", "Fri, 24 May 2013 00:00:00 GMT", "X-Amz-Date", "20130524T000000Z", "X-Amz-Storage-Class", "REDUCED_REDUNDANCY",
			"X-Amz-Content-Sha256", sha256Hex("Welcome to Amazon S3."),
			"Authorization", awsAuth("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))}},
		{"GET bucket lifecycle", Request{Method: "GET", Host: "examplebucket.s3.amazonaws.com", RawPath: "/", RawQuery: "lifecycle", HostBucket: "examplebucket", Header: hdr(
			"X-Amz-Content-Sha256", EmptySHA256, "X-Amz-Date", "20130524T000000Z",
			"Authorization", awsAuth("host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))}},
		{"list objects", Request{Method: "GET", Host: "examplebucket.s3.amazonaws.com", RawPath: "/", RawQuery: "max-keys=2&prefix=J", HostBucket: "examplebucket", Header: hdr(
			"X-Amz-Content-Sha256", EmptySHA256, "X-Amz-Date", "20130524T000000Z",
			"Authorization", awsAuth("host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))}},
		{"presigned GET", Request{Method: "GET", Host: "examplebucket.s3.amazonaws.com", RawPath: "/test.txt", HostBucket: "examplebucket", Header: hdr(),
			RawQuery: "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(&tt.req, staticLookup(awsKeyID, awsSecret), awsTime)
			if err != nil {
				if se := (*SignatureError)(nil); errors.As(err, &se) {
					t.Fatalf("%v\n%s\n--\n%s", err, se.CanonicalRequest, se.StringToSign)
				}
				t.Fatal(err)
			}
			if res.KeyID != awsKeyID || res.Version != 4 || res.Scope != awsScope || res.AmzDate != "20130524T000000Z" || res.Region != "us-east-1" {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// TestAWSChunkedExample is AWS's aws-chunked upload example: 66560 bytes of "a" in a 65536
// and a 1024 byte chunk.
func TestAWSChunkedExample(t *testing.T) {
	req := &Request{Method: "PUT", Host: "s3.amazonaws.com", RawPath: "/examplebucket/chunkObject.txt", Header: hdr(
		"X-Amz-Date", "20130524T000000Z", "X-Amz-Storage-Class", "REDUCED_REDUNDANCY",
		"X-Amz-Content-Sha256", StreamingPayload, "Content-Encoding", "aws-chunked",
		"X-Amz-Decoded-Content-Length", "66560", "Content-Length", "66824",
		"Authorization", awsAuth("content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
			"4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"))}
	res, err := Verify(req, staticLookup(awsKeyID, awsSecret), awsTime)
	if err != nil {
		t.Fatal(err)
	}
	if res.PayloadHash != StreamingPayload || res.SeedSignature != "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9" {
		t.Fatalf("result %+v", res)
	}
	chunks := []struct{ data, sig string }{
		{strings.Repeat("a", 65536), "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"},
		{strings.Repeat("a", 1024), "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"},
		{"", "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"},
	}
	prev := res.SeedSignature
	for i, c := range chunks {
		got := SignChunkV4(res.SigningKey, res.AmzDate, res.Scope, prev, sha256Hex(c.data))
		if got != c.sig {
			t.Fatalf("chunk %d: %s, want %s", i, got, c.sig)
		}
		prev = got
	}
}

func TestCanonicalURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"/test.txt", "/test.txt"},
		{"/test$file.text", "/test%24file.text"},
		{"/test%24file.text", "/test%24file.text"},
		{"/k%20y%2Bz", "/k%20y%2Bz"},
		{"/a+b", "/a%2Bb"},
		{"/%7e%7E~", "/~~~"},
		{"/a%2fb", "/a%2Fb"},
		{"/a%2Fb/c", "/a%2Fb/c"},
		{"//a/./../b/", "//a/./../b/"},
		{"/é", "/%C3%A9"},
		{"/%c3%a9", "/%C3%A9"},
		{"/!*'()", "/%21%2A%27%28%29"},
		{"/%zz", "/%25zz"},
		{"/a b", "/a%20b"},
	}
	for _, tt := range tests {
		if got := CanonicalURI(tt.in); got != tt.want {
			t.Errorf("CanonicalURI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalQueryV4(t *testing.T) {
	tests := []struct {
		in        string
		presigned bool
		want      string
	}{
		{"", false, ""},
		{"acl", false, "acl="},
		{"acl=", false, "acl="},
		{"b=2&a=1&a=0", false, "a=0&a=1&b=2"},
		{"prefix=a%20b&x=a+b", false, "prefix=a%20b&x=a%20b"},
		{"delimiter=/&k=%2f", false, "delimiter=%2F&k=%2F"},
		{"marker=~&m=%7E", false, "m=~&marker=~"},
		{"a=b=c", false, "a=b%3Dc"},
		{"a&&b", false, "a=&b="},
		{"X-Amz-Signature=abc&X-Amz-Date=1", true, "X-Amz-Date=1"},
		{"X-Amz-Signature=abc&X-Amz-Date=1", false, "X-Amz-Date=1&X-Amz-Signature=abc"},
		{"Z=1&a=1", false, "Z=1&a=1"},
		{"%zz=1", false, "%25zz=1"},
	}
	for _, tt := range tests {
		if got := CanonicalQueryV4(tt.in, tt.presigned); got != tt.want {
			t.Errorf("CanonicalQueryV4(%q, %v) = %q, want %q", tt.in, tt.presigned, got, tt.want)
		}
	}
}

func TestCanonicalHeadersV4(t *testing.T) {
	req := &Request{Host: "bkt.s3.localhost:8080", Header: hdr(
		"X-Amz-Meta-A", "  x   y  z ", "X-Amz-Meta-B", "1", "X-Amz-Meta-B", " 2 ", "Content-Type", "text/plain")}
	got := CanonicalHeadersV4(req, []string{"content-type", "host", "x-amz-meta-a", "x-amz-meta-b", "x-amz-missing"})
	want := "content-type:text/plain\nhost:bkt.s3.localhost:8080\nx-amz-meta-a:x y z\nx-amz-meta-b:1,2\nx-amz-missing:\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParseAuthorizationV4(t *testing.T) {
	good := "AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
	a, err := ParseAuthorizationV4(good)
	if err != nil {
		t.Fatal(err)
	}
	want := AuthorizationV4{Credential: Credential{KeyID: "AKID", Date: "20261121", Region: "us-east-1", Service: "s3"}, SignedHeaders: []string{"host", "x-amz-date"}, Signature: "abc"}
	if a.String() != want.String() || a.String() != good {
		t.Fatalf("got %+v", a)
	}
	if b, err := ParseAuthorizationV4(strings.ReplaceAll(good, ", ", ",")); err != nil || b.String() != good {
		t.Fatalf("minio-go form: %+v %v", b, err)
	}
	if b, err := ParseAuthorizationV4("AWS4-HMAC-SHA256 Credential=a/b/20261121/weird-region/s3/aws4_request,SignedHeaders=host,Signature=x"); err != nil || b.Credential.KeyID != "a/b" || b.Credential.Region != "weird-region" {
		t.Fatalf("key with slash: %+v %v", b, err)
	}
	bad := []string{
		"AWS4-HMAC-SHA256 Credential=HAHAHA",
		"AWS4-HMAC-SHA256 ",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, Signature=abc",
		"AWS4-HMAC-SHA256 SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc, Extra=1",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws5_request, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/2026112/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261321/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=/20261121/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host;;x, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request SignedHeaders=host Signature=abc",
		"AWS4-HMAC-SHA256Credential=AKID/20261121/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=abc",
	}
	for _, v := range bad {
		if _, err := ParseAuthorizationV4(v); !s3types.IsCode(err, s3types.AuthorizationHeaderMalformed) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// v4Request is a fresh header-signed V4 request at now.
func v4Request(now time.Time, mutate func(*Request)) *Request {
	req := &Request{Method: "PUT", Host: "s3.localhost:8080", RawPath: "/bkt/dir/k%20y", RawQuery: "uploadId=u1&partNumber=2",
		Header: hdr("Content-Type", "text/plain", "X-Amz-Meta-Foo", "Bar", "Content-Length", "5")}
	if mutate != nil {
		mutate(req)
	}
	SignRequestV4(req, "AKID", "secret", "us-east-1", now, sha256Hex("hello"))
	return req
}

func TestVerifyV4(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	lookup := staticLookup("AKID", "secret")
	req := v4Request(now, nil)
	res, err := Verify(req, lookup, now.Add(MaxSkew))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 4 || res.KeyID != "AKID" || res.PayloadHash != sha256Hex("hello") || res.Presigned || !res.Time.Equal(now) ||
		res.Scope != "20261121/us-east-1/s3/aws4_request" || res.SeedSignature == "" || len(res.SigningKey) != 32 {
		t.Fatalf("result %+v", res)
	}

	// Any region is accepted.
	r := &Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr()}
	SignRequestV4(r, "AKID", "secret", "US", now, UnsignedPayload)
	if res, err := Verify(r, lookup, now); err != nil || res.Region != "US" {
		t.Fatalf("region US: %+v %v", res, err)
	}

	// Date header instead of X-Amz-Date: the string to sign holds it in ISO form.
	r = v4Request(now, nil)
	delete(r.Header, "X-Amz-Date")
	r.Header["Date"] = []string{now.Format(httpTimeFormat)}
	resignSameScope(r, "secret", []string{"content-type", "date", "host", "x-amz-content-sha256", "x-amz-meta-foo"}, now.Format(ISO8601Basic))
	if res, err := Verify(r, lookup, now); err != nil || res.AmzDate != "20261121T140239Z" {
		t.Fatalf("Date header: %+v %v", res, err)
	}
}

// resignSameScope re-signs a header-auth request with the given signed headers.
func resignSameScope(req *Request, secret string, signed []string, amzDate string) {
	a, _ := ParseAuthorizationV4(firstHeader(req.Header, "Authorization"))
	a.SignedHeaders = signed
	key := SigningKeyV4(secret, a.Credential.Date, a.Credential.Region, a.Credential.Service)
	payload := firstHeader(req.Header, "X-Amz-Content-Sha256")
	a.Signature = SignV4(key, StringToSignV4(amzDate, a.Credential.Scope(), CanonicalRequestV4(req, signed, payload, false)))
	req.Header["Authorization"] = []string{a.String()}
}

func TestVerifyV4Errors(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	lookup := staticLookup("AKID", "secret")
	tests := []struct {
		name string
		req  func() *Request
		at   time.Time
		code s3types.Code
	}{
		{"missing x-amz-content-sha256", func() *Request {
			r := v4Request(now, nil)
			delete(r.Header, "X-Amz-Content-Sha256")
			return r
		}, now, s3types.InvalidRequest},
		{"bad x-amz-content-sha256", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Content-Sha256"] = []string{"nope"}
			return r
		}, now, s3types.InvalidArgument},
		{"host not signed", func() *Request {
			r := v4Request(now, nil)
			resignSameScope(r, "secret", []string{"content-type", "x-amz-content-sha256", "x-amz-date", "x-amz-meta-foo"}, now.Format(ISO8601Basic))
			return r
		}, now, s3types.AccessDenied},
		{"x-amz header not signed", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Acl"] = []string{"public-read"}
			return r
		}, now, s3types.AccessDenied},
		{"unknown key", func() *Request {
			r := v4Request(now, nil)
			r.Header["Authorization"] = []string{strings.Replace(r.Header["Authorization"][0], "AKID", "NOPE", 1)}
			return r
		}, now, s3types.InvalidAccessKeyID},
		{"garbled", func() *Request {
			r := v4Request(now, nil)
			r.Header["Authorization"] = []string{"AWS4-HMAC-SHA256 Credential=HAHAHA"}
			return r
		}, now, s3types.AuthorizationHeaderMalformed},
		{"bad X-Amz-Date", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Date"] = []string{"Bad Date"}
			return r
		}, now, s3types.AccessDenied},
		{"empty X-Amz-Date", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Date"] = []string{""}
			return r
		}, now, s3types.AccessDenied},
		{"no date at all", func() *Request {
			r := v4Request(now, nil)
			delete(r.Header, "X-Amz-Date")
			return r
		}, now, s3types.AccessDenied},
		{"before epoch", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Date"] = []string{"19500707T215304Z"}
			return r
		}, now, s3types.AccessDenied},
		{"skewed past", func() *Request { return v4Request(now.Add(-MaxSkew-time.Second), nil) }, now, s3types.RequestTimeTooSkewed},
		{"skewed future", func() *Request { return v4Request(now.Add(MaxSkew+time.Second), nil) }, now, s3types.RequestTimeTooSkewed},
		{"year 9999", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Date"] = []string{"99990707T215304Z"}
			return r
		}, now, s3types.RequestTimeTooSkewed},
		{"scope date differs", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Date"] = []string{"20261122T000100Z"}
			return r
		}, time.Date(2026, 11, 22, 0, 1, 0, 0, time.UTC), s3types.AuthorizationHeaderMalformed},
		{"wrong secret", func() *Request {
			r := v4Request(now, nil)
			SignRequestV4(r, "AKID", "other", "us-east-1", now, sha256Hex("hello"))
			return r
		}, now, s3types.SignatureDoesNotMatch},
		{"signed header changed", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Meta-Foo"] = []string{"Baz"}
			return r
		}, now, s3types.SignatureDoesNotMatch},
		{"query changed", func() *Request {
			r := v4Request(now, nil)
			r.RawQuery = "uploadId=u1&partNumber=3"
			return r
		}, now, s3types.SignatureDoesNotMatch},
		{"host changed", func() *Request {
			r := v4Request(now, nil)
			r.Host = "s3.localhost:8081"
			return r
		}, now, s3types.SignatureDoesNotMatch},
		{"payload hash changed", func() *Request {
			r := v4Request(now, nil)
			r.Header["X-Amz-Content-Sha256"] = []string{UnsignedPayload}
			return r
		}, now, s3types.SignatureDoesNotMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.req(), lookup, tt.at)
			if !s3types.IsCode(err, tt.code) {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}

func TestPresignV4(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	lookup := staticLookup("AKID", "secret")
	presigned := func(expires time.Duration) *Request {
		req := &Request{Method: "GET", Host: "bkt.s3.localhost:8080", RawPath: "/dir/a%20b.txt", RawQuery: "response-content-type=text%2Fx%20y", HostBucket: "bkt", Header: hdr()}
		PresignV4(req, "AKID", "secret", "us-east-1", now, expires)
		return req
	}
	res, err := Verify(presigned(time.Hour), lookup, now.Add(59*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Presigned || res.Version != 4 || res.KeyID != "AKID" || res.PayloadHash != UnsignedPayload || !res.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("result %+v", res)
	}

	withQuery := func(old, repl string) *Request {
		r := presigned(time.Hour)
		r.RawQuery = strings.Replace(r.RawQuery, old, repl, 1)
		return r
	}
	tests := []struct {
		name string
		req  *Request
		at   time.Time
		code s3types.Code
		msg  string
	}{
		{"expired", presigned(time.Hour), now.Add(time.Hour + time.Second), s3types.AccessDenied, msgExpired},
		{"zero expiry", presigned(0), now, s3types.AccessDenied, msgExpired},
		{"negative expiry", withQuery("X-Amz-Expires=3600", "X-Amz-Expires=-7"), now, s3types.AccessDenied, "X-Amz-Expires must be non-negative"},
		{"more than a week", withQuery("X-Amz-Expires=3600", "X-Amz-Expires=604801"), now, s3types.AccessDenied, "X-Amz-Expires must be less than a week (in seconds) that is 604800"},
		{"not yet valid", presigned(time.Hour), now.Add(-MaxSkew - time.Second), s3types.AccessDenied, msgNotYetValid},
		{"expires not a number", withQuery("X-Amz-Expires=3600", "X-Amz-Expires=soon"), now, s3types.AuthorizationQueryParametersError, ""},
		{"missing date", withQuery("X-Amz-Date=", "X-Amz-Datum="), now, s3types.AuthorizationQueryParametersError, ""},
		{"other algorithm", withQuery("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512"), now, s3types.AuthorizationQueryParametersError, ""},
		{"bad credential", withQuery("%2Fs3%2F", "%2Fec2%2F"), now, s3types.AuthorizationQueryParametersError, ""},
		{"bad date", withQuery("X-Amz-Date=2026", "X-Amz-Date=x2026"), now, s3types.AuthorizationQueryParametersError, ""},
		{"host not signed", withQuery("X-Amz-SignedHeaders=host", "X-Amz-SignedHeaders=x-amz-date"), now, s3types.AccessDenied, msgUnsigned},
		{"unknown key", withQuery("X-Amz-Credential=AKID", "X-Amz-Credential=NOPE"), now, s3types.InvalidAccessKeyID, ""},
		{"tampered", withQuery("text%2Fx%20y", "text%2Fhtml"), now, s3types.SignatureDoesNotMatch, ""},
		{"expiry stretched", withQuery("X-Amz-Expires=3600", "X-Amz-Expires=7200"), now, s3types.SignatureDoesNotMatch, ""},
		{"payload hash named", withQuery("X-Amz-Date=", "X-Amz-Content-Sha256="+EmptySHA256+"&X-Amz-Date="), now, s3types.SignatureDoesNotMatch, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.req, lookup, tt.at)
			e := s3types.AsError(err)
			if e == nil || e.Code != tt.code || (tt.msg != "" && e.Message != tt.msg) {
				t.Fatalf("got %v, want %s %q", err, tt.code, tt.msg)
			}
		})
	}
}
