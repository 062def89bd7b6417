package sig

import (
	"encoding/json"
	"errors"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// testdata/clients.json holds requests real clients signed, captured on the wire by a
// recording server: botocore 1.43.11 (signature_version s3 and s3v4, path and virtual
// addressing, presigned URLs), s3cmd 2.3.0 (signature_v2 True/False, host_bucket and
// path style, signurl) and minio-go 7.0.95 (NewStaticV2/V4, DNS and path lookup, presigned
// URLs). Key AKIDEXAMPLE, secret SECRETEXAMPLE, data host s3.localhost. Targets are
// origin-form (path?query as sent); headers exclude Host. minio-go's aws-chunked bodies are
// kept for checking chunk signatures.
type clientRecord struct {
	Client  string     `json:"client"`
	Name    string     `json:"name"`
	Method  string     `json:"method"`
	Host    string     `json:"host"`
	Target  string     `json:"target"`
	Headers [][]string `json:"headers"`
	Now     string     `json:"now"`
	Body    string     `json:"body"`
}

const (
	clientKeyID  = "AKIDEXAMPLE"
	clientSecret = "SECRETEXAMPLE"
)

func loadClientRecords(t *testing.T) []clientRecord {
	t.Helper()
	data, err := os.ReadFile("testdata/clients.json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []clientRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

// request builds the Request core/s3api would: canonical header keys, raw path and query.
func (r clientRecord) request() *Request {
	path, query, _ := strings.Cut(r.Target, "?")
	h := map[string][]string{}
	for _, kv := range r.Headers {
		k := textproto.CanonicalMIMEHeaderKey(kv[0])
		h[k] = append(h[k], kv[1])
	}
	return &Request{Method: r.Method, Host: r.Host, RawPath: path, RawQuery: query, Header: h, HostBucket: hostBucket(r.Host)}
}

func (r clientRecord) now(t *testing.T) time.Time {
	t.Helper()
	now, err := time.Parse(time.RFC3339, r.Now)
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// hostBucket is bucket.s3.localhost[:port] ⇒ bucket.
func hostBucket(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	bucket, ok := strings.CutSuffix(host, ".s3.localhost")
	if !ok {
		return ""
	}
	return bucket
}

func clientLookup(keyID string) (string, error) {
	if keyID != clientKeyID {
		return "", s3types.Errorf(s3types.InvalidAccessKeyID, "The AWS Access Key Id you provided does not exist in our records.")
	}
	return clientSecret, nil
}

func TestRealClients(t *testing.T) {
	versions := map[int]int{}
	for _, rec := range loadClientRecords(t) {
		id := rec.Client + " " + rec.Name
		t.Run(id, func(t *testing.T) {
			res, err := Verify(rec.request(), clientLookup, rec.now(t))
			if err != nil {
				if se := (*SignatureError)(nil); errors.As(err, &se) {
					t.Fatalf("%v\nstring to sign:\n%s\ncanonical request:\n%s", err, se.StringToSign, se.CanonicalRequest)
				}
				t.Fatal(err)
			}
			if res.KeyID != clientKeyID || (res.Version != 2 && res.Version != 4) {
				t.Fatalf("result %+v", res)
			}
			versions[res.Version]++
		})
	}
	if versions[2] == 0 || versions[4] == 0 {
		t.Errorf("versions seen: %v", versions)
	}
}

// TestRealClientsWrongSecret checks that every captured request fails with another secret.
func TestRealClientsWrongSecret(t *testing.T) {
	wrong := func(string) (string, error) { return "not-the-secret", nil }
	for _, rec := range loadClientRecords(t) {
		_, err := Verify(rec.request(), wrong, rec.now(t))
		if !s3types.IsCode(err, s3types.SignatureDoesNotMatch) {
			t.Errorf("%s %s: got %v", rec.Client, rec.Name, err)
		}
	}
}

// TestRealClientsTampered checks that changing the path, a signed header or the method of a
// captured request breaks its signature.
func TestRealClientsTampered(t *testing.T) {
	for _, rec := range loadClientRecords(t) {
		req := rec.request()
		req.RawPath += "x"
		if _, err := Verify(req, clientLookup, rec.now(t)); !s3types.IsCode(err, s3types.SignatureDoesNotMatch) {
			t.Errorf("%s %s: path changed: got %v", rec.Client, rec.Name, err)
		}
		req = rec.request()
		req.Method = "PATCH"
		if _, err := Verify(req, clientLookup, rec.now(t)); !s3types.IsCode(err, s3types.SignatureDoesNotMatch) {
			t.Errorf("%s %s: method changed: got %v", rec.Client, rec.Name, err)
		}
	}
}

// TestRealClientChunks checks minio-go's aws-chunked bodies against SignChunkV4, seeded
// from Verify's Result.
func TestRealClientChunks(t *testing.T) {
	n := 0
	for _, rec := range loadClientRecords(t) {
		if rec.Body == "" || !strings.Contains(rec.Body, "chunk-signature=") {
			continue
		}
		res, err := Verify(rec.request(), clientLookup, rec.now(t))
		if err != nil {
			t.Fatalf("%s: %v", rec.Name, err)
		}
		if res.PayloadHash != StreamingPayload {
			t.Fatalf("%s: payload hash %q", rec.Name, res.PayloadHash)
		}
		checkChunks(t, rec.Name, rec.Body, res)
		n++
	}
	if n == 0 {
		t.Fatal("no chunked bodies in testdata")
	}
}

// checkChunks walks "size;chunk-signature=sig\r\ndata\r\n" chunks.
func checkChunks(t *testing.T, name, body string, res Result) {
	t.Helper()
	prev := res.SeedSignature
	for {
		header, rest, ok := strings.Cut(body, "\r\n")
		if !ok {
			t.Fatalf("%s: truncated chunk header", name)
		}
		sizeHex, sigPart, _ := strings.Cut(header, ";chunk-signature=")
		var size int
		for _, c := range sizeHex {
			size = size*16 + strings.IndexRune("0123456789abcdef", c)
		}
		data := rest[:size]
		want := SignChunkV4(res.SigningKey, res.AmzDate, res.Scope, prev, sha256Hex(data))
		if want != sigPart {
			t.Fatalf("%s: chunk signature %s, computed %s", name, sigPart, want)
		}
		prev = sigPart
		body = strings.TrimPrefix(rest[size:], "\r\n")
		if size == 0 {
			return
		}
	}
}
