package main

// End-to-end tests of headers net/http handles before any handler: an Expect other than
// 100-continue (AWS ignores it; net/http answered 417) and a signed Transfer-Encoding
// (net/http moves it out of the header map the signature is checked against).

import (
	"bufio"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/coretest"
)

// TestS3UnknownExpect: a request with "Expect: foo" is served as AWS serves it (no 417),
// with a V4 signature covering the header as sent and with V2; on a raw kept-alive
// connection, after an upload whose body holds bytes that look like an Expect header
// (stored unchanged), a GET with an unknown expectation is served.
func TestS3UnknownExpect(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "expect@example.com", "Expect")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "expect")
	for _, sign := range []s3SigVer{s3V4, s3V2} {
		c := c
		c.sign = sign
		c.put(t, "expect", "k-"+sign.String(), "body "+sign.String(), "Expect", "foo")
		if r := c.must(t, http.StatusOK, http.MethodGet, "expect", "k-"+sign.String(), "", hdr{"Expect", "bar, baz"}, ""); string(r.Body) != "body "+sign.String() {
			t.Errorf("%s: GET with Expect: %q", sign, r.Body)
		}
	}
	// Raw, one connection: a body that looks like a head, then an unknown expectation.
	conn := s3Dial(t, s)
	host := "127.0.0.1:" + s3PortOf(s)
	cred := u.cred()
	data := "line\r\nExpect: trap\r\n\r\nGET /expect/x HTTP/1.1\r\nExpect: trap\r\n\r\n"
	put := s3RawRequest(http.MethodPut, "/expect/raw", &cred, "/expect/raw",
		hdr{"Host", host, "Content-Length", strconv.Itoa(len(data)), "Content-Type", "text/plain", "Expect", "nothing"})
	if _, err := io.WriteString(conn, put+data); err != nil {
		t.Fatal(err)
	}
	if r, body := conn.readResponse(t, http.MethodPut); r.StatusCode != http.StatusOK { //nolint:bodyclose // read and closed
		t.Fatalf("raw PUT with Expect: nothing: %s %s", r.Status, body)
	}
	get := s3RawRequest(http.MethodGet, "/expect/raw", &cred, "/expect/raw", hdr{"Host", host, "Expect", "something-else"})
	if _, err := io.WriteString(conn, get); err != nil {
		t.Fatal(err)
	}
	if r, body := conn.readResponse(t, http.MethodGet); r.StatusCode != http.StatusOK || string(body) != data { //nolint:bodyclose // read and closed
		t.Errorf("raw GET on the kept-alive connection: %s %q", r.Status, body)
	}
}

// TestS3SignedTransferEncoding: an upload sent with "Transfer-Encoding: chunked" and
// a V4 signature covering transfer-encoding (aws-chunked inside, as SDKs stream a body
// of unknown length) verifies and stores the data.
func TestS3SignedTransferEncoding(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "tenc@example.com", "TE")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "tenc")
	chunks := []string{strings.Repeat("a", 64<<10), "tail"}
	r := s3Do(t, s, c.req(http.MethodPut, "tenc", "k", "", hdr{"Content-Type", "text/plain"}, "").with(func(q *s3Req) {
		q.chunked = &s3Chunked{chunks: chunks, badSig: -1}
		q.te = true
	}))
	if r.StatusCode != http.StatusOK || !strings.Contains(r.Request.Header.Get("Authorization"), "transfer-encoding") {
		t.Fatalf("PUT signed over transfer-encoding: %s\n(signed: %s)", r, r.Request.Header.Get("Authorization"))
	}
	if got := c.must(t, http.StatusOK, http.MethodGet, "tenc", "k", "", nil, ""); string(got.Body) != strings.Join(chunks, "") {
		t.Errorf("stored %d bytes", len(got.Body))
	}
}

// TestS3BusyRefusalIDs: a connection refused at the connection limits gets 503 SlowDown
// whose body's RequestId and HostId are the response's request-id and id-2 headers.
func TestS3BusyRefusalIDs(t *testing.T) {
	t.Parallel()
	s := startS3Server(t, "--max-connections-per-ip", "1", "--body-read-timeout", "30s")
	u := s3CreateUser(t, s, "busy@example.com", "Busy")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "busy")
	host := "127.0.0.1:" + s3PortOf(s)
	cred := u.cred()
	// One upload whose body stops after a byte keeps the address's only slot serving.
	slow := func() *s3Conn {
		conn := s3Dial(t, s)
		head := s3RawRequest(http.MethodPut, "/busy/slow", &cred, "/busy/slow",
			hdr{"Host", host, "Content-Length", "1000", "Content-Type", "text/plain"})
		if _, err := io.WriteString(conn, head+"x"); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	held := slow()
	defer held.Close()
	var refusal string
	waitFor(t, 10*time.Second, "a connection to be refused", func() bool {
		raw := coretest.RawExchange(t, s.S3Addr, "GET /busy HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		if strings.HasPrefix(raw, "HTTP/1.1 503 ") {
			refusal = raw
			return true
		}
		// The upload's head was not read yet, so it was displaced: start another.
		held.Close()
		held = slow()
		return false
	})
	hr, err := http.ReadResponse(bufio.NewReader(strings.NewReader(refusal)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	r := &resp{Response: hr, Body: body}
	hr.Request = &http.Request{Method: http.MethodGet}
	var e s3Error
	if err := xml.Unmarshal(body, &e); err != nil || e.Code != "SlowDown" || e.RequestID == "" ||
		e.RequestID != s3RequestID(r) || e.HostID != s3HostID(r) {
		t.Errorf("refusal: %v %+v\n%s", err, e, refusal)
	}
}
