package jsblob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/storage"
)

// reader reads a committed blob chunk by chunk, keeping the last chunk it fetched.
type reader struct {
	s   *Store
	ctx context.Context
	id  []byte
	hid string
	h   head
	// cur is chunk curN's data (curN -1: none).
	cur    []byte
	curN   int64
	closed bool
}

// Open opens the committed blob id. The reader reads with ctx, and keeps reading the
// same bytes for ReaderGrace after a Remove.
func (s *Store) Open(ctx context.Context, id []byte) (storage.BlobReader, error) {
	h, err := s.committed(ctx, id)
	if err != nil {
		return nil, err
	}
	return &reader{s: s, ctx: ctx, id: id, hid: hex.EncodeToString(id), h: h, curN: -1}, nil
}

// Size is the blob's length.
func (r *reader) Size() int64 { return r.h.Size }

// Close ends the reader.
func (r *reader) Close() error {
	r.closed, r.cur = true, nil
	return nil
}

// chunk returns chunk n, fetched from any replica (the leader if that one has not got
// it yet) and checked against the length the head implies.
func (r *reader) chunk(n int64) ([]byte, error) {
	if r.closed {
		return nil, errClosed
	}
	if n == r.curN {
		return r.cur, nil
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	subj := r.s.chunkSubj(r.hid, r.h.gen(), n)
	m, err := r.s.getDirect(r.ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		m, err = r.s.getLeader(r.ctx, subj)
	}
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("jsblob: blob %x: chunk %d is gone (removed longer than %v ago?): %w", r.id, n, r.s.cfg.ReaderGrace, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, fmt.Errorf("jsblob: blob %x: %w", r.id, err)
	}
	want := min(r.h.Chunk, r.h.Size-n*r.h.Chunk)
	if int64(len(m.Data)) != want {
		return nil, fmt.Errorf("jsblob: blob %x: chunk %d of %d bytes, %d expected: %w", r.id, n, len(m.Data), want, io.ErrUnexpectedEOF)
	}
	r.cur, r.curN = m.Data, n
	return m.Data, nil
}

// ReadAt reads len(p) bytes from off, chunk by chunk.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("jsblob: read at %d: %w", off, errRange)
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		if pos >= r.h.Size {
			return done, io.EOF
		}
		n := pos / r.h.Chunk
		c, err := r.chunk(n)
		if err != nil {
			return done, err
		}
		done += copy(p[done:], c[pos-n*r.h.Chunk:])
	}
	return done, nil
}

// CopyRange writes the n bytes from off to w, one chunk at a time.
func (r *reader) CopyRange(w io.Writer, off, n int64) (int64, error) {
	if off < 0 || n < 0 || off > r.h.Size || n > r.h.Size-off {
		return 0, errRange
	}
	var done int64
	for done < n {
		pos := off + done
		i := pos / r.h.Chunk
		c, err := r.chunk(i)
		if err != nil {
			return done, err
		}
		start := pos - i*r.h.Chunk
		end := min(int64(len(c)), start+n-done)
		k, err := w.Write(c[start:end])
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}
