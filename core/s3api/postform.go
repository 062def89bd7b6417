package s3api

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
)

// The limits of a POST object form before its file (AWS bounds the policy to 20 KB and
// the form's fields loosely; these leave room for both while bounding what a client
// makes the server hold).
const (
	// maxFormPrefix bounds the bytes of the form before the file's data: the preamble,
	// every part's headers and every field's value.
	maxFormPrefix = 64 << 10
	// maxFormFields bounds the fields before the file.
	maxFormFields = 128
	// maxBoundary is RFC 2046's longest boundary.
	maxBoundary = 70
)

// formField is one field of a POST form: its name as sent and its value.
type formField struct {
	name, value string
}

// postForm is a POST object form read up to its file: the fields in order, the file
// part's filename (its Content-Type is not used: the object's comes from the fields),
// and a reader of exactly size bytes of file data that, at its end, checks that the
// form closes right after them.
type postForm struct {
	fields   []formField
	filename string
	size     int64
	file     io.Reader
}

// errMalformedPOST is AWS's answer to a body that is not the multipart/form-data it
// announces.
var errMalformedPOST = s3.Errorf(s3.MalformedPOSTRequest, "The body of your POST request is not well-formed multipart/form-data.")

// errFormTooLarge refuses a form whose fields before the file exceed the limits.
var errFormTooLarge = s3.Errorf(s3.MalformedPOSTRequest,
	"Your POST request fields preceding the upload file were too large (at most %d bytes and %d fields).", maxFormPrefix, maxFormFields)

// errNoFile is AWS's answer to a form without its file field.
var errNoFile = s3.Errorf(s3.InvalidArgument, "POST requires exactly one file upload per request.")

// formBoundary returns the boundary of a multipart/form-data Content-Type; another
// type is 412 PreconditionFailed, as AWS answers, and a missing or overlong boundary
// MalformedPOSTRequest.
func formBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return "", s3.Errorf(s3.PreconditionFailed, "Bucket POST must be of the enclosure-type multipart/form-data")
	}
	b := params["boundary"]
	if b == "" || len(b) > maxBoundary || strings.ContainsAny(b, "\r\n") {
		return "", errMalformedPOST
	}
	return b, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// formReader reads a multipart/form-data body part by part.
type formReader struct {
	cr *countingReader
	br *bufio.Reader
	// dash is "--" + boundary; delim is "\r\n" + dash.
	dash, delim []byte
	// budget is what is left of maxFormPrefix.
	budget int
}

// consumed returns how many bytes of the body the parser has taken.
func (f *formReader) consumed() int64 { return f.cr.n - int64(f.br.Buffered()) }

// readLine returns the next line with its "\n" (longer than the buffer: in pieces),
// charged to the budget; io.ErrUnexpectedEOF when the body ends first.
func (f *formReader) readLine() ([]byte, bool, error) {
	line, err := f.br.ReadSlice('\n')
	f.budget -= len(line)
	if f.budget < 0 {
		return nil, false, errFormTooLarge
	}
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return line, false, nil
	case errors.Is(err, io.EOF):
		return line, false, errMalformedPOST
	case err != nil:
		return nil, false, err
	}
	return line, true, nil
}

// start skips the preamble up to the first delimiter line.
func (f *formReader) start() error {
	for {
		line, whole, err := f.readLine()
		if err != nil {
			return err
		}
		if whole && bytes.Equal(bytes.TrimRight(line, " \t\r\n"), f.dash) {
			return nil
		}
	}
}

// partHeader reads a part's header lines up to the empty line and returns the field
// name and filename of its Content-Disposition (form-data).
func (f *formReader) partHeader() (name, filename string, err error) {
	for {
		line, whole, err := f.readLine()
		if err != nil {
			return "", "", err
		}
		if !whole {
			return "", "", errMalformedPOST // a header line longer than the buffer
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, ok := strings.Cut(string(line), ":")
		if !ok {
			return "", "", errMalformedPOST
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "content-disposition":
			d, params, err := mime.ParseMediaType(strings.TrimSpace(v))
			if err != nil || d != "form-data" {
				return "", "", errMalformedPOST
			}
			name = params["name"]
			filename = params["filename"]
		}
	}
	if name == "" {
		return "", "", errMalformedPOST
	}
	return name, filename, nil
}

// value reads a field's value up to the next delimiter, and what follows the
// delimiter: whether it closed the form.
func (f *formReader) value() (v []byte, closed bool, err error) {
	for {
		line, whole, err := f.readLine()
		if err != nil {
			return nil, false, err
		}
		v = append(v, line...)
		if !whole || !bytes.HasSuffix(v, []byte("\r\n")) {
			continue
		}
		if next, _ := f.br.Peek(len(f.dash)); bytes.Equal(next, f.dash) {
			_, _ = f.br.Discard(len(f.dash))
			f.budget -= len(f.dash)
			closed, err := f.afterDelimiter()
			return v[:len(v)-2], closed, err
		}
	}
}

// afterDelimiter reads the rest of a delimiter line: "--" closes the form; otherwise
// only white space may precede the line's end.
func (f *formReader) afterDelimiter() (closed bool, err error) {
	line, whole, err := f.readLine()
	if err != nil {
		if bytes.HasPrefix(line, []byte("--")) {
			return true, nil
		}
		return false, err
	}
	if bytes.HasPrefix(line, []byte("--")) {
		return true, nil
	}
	if !whole || len(bytes.Trim(line, " \t\r\n")) != 0 {
		return false, errMalformedPOST
	}
	return false, nil
}

// readPostForm reads a POST object form from body (contentLength bytes, boundary from
// the Content-Type) up to the start of its file part, the field named "file" (any
// case), which must be the last: its data is what remains of the body but the closing
// delimiter "\r\n--boundary--\r\n". Fields after the file are refused rather than
// stored as data (AWS ignores them; no client sends any). The returned form's file
// yields exactly size bytes; reading past them checks the closing delimiter and the
// end of the body, and returns MalformedPOSTRequest if either is wrong. A form past
// maxFormPrefix bytes or maxFormFields fields before the file is MalformedPOSTRequest.
func readPostForm(body io.Reader, contentLength int64, boundary string) (*postForm, error) {
	cr := &countingReader{r: body}
	f := &formReader{cr: cr, br: bufio.NewReaderSize(cr, 4096), dash: []byte("--" + boundary), budget: maxFormPrefix}
	f.delim = append([]byte("\r\n"), f.dash...)
	if err := f.start(); err != nil {
		return nil, err
	}
	form := &postForm{}
	for {
		name, filename, err := f.partHeader()
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(name, "file") {
			form.filename = filename
			return form, f.openFile(form, contentLength)
		}
		if len(form.fields) == maxFormFields {
			return nil, errFormTooLarge
		}
		v, closed, err := f.value()
		if err != nil {
			return nil, err
		}
		form.fields = append(form.fields, formField{name: name, value: string(v)})
		if closed {
			return nil, errNoFile
		}
	}
}

// openFile sets form's file reader, size and trailer check: the data runs to the
// closing delimiter at the end of the body.
func (f *formReader) openFile(form *postForm, contentLength int64) error {
	trailer := append(append([]byte(nil), f.delim...), "--\r\n"...)
	form.size = contentLength - f.consumed() - int64(len(trailer))
	if form.size < 0 {
		return errMalformedPOST
	}
	form.file = &fileReader{br: f.br, left: form.size, delim: f.delim, trailer: trailer}
	return nil
}

// fileReader yields the file's data, refusing data that holds the form's delimiter (a
// field after the file), then checks the closing delimiter and the end of the body.
type fileReader struct {
	br      *bufio.Reader
	left    int64
	delim   []byte
	trailer []byte
	// tail is the end of the data read so far, to find a delimiter across reads; win
	// is scratch space for it.
	tail, win []byte
	err       error
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left == 0 {
		r.err = r.finish()
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.br.Read(p)
	r.left -= int64(n)
	if r.holdsDelimiter(p[:n]) {
		r.err = s3.Errorf(s3.MalformedPOSTRequest, "The file must be the last field of the form.")
		return 0, r.err
	}
	if errors.Is(err, io.EOF) && r.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		r.err = err
	}
	return n, err
}

// holdsDelimiter reports whether the data read so far, ending with b, contains the
// delimiter: in b, or across the end of the previous read (tail) and b's start.
func (r *fileReader) holdsDelimiter(b []byte) bool {
	k := len(r.delim) - 1
	r.win = append(append(r.win[:0], r.tail...), b[:min(len(b), k)]...)
	if bytes.Contains(r.win, r.delim) || bytes.Contains(b, r.delim) {
		return true
	}
	r.win = append(append(r.win[:0], r.tail...), b[max(0, len(b)-k):]...)
	r.tail = append(r.tail[:0], r.win[max(0, len(r.win)-k):]...)
	return false
}

// finish reads what follows the data: exactly the closing delimiter, then the end of
// the body. It returns io.EOF when both are right.
func (r *fileReader) finish() error {
	got := make([]byte, len(r.trailer))
	if _, err := io.ReadFull(r.br, got); err != nil || !bytes.Equal(got, r.trailer) {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		return s3.Errorf(s3.MalformedPOSTRequest, `The form must end with its file and the closing delimiter "--boundary--" and CRLF.`)
	}
	var one [1]byte
	if n, err := r.br.Read(one[:]); n > 0 || err != nil && !errors.Is(err, io.EOF) {
		if err != nil {
			return err
		}
		return errMalformedPOST
	}
	return io.EOF
}
