package httpx

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestTrackedConnReadFrom: a limited listener's connections keep the TCP connection's
// io.ReaderFrom (net/http sends files with it, by sendfile), and copy whatever it is
// given; a connection without one still copies.
func TestTrackedConnReadFrom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, ConnLimits{Max: 4})
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

	// A wrapped connection that is no io.ReaderFrom (as a TLS one) falls back to copying.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	tc := &trackedConn{Conn: a}
	go func() { _, _ = tc.ReadFrom(bytes.NewReader([]byte("piped"))) }()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(b, buf); err != nil || string(buf) != "piped" {
		t.Fatalf("piped read %q, %v", buf, err)
	}
}
