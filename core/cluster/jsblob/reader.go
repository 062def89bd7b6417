package jsblob

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"

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
	return &reader{s: s, ctx: ctx, id: bytes.Clone(id), hid: hex.EncodeToString(id), h: h, curN: -1}, nil
}

// Size is the blob's length.
func (r *reader) Size() int64 { return r.h.Size }

// Close ends the reader.
func (r *reader) Close() error {
	r.closed, r.cur = true, nil
	return nil
}

// chunk returns chunk n, from the reader's one-chunk cache or fetched.
func (r *reader) chunk(n int64) ([]byte, error) {
	if r.closed {
		return nil, errClosed
	}
	if n == r.curN {
		return r.cur, nil
	}
	c, err := r.fetch(r.ctx, n)
	if err != nil {
		return nil, err
	}
	r.cur, r.curN = c, n
	return c, nil
}

// fetch reads chunk n from any replica (from the leader if that one has not got it
// yet) and checks it against the length the head implies.
func (r *reader) fetch(ctx context.Context, n int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	subj := r.s.chunkSubj(r.hid, r.h.gen(), n)
	m, err := r.s.getDirect(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		m, err = r.s.getLeader(ctx, subj)
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

// CopyRange writes the n bytes from off to w, chunk by chunk, fetching up to
// ReadAhead chunks ahead of the one being written.
func (r *reader) CopyRange(w io.Writer, off, n int64) (int64, error) {
	if off < 0 || n < 0 || off > r.h.Size || n > r.h.Size-off {
		return 0, errRange
	}
	if r.closed {
		return 0, errClosed
	}
	if n == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithCancel(r.ctx)
	ahead := newPrefetch(ctx, r, off/r.h.Chunk, (off+n-1)/r.h.Chunk, r.s.cfg.ReadAhead)
	defer func() {
		cancel()
		ahead.wait()
	}()
	var done int64
	for done < n {
		pos := off + done
		c, err := ahead.next()
		if err != nil {
			return done, err
		}
		start := pos - pos/r.h.Chunk*r.h.Chunk
		end := min(int64(len(c)), start+n-done)
		k, err := w.Write(c[start:end])
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// fetched is a chunk a prefetch goroutine read.
type fetched struct {
	data []byte
	err  error
}

// prefetch fetches chunks first..last in order, depth at a time, each in a goroutine
// the prefetch owns: wait returns once they all ended.
type prefetch struct {
	ctx          context.Context
	r            *reader
	upNext, last int64 // the next chunk to start, the last to fetch
	queue        []chan fetched
	wg           sync.WaitGroup
}

// newPrefetch starts fetching chunks first..last of r, depth of them at a time.
func newPrefetch(ctx context.Context, r *reader, first, last int64, depth int) *prefetch {
	p := &prefetch{ctx: ctx, r: r, upNext: first, last: last}
	for range max(depth, 1) {
		p.start()
	}
	return p
}

// start starts fetching the next chunk, if any is left.
func (p *prefetch) start() {
	if p.upNext > p.last {
		return
	}
	ch := make(chan fetched, 1)
	p.queue = append(p.queue, ch)
	p.wg.Add(1)
	go func(n int64) {
		defer p.wg.Done()
		data, err := p.r.fetch(p.ctx, n)
		ch <- fetched{data, err}
	}(p.upNext)
	p.upNext++
}

// next returns the next chunk in order, and starts fetching one more.
func (p *prefetch) next() ([]byte, error) {
	if len(p.queue) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	f := <-p.queue[0]
	p.queue = p.queue[1:]
	p.start()
	return f.data, f.err
}

// wait waits for the fetches still running (after canceling their context).
func (p *prefetch) wait() { p.wg.Wait() }
