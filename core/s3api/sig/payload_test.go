package sig

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

func TestPayloadVerifier(t *testing.T) {
	tests := []struct {
		name, body, digest string
		ok                 bool
	}{
		{"match", "hello", sha256Hex("hello"), true},
		{"empty body", "", EmptySHA256, true},
		{"mismatch", "hello", sha256Hex("hellO"), false},
		{"empty body, mismatch", "", sha256Hex("x"), false},
		{"upper-case digest does not match", "hello", strings.ToUpper(sha256Hex("hello")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewPayloadVerifier(iotest.OneByteReader(strings.NewReader(tt.body)), tt.digest)
			data, err := io.ReadAll(r)
			if string(data) != tt.body {
				t.Fatalf("read %q", data)
			}
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("after EOF: %d %v", n, err)
				}
				return
			}
			if !s3types.IsCode(err, s3types.XAmzContentSHA256Mismatch) {
				t.Fatalf("got %v", err)
			}
			if _, again := r.Read(make([]byte, 1)); !errors.Is(again, err) {
				t.Fatalf("not sticky: %v", again)
			}
		})
	}
}

func TestPayloadVerifierPassesErrors(t *testing.T) {
	r := NewPayloadVerifier(iotest.ErrReader(io.ErrUnexpectedEOF), EmptySHA256)
	if _, err := io.ReadAll(r); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
}

func TestValidPayloadHash(t *testing.T) {
	valid := []string{EmptySHA256, UnsignedPayload, StreamingPayload, StreamingPayloadTrailer,
		StreamingUnsignedPayload, StreamingECDSAPayload, StreamingECDSAPayloadTrailer}
	for _, v := range valid {
		if !ValidPayloadHash(v) {
			t.Errorf("%q invalid", v)
		}
	}
	invalid := []string{"", "nope", "unsigned-payload", "STREAMING-", "STREAMING-FOO",
		strings.ToUpper(EmptySHA256), EmptySHA256[:63], EmptySHA256 + "0", strings.Repeat("g", 64)}
	for _, v := range invalid {
		if ValidPayloadHash(v) {
			t.Errorf("%q valid", v)
		}
	}
	if IsHexSHA256(UnsignedPayload) || !IsHexSHA256(EmptySHA256) {
		t.Error("IsHexSHA256")
	}
}
