package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// newHTTPServer returns a server with the settings of Cairn's KV listener, which the
// bare and store references share.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
}

// storeHandler is the store reference: the least a net/http server over Cairn's storage
// engine can do for the put phase's requests. PUT (and POST) read the body into a
// pooled buffer and write it under the URL path as key, unsynced (dw=0), as a
// one-record storage.Batch, then answer 204; with readFirst they first Read the key
// (a Riak PUT's read before write, at the least). GET answers 200 with the value stored
// under the path (Content-Type application/octet-stream and Content-Length), 404 when
// there is none. Query strings are ignored.
type storeHandler struct {
	db        *storage.DB
	readFirst bool
	// beforeWrite, when set (tests), is called with whether the read found the key, after
	// the read and before the write of a readFirst PUT.
	beforeWrite func(found bool)
}

// storeBuf is one request's key, body and batch, recycled through storeBufs.
type storeBuf struct {
	key, body []byte
	batch     storage.Batch
}

var storeBufs = sync.Pool{New: func() any { return new(storeBuf) }}

var storeCT = []string{"application/octet-stream"}

func (h *storeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		v, err := h.db.Get([]byte(r.URL.Path))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			w.WriteHeader(http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			hd := w.Header()
			hd["Content-Type"] = storeCT
			hd["Content-Length"] = []string{strconv.Itoa(len(v))}
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(v)
		}
	case http.MethodPut, http.MethodPost:
		buf := storeBufs.Get().(*storeBuf)
		defer storeBufs.Put(buf)
		var err error
		if buf.body, err = readBody(r, buf.body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		buf.key = append(buf.key[:0], r.URL.Path...)
		if h.readFirst {
			it, err := h.db.Read(r.Context(), buf.key)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if h.beforeWrite != nil {
				h.beforeWrite(it.Rev.Exists())
			}
		}
		buf.batch.Reset()
		buf.batch.Put(buf.key, buf.body)
		if err := h.db.Write(&buf.batch, false); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// readBody reads r's whole body into dst's storage (growing it if needed), in one go
// when the request has a Content-Length (net/http's body then ends there).
func readBody(r *http.Request, dst []byte) ([]byte, error) {
	dst = dst[:0]
	if n := r.ContentLength; n >= 0 {
		if int64(cap(dst)) < n {
			dst = make([]byte, 0, n)
		}
		dst = dst[:n]
		if _, err := io.ReadFull(r.Body, dst); err != nil {
			return dst[:0], err
		}
		return dst, nil
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		m, err := r.Body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+m]
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// storeRef is the put phase's store reference: one storage.DB, with Cairn's default
// options, in a temporary directory of its own, served by two HTTP servers: blind
// writes, and a read before each write.
type storeRef struct {
	dir      string
	db       *storage.DB
	servers  []*http.Server
	blind    string // the blind server's address
	readPlus string // the read-before-write server's address
}

// startStoreRef opens the store reference's DB and starts its servers.
func startStoreRef() (*storeRef, error) {
	dir, err := os.MkdirTemp("", "cairn-bench-store-")
	if err != nil {
		return nil, err
	}
	s := &storeRef{dir: dir}
	if s.db, err = storage.Open(dir, storage.Options{}); err != nil {
		return nil, errors.Join(err, s.close())
	}
	for _, readFirst := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		srv := newHTTPServer(&storeHandler{db: s.db, readFirst: readFirst})
		s.servers = append(s.servers, srv)
		go func() { _ = srv.Serve(ln) }()
		if readFirst {
			s.readPlus = ln.Addr().String()
		} else {
			s.blind = ln.Addr().String()
		}
	}
	return s, nil
}

// close stops the servers, closes the DB and removes its directory.
func (s *storeRef) close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}
