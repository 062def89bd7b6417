package httpx

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestTrackedConnReadFrom: a limited listener's connections keep the TCP connection's
// io.ReaderFrom (net/http sends files with it, by sendfile), and copy whatever it is
// given, with or without the Expect filter (the S3 listener's); a connection without
// one still copies.
func TestTrackedConnReadFrom(t *testing.T) {
	for _, lim := range []ConnLimits{{Max: 4}, {Max: 4, IgnoreUnknownExpect: true}} {
		t.Run(fmt.Sprintf("expect-filter=%v", lim.IgnoreUnknownExpect), func(t *testing.T) { testReadFrom(t, lim) })
	}
	// A wrapped connection that is no io.ReaderFrom (as a TLS one) falls back to copying.
	for _, wrap := range []func(net.Conn) io.ReaderFrom{
		func(c net.Conn) io.ReaderFrom { return &trackedConn{Conn: c} },
		func(c net.Conn) io.ReaderFrom { return newExpectFilter(c) },
	} {
		a, b := net.Pipe()
		go func() { _, _ = wrap(a).ReadFrom(bytes.NewReader([]byte("piped"))) }()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(b, buf); err != nil || string(buf) != "piped" {
			t.Fatalf("piped read %q, %v", buf, err)
		}
		a.Close()
		b.Close()
	}
}

func testReadFrom(t *testing.T, lim ConnLimits) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, lim)
	defer l.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rf, ok := c.(io.ReaderFrom)
	if !ok {
		t.Fatalf("%T is not an io.ReaderFrom", c)
	}
	data := bytes.Repeat([]byte("sendfile "), 100_000)
	name := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(data)+3)))
		got <- b
	}()
	if n, err := rf.ReadFrom(&io.LimitedReader{R: f, N: int64(len(data))}); err != nil || n != int64(len(data)) {
		t.Fatalf("ReadFrom(file) = %d, %v", n, err)
	}
	if n, err := rf.ReadFrom(bytes.NewReader([]byte("end"))); err != nil || n != 3 {
		t.Fatalf("ReadFrom(bytes) = %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, append(data, "end"...)) {
		t.Fatalf("the client read %d bytes, want %d", len(b), len(data)+3)
	}

}
