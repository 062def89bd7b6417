package httpx

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readerConn is a connection whose reads come from r (other methods are not used).
type readerConn struct {
	net.Conn
	r io.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestExpectFilter: the filter renames, in request heads only, the Expect lines net/http
// would answer 417 to, follows Content-Length and chunked framing so body bytes are
// never changed (whatever they hold), and stands aside for good on framing it does not
// understand; the output is the same however the input is split into reads.
func TestExpectFilter(t *testing.T) {
	const trap = "\r\nExpect: foo\r\n\r\nGET / HTTP/1.1\r\nExpect: x\r\n\r\n" // body bytes that look like a head
	tests := []struct {
		name, in, want string
	}{
		{"unknown expectation", "GET / HTTP/1.1\r\nHost: h\r\nExpect: foo\r\n\r\n",
			"GET / HTTP/1.1\r\nHost: h\r\nX-Expt: foo\r\n\r\n"},
		{"lower case, empty value", "GET / HTTP/1.1\r\nexpect:\r\n\r\n", "GET / HTTP/1.1\r\nX-Expt:\r\n\r\n"},
		{"100-continue kept", "PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 0\r\n\r\n",
			"PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 0\r\n\r\n"},
		{"100-continue among others", "GET / HTTP/1.1\r\nExpect: foo, 100-continue\r\n\r\n",
			"GET / HTTP/1.1\r\nExpect: foo, 100-continue\r\n\r\n"},
		{"not a token", "GET / HTTP/1.1\r\nExpect: x100-continue\r\nX-Expect: foo\r\n\r\n",
			"GET / HTTP/1.1\r\nX-Expt: x100-continue\r\nX-Expect: foo\r\n\r\n"},
		{"content-length body untouched, next head filtered",
			"PUT /a HTTP/1.1\r\nContent-Length: " + itoa(len(trap)) + "\r\nExpect: a\r\n\r\n" + trap + "GET /b HTTP/1.1\r\nExpect: b\r\n\r\n",
			"PUT /a HTTP/1.1\r\nContent-Length: " + itoa(len(trap)) + "\r\nX-Expt: a\r\n\r\n" + trap + "GET /b HTTP/1.1\r\nX-Expt: b\r\n\r\n"},
		{"chunked body and trailer untouched, next head filtered",
			"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + hexLen(trap) + ";ext=1\r\n" + trap + "\r\n3\r\nabc\r\n0\r\nExpect: t\r\n\r\nGET /b HTTP/1.1\r\nExpect: b\r\n\r\n",
			"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + hexLen(trap) + ";ext=1\r\n" + trap + "\r\n3\r\nabc\r\n0\r\nExpect: t\r\n\r\nGET /b HTTP/1.1\r\nX-Expt: b\r\n\r\n"},
		{"HTTP/1.0 frames by Content-Length",
			"PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\nExpect: z\r\n\r\n",
			"PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\nX-Expt: z\r\n\r\n"},
		{"differing lengths: aside", "PUT / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcdGET / HTTP/1.1\r\nExpect: z\r\n\r\n",
			"PUT / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcdGET / HTTP/1.1\r\nExpect: z\r\n\r\n"},
		{"other coding: aside", "PUT / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nGET / HTTP/1.1\r\nExpect: z\r\n\r\n",
			"PUT / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nGET / HTTP/1.1\r\nExpect: z\r\n\r\n"},
		{"bad chunk end: aside", "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\nGET / HTTP/1.1\r\nExpect: z\r\n\r\n",
			"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\nGET / HTTP/1.1\r\nExpect: z\r\n\r\n"},
		{"other protocol: aside", "PRI * HTTP/2.0\r\n\r\nExpect: z\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nExpect: z\r\n\r\n"},
		{"folded line: aside", "GET / HTTP/1.1\r\nA: b\r\n c\r\nExpect: z\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n c\r\nExpect: z\r\n\r\n"},
		{"over-long line: aside", "GET / HTTP/1.1\r\nA: " + strings.Repeat("x", maxHeldLine) + "\r\nExpect: z\r\n\r\n",
			"GET / HTTP/1.1\r\nA: " + strings.Repeat("x", maxHeldLine) + "\r\nExpect: z\r\n\r\n"},
		{"head cut short", "GET / HTTP/1.1\r\nExpect: fo", "GET / HTTP/1.1\r\nExpect: fo"},
	}
	splits := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	}
	for _, tt := range tests {
		for name, split := range splits {
			for _, readSize := range []int{1, 7, 4096} {
				t.Run(tt.name+"/"+name+"/"+itoa(readSize), func(t *testing.T) {
					f := newExpectFilter(readerConn{r: split(strings.NewReader(tt.in))})
					var got []byte
					buf := make([]byte, readSize)
					for {
						n, err := f.Read(buf)
						got = append(got, buf[:n]...)
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
					}
					if string(got) != tt.want {
						t.Errorf("got\n%.300q\nwant\n%.300q", got, tt.want)
					}
				})
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func hexLen(s string) string { return strconv.FormatInt(int64(len(s)), 16) }

// TestExpectFilterServer: through a ConnLimiter with IgnoreUnknownExpect, net/http
// serves a request with "Expect: foo" (it answered 417 before any handler) on a
// kept-alive connection after a request with a body, and RestoreExpect gives the
// handler the header as sent; 100-continue still works.
func TestExpectFilterServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := LimitListener(ln, ConnLimits{IgnoreUnknownExpect: true})
	srv := &http.Server{ConnState: lim.ConnState, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		RestoreExpect(r)
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, strings.Join(r.Header["Expect"], "|")+" "+string(b))
	})}
	go srv.Serve(lim)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range []struct{ req, want string }{
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n\r\nExpect: bar\n", " Expect: bar\n"},
		{"GET / HTTP/1.1\r\nHost: h\r\nExpect: foo\r\n\r\n", "foo "},
		{"PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok", "100-continue ok"},
	} {
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusContinue {
			if resp, err = http.ReadResponse(br, nil); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != tc.want {
			t.Errorf("%q: %d %q, want 200 %q", tc.req, resp.StatusCode, b, tc.want)
		}
	}
}
