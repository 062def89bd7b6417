package s3api

import (
	"bytes"
	"encoding/base64"
	"io"
	"testing"
	"time"
)

// FuzzPostPolicy: no policy document makes the parser or the checks panic, and a
// parsed policy's conditions are of the three known operators with sane bounds.
func FuzzPostPolicy(f *testing.F) {
	f.Add(`{"expiration":"2099-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["content-length-range",0,10]]}`)
	f.Add(`{"expiration":"2099-01-01T00:00:00.000Z","conditions":[["eq","$acl","private"],{"x-amz-meta-a":"b"}]}`)
	f.Add(`{"expiration":"x","conditions":[{}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := parsePostPolicy(base64.StdEncoding.EncodeToString([]byte(doc)))
		if err != nil {
			return
		}
		for _, c := range p.conds {
			switch c.op {
			case "eq", "starts-with":
			case "content-length-range":
				if c.min < 0 || c.min > c.max {
					t.Fatalf("range %d..%d", c.min, c.max)
				}
			default:
				t.Fatalf("operator %q", c.op)
			}
		}
		_ = p.check(map[string]string{"bucket": "b", "key": "k", "acl": "private"}, time.Now())
		_ = p.checkSize(5)
	})
}

// FuzzPostForm: no body makes the form parser panic, hold more than its limits, or
// yield a file of another length than it announced.
func FuzzPostForm(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\ndata\r\n--B--\r\n"))
	f.Add([]byte("preamble\r\n--B \r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--B--"))
	f.Fuzz(func(t *testing.T, body []byte) {
		form, err := readPostForm(bytes.NewReader(body), int64(len(body)), "B")
		if err != nil {
			return
		}
		held := 0
		for _, fl := range form.fields {
			held += len(fl.name) + len(fl.value)
		}
		if held > maxFormPrefix || len(form.fields) > maxFormFields {
			t.Fatalf("%d fields of %d bytes", len(form.fields), held)
		}
		n, err := io.Copy(io.Discard, form.file)
		if err == nil && n != form.size {
			t.Fatalf("file of %d bytes, announced %d", n, form.size)
		}
	})
}

// BenchmarkPostFormFile measures the form reader's cost per byte of file: an 8 MiB
// file read through it (the delimiter search and the trailer check) into io.Discard.
func BenchmarkPostFormFile(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)
	body := append([]byte("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n"), data...)
	body = append(body, "\r\n--B--\r\n"...)
	b.SetBytes(int64(len(data)))
	buf := make([]byte, 64<<10)
	for b.Loop() {
		form, err := readPostForm(bytes.NewReader(body), int64(len(body)), "B")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{form.file}, buf); err != nil || n != int64(len(data)) {
			b.Fatalf("%d bytes: %v", n, err)
		}
	}
}
