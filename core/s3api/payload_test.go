package s3api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// recordedChunkedUploads returns minio-go's aws-chunked uploads captured on the wire
// (sig/testdata/clients.json: key AKIDEXAMPLE, secret SECRETEXAMPLE), verified, with the
// data each carries.
func recordedChunkedUploads(t *testing.T) (bodies []string, auths []sig.Result, data [][]byte) {
	t.Helper()
	raw, err := os.ReadFile("sig/testdata/clients.json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		Method, Host, Target, Now, Body string
		Headers                         [][]string
	}
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatal(err)
	}
	a := New(nil, Config{})
	for _, r := range recs {
		if !strings.Contains(r.Body, "chunk-signature=") {
			continue
		}
		path, query, _ := strings.Cut(r.Target, "?")
		h := map[string][]string{}
		for _, kv := range r.Headers {
			k := textproto.CanonicalMIMEHeaderKey(kv[0])
			h[k] = append(h[k], kv[1])
		}
		now, _ := time.Parse(time.RFC3339, r.Now)
		res, err := sig.Verify(&sig.Request{Method: r.Method, Host: r.Host, RawPath: path, RawQuery: query, Header: h,
			HostBucket: a.HostBucket(r.Host)}, func(string) (string, error) { return "SECRETEXAMPLE", nil }, now)
		if err != nil {
			t.Fatalf("verify %s: %v", r.Target, err)
		}
		bodies = append(bodies, r.Body)
		auths = append(auths, res)
		data = append(data, chunkData(r.Body))
	}
	if len(bodies) == 0 {
		t.Fatal("no aws-chunked uploads in the recordings")
	}
	return bodies, auths, data
}

// chunkData extracts the payload of an aws-chunked body without checking anything.
func chunkData(body string) []byte {
	var out []byte
	for body != "" {
		line, rest, _ := strings.Cut(body, "\r\n")
		sizeHex, _, _ := strings.Cut(line, ";")
		var n int
		for _, c := range sizeHex {
			n = n*16 + strings.IndexRune("0123456789abcdef", c|0x20)
		}
		if n == 0 {
			break
		}
		out = append(out, rest[:n]...)
		body = rest[n+2:]
	}
	return out
}

func TestChunkedReaderRecorded(t *testing.T) {
	bodies, auths, data := recordedChunkedUploads(t)
	for i, body := range bodies {
		got, err := io.ReadAll(newChunkedReader(strings.NewReader(body), &auths[i]))
		if err != nil || !bytes.Equal(got, data[i]) {
			t.Fatalf("upload %d: %v (%d bytes, want %d)", i, err, len(got), len(data[i]))
		}
		// One changed data byte breaks its chunk's signature.
		at := strings.Index(body, "\r\n") + 2
		tampered := body[:at] + string(body[at]^1) + body[at+1:]
		if _, err := io.ReadAll(newChunkedReader(strings.NewReader(tampered), &auths[i])); !s3.IsCode(err, s3.SignatureDoesNotMatch) {
			t.Fatalf("upload %d tampered: %v", i, err)
		}
		// A body cut short is an error, never a shorter object.
		if _, err := io.ReadAll(newChunkedReader(strings.NewReader(body[:len(body)-40]), &auths[i])); err == nil {
			t.Fatalf("upload %d truncated: no error", i)
		}
	}
}

func TestChunkedReaderUnsignedTrailer(t *testing.T) {
	cases := []struct {
		body string
		want string
		ok   bool
	}{
		{"5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n", "hello world", true},
		{"5\r\nhello\r\n0\r\n\r\n", "hello", true},
		{"5\r\nhello\r\n0\r\n", "hello", true},
		{"5\r\nhelloX\r\n0\r\n\r\n", "", false},
		{"zz\r\nhello\r\n0\r\n\r\n", "", false},
		{"5\nhello\r\n0\r\n\r\n", "", false},
		{"5\r\nhel", "", false},
		{"5\r\nhello\r\n0\r\nnot a trailer\r\n\r\n", "", false},
		{"0\r\n:\r\n", "", false},
		{"0\r\nx-amz-checksum-crc32:AAAAAA==\r\n", "", false},
		{strings.Repeat("0", 5000) + "\r\n", "", false},
	}
	for _, c := range cases {
		got, err := io.ReadAll(newChunkedReader(strings.NewReader(c.body), nil))
		if c.ok != (err == nil) || c.ok && string(got) != c.want {
			t.Errorf("%q: %q, %v", c.body, got, err)
		}
	}
}

func FuzzChunkedReader(f *testing.F) {
	f.Add("5\r\nhello\r\n0\r\n\r\n")
	f.Add("3;chunk-signature=" + strings.Repeat("a", 64) + "\r\nabc\r\n0;chunk-signature=" + strings.Repeat("b", 64) + "\r\n\r\n")
	auth := &sig.Result{SigningKey: []byte("k"), SeedSignature: strings.Repeat("0", 64), AmzDate: "20261121T000000Z", Scope: "20261121/us-east-1/s3/aws4_request"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, a := range []*sig.Result{nil, auth} {
			got, err := io.ReadAll(newChunkedReader(strings.NewReader(body), a))
			if err == nil && len(got) > len(body) {
				t.Fatalf("decoded %d bytes from a %d-byte body", len(got), len(body))
			}
			if err != nil && s3.AsError(err) == nil {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
		}
	})
}

func TestResolve(t *testing.T) {
	a := New(nil, Config{DataHost: "S3.Example.com"})
	cases := []struct{ host, path, hostBucket, bucket, key string }{
		{"bkt.s3.example.com", "/dir/key", "bkt", "bkt", "dir/key"},
		{"bkt.s3.example.com:8080", "/", "bkt", "bkt", ""},
		{"a.b.s3.example.com", "/k", "a.b", "a.b", "k"},
		{"BKT.S3.EXAMPLE.COM", "/K", "bkt", "bkt", "K"},
		{"s3.example.com", "/bkt/dir/key", "", "bkt", "dir/key"},
		{"s3.example.com:8080", "/bkt", "", "bkt", ""},
		{"s3.example.com", "/bkt/", "", "bkt", ""},
		{"127.0.0.1:8080", "/", "", "", ""},
		{"[::1]:8080", "/bkt/k//x", "", "bkt", "k//x"},
		{"other.host", "/bkt/k", "", "bkt", "k"},
		{".s3.example.com", "/bkt/k", "", "bkt", "k"},
		{"xs3.example.com", "/bkt/k", "", "bkt", "k"},
	}
	for _, c := range cases {
		hb, b, k := a.resolve(c.host, c.path)
		if hb != c.hostBucket || b != c.bucket || k != c.key {
			t.Errorf("%s %s: (%q %q %q), want (%q %q %q)", c.host, c.path, hb, b, k, c.hostBucket, c.bucket, c.key)
		}
	}
}

func FuzzResolve(f *testing.F) {
	f.Add("bkt.s3.localhost:8080", "/a/b")
	f.Add("s3.localhost", "/bkt/key")
	f.Add("[::1]", "/")
	a := New(nil, Config{})
	f.Fuzz(func(t *testing.T, host, path string) {
		hb, b, k := a.resolve(host, path)
		if hb != "" && hb != b {
			t.Fatalf("host bucket %q but bucket %q", hb, b)
		}
		if hb == "" && strings.Contains(b, "/") {
			t.Fatalf("path-style bucket %q holds a slash", b)
		}
		// The bucket and key come back out of the request, nothing is invented.
		if hb == "" && !strings.Contains(path, b+"/"+k) && !strings.Contains(path, b) {
			t.Fatalf("bucket %q key %q not from path %q", b, k, path)
		}
		if hb != "" && strings.TrimPrefix(path, "/") != k {
			t.Fatalf("host-style key %q from path %q", k, path)
		}
	})
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		h       string
		size    int64
		off, n  int64
		partial bool
		invalid bool
	}{
		{"", 10, 0, 10, false, false},
		{"bytes=0-4", 10, 0, 5, true, false},
		{"bytes=5-", 10, 5, 5, true, false},
		{"bytes=-3", 10, 7, 3, true, false},
		{"bytes=-30", 10, 0, 10, true, false},
		{"bytes=8-100", 10, 8, 2, true, false},
		{"bytes=10-", 10, 0, 0, false, true},
		{"bytes=0-", 0, 0, 0, false, true},
		{"bytes=-0", 10, 0, 0, false, true},
		{"bytes=0-1,3-4", 10, 0, 10, false, false},
		{"bytes=4-2", 10, 0, 10, false, false},
		{"items=0-1", 10, 0, 10, false, false},
		{"bytes=x-1", 10, 0, 10, false, false},
	}
	for _, c := range cases {
		off, n, partial, err := parseRange(c.h, c.size)
		if c.invalid != s3.IsCode(err, s3.InvalidRange) || !c.invalid && (off != c.off || n != c.n || partial != c.partial) {
			t.Errorf("%q/%d: %d %d %v %v", c.h, c.size, off, n, partial, err)
		}
	}
}
