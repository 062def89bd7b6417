package sig

import (
	"strings"
	"testing"
	"time"
)

// FuzzStringToSignV2 checks that V2 canonicalisation never panics, is deterministic, and
// keeps its line structure whatever the request holds.
func FuzzStringToSignV2(f *testing.F) {
	f.Add("PUT", "/dir/k%20y%2Bz.txt", "", "bkt", "x-amz-meta-foo", "Bar", "Sat, 21 Nov 2026 14:02:39 GMT")
	f.Add("GET", "/bkt", "acl&prefix=a%2F", "", "X-Amz-Date", "20261121T140239Z", "")
	f.Add("GET", "", "uploadId=%zz&partNumber=1&response-content-type=a+b", "b", "x-amz-a", " a\r\n b ", "1")
	f.Add("POST", "/bkt/", "delete=&=x&&", "", "Content-Type", "text/plain", "")
	f.Fuzz(func(t *testing.T, method, rawPath, rawQuery, bucket, hName, hValue, date string) {
		req := &Request{Method: method, RawPath: rawPath, RawQuery: rawQuery, HostBucket: bucket,
			Header: map[string][]string{hName: {hValue}, "X-Amz-Meta-Z": {hValue, hName}}}
		resource := CanonicalResourceV2(req)
		sts := StringToSignV2(req, date, resource)
		for range 3 {
			if StringToSignV2(req, date, CanonicalResourceV2(req)) != sts {
				t.Fatal("not deterministic")
			}
		}
		if !strings.HasSuffix(sts, resource) || !strings.HasPrefix(sts, method+"\n") {
			t.Fatalf("shape: %q", sts)
		}
		for _, r := range ResourceCandidatesV2(req) {
			_ = StringToSignV2(req, date, r)
		}
		anonymous := firstHeader(req.Header, "Authorization") == "" && queryAuthKind(parseQuery(rawQuery)) == queryAuthNone
		if _, err := Verify(req, staticLookup("k", "s"), time.Unix(0, 0)); anonymous && err != nil {
			t.Fatalf("anonymous request refused: %v", err)
		}
	})
}

// FuzzParseAuthorization checks that Authorization parsing never panics, that a parsed V4
// header renders back to something that parses the same, and that Verify refuses
// rather than crashes on any header.
func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS AKID:c2lnbmF0dXJl")
	f.Add("AWS HAHAHA")
	f.Add("AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
	f.Add("AWS4-HMAC-SHA256 Credential=AKID/20261121/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=abc")
	f.Add("AWS4-HMAC-SHA256 Credential=HAHAHA")
	f.Add("AWS4-HMAC-SHA256 Credential=a/b/20261121//s3/aws4_request,Signature=,SignedHeaders=;")
	f.Add("Bearer x")
	f.Fuzz(func(t *testing.T, v string) {
		if key, sig, err := ParseAuthorizationV2(v); err == nil && (key == "" || sig == "") {
			t.Fatalf("V2 %q parsed to empty parts", v)
		}
		if a, err := ParseAuthorizationV4(v); err == nil {
			b, err := ParseAuthorizationV4(a.String())
			if err != nil || b.String() != a.String() {
				t.Fatalf("V4 %q: round trip %q: %v", v, a.String(), err)
			}
		}
		now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
		req := &Request{Method: "GET", Host: "h", RawPath: "/k", Header: map[string][]string{
			"Authorization": {v}, "Date": {now.Format(httpTimeFormat)}, "X-Amz-Content-Sha256": {EmptySHA256}}}
		if res, err := Verify(req, staticLookup("AKID", "secret"), now); err == nil && strings.TrimSpace(v) != "" {
			t.Fatalf("%q accepted: %+v", v, res)
		}
	})
}

// FuzzCanonicalURI checks that the V4 canonical URI never panics, is strictly encoded,
// keeps every "/", and is a fixed point.
func FuzzCanonicalURI(f *testing.F) {
	for _, s := range []string{"", "/", "/a b/c%2Fd", "/%zz/%", "//./../é", "/k%20y%2Bz~!*", "%", "/a%2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := CanonicalURI(raw)
		if raw != "" && strings.Count(got, "/") != strings.Count(raw, "/") {
			t.Fatalf("%q -> %q changed the segments", raw, got)
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			switch {
			case isUnreserved(c) || c == '/':
			case c == '%' && i+2 < len(got) && isUpperHex(got[i+1]) && isUpperHex(got[i+2]):
				i += 2
			default:
				t.Fatalf("%q -> %q: byte %q at %d not strictly encoded", raw, got, c, i)
			}
		}
		if again := CanonicalURI(got); again != got {
			t.Fatalf("%q -> %q -> %q", raw, got, again)
		}
	})
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }
