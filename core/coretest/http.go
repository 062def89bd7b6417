package coretest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Hdr is a list of request headers: name, value, name, value... A "Host" entry sets the
// request's Host.
type Hdr []string

// Response is a completed response with its whole body.
type Response struct {
	*http.Response
	Body []byte
}

// String shows the request line, the status, the headers and up to 2000 bytes of body,
// for failure messages.
func (r *Response) String() string {
	if r == nil || r.Response == nil {
		return "<no response>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s\n", r.Request.Method, r.Request.URL.RequestURI(), r.Status)
	_ = r.Header.Write(&b)
	b.WriteString("\n")
	body := string(r.Body)
	if len(body) > 2000 {
		body = body[:2000] + "…"
	}
	b.WriteString(body)
	return b.String()
}

// client does not ask for gzip, so responses are seen as the server framed them, and
// does not follow redirects.
var client = &http.Client{
	Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
	Timeout:   30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// Do sends a request to the KV interface and reads the whole response (see Send).
func (s *Server) Do(t testing.TB, method, path string, h Hdr, body string) *Response {
	t.Helper()
	r, err := Send(t, client, NewRequest(t, method, s.URL+path, h, body))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewRequest builds a request with headers h and body ("" for none).
func NewRequest(t testing.TB, method, url string, h Hdr, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		if strings.EqualFold(h[i], "Host") {
			req.Host = h[i+1]
			continue
		}
		req.Header.Add(h[i], h[i+1])
	}
	return req
}

// Send sends req with c and reads the whole response. Every response is checked for the
// interfaces' framing rule (see CheckFraming). It reports transport errors instead of
// failing the test, so it may be called from other goroutines than the test's.
func Send(t testing.TB, c *http.Client, req *http.Request) (*Response, error) {
	r, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading body: %w", req.Method, req.URL, err)
	}
	out := &Response{Response: r, Body: b}
	CheckFraming(t, out)
	return out, nil
}

// CheckFraming reports (t.Errorf) a response that breaks the framing rule of a
// non-streamed response: Content-Length, no Transfer-Encoding, no body on 204 and 304.
func CheckFraming(t testing.TB, r *Response) {
	t.Helper()
	if len(r.TransferEncoding) > 0 {
		t.Errorf("%s %s: Transfer-Encoding %v on a non-streamed response", r.Request.Method, r.Request.URL.Path, r.TransferEncoding)
	}
	switch r.StatusCode {
	case http.StatusNoContent, http.StatusNotModified:
		if len(r.Body) != 0 {
			t.Errorf("%s %s: %d with a body %q", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
		}
		return
	}
	if r.Header.Get("Content-Length") == "" {
		t.Errorf("%s %s: %d without Content-Length", r.Request.Method, r.Request.URL.Path, r.StatusCode)
	}
}

// MustPut stores body with Content-Type text/plain (unless h sets one) and requires a 2xx.
func (s *Server) MustPut(t testing.TB, path, body string, h ...string) *Response {
	t.Helper()
	if !HasHeader(h, "Content-Type") {
		h = append(h, "Content-Type", "text/plain")
	}
	r := s.Do(t, http.MethodPut, path, h, body)
	if r.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: want 2xx, got\n%s", path, r)
	}
	return r
}

// HasHeader says whether h names the header name (in any case).
func HasHeader(h []string, name string) bool {
	for i := 0; i+1 < len(h); i += 2 {
		if strings.EqualFold(h[i], name) {
			return true
		}
	}
	return false
}

// SetProps sets bucket properties (the /buckets/B/props form) and requires 204.
func (s *Server) SetProps(t testing.TB, bucket, propsJSON string) {
	t.Helper()
	r := s.Do(t, http.MethodPut, "/buckets/"+bucket+"/props", Hdr{"Content-Type", "application/json"}, `{"props":`+propsJSON+`}`)
	if r.StatusCode != http.StatusNoContent {
		t.Fatalf("set props of %s: %s", bucket, r)
	}
}

// Dial opens a connection to addr (host:port), closed at the end of the test.
func Dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// WaitFor polls cond every 20 ms until it is true, failing the test after 10 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RawExchange sends request bytes as they are on a new connection to addr (host:port)
// and returns the response bytes as the server wrote them (the request should say
// Connection: close).
func RawExchange(t testing.TB, addr, request string) string {
	t.Helper()
	c := Dial(t, addr)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatalf("writing request: %v", err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return string(b)
}
