package sig

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// hdr builds a header map with canonical keys from name, value pairs.
func hdr(kv ...string) map[string][]string {
	h := map[string][]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		k := canonicalKey(kv[i])
		h[k] = append(h[k], kv[i+1])
	}
	return h
}

// TestStringToSignV2WorkedExample is the worked example of s3-details.md §2.1.
func TestStringToSignV2WorkedExample(t *testing.T) {
	const d = "Sat, 21 Nov 2026 14:02:39 GMT"
	req := &Request{
		Method:     "PUT",
		Host:       "bkt.s3.localhost",
		RawPath:    "/dir/k%20y%2Bz.txt",
		HostBucket: "bkt",
		Header: hdr("Content-MD5", "XUFAKrxLKna5cZ2REBfFkg==", "Content-Type", "text/plain",
			"Date", d, "x-amz-acl", "public-read", "x-amz-meta-foo", "Bar"),
	}
	want := "PUT\nXUFAKrxLKna5cZ2REBfFkg==\ntext/plain\n" + d + "\nx-amz-acl:public-read\nx-amz-meta-foo:Bar\n/bkt/dir/k%20y%2Bz.txt"
	if got := StringToSignV2(req, d, CanonicalResourceV2(req)); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	SignRequestV2(req, "AKID", "secret", time.Time{})
	if _, err := Verify(req, staticLookup("AKID", "secret"), mustDate(t, d)); err != nil {
		t.Fatal(err)
	}
}

// TestAWSDocumentationV2 checks the examples of AWS's "Signing and authenticating REST
// requests" page (key AKIAIOSFODNN7EXAMPLE).
func TestAWSDocumentationV2(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	tests := []struct {
		name string
		req  Request
		date string
		sts  string
		sig  string // "" when the documented signature is known to be wrong
	}{
		{
			name: "object GET",
			req:  Request{Method: "GET", Host: "johnsmith.s3.amazonaws.com", RawPath: "/photos/puppy.jpg", HostBucket: "johnsmith", Header: hdr("Date", "Tue, 27 Mar 2007 19:36:42 +0000")},
			date: "Tue, 27 Mar 2007 19:36:42 +0000",
			sts:  "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg",
			sig:  "bWq2s1WEIj+Ydj0vQ697zp+IXMU=",
		},
		{
			name: "object PUT",
			req:  Request{Method: "PUT", Host: "johnsmith.s3.amazonaws.com", RawPath: "/photos/puppy.jpg", HostBucket: "johnsmith", Header: hdr("Content-Type", "image/jpeg", "Content-Length", "94328", "Date", "Tue, 27 Mar 2007 21:15:45 +0000")},
			date: "Tue, 27 Mar 2007 21:15:45 +0000",
			sts:  "PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/johnsmith/photos/puppy.jpg",
			sig:  "MyyxeRY7whkBe+bq8fHCL/2kKUg=",
		},
		{
			name: "list",
			req:  Request{Method: "GET", Host: "johnsmith.s3.amazonaws.com", RawPath: "/", RawQuery: "prefix=photos&max-keys=50&marker=puppy", HostBucket: "johnsmith", Header: hdr("User-Agent", "Mozilla/5.0", "Date", "Tue, 27 Mar 2007 19:42:41 +0000")},
			date: "Tue, 27 Mar 2007 19:42:41 +0000",
			sts:  "GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/johnsmith/",
			sig:  "htDYFYduRNen8P9ZfE/s9SuKy0U=",
		},
		{
			name: "fetch acl",
			req:  Request{Method: "GET", Host: "johnsmith.s3.amazonaws.com", RawPath: "/", RawQuery: "acl", HostBucket: "johnsmith", Header: hdr("Date", "Tue, 27 Mar 2007 19:44:46 +0000")},
			date: "Tue, 27 Mar 2007 19:44:46 +0000",
			sts:  "GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/johnsmith/?acl",
			sig:  "c2WLPFtWHVgbEmeEG93a4cG37dM=",
		},
		{
			name: "delete with x-amz-date (path style)",
			req:  Request{Method: "DELETE", Host: "s3.amazonaws.com", RawPath: "/johnsmith/photos/puppy.jpg", Header: hdr("Date", "Tue, 27 Mar 2007 21:20:27 +0000", "x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000")},
			date: "",
			sts:  "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg",
		},
		{
			name: "upload with repeated meta headers (CNAME bucket)",
			req: Request{Method: "PUT", Host: "static.johnsmith.net:8080", RawPath: "/db-backup.dat.gz", HostBucket: "static.johnsmith.net", Header: hdr(
				"User-Agent", "curl/7.15.5", "Date", "Tue, 27 Mar 2007 21:06:08 +0000",
				"x-amz-acl", "public-read", "content-type", "application/x-download",
				"Content-MD5", "4gJE4saaMU4BqNR0kLY+lw==",
				"X-Amz-Meta-ReviewedBy", "joe@johnsmith.net", "X-Amz-Meta-ReviewedBy", "jane@johnsmith.net",
				"X-Amz-Meta-FileChecksum", "0x02661779", "X-Amz-Meta-ChecksumAlgorithm", "crc32",
				"Content-Disposition", "attachment; filename=database.dat", "Content-Encoding", "gzip",
				"Content-Length", "5913339")},
			date: "Tue, 27 Mar 2007 21:06:08 +0000",
			sts: "PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\nTue, 27 Mar 2007 21:06:08 +0000\n" +
				"x-amz-acl:public-read\nx-amz-meta-checksumalgorithm:crc32\nx-amz-meta-filechecksum:0x02661779\n" +
				"x-amz-meta-reviewedby:joe@johnsmith.net,jane@johnsmith.net\n/static.johnsmith.net/db-backup.dat.gz",
			sig: "ilyl83RwaSoYIEdixDQcA4OnAnc=",
		},
		{
			name: "list all buckets",
			req:  Request{Method: "GET", Host: "s3.amazonaws.com", RawPath: "/", Header: hdr("Date", "Wed, 28 Mar 2007 01:29:59 +0000")},
			date: "Wed, 28 Mar 2007 01:29:59 +0000",
			sts:  "GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/",
			sig:  "qGdzdERIC03wnaRNKh6OqZehG9s=",
		},
		{
			name: "unicode key, path as sent",
			req:  Request{Method: "GET", Host: "s3.amazonaws.com", RawPath: "/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re", Header: hdr("Date", "Wed, 28 Mar 2007 01:49:49 +0000")},
			date: "Wed, 28 Mar 2007 01:49:49 +0000",
			sts:  "GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re",
			sig:  "DNEZGsoieTZ92F3bUfSPQcbGmlM=",
		},
		{
			name: "presigned",
			req:  Request{Method: "GET", Host: "johnsmith.s3.amazonaws.com", RawPath: "/photos/puppy.jpg", RawQuery: "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620", HostBucket: "johnsmith"},
			date: "1175139620",
			sts:  "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg",
			sig:  "NpgCjnDzrM+WFzoENXmpNDUsSn8=",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := StringToSignV2(&tt.req, tt.date, CanonicalResourceV2(&tt.req))
			if sts != tt.sts {
				t.Fatalf("string to sign\ngot  %q\nwant %q", sts, tt.sts)
			}
			if tt.sig != "" && SignV2(secret, sts) != tt.sig {
				t.Fatalf("signature %s, want %s", SignV2(secret, sts), tt.sig)
			}
		})
	}
}

func TestCanonicalResourceV2(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"host style object", Request{RawPath: "/dir/k%20y.txt", HostBucket: "bkt"}, "/bkt/dir/k%20y.txt"},
		{"host style bucket root", Request{RawPath: "/", HostBucket: "bkt"}, "/bkt/"},
		{"host style empty path", Request{RawPath: "", HostBucket: "bkt"}, "/bkt/"},
		{"dotted host bucket", Request{RawPath: "/k", HostBucket: "a.b"}, "/a.b/k"},
		{"path style object", Request{RawPath: "/bkt/dir/k%20y.txt"}, "/bkt/dir/k%20y.txt"},
		{"path style bucket", Request{RawPath: "/bkt"}, "/bkt"},
		{"service", Request{RawPath: "/"}, "/"},
		{"path kept byte for byte", Request{RawPath: "/bkt/a%2fb%7E+c//d"}, "/bkt/a%2fb%7E+c//d"},
		{"valueless sub-resource", Request{RawPath: "/", RawQuery: "acl", HostBucket: "bkt"}, "/bkt/?acl"},
		{"empty value is bare", Request{RawPath: "/", RawQuery: "policy=", HostBucket: "bkt"}, "/bkt/?policy"},
		{"ordinary parameters not signed", Request{RawPath: "/", RawQuery: "prefix=a&delimiter=%2F&max-keys=5&encoding-type=url&list-type=2&marker=m", HostBucket: "bkt"}, "/bkt/"},
		{"sorted, values decoded", Request{RawPath: "/bkt/mp", RawQuery: "uploadId=u%2F1%2B2%3D&partNumber=1"}, "/bkt/mp?partNumber=1&uploadId=u/1+2="},
		{"plus is a space", Request{RawPath: "/k", RawQuery: "response-content-type=text%2Fx+y", HostBucket: "b"}, "/b/k?response-content-type=text/x y"},
		{"response overrides", Request{RawPath: "/k", RawQuery: "response-expires=0&response-cache-control=no&response-content-disposition=a&response-content-encoding=gzip&response-content-language=en&response-content-type=t", HostBucket: "b"},
			"/b/k?response-cache-control=no&response-content-disposition=a&response-content-encoding=gzip&response-content-language=en&response-content-type=t&response-expires=0"},
		{"mixed with ordinary", Request{RawPath: "/bkt/", RawQuery: "versions&prefix=p&key-marker=k&versionId=v1"}, "/bkt/?versionId=v1&versions"},
		{"botocore and minio-go extras", Request{RawPath: "/k", RawQuery: "retention&legal-hold&object-lock&select&select-type=2&tagging&restore&delete&cors&storageClass&accelerate&defaultObjectAcl&encryption&replication&metrics&inventory&analytics", HostBucket: "b"},
			"/b/k?accelerate&analytics&cors&defaultObjectAcl&delete&encryption&inventory&legal-hold&metrics&object-lock&replication&restore&retention&select&select-type=2&storageClass&tagging"},
		{"capital letters sort first", Request{RawPath: "/k", RawQuery: "uploadId=1&partNumber=2&acl", HostBucket: "b"}, "/b/k?acl&partNumber=2&uploadId=1"},
		{"undecodable value kept", Request{RawPath: "/k", RawQuery: "versionId=%zz", HostBucket: "b"}, "/b/k?versionId=%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CanonicalResourceV2(&tt.req); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCanonicalAmzHeadersV2(t *testing.T) {
	tests := []struct {
		name string
		h    map[string][]string
		want string
	}{
		{"none", hdr("Content-Type", "x", "Date", "d"), ""},
		{"lower-cased and sorted", hdr("X-Amz-Meta-Zed", "1", "x-amz-acl", "private", "X-Amz-Date", "d"), "x-amz-acl:private\nx-amz-date:d\nx-amz-meta-zed:1\n"},
		{"repeated joined without spaces", hdr("X-Amz-Meta-A", " one ", "X-Amz-Meta-A", "two"), "x-amz-meta-a:one,two\n"},
		{"inner spaces kept", hdr("X-Amz-Meta-A", "x  y"), "x-amz-meta-a:x  y\n"},
		{"folded line", hdr("X-Amz-Meta-A", "first\r\n   second"), "x-amz-meta-a:first second\n"},
		{"empty value", hdr("X-Amz-Meta-A", ""), "x-amz-meta-a:\n"},
		{"x-amz without dash not signed", hdr("X-Amzfoo", "1"), ""},
		{"non-canonical keys merged", map[string][]string{"x-amz-meta-a": {"1"}, "X-Amz-Meta-A": {"2"}}, "x-amz-meta-a:2,1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CanonicalAmzHeadersV2(tt.h); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResourceCandidatesV2(t *testing.T) {
	tests := []struct {
		req  Request
		want []string
	}{
		{Request{RawPath: "/bkt/k"}, []string{"/bkt/k"}},
		{Request{RawPath: "/", HostBucket: "bkt", RawQuery: "acl"}, []string{"/bkt/?acl"}},
		{Request{RawPath: "/bkt"}, []string{"/bkt", "/bkt/"}},
		{Request{RawPath: "/bkt/"}, []string{"/bkt/"}},
		{Request{RawPath: "/bkt", RawQuery: "acl"}, []string{"/bkt?acl", "/bkt/?acl", "/bkt?acl?acl"}},
		{Request{RawPath: "/bkt/", RawQuery: "uploads&prefix=x"}, []string{"/bkt/?uploads", "/bkt?uploads?uploads"}},
		{Request{RawPath: "/bkt", RawQuery: "list-type=2&prefix=x"}, []string{"/bkt", "/bkt/", "/bkt?list-type=2"}},
		{Request{RawPath: "/"}, []string{"/"}},
		// minio-go does not sign ?object-lock; botocore does.
		{Request{RawPath: "/bkt/", RawQuery: "object-lock="}, []string{"/bkt/?object-lock", "/bkt/", "/bkt?object-lock=?object-lock"}},
		{Request{Method: "PUT", RawPath: "/bkt/", RawQuery: "object-lock=", Header: map[string][]string{"Content-Md5": {"x"}}},
			[]string{"/bkt/?object-lock", "/bkt/", "/bkt?object-lock=?object-lock"}},
		// Without Content-MD5 a signature of PUT /bkt/ (create bucket) must not set the lock.
		{Request{Method: "PUT", RawPath: "/bkt/", RawQuery: "object-lock="}, []string{"/bkt/?object-lock", "/bkt?object-lock=?object-lock"}},
	}
	for _, tt := range tests {
		got := ResourceCandidatesV2(&tt.req)
		if len(got) != len(tt.want) {
			t.Errorf("%+v: got %q, want %q", tt.req, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%+v: got %q, want %q", tt.req, got, tt.want)
				break
			}
		}
	}
}

func TestParseAuthorizationV2(t *testing.T) {
	tests := []struct {
		in       string
		key, sig string
		ok       bool
	}{
		{"AWS AKID:c2ln+/=", "AKID", "c2ln+/=", true},
		{"AWS  AKID:sig ", "AKID", "sig", true},
		{"AWS HAHAHA", "", "", false},
		{"AWS :sig", "", "", false},
		{"AWS key:", "", "", false},
		{"AWS", "", "", false},
		{"AWSkey:sig", "", "", false},
		{"aws key:sig", "", "", false},
	}
	for _, tt := range tests {
		key, sig, err := ParseAuthorizationV2(tt.in)
		if (err == nil) != tt.ok || key != tt.key || sig != tt.sig {
			t.Errorf("%q: got %q %q %v", tt.in, key, sig, err)
		}
		if err != nil && !s3types.IsCode(err, s3types.InvalidArgument) {
			t.Errorf("%q: code %v", tt.in, err)
		}
	}
}

// v2Case is a request to sign with the given resource and date value, then verify.
type v2Case struct {
	name     string
	req      Request
	resource string // what the client signs; "" for CanonicalResourceV2
	date     string // what stands in the date position
}

func TestVerifyV2(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	gmt := now.Format(httpTimeFormat)
	s3cmd := now.Format(time.RFC1123Z)
	tests := []v2Case{
		{"host style object", Request{Method: "GET", Host: "bkt.s3.localhost:8080", RawPath: "/dir/k%20y.txt", HostBucket: "bkt", Header: hdr("Date", gmt)}, "", gmt},
		{"path style object", Request{Method: "PUT", Host: "s3.localhost", RawPath: "/bkt/dir/k", Header: hdr("Date", gmt, "Content-Type", "text/plain", "Content-Md5", "XUFAKrxLKna5cZ2REBfFkg==")}, "", gmt},
		{"bucket root signed without slash", Request{Method: "GET", Host: "s3.localhost", RawPath: "/bkt", Header: hdr("Date", gmt)}, "/bkt", gmt},
		{"bucket root signed with slash", Request{Method: "GET", Host: "s3.localhost", RawPath: "/bkt", Header: hdr("Date", gmt)}, "/bkt/", gmt},
		{"bucket sub-resource signed with slash", Request{Method: "GET", Host: "s3.localhost", RawPath: "/bkt", RawQuery: "acl", Header: hdr("Date", gmt)}, "/bkt/?acl", gmt},
		{"botocore acl?acl bug", Request{Method: "GET", Host: "s3.localhost", RawPath: "/bkt", RawQuery: "acl", Header: hdr("Date", gmt)}, "/bkt?acl?acl", gmt},
		{"botocore uploads?uploads bug", Request{Method: "GET", Host: "s3.localhost", RawPath: "/bkt", RawQuery: "uploads&prefix=a", Header: hdr("Date", gmt)}, "/bkt?uploads?uploads", gmt},
		{"sub-resources", Request{Method: "PUT", Host: "bkt.s3.localhost", RawPath: "/mp", RawQuery: "uploadId=u%2B1&partNumber=2", HostBucket: "bkt", Header: hdr("Date", gmt)}, "/bkt/mp?partNumber=2&uploadId=u+1", gmt},
		{"x-amz-date (s3cmd)", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("X-Amz-Date", s3cmd)}, "", ""},
		{"x-amz-date with Date signed anyway (botocore)", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("X-Amz-Date", s3cmd, "Date", gmt)}, "", gmt},
		{"x-amz-date standard with Date present", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("X-Amz-Date", s3cmd, "Date", gmt)}, "", ""},
		{"repeated amz headers", Request{Method: "PUT", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", gmt, "X-Amz-Meta-A", "1", "X-Amz-Meta-A", "2", "X-Amz-Acl", "private")}, "", gmt},
		{"ISO 8601 date", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", "20261121T140239Z")}, "", "20261121T140239Z"},
		{"RFC 850 date", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", "Saturday, 21-Nov-26 14:02:39 GMT")}, "", "Saturday, 21-Nov-26 14:02:39 GMT"},
		{"asctime date", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", "Sat Nov 21 14:02:39 2026")}, "", "Sat Nov 21 14:02:39 2026"},
		{"numeric zone date", Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", "Sat, 21 Nov 2026 07:02:39 -0700")}, "", "Sat, 21 Nov 2026 07:02:39 -0700"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := signV2Case(tt, "AKID", "secret")
			res, err := Verify(req, staticLookup("AKID", "secret"), now)
			if err != nil {
				t.Fatal(err)
			}
			if res.KeyID != "AKID" || res.Version != 2 || res.Presigned || !res.Time.Equal(now) {
				t.Fatalf("result %+v", res)
			}
			if _, err := Verify(req, staticLookup("AKID", "other"), now); !s3types.IsCode(err, s3types.SignatureDoesNotMatch) {
				t.Fatalf("wrong secret: %v", err)
			}
		})
	}
}

func signV2Case(tt v2Case, keyID, secret string) *Request {
	req := tt.req
	resource := tt.resource
	if resource == "" {
		resource = CanonicalResourceV2(&req)
	}
	req.Header["Authorization"] = []string{"AWS " + keyID + ":" + SignV2(secret, StringToSignV2(&req, tt.date, resource))}
	return &req
}

// TestVerifyV2NotTolerated checks that the tolerated variants stay narrow.
func TestVerifyV2NotTolerated(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	gmt := now.Format(httpTimeFormat)
	tests := []v2Case{
		{"host style signed without bucket", Request{Method: "GET", RawPath: "/k", HostBucket: "bkt", Header: hdr("Date", gmt)}, "/k", gmt},
		{"object path with extra slash", Request{Method: "GET", RawPath: "/bkt/k", Header: hdr("Date", gmt)}, "/bkt/k/", gmt},
		{"ordinary parameter signed", Request{Method: "GET", RawPath: "/bkt/", RawQuery: "prefix=a", Header: hdr("Date", gmt)}, "/bkt/?prefix=a", gmt},
		{"encoded value signed", Request{Method: "GET", RawPath: "/k", RawQuery: "versionId=a%2Fb", HostBucket: "b", Header: hdr("Date", gmt)}, "/b/k?versionId=a%2Fb", gmt},
		{"Date signed when only x-amz-date sent", Request{Method: "GET", RawPath: "/k", HostBucket: "b", Header: hdr("X-Amz-Date", gmt)}, "", gmt},
		{"acl?acl on object", Request{Method: "GET", RawPath: "/bkt/k", RawQuery: "acl", Header: hdr("Date", gmt)}, "/bkt/k?acl?acl", gmt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(signV2Case(tt, "AKID", "secret"), staticLookup("AKID", "secret"), now)
			var se *SignatureError
			if !errors.As(err, &se) || se.Err.Code != s3types.SignatureDoesNotMatch {
				t.Fatalf("got %v", err)
			}
			if se.AccessKeyID != "AKID" || se.StringToSign == "" || se.SignatureProvided == "" {
				t.Fatalf("details %+v", se)
			}
		})
	}
}

func TestPresignV2(t *testing.T) {
	now := time.Date(2026, 11, 21, 14, 2, 39, 0, time.UTC)
	lookup := staticLookup("AKID", "secret")
	base := func() *Request {
		return &Request{Method: "GET", Host: "bkt.s3.localhost", RawPath: "/dir/a%20b.txt", RawQuery: "response-content-type=text%2Fplain", HostBucket: "bkt", Header: hdr()}
	}
	req := base()
	PresignV2(req, "AKID", "secret", now.Add(time.Hour))
	res, err := Verify(req, lookup, now)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Presigned || res.Version != 2 || res.KeyID != "AKID" || !res.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("result %+v", res)
	}
	if _, err := Verify(req, lookup, now.Add(time.Hour+time.Second)); !isDenied(err, msgExpired) {
		t.Fatalf("expired: %v", err)
	}

	tampered := *req
	tampered.RawQuery = strings.Replace(req.RawQuery, "text%2Fplain", "text%2Fhtml", 1)
	if _, err := Verify(&tampered, lookup, now); !s3types.IsCode(err, s3types.SignatureDoesNotMatch) {
		t.Fatalf("tampered: %v", err)
	}

	// A "+" in the signature that the client did not encode arrives as a space.
	for i := 0; ; i++ {
		req = base()
		PresignV2(req, "AKID", "secret", now.Add(time.Duration(i)*time.Second+time.Minute))
		sig, _ := lookupParam(parseQuery(req.RawQuery), "Signature")
		if !strings.Contains(sig, "+") {
			continue
		}
		req.RawQuery = strings.ReplaceAll(req.RawQuery, "%2B", "+")
		if _, err := Verify(req, lookup, now); err != nil {
			t.Fatalf("unencoded plus: %v", err)
		}
		break
	}

	missing := []string{"AWSAccessKeyId=AKID&Expires=1", "Signature=x&Expires=1", "AWSAccessKeyId=AKID&Signature=x"}
	for _, q := range missing {
		r := base()
		r.RawQuery = q
		if _, err := Verify(r, lookup, now); !s3types.IsCode(err, s3types.AccessDenied) {
			t.Errorf("%s: %v", q, err)
		}
	}
	r := base()
	r.RawQuery = "AWSAccessKeyId=AKID&Expires=soon&Signature=x"
	if _, err := Verify(r, lookup, now); !s3types.IsCode(err, s3types.AccessDenied) {
		t.Errorf("bad Expires: %v", err)
	}
	r.RawQuery = "AWSAccessKeyId=NOPE&Expires=1&Signature=x"
	if _, err := Verify(r, lookup, now); !s3types.IsCode(err, s3types.InvalidAccessKeyID) {
		t.Errorf("unknown key: %v", err)
	}
}
