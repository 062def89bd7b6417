package s3api

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// The x-amz-content-sha256 values of aws-chunked uploads.
const (
	streamingSigned          = sig.StreamingPayload
	streamingUnsignedTrailer = sig.StreamingUnsignedPayload
)

// isStreaming reports whether the body is aws-chunked.
func (c *call) isStreaming() bool {
	return c.auth.Version == 4 && strings.HasPrefix(c.auth.PayloadHash, "STREAMING-")
}

// checkPayload refuses payload encodings this server does not read.
func (c *call) checkPayload() error {
	if !c.isStreaming() {
		return nil
	}
	switch c.auth.PayloadHash {
	case streamingSigned, streamingUnsignedTrailer:
		return nil
	}
	return s3.Errorf(s3.NotImplemented, "The payload encoding %s is not implemented", c.auth.PayloadHash)
}

// body returns the request body as the object's bytes: aws-chunked bodies are decoded
// (and each chunk's signature verified), a V4 body with a hex payload hash is checked
// against it at its end.
func (c *call) body() io.Reader {
	switch {
	case c.auth.Version == 4 && c.auth.PayloadHash == streamingSigned:
		return newChunkedReader(c.r.Body, &c.auth)
	case c.auth.Version == 4 && c.auth.PayloadHash == streamingUnsignedTrailer:
		return newChunkedReader(c.r.Body, nil)
	case c.auth.Version == 4 && len(c.auth.PayloadHash) == 64:
		return sig.NewPayloadVerifier(c.r.Body, c.auth.PayloadHash)
	}
	return c.r.Body
}

// maxChunkLine bounds a chunk header or trailer line of an aws-chunked body.
const maxChunkLine = 4096

// chunkedReader decodes an aws-chunked body: "hex-size[;chunk-signature=sig]\r\n",
// the data, "\r\n", until a zero-size chunk, then (for trailer variants) trailer lines
// and an empty line. With auth set, every chunk's signature is verified when its data
// ends (the signature chains from the seed signature of the Authorization header), so
// a forged chunk fails the upload before it is committed.
type chunkedReader struct {
	r    *bufio.Reader
	auth *sig.Result
	prev string // the previous chunk's signature
	// left is the unread data of the current chunk; want its signature.
	left int64
	want string
	h    hash.Hash
	done bool
	err  error
	// fields are the trailer fields after the last chunk, names in lower case.
	fields map[string]string
}

// trailer returns the value of the trailer field name (lower case), once the body has
// been read to its end.
func (cr *chunkedReader) trailer(name string) (string, bool) {
	v, ok := cr.fields[name]
	return v, ok
}

func newChunkedReader(body io.Reader, auth *sig.Result) *chunkedReader {
	cr := &chunkedReader{r: bufio.NewReaderSize(body, 64<<10), auth: auth}
	if auth != nil {
		cr.prev = auth.SeedSignature
		cr.h = sha256.New()
	}
	return cr
}

func malformedChunk(what string) error {
	return s3.Errorf(s3.IncompleteBody, "The aws-chunked body is malformed: %s", what)
}

func (cr *chunkedReader) Read(p []byte) (int, error) {
	if cr.err != nil {
		return 0, cr.err
	}
	for cr.left == 0 {
		if cr.done {
			return 0, io.EOF
		}
		if err := cr.next(); err != nil {
			cr.err = err
			return 0, err
		}
	}
	if int64(len(p)) > cr.left {
		p = p[:cr.left]
	}
	n, err := cr.r.Read(p)
	if cr.h != nil {
		cr.h.Write(p[:n])
	}
	cr.left -= int64(n)
	if cr.left == 0 && err == nil {
		err = cr.endChunk()
	}
	if errors.Is(err, io.EOF) {
		err = errBodyEnded
	}
	if err != nil {
		cr.err = err
	}
	return n, err
}

// errBodyEnded is the error of an aws-chunked body that ends before its final chunk.
var errBodyEnded = malformedChunk("the body ends before its final chunk")

// line reads one CRLF-terminated line of at most maxChunkLine bytes.
func (cr *chunkedReader) line() (string, error) {
	var b []byte
	for {
		frag, err := cr.r.ReadSlice('\n')
		b = append(b, frag...)
		if len(b) > maxChunkLine {
			return "", malformedChunk("line too long")
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
	s, ok := strings.CutSuffix(string(b), "\r\n")
	if !ok {
		return "", malformedChunk("line not ended by CRLF")
	}
	return s, nil
}

// next reads a chunk header; the zero-size chunk is verified at once, followed by the
// trailer section, and ends the body.
func (cr *chunkedReader) next() error {
	line, err := cr.line()
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errBodyEnded
	}
	if err != nil {
		return err
	}
	sizeHex, ext, _ := strings.Cut(line, ";")
	size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
	if err != nil || size < 0 {
		return malformedChunk("bad chunk size")
	}
	if cr.auth != nil {
		s, ok := strings.CutPrefix(strings.TrimSpace(ext), "chunk-signature=")
		if !ok || len(s) != 64 {
			return malformedChunk("missing chunk signature")
		}
		cr.want = s
		cr.h.Reset()
	}
	cr.left = size
	if size > 0 {
		return nil
	}
	if err := cr.verify(); err != nil {
		return err
	}
	cr.done = true
	return cr.trailers()
}

// endChunk verifies the chunk whose data was just read and consumes its CRLF.
func (cr *chunkedReader) endChunk() error {
	if err := cr.verify(); err != nil {
		return err
	}
	line, err := cr.line()
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errBodyEnded
	}
	if err != nil {
		return err
	}
	if line != "" {
		return malformedChunk("data longer than its chunk size")
	}
	return nil
}

// verify checks the signature of the chunk just read (signed bodies only).
func (cr *chunkedReader) verify() error {
	if cr.auth == nil {
		return nil
	}
	got := sig.SignChunkV4(cr.auth.SigningKey, cr.auth.AmzDate, cr.auth.Scope, cr.prev, hex.EncodeToString(cr.h.Sum(nil)))
	if !hmac.Equal([]byte(got), []byte(cr.want)) {
		return &s3.Error{Code: s3.SignatureDoesNotMatch, Message: "The request signature we calculated does not match the signature you provided. Check your key and signing method."}
	}
	cr.prev = got
	return nil
}

// trailers reads the trailer lines after the last chunk, up to the empty line (a body
// that simply ends after the last chunk is accepted too).
func (cr *chunkedReader) trailers() error {
	for i := 0; ; i++ {
		line, err := cr.line()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			if i == 0 {
				return nil
			}
			return errBodyEnded // trailer lines without the empty line that ends them
		}
		if err != nil {
			return err
		}
		if line == "" {
			return nil
		}
		name, value, ok := strings.Cut(line, ":")
		if i >= 64 || !ok || strings.TrimSpace(name) == "" {
			return malformedChunk("bad trailer")
		}
		if cr.fields == nil {
			cr.fields = map[string]string{}
		}
		cr.fields[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
	}
}
