package main

// Helpers of the object-storage (S3) end-to-end tests: users made through the admin API,
// raw requests signed with V2 or V4 (or not at all) in host or path style, error-body
// checks, and minio-go clients.
//
// The signers here are written from the specification (../shared/spec/s3-details.md §2)
// independently of the server's core/s3api/sig, so that a mistake shared by both sides
// cannot hide; minio-go checks the same paths with a third implementation.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3DataHost is the server's default data host: {bucket}.s3.localhost is host style.
const s3DataHost = "s3.localhost"

// s3NS is the namespace of S3 result documents.
const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// Group URIs of ACL grants.
const (
	s3AllUsers    = "http://acs.amazonaws.com/groups/global/AllUsers"
	s3AuthUsers   = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	s3LogDelivery = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

// s3Cred is an access key pair.
type s3Cred struct{ KeyID, Secret string }

// s3User is a user record as the admin API answers it.
type s3User struct {
	Email       string `json:"email"`
	DisplayName string `json:"display_name"`
	Name        string `json:"name"`
	KeyID       string `json:"key_id"`
	KeySecret   string `json:"key_secret"`
	ID          string `json:"id"`
	Status      string `json:"status"`
}

func (u s3User) cred() s3Cred { return s3Cred{u.KeyID, u.KeySecret} }

// startS3Server starts a server with `--dialect riak` (what real S3 clients need) and args.
func startS3Server(t testing.TB, args ...string) *child {
	t.Helper()
	s := startServer(t, append([]string{"--dialect", "riak"}, args...)...)
	if s.S3Addr == "" {
		t.Fatalf("the server did not announce the object-storage interface\n%s", s.output())
	}
	return s
}

// startS3Process is startS3Server with the real binary as a child process.
func startS3Process(t testing.TB, args ...string) *child {
	t.Helper()
	s := startServerOpts(t, serverOpts{process: true, args: append([]string{"--dialect", "riak"}, args...)})
	if s.S3Addr == "" {
		t.Fatalf("the server did not announce the object-storage interface\n%s", s.output())
	}
	return s
}

// s3Port is the port of the S3 listener.
func s3PortOf(s *child) string {
	_, p, err := net.SplitHostPort(s.S3Addr)
	if err != nil {
		s.t.Fatalf("S3 address %q: %v", s.S3Addr, err)
	}
	return p
}

// s3AdminCred reads the admin key pair from the data directory.
func s3AdminCred(t testing.TB, s *child) s3Cred {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.DataDir, "admin-credentials.json"))
	if err != nil {
		t.Fatalf("admin credentials: %v", err)
	}
	var c struct {
		KeyID     string `json:"key_id"`
		KeySecret string `json:"key_secret"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.KeyID == "" || c.KeySecret == "" {
		t.Fatalf("admin credentials %q: %v", b, err)
	}
	return s3Cred{c.KeyID, c.KeySecret}
}

// s3CreateUser creates a user through POST /riak-cs/user signed by the admin and
// requires 201.
func s3CreateUser(t testing.TB, s *child, email, name string) s3User {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "name": name})
	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V2}
	r := admin.do(t, http.MethodPost, "riak-cs", "user", "", hdr{"Content-Type", "application/json"}, string(body))
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("creating user %s: want 201, got\n%s", email, r)
	}
	var u s3User
	if err := json.Unmarshal(r.Body, &u); err != nil {
		t.Fatalf("creating user %s: %v in %q", email, err, r.Body)
	}
	if u.KeyID == "" || u.KeySecret == "" || u.ID == "" {
		t.Fatalf("creating user %s: incomplete record %q", email, r.Body)
	}
	return u
}

// ---------------------------------------------------------------------------------------
// Raw requests

// s3SigVer is how a raw request is authenticated.
type s3SigVer int

const (
	s3Anon s3SigVer = iota // anonymous
	s3V2                   // Authorization: AWS key:signature
	s3V4                   // Authorization: AWS4-HMAC-SHA256 …
)

func (v s3SigVer) String() string { return [...]string{"anon", "v2", "v4"}[v] }

// s3Req is one raw request. The zero values give a path-style request signed with V2 at
// the current time over the bucket and key given.
type s3Req struct {
	method string
	// bucket is the bucket ("" for the service); key the object key, unescaped ("" for
	// the bucket); both make the path unless rawPath is set.
	bucket, key string
	// rawPath is the path exactly as sent (escaped), overriding bucket and key in the
	// path; bucket still names the host in host style and the V2 resource.
	rawPath string
	// query is the raw query string (without "?").
	query string
	h     hdr
	body  string
	// bodyReader, when set, is a body of unknown length (sent chunked).
	bodyReader io.Reader
	// host selects host-style addressing ({bucket}.s3.localhost:port).
	host bool
	// hostHeader overrides the Host header.
	hostHeader string
	sign       s3SigVer
	cred       s3Cred
	// v2Res overrides the V2 canonicalized resource.
	v2Res string
	// payloadHash overrides the V4 x-amz-content-sha256 value (default: the body's).
	payloadHash string
	// noDate sends no Date header with V2.
	noDate bool
	// at is the signing time (zero: now).
	at time.Time
	// region is the V4 region (default us-east-1).
	region string
	// chunked, with V4, sends the body aws-chunked (body is then ignored).
	chunked *s3Chunked
	// te sends the body with "Transfer-Encoding: chunked", a header V4 then signs (as
	// SDKs streaming a body of unknown length do).
	te bool
}

// s3c is a requester: a server, a credential and how to sign and address.
type s3c struct {
	s    *child
	cred s3Cred // zero with s3Anon
	sign s3SigVer
	host bool
}

// as returns a requester for user u with the same server and style.
func (c s3c) as(cred s3Cred) s3c { c.cred = cred; return c }

// anon is the anonymous requester in the same style.
func (c s3c) anon() s3c { c.cred, c.sign = s3Cred{}, s3Anon; return c }

// req builds a raw request in c's style.
func (c s3c) req(method, bucket, key, query string, h hdr, body string) s3Req {
	return s3Req{method: method, bucket: bucket, key: key, query: query, h: h, body: body, host: c.host, sign: c.sign, cred: c.cred}
}

// do sends a request in c's style.
func (c s3c) do(t testing.TB, method, bucket, key, query string, h hdr, body string) *resp {
	t.Helper()
	return s3Do(t, c.s, c.req(method, bucket, key, query, h, body))
}

// must sends a request and requires the status.
func (c s3c) must(t testing.TB, status int, method, bucket, key, query string, h hdr, body string) *resp {
	t.Helper()
	r := c.do(t, method, bucket, key, query, h, body)
	if r.StatusCode != status {
		t.Fatalf("%s %s/%s?%s as %s: want %d, got\n%s", method, bucket, key, query, c.name(), status, r)
	}
	return r
}

func (c s3c) name() string {
	if c.sign == s3Anon {
		return "anonymous"
	}
	return c.sign.String() + ":" + c.cred.KeyID
}

// mkBucket creates a bucket (headers h, e.g. x-amz-acl) and requires 200.
func (c s3c) mkBucket(t testing.TB, bucket string, h ...string) {
	t.Helper()
	c.must(t, http.StatusOK, http.MethodPut, bucket, "", "", h, "")
}

// put stores an object and requires 200 with an empty body and the quoted MD5 as ETag.
func (c s3c) put(t testing.TB, bucket, key, body string, h ...string) *resp {
	t.Helper()
	r := c.must(t, http.StatusOK, http.MethodPut, bucket, key, "", h, body)
	if len(r.Body) != 0 || r.Header.Get("Content-Length") != "0" || r.Header.Get("ETag") != `"`+s3MD5Hex([]byte(body))+`"` {
		t.Errorf("PUT %s/%s: want an empty 200 with ETag \"%s\", got\n%s", bucket, key, s3MD5Hex([]byte(body)), r)
	}
	return r
}

// s3Escape percent-encodes s strictly (RFC 3986 unreserved characters kept), keeping
// '/' when keepSlash is set: the encoding of S3 paths and V4 canonical queries.
func s3Escape(s string, keepSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// path returns the request path as sent.
func (q *s3Req) path() string {
	switch {
	case q.rawPath != "":
		return q.rawPath
	case q.host:
		return "/" + s3Escape(q.key, true)
	case q.bucket == "":
		return "/"
	case q.key == "":
		return "/" + q.bucket + "/"
	default:
		return "/" + q.bucket + "/" + s3Escape(q.key, true)
	}
}

// hostValue is the Host header of the request.
func (q *s3Req) hostValue(s *child) string {
	switch {
	case q.hostHeader != "":
		return q.hostHeader
	case q.host && q.bucket != "":
		return q.bucket + "." + s3DataHost + ":" + s3PortOf(s)
	default:
		return s3DataHost + ":" + s3PortOf(s)
	}
}

// s3HTTPClient sends raw requests: no compression, no redirects, no connection reuse
// across tests' servers concerns (the address is in every URL).
var s3HTTPClient = &http.Client{
	Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
	Timeout:   60 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// s3Build builds the *http.Request of q, signed.
func s3Build(t testing.TB, s *child, q s3Req) *http.Request {
	t.Helper()
	var body io.Reader
	if q.bodyReader != nil {
		body = q.bodyReader
	} else if q.body != "" {
		body = strings.NewReader(q.body)
	}
	req, err := http.NewRequest(q.method, s.S3URL+"/", body)
	if err != nil {
		t.Fatalf("%s %s: %v", q.method, q.path(), err)
	}
	if q.bodyReader != nil {
		req.ContentLength = -1
	}
	req.URL.RawQuery = q.query
	req.Host = q.hostValue(s)
	req.URL.Opaque = q.path() // sent verbatim
	if strings.HasPrefix(q.path(), "//") {
		// An origin-form target cannot start with "//" in Go's client: send the
		// absolute form, whose path is the same.
		req.URL.Opaque = "//" + req.Host + q.path()
	}
	for i := 0; i+1 < len(q.h); i += 2 {
		if strings.EqualFold(q.h[i], "Host") {
			req.Host = q.h[i+1]
			continue
		}
		req.Header.Add(q.h[i], q.h[i+1])
	}
	at := q.at
	if at.IsZero() {
		at = time.Now()
	}
	hostBucket := ""
	if q.host {
		hostBucket = q.bucket
	}
	switch q.sign {
	case s3V2:
		_, hasDate := req.Header["Date"]
		_, hasAmzDate := req.Header["X-Amz-Date"]
		if !q.noDate && !hasDate && !hasAmzDate {
			req.Header.Set("Date", at.UTC().Format(http.TimeFormat))
		}
		res := q.v2Res
		if res == "" {
			res = s3V2Resource(q.path(), q.query, hostBucket)
		}
		sts := s3V2StringToSign(q.method, req.Header, req.Header.Get("Date"), res)
		req.Header.Set("Authorization", "AWS "+q.cred.KeyID+":"+s3V2Sign(q.cred.Secret, sts))
	case s3V4:
		ph := q.payloadHash
		if ph == "" {
			if q.bodyReader != nil {
				ph = "UNSIGNED-PAYLOAD"
			} else {
				ph = s3SHA256Hex([]byte(q.body))
			}
		}
		region := q.region
		if region == "" {
			region = "us-east-1"
		}
		if q.chunked != nil {
			ph = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
			n := q.chunked.decodedLength
			if n == 0 {
				for _, c := range q.chunked.chunks {
					n += int64(len(c))
				}
			}
			req.Header.Set("Content-Encoding", "aws-chunked")
			req.Header.Set("X-Amz-Decoded-Content-Length", strconv.FormatInt(n, 10))
		}
		if q.te {
			req.Header.Set("Transfer-Encoding", "chunked") // signed; Go's client writes its own
		}
		v := s3SignV4(req, q.path(), q.cred, region, ph, at)
		if q.chunked != nil {
			body := q.chunked.encode(v)
			req.Body = io.NopCloser(strings.NewReader(body))
			req.ContentLength = int64(len(body))
			req.GetBody = nil
		}
		if q.te {
			req.ContentLength = -1
		}
	}
	return req
}

// s3Do sends a raw request and reads the whole response. Every response is checked for
// framing: no chunked encoding, Content-Length present (HEAD, 204 and 304 excepted).
func s3Do(t testing.TB, s *child, q s3Req) *resp {
	t.Helper()
	r, err := s3TryDo(t, s, q)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.output())
	}
	return r
}

// s3TryDo is s3Do without failing the test on transport errors.
func s3TryDo(t testing.TB, s *child, q s3Req) (*resp, error) {
	t.Helper()
	req := s3Build(t, s, q)
	hr, err := s.client(s3HTTPClient).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", q.method, q.path(), err)
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading body: %w", q.method, q.path(), err)
	}
	r := &resp{Response: hr, Body: b}
	if len(hr.TransferEncoding) > 0 {
		t.Errorf("%s %s: Transfer-Encoding %v", q.method, q.path(), hr.TransferEncoding)
	}
	if q.method != http.MethodHead && hr.StatusCode != http.StatusNoContent && hr.StatusCode != http.StatusNotModified &&
		hr.Header.Get("Content-Length") == "" {
		t.Errorf("%s %s: %d without Content-Length", q.method, q.path(), hr.StatusCode)
	}
	return r, nil
}

// ---------------------------------------------------------------------------------------
// Signature V2

// s3V2SubResources are the query parameters the V2 canonicalized resource includes.
var s3V2SubResources = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`acl lifecycle location logging notification partNumber policy
		requestPayment torrent uploadId uploads versionId versioning versions website delete cors restore
		tagging response-content-type response-content-language response-expires response-cache-control
		response-content-disposition response-content-encoding`) {
		s3V2SubResources[n] = true
	}
}

// s3V2Resource is the canonicalized resource of a request: "/bucket" + path in host
// style, the path in path style, then the sub-resources (decoded values, sorted).
func s3V2Resource(path, rawQuery, hostBucket string) string {
	res := path
	if hostBucket != "" {
		res = "/" + hostBucket + path
	}
	q, _ := url.ParseQuery(rawQuery)
	var subs []string
	for name, vs := range q {
		if !s3V2SubResources[name] {
			continue
		}
		for _, v := range vs {
			if v == "" {
				subs = append(subs, name)
			} else {
				subs = append(subs, name+"="+v)
			}
		}
	}
	sort.Strings(subs)
	if len(subs) > 0 {
		res += "?" + strings.Join(subs, "&")
	}
	return res
}

// s3V2StringToSign builds the V2 string to sign; date is the Date position (the Date
// header, "" when x-amz-date is sent, or Expires for presigned URLs).
func s3V2StringToSign(method string, h http.Header, date, resource string) string {
	if h.Get("X-Amz-Date") != "" {
		date = ""
	}
	var amz []string
	for name, vs := range h {
		l := strings.ToLower(name)
		if !strings.HasPrefix(l, "x-amz-") {
			continue
		}
		vals := make([]string, len(vs))
		for i, v := range vs {
			vals[i] = strings.TrimSpace(v)
		}
		amz = append(amz, l+":"+strings.Join(vals, ","))
	}
	// By header name: sorting whole lines would put x-amz-copy-source-range before
	// x-amz-copy-source (':' sorts after '-').
	sort.Slice(amz, func(i, j int) bool {
		ni, _, _ := strings.Cut(amz[i], ":")
		nj, _, _ := strings.Cut(amz[j], ":")
		return ni < nj
	})
	var b strings.Builder
	b.WriteString(method + "\n" + h.Get("Content-Md5") + "\n" + h.Get("Content-Type") + "\n" + date + "\n")
	for _, a := range amz {
		b.WriteString(a + "\n")
	}
	b.WriteString(resource)
	return b.String()
}

// s3V2Sign is base64(HMAC-SHA1(secret, stringToSign)).
func s3V2Sign(secret, sts string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// s3V2Presign returns the query string of a presigned V2 URL (AWSAccessKeyId, Expires,
// Signature) for a GET of resource expiring at exp.
func s3V2Presign(cred s3Cred, method, resource string, exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	sig := s3V2Sign(cred.Secret, s3V2StringToSign(method, http.Header{}, e, resource))
	return "AWSAccessKeyId=" + url.QueryEscape(cred.KeyID) + "&Expires=" + e + "&Signature=" + url.QueryEscape(sig)
}

// ---------------------------------------------------------------------------------------
// Signature V4

func s3SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func s3HMAC(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// s3SignV4 signs req (header form) with the payload hash ph. rawPath is the path as sent
// (already strictly encoded). Signed headers: host, content-type, content-md5, expect
// and transfer-encoding when present, and every x-amz-* header.
func s3SignV4(req *http.Request, rawPath string, cred s3Cred, region, ph string, at time.Time) s3V4Signing {
	amzDate := at.UTC().Format("20060102T150405Z")
	day := amzDate[:8]
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", ph)
	hdrs := map[string]string{"host": req.Host}
	for name, vs := range req.Header {
		l := strings.ToLower(name)
		if strings.HasPrefix(l, "x-amz-") || l == "content-type" || l == "content-md5" || l == "expect" || l == "transfer-encoding" {
			vals := make([]string, len(vs))
			for i, v := range vs {
				vals[i] = strings.Join(strings.Fields(v), " ")
			}
			hdrs[l] = strings.Join(vals, ",")
		}
	}
	names := make([]string, 0, len(hdrs))
	for n := range hdrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var ch strings.Builder
	for _, n := range names {
		ch.WriteString(n + ":" + hdrs[n] + "\n")
	}
	signed := strings.Join(names, ";")
	cr := req.Method + "\n" + rawPath + "\n" + s3V4Query(req.URL.RawQuery) + "\n" + ch.String() + "\n" + signed + "\n" + ph
	scope := day + "/" + region + "/s3/aws4_request"
	sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + s3SHA256Hex([]byte(cr))
	key := s3HMAC([]byte("AWS4"+cred.Secret), day)
	key = s3HMAC(key, region)
	key = s3HMAC(key, "s3")
	key = s3HMAC(key, "aws4_request")
	sig := hex.EncodeToString(s3HMAC(key, sts))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+cred.KeyID+"/"+scope+", SignedHeaders="+signed+", Signature="+sig)
	return s3V4Signing{seed: sig, key: key, amzDate: amzDate, scope: scope}
}

// s3V4Signing is what chunk signatures of an aws-chunked body chain from.
type s3V4Signing struct {
	seed    string // the Authorization header's signature
	key     []byte // the signing key
	amzDate string
	scope   string
}

// chunkSig is the signature of one aws-chunked chunk following prev.
func (v s3V4Signing) chunkSig(prev, data string) string {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + v.amzDate + "\n" + v.scope + "\n" + prev + "\n" + s3SHA256Hex(nil) + "\n" +
		s3SHA256Hex([]byte(data))
	return hex.EncodeToString(s3HMAC(v.key, sts))
}

// s3Chunked describes an aws-chunked body (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) of a V4
// request; the final empty chunk is added.
type s3Chunked struct {
	chunks []string
	// decodedLength is sent as x-amz-decoded-content-length (0: the real total).
	decodedLength int64
	// tamper, when set, replaces chunk i's data after it was signed.
	tamper map[int]string
	// badSig names a chunk (len(chunks) for the final one) whose signature is forged;
	// -1 for none.
	badSig int
	// noFinal leaves out the final zero-size chunk.
	noFinal bool
}

// encode renders the body, signing each chunk.
func (c *s3Chunked) encode(v s3V4Signing) string {
	var b strings.Builder
	prev := v.seed
	all := c.chunks
	if !c.noFinal {
		all = append(slices.Clone(c.chunks), "")
	}
	for i, data := range all {
		sig := v.chunkSig(prev, data)
		prev = sig
		if i == c.badSig {
			sig = strings.Repeat("0", 64)
		}
		if t, ok := c.tamper[i]; ok {
			data = t
		}
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", len(data), sig, data)
	}
	return b.String()
}

// s3V4Query is the canonical query string: every parameter strictly encoded, sorted by
// name then value.
func s3V4Query(raw string) string {
	q, _ := url.ParseQuery(raw)
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, s3Escape(k, false)+"="+s3Escape(v, false))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// ---------------------------------------------------------------------------------------
// Responses

// s3Error is an S3 error body.
type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource"`
	RequestID string   `xml:"RequestId"`
	HostID    string   `xml:"HostId"`
}

// s3RequestID is the request id header in either dialect.
func s3RequestID(r *resp) string {
	if v := r.Header.Get("X-Amz-Request-Id"); v != "" {
		return v
	}
	return r.Header.Get("X-Obj-Request-Id")
}

// s3HostID is the id-2 header in either dialect.
func s3HostID(r *resp) string {
	if v := r.Header.Get("X-Amz-Id-2"); v != "" {
		return v
	}
	return r.Header.Get("X-Obj-Id-2")
}

// expectS3Error checks an error response: the status and, except for HEAD, an
// application/xml body with the code, a message, a resource and the request id of the
// header. It returns the parsed body.
func expectS3Error(t testing.TB, r *resp, status int, code string) s3Error {
	t.Helper()
	e, ok := s3CheckError(t, r, status)
	if ok && r.Request.Method != http.MethodHead && e.Code != code {
		t.Errorf("error code %q, want %q:\n%s", e.Code, code, r)
	}
	return e
}

// s3CheckError checks an error response as expectS3Error does, except for the code.
// ok is false when the status was wrong or the body unreadable (already reported).
func s3CheckError(t testing.TB, r *resp, status int) (e s3Error, ok bool) {
	t.Helper()
	if r.StatusCode != status {
		t.Errorf("want status %d, got\n%s", status, r)
		return s3Error{}, false
	}
	if s3RequestID(r) == "" {
		t.Errorf("no request id header:\n%s", r)
	}
	if r.Request.Method == http.MethodHead {
		if len(r.Body) != 0 {
			t.Errorf("HEAD error with a body:\n%s", r)
		}
		return s3Error{}, true
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Errorf("error Content-Type %q, want application/xml:\n%s", ct, r)
	}
	if err := xml.Unmarshal(r.Body, &e); err != nil {
		t.Errorf("error body: %v\n%s", err, r)
		return e, false
	}
	if e.Message == "" || e.Resource == "" || e.RequestID == "" {
		t.Errorf("error body lacks Message, Resource or RequestId:\n%s", r)
	}
	if e.RequestID != s3RequestID(r) {
		t.Errorf("RequestId %q differs from the header's %q", e.RequestID, s3RequestID(r))
	}
	if id2 := s3HostID(r); e.HostID != id2 || id2 == "" {
		t.Errorf("HostId %q differs from the id-2 header's %q", e.HostID, id2)
	}
	for _, el := range []string{"<Code>", "<Message>", "<Resource>", "<RequestId>", "<HostId>"} {
		if !bytes.Contains(r.Body, []byte(el)) {
			t.Errorf("error body lacks %s:\n%s", el, r)
		}
	}
	return e, true
}

// s3ListResult is a ListBucketResult (version 1 or 2).
type s3ListResult struct {
	Name                  string `xml:"Name"`
	Prefix                string `xml:"Prefix"`
	Marker                string `xml:"Marker"`
	NextMarker            string `xml:"NextMarker"`
	MaxKeys               int    `xml:"MaxKeys"`
	KeyCount              int    `xml:"KeyCount"`
	Delimiter             string `xml:"Delimiter"`
	EncodingType          string `xml:"EncodingType"`
	IsTruncated           bool   `xml:"IsTruncated"`
	ContinuationToken     string `xml:"ContinuationToken"`
	NextContinuationToken string `xml:"NextContinuationToken"`
	Contents              []struct {
		Key  string `xml:"Key"`
		ETag string `xml:"ETag"`
		Size int64  `xml:"Size"`
	} `xml:"Contents"`
	CommonPrefixes []struct {
		Prefix string `xml:"Prefix"`
	} `xml:"CommonPrefixes"`
}

func (l *s3ListResult) keys() []string {
	var ks []string
	for _, c := range l.Contents {
		ks = append(ks, c.Key)
	}
	return ks
}

func (l *s3ListResult) prefixes() []string {
	var ps []string
	for _, c := range l.CommonPrefixes {
		ps = append(ps, c.Prefix)
	}
	return ps
}

func s3ParseList(t testing.TB, r *resp) *s3ListResult {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("listing: want 200, got\n%s", r)
	}
	l := new(s3ListResult)
	if err := xml.Unmarshal(r.Body, l); err != nil {
		t.Fatalf("listing: %v\n%s", err, r)
	}
	return l
}

// s3ACLDoc is an AccessControlPolicy as GET ?acl answers it.
type s3ACLDoc struct {
	Owner struct {
		ID          string `xml:"ID"`
		DisplayName string `xml:"DisplayName"`
	} `xml:"Owner"`
	Grants []s3ACLGrant `xml:"AccessControlList>Grant"`
}

type s3ACLGrant struct {
	Grantee struct {
		Type        string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
		ID          string `xml:"ID"`
		DisplayName string `xml:"DisplayName"`
		URI         string `xml:"URI"`
		Email       string `xml:"EmailAddress"`
	} `xml:"Grantee"`
	Permission string `xml:"Permission"`
}

// String renders a grant compactly: "user:ID:NAME=PERM" or "group:URI=PERM".
func (g s3ACLGrant) String() string {
	if g.Grantee.Type == "Group" {
		return "group:" + g.Grantee.URI + "=" + g.Permission
	}
	return strings.ToLower(g.Grantee.Type) + ":" + g.Grantee.ID + ":" + g.Grantee.DisplayName + "=" + g.Permission
}

func s3ParseACL(t testing.TB, r *resp) *s3ACLDoc {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET ?acl: want 200, got\n%s", r)
	}
	d := new(s3ACLDoc)
	if err := xml.Unmarshal(r.Body, d); err != nil {
		t.Fatalf("GET ?acl: %v\n%s", err, r)
	}
	return d
}

func (d *s3ACLDoc) grants() []string {
	var gs []string
	for _, g := range d.Grants {
		gs = append(gs, g.String())
	}
	return gs
}

// s3UserGrant and s3GroupGrant render expected grants like s3ACLGrant.String.
func s3UserGrant(u s3User, perm string) string {
	return "canonicaluser:" + u.ID + ":" + u.DisplayName + "=" + perm
}

func s3GroupGrant(uri, perm string) string { return "group:" + uri + "=" + perm }

// s3CompactXML removes the white space between tags, so documents compare by content.
func s3CompactXML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '>' {
			b.WriteByte('>')
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && s[j] == '<' {
				i = j - 1
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func s3MD5Hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func s3MD5B64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// s3SameStrings compares two string lists (nil equals empty).
func s3SameStrings(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b))
}

// ---------------------------------------------------------------------------------------
// Raw connections

// s3Conn is a raw TCP connection to the S3 listener.
type s3Conn struct {
	net.Conn
	br *bufio.Reader
}

func s3Dial(t testing.TB, s *child) *s3Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.S3Addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", s.S3Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &s3Conn{Conn: c, br: bufio.NewReader(c)}
}

// readResponse reads one response (for method) off the connection, body included.
func (c *s3Conn) readResponse(t testing.TB, method string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("reading response body: %v", err)
	}
	return r, b
}

// s3V2AuthHeader returns the Authorization value of a V2-signed request.
func s3V2AuthHeader(cred s3Cred, method string, h http.Header, resource string) string {
	return "AWS " + cred.KeyID + ":" + s3V2Sign(cred.Secret, s3V2StringToSign(method, h, h.Get("Date"), resource))
}

// s3RawRequest renders a request head: the request line with target, then the headers
// (in order) and, when sign is set, Date and a V2 Authorization over resource.
func s3RawRequest(method, target string, cred *s3Cred, resource string, h hdr) string {
	hh := http.Header{}
	for i := 0; i+1 < len(h); i += 2 {
		hh.Add(h[i], h[i+1])
	}
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\n")
	for i := 0; i+1 < len(h); i += 2 {
		b.WriteString(h[i] + ": " + h[i+1] + "\r\n")
	}
	if cred != nil {
		date := time.Now().UTC().Format(http.TimeFormat)
		hh.Set("Date", date)
		b.WriteString("Date: " + date + "\r\n")
		b.WriteString("Authorization: " + s3V2AuthHeader(*cred, method, hh, resource) + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// ---------------------------------------------------------------------------------------
// minio-go

// minioCombo is one way minio-go talks to the server.
type minioCombo struct {
	name string
	v4   bool
	host bool
}

var minioCombos = []minioCombo{{"v2-path", false, false}, {"v2-host", false, true}, {"v4-path", true, false}, {"v4-host", true, true}}

// newMinio returns a minio-go client for the server: the endpoint is
// s3.localhost:PORT and the transport dials the server whatever the host name, so host
// style needs no DNS.
func newMinio(t testing.TB, s *child, cred s3Cred, combo minioCombo) *minio.Client {
	t.Helper()
	tr := s3Transport(s)
	t.Cleanup(tr.CloseIdleConnections)
	creds := credentials.NewStaticV2(cred.KeyID, cred.Secret, "")
	if combo.v4 {
		creds = credentials.NewStaticV4(cred.KeyID, cred.Secret, "")
	}
	lookup := minio.BucketLookupPath
	if combo.host {
		lookup = minio.BucketLookupDNS
	}
	c, err := minio.New(s3DataHost+":"+s3PortOf(s), &minio.Options{
		Creds:        creds,
		Secure:       false,
		BucketLookup: lookup,
		Region:       "us-east-1",
		Transport:    tr,
		MaxRetries:   1,
	})
	if err != nil {
		t.Fatalf("minio.New: %v", err)
	}
	return c
}

// minioCode is the S3 error code of a minio-go error ("" for nil).
func minioCode(err error) string {
	if err == nil {
		return ""
	}
	return minio.ToErrorResponse(err).Code
}

// s3Transport is an HTTP transport that dials the server whatever the host name, so
// host-style names (and presigned URLs holding them) need no DNS.
func s3Transport(s *child) *http.Transport {
	addr := s.S3Addr
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", addr)
		},
		DisableCompression: true,
	}
}
