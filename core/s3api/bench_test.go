package s3api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
	"github.com/cairnkv/cairn/core/storage"
)

// BenchmarkObjectHandlers measures PUT, GET and HEAD of one 1 KiB object through the
// S3 handler (V2-signed requests, a recorder for the answer) in an unversioned bucket
// without lifecycle rules: what an answer's x-amz-version-id and x-amz-expiration
// cost when there is none to give.
func BenchmarkObjectHandlers(b *testing.B) {
	db, err := storage.Open(filepath.Join(b.TempDir(), "db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	svc, err := s3.New(db, s3.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	u, err := svc.CreateUser(context.Background(), s3.NewUser{Name: "alice", Email: "alice@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	h := New(svc, Config{Dialect: "riak"}).Handler()
	data := bytes.Repeat([]byte("x"), 1024)
	serve := func(b *testing.B, method, path string, body []byte, want int) {
		r := httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Host = "s3.localhost"
		sig.SignRequestV2(&sig.Request{Method: method, Host: r.Host, RawPath: path, Header: r.Header}, u.KeyID, u.KeySecret, time.Now())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	serve(b, http.MethodPut, "/bench", nil, http.StatusOK)
	serve(b, http.MethodPut, "/bench/k", data, http.StatusOK)
	for _, c := range []struct {
		method string
		body   []byte
	}{{http.MethodPut, data}, {http.MethodGet, nil}, {http.MethodHead, nil}} {
		b.Run(c.method, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, c.method, "/bench/k", c.body, http.StatusOK)
			}
		})
	}
}
