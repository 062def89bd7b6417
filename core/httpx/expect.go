package httpx

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
)

// ExpectAside is the name an Expect header other than 100-continue is given before
// net/http reads the request: net/http answers "417 Expectation Failed" to any other
// expectation before a handler runs, where AWS S3 ignores it. The name is as long as
// "Expect", so a request head keeps its size. RestoreExpect puts the header back.
const ExpectAside = "X-Expt"

// Limits of what an expectFilter holds back: one line of a request head or of a
// chunked body's framing (longer: the filter stands aside for the connection), and one
// read from the connection.
const (
	maxHeldLine     = 8 << 10
	expectReadChunk = 4 << 10
)

// RestoreExpect gives a request the Expect header values an expectFilter set aside (as
// ExpectAside), so that signature checks and handlers see the headers the client sent.
func RestoreExpect(r *http.Request) {
	v, ok := r.Header[ExpectAside]
	if !ok {
		return
	}
	delete(r.Header, ExpectAside)
	r.Header["Expect"] = append(v, r.Header["Expect"]...)
}

// expectFilter is a server connection that renames, in each request head it reads,
// the Expect header lines whose value net/http would refuse (any but 100-continue) to
// ExpectAside, and passes every other byte through unchanged. It follows HTTP/1.1
// framing (Content-Length and chunked bodies) to know where each head starts; body
// bytes are never changed. On anything it does not fully understand (another protocol
// version, several or odd Transfer-Encoding or Content-Length values, a malformed chunk,
// an over-long line) it stands aside for the rest of the connection, which then behaves
// as without it (net/http rejects such requests or answers 417).
//
// net/http reads a connection from one goroutine at a time, so the filter needs no
// lock.
type expectFilter struct {
	net.Conn
	mode filterMode
	// buf holds what was read from the connection and not yet processed (pending);
	// out holds processed bytes not yet returned; err is a read error to return once
	// out is drained.
	buf     []byte
	pending []byte
	out     []byte
	outBuf  []byte // out's backing array, reused
	err     error
	// held is the line being read, kept until it is complete.
	held []byte
	// remaining is the length of the body, or chunk, still to pass.
	remaining int64
	head      headInfo
}

// filterMode is where in the stream an expectFilter is.
type filterMode int

const (
	modeHead      filterMode = iota // in a request head (or before one)
	modeBody                        // in a Content-Length body (remaining bytes)
	modeChunkSize                   // at a chunk-size line
	modeChunkData                   // in a chunk's data (remaining bytes)
	modeChunkCRLF                   // at the CRLF after a chunk's data
	modeTrailer                     // in the trailer after the last chunk
	modeAside                       // standing aside: everything passes
)

// headInfo is what the filter learned of the request head being read.
type headInfo struct {
	started bool // the request line was read
	http10  bool
	te      []string
	cl      []string
}

// newExpectFilter returns c filtered.
func newExpectFilter(c net.Conn) *expectFilter { return &expectFilter{Conn: c} }

// ReadFrom writes r's bytes to the connection, handing the copy to the wrapped
// connection when it can do it itself (sendfile(2) for a blob's GET): only reads are
// filtered, and embedding net.Conn would hide the wrapped io.ReaderFrom from net/http.
func (f *expectFilter) ReadFrom(r io.Reader) (int64, error) { return readFromConn(f.Conn, r) }

// Read returns the connection's bytes, filtered.
func (f *expectFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			err := f.err
			f.err = nil
			return 0, err
		}
		if len(f.pending) == 0 {
			if n, ok, err := f.direct(p); ok {
				return n, err
			}
			if err := f.fill(); err != nil {
				return 0, err
			}
			continue
		}
		f.process()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	if len(f.out) == 0 {
		f.out = f.outBuf[:0]
	}
	return n, nil
}

// direct reads straight into p when nothing is pending and the bytes need no look:
// inside a Content-Length body or a chunk's data (at most its rest) or when standing
// aside.
func (f *expectFilter) direct(p []byte) (int, bool, error) {
	switch f.mode {
	case modeAside:
		n, err := f.Conn.Read(p)
		return n, true, err
	case modeBody, modeChunkData:
		if int64(len(p)) > f.remaining {
			p = p[:f.remaining]
		}
		n, err := f.Conn.Read(p)
		f.counted(n)
		return n, true, err
	}
	return 0, false, nil
}

// fill reads the next bytes into pending. A timeout leaves the held line in place (the
// server retries after an aborted background read); another error makes the held bytes
// output, the error returned after them.
func (f *expectFilter) fill() error {
	if f.buf == nil {
		f.buf = make([]byte, expectReadChunk)
	}
	n, err := f.Conn.Read(f.buf)
	f.pending = f.buf[:n]
	if err == nil || n > 0 {
		if err != nil {
			f.err = err
		}
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || len(f.held) == 0 {
		return err
	}
	f.out = append(f.out, f.held...)
	f.outBuf = f.out[:0]
	f.held = f.held[:0]
	f.err = err
	return nil
}

// process moves pending bytes to out, following the framing.
func (f *expectFilter) process() {
	defer func() { f.outBuf = f.out[:0] }()
	for len(f.pending) > 0 {
		switch f.mode {
		case modeAside:
			f.pass(len(f.pending))
		case modeBody, modeChunkData:
			n := int(min(f.remaining, int64(len(f.pending))))
			f.pass(n)
			f.counted(n)
		default:
			line, ok := f.takeLine()
			if ok {
				f.line(line)
			}
		}
	}
}

// pass moves n pending bytes to out.
func (f *expectFilter) pass(n int) {
	f.out = append(f.out, f.pending[:n]...)
	f.pending = f.pending[n:]
}

// counted counts n bytes of a body or chunk passed; at its end the framing moves on to
// the next head or to the CRLF after the chunk.
func (f *expectFilter) counted(n int) {
	if f.remaining -= int64(n); f.remaining > 0 {
		return
	}
	if f.mode == modeBody {
		f.startHead()
	} else {
		f.mode = modeChunkCRLF
	}
}

// takeLine moves pending bytes into held up to a line feed, and reports whether the
// line is complete; an over-long line makes the filter stand aside.
func (f *expectFilter) takeLine() ([]byte, bool) {
	want := len(f.pending)
	if f.mode == modeChunkCRLF {
		want = min(want, 2-len(f.held)) // exactly CRLF
	}
	i := bytes.IndexByte(f.pending[:want], '\n')
	end := want
	if i >= 0 {
		end = i + 1
	}
	f.held = append(f.held, f.pending[:end]...)
	f.pending = f.pending[end:]
	switch {
	case len(f.held) > maxHeldLine:
		f.standAside(nil)
	case i >= 0 || f.mode == modeChunkCRLF && len(f.held) == 2:
		line := f.held
		f.held = f.held[:0]
		return line, true
	}
	return nil, false
}

// standAside outputs line and the held bytes and passes everything from now on.
func (f *expectFilter) standAside(line []byte) {
	f.out = append(f.out, line...)
	f.out = append(f.out, f.held...)
	f.held = f.held[:0]
	f.mode = modeAside
}

// line handles one complete line (with its line feed) of the current mode.
func (f *expectFilter) line(l []byte) {
	switch f.mode {
	case modeHead:
		f.headLine(l)
	case modeChunkSize:
		f.chunkSizeLine(l)
	case modeChunkCRLF:
		if string(l) != "\r\n" {
			f.standAside(l)
			return
		}
		f.out = append(f.out, l...)
		f.mode = modeChunkSize
	case modeTrailer:
		f.out = append(f.out, l...)
		switch {
		case string(l) == "\r\n":
			f.startHead()
		case len(l) < 2 || l[len(l)-2] != '\r' || l[0] == ' ' || l[0] == '\t':
			f.mode = modeAside
		}
	}
}

// startHead expects the next request's head.
func (f *expectFilter) startHead() {
	f.mode = modeHead
	f.head = headInfo{}
	if cap(f.held) > 1<<10 {
		f.held = nil // a long line is not kept for the connection's life
	}
}

// headLine handles a line of a request head: the request line (its version), a header
// (Content-Length, Transfer-Encoding and Expect are looked at; an Expect net/http would
// refuse is renamed) or the blank line ending the head, which sets the body's framing.
func (f *expectFilter) headLine(l []byte) {
	h := &f.head
	if !h.started {
		fields := bytes.Fields(l)
		if len(fields) != 3 {
			f.standAside(l)
			return
		}
		switch string(fields[2]) {
		case "HTTP/1.1":
		case "HTTP/1.0":
			h.http10 = true
		default:
			f.standAside(l)
			return
		}
		h.started = true
		f.out = append(f.out, l...)
		return
	}
	if string(l) == "\r\n" || string(l) == "\n" {
		f.out = append(f.out, l...)
		f.endHead()
		return
	}
	if l[0] == ' ' || l[0] == '\t' {
		f.standAside(l) // an obsolete line folding
		return
	}
	name, value, ok := bytes.Cut(l, []byte{':'})
	if !ok {
		f.standAside(l)
		return
	}
	value = bytes.TrimSpace(value)
	switch {
	case asciiEqualFold(name, []byte("Content-Length")):
		h.cl = append(h.cl, string(value))
	case asciiEqualFold(name, []byte("Transfer-Encoding")):
		h.te = append(h.te, string(value))
	case asciiEqualFold(name, []byte("Expect")) && !hasToken(string(value), "100-continue"):
		copy(l, ExpectAside)
	}
	f.out = append(f.out, l...)
}

// endHead sets the framing of the body after a head, as net/http reads it: HTTP/1.1
// "Transfer-Encoding: chunked" (one header), else Content-Length (all values equal),
// else no body. Other transfer encodings, differing lengths and unparsable values make
// the filter stand aside.
func (f *expectFilter) endHead() {
	h := f.head
	if len(h.te) > 0 && !h.http10 {
		if len(h.te) != 1 || !asciiEqualFold([]byte(h.te[0]), []byte("chunked")) {
			f.mode = modeAside
			return
		}
		f.mode = modeChunkSize
		return
	}
	if len(h.cl) == 0 {
		f.startHead()
		return
	}
	for _, v := range h.cl[1:] {
		if v != h.cl[0] {
			f.mode = modeAside
			return
		}
	}
	n, err := strconv.ParseUint(h.cl[0], 10, 63)
	if err != nil || h.cl[0] == "" || h.cl[0][0] == '+' {
		f.mode = modeAside
		return
	}
	if n == 0 {
		f.startHead()
		return
	}
	f.mode, f.remaining = modeBody, int64(n)
}

// chunkSizeLine handles a chunk-size line as net/http parses it (trailing white space
// trimmed, any extension cut, then 1 to 16 hex digits); a zero size starts the trailer.
func (f *expectFilter) chunkSizeLine(l []byte) {
	f.out = append(f.out, l...)
	s := bytes.TrimRight(l, " \t\r\n")
	if i := bytes.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	if len(s) == 0 || len(s) > 15 || len(l) < 2 || l[len(l)-2] != '\r' {
		f.mode = modeAside
		return
	}
	n, err := strconv.ParseUint(string(s), 16, 63)
	if err != nil || s[0] == '+' || s[0] == '-' {
		f.mode = modeAside
		return
	}
	if n == 0 {
		f.mode = modeTrailer
		return
	}
	f.mode, f.remaining = modeChunkData, int64(n)
}

// hasToken reports whether token is in the comma- or space-separated list v, ignoring
// ASCII case (net/http's test for "100-continue").
func hasToken(v, token string) bool {
	for sp := 0; sp+len(token) <= len(v); sp++ {
		if sp > 0 && !isTokenBoundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if asciiEqualFold([]byte(v[sp:sp+len(token)]), []byte(token)) {
			return true
		}
	}
	return false
}

// asciiEqualFold reports whether a and b are equal ignoring ASCII case only (as
// net/http compares header names and tokens).
func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }
