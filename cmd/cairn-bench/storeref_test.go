package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// do sends one request to h and returns the status and body of its answer.
func do(t *testing.T, h http.Handler, method, target string, body []byte, chunked bool) (int, []byte, http.Header) {
	t.Helper()
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, target, bytes.NewReader(body))
		if chunked {
			r.ContentLength = -1
		}
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	got, _ := io.ReadAll(res.Body)
	return res.StatusCode, got, res.Header
}

// TestStoreHandler: the store reference stores a PUT's body under the URL path (query
// ignored) and answers 204, and GET answers it back; a pooled buffer from a larger
// body does not leak into a smaller one; the read-before-write mode reads each key
// before writing it (a second PUT of a key finds the first), the blind mode never reads.
func TestStoreHandler(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var blindReads int
	var rwFound []bool
	blind := &storeHandler{db: db, beforeWrite: func(bool) { blindReads++ }}
	rw := &storeHandler{db: db, readFirst: true, beforeWrite: func(found bool) { rwFound = append(rwFound, found) }}

	big, small := makeValue(5000), []byte("small value")
	for _, c := range []struct {
		h       http.Handler
		key     string
		body    []byte
		chunked bool
	}{
		{blind, "/buckets/bench/keys/a", big, false},
		{blind, "/buckets/bench/keys/b", small, false},
		{blind, "/buckets/bench/keys/c", big, true}, // no Content-Length: read to EOF
		{rw, "/buckets/bench/keys/d", small, false},
		{rw, "/buckets/bench/keys/d", big, true},
	} {
		if code, msg, _ := do(t, c.h, http.MethodPut, c.key+"?dw=0", c.body, c.chunked); code != http.StatusNoContent {
			t.Fatalf("PUT %s: %d %s", c.key, code, msg)
		}
		if v, err := db.Get([]byte(c.key)); err != nil || !bytes.Equal(v, c.body) {
			t.Fatalf("stored under %s: %d bytes, %v; want %d bytes", c.key, len(v), err, len(c.body))
		}
		code, got, hd := do(t, c.h, http.MethodGet, c.key+"?r=1", nil, false)
		if code != http.StatusOK || !bytes.Equal(got, c.body) || hd.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("GET %s: %d, %d bytes (want %d), %v", c.key, code, len(got), len(c.body), hd)
		}
	}
	if blindReads != 0 {
		t.Errorf("blind mode read %d times before writing", blindReads)
	}
	if len(rwFound) != 2 || rwFound[0] || !rwFound[1] {
		t.Errorf("read-before-write mode: reads found %v, want [false true] (a read per PUT, before its write)", rwFound)
	}
	if code, _, _ := do(t, blind, http.MethodGet, "/buckets/bench/keys/none", nil, false); code != http.StatusNotFound {
		t.Errorf("GET of a missing key: %d", code)
	}
	if code, _, _ := do(t, blind, http.MethodDelete, "/buckets/bench/keys/a", nil, false); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d", code)
	}
}

// TestStoreRef: the started reference serves both modes over HTTP on one DB and
// removes its directory when closed.
func TestStoreRef(t *testing.T) {
	ref, err := startStoreRef()
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{ref.blind, ref.readPlus} {
		url := "http://" + addr + "/buckets/bench/keys/x" + strings.ReplaceAll(addr, ":", "_")
		req, _ := http.NewRequest(http.MethodPut, url+"?dw=0", strings.NewReader("v"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("PUT on %s: %s", addr, res.Status)
		}
		res, err = http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(got) != "v" {
			t.Fatalf("GET on %s: %s %q", addr, res.Status, got)
		}
	}
	dir := ref.dir
	if err := ref.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after close: %v, want removed", dir, err)
	}
}
