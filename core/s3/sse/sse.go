// Package sse is the at-rest encryption of S3 object data (server-side encryption):
// the segment format an object's bytes are stored in, and the wrapping of the
// per-object data keys. It is pure crypto over the standard library; core/s3 decides
// which objects are encrypted and keeps the records.
//
// # Format
//
// An extent (an object's data stored under one chunk id, or one part of a multipart
// object) of size plaintext bytes is cut into Segments(size) segments of SegmentSize
// bytes (the last one shorter; an empty extent has one empty segment). Segment i is
// sealed with AES-256-GCM and stored as its ciphertext followed by the 16-byte tag, the
// segments back to back: SealedSize(size) bytes in all.
//
//   - The key of an extent's segments is HMAC-SHA256(data key, "cairn-sse/v1 segment key" ‖
//     extent id): every extent has its own key, derived from the object's random
//     256-bit data key and the extent's random 16-byte id.
//   - The nonce of segment i is the object's random 7-byte prefix ‖ i (4 bytes, big
//     endian) ‖ 1 for the last segment, 0 otherwise.
//   - The additional data is "cairn-sse/v1" ‖ extent id.
//
// So a segment moved to another place of its extent (reordered), to another extent
// (swapped), a stream cut at a segment boundary (truncated: its new last segment was
// sealed as not last) or any flipped bit fails authentication, and a range read opens
// only the segments it covers.
//
// # Version 2: parts and layout
//
// Version 1 (above: NewStream) binds segments to their extent only, so whoever can
// write the store could drop or reorder the whole parts of a multipart object (each
// part one extent) undetected. Version 2 (NewPartStream, records with format 2) binds
// every extent to its part number too — the segment key is HMAC-SHA256(data key,
// "cairn-sse/v2 segment key" ‖ extent id ‖ part number (4 bytes, big endian; 0 for
// an object stored whole)) and the additional data "cairn-sse/v2" ‖ extent id ‖ part
// number — and authenticates the object's layout: Layout is an HMAC-SHA256, under
// LayoutKey(data key), of the ordered list of its extents' part numbers, ids and
// sizes, which the object's record keeps and a reader verifies before any data.
package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// Sizes of the format.
const (
	// SegmentSize is the plaintext size of every segment but the last.
	SegmentSize = 64 << 10
	// TagSize is what sealing adds to a segment.
	TagSize = 16
	// KeySize is the size of data keys and master keys (AES-256).
	KeySize = 32
	// NoncePrefixSize is the size of an object's random nonce prefix.
	NoncePrefixSize = 7
	// MaxSize is the largest extent the format holds (2³² segments).
	MaxSize = int64(math.MaxUint32) * SegmentSize
)

// sealedSegment is the stored size of a whole segment.
const sealedSegment = SegmentSize + TagSize

// ErrAuth means sealed data or a wrapped key failed authentication: it was changed,
// moved or cut, or the key is not the one it was sealed with.
var ErrAuth = errors.New("sse: authentication failed (data altered or wrong key)")

// errShort means a decrypter was not given all the sealed bytes of its range.
var errShort = errors.New("sse: sealed data ends early")

// Segments returns the number of segments of an extent of size plaintext bytes.
func Segments(size int64) int64 {
	if size <= 0 {
		return 1
	}
	return (size + SegmentSize - 1) / SegmentSize
}

// SealedSize returns the stored size of an extent of size plaintext bytes.
func SealedSize(size int64) int64 { return max(size, 0) + Segments(size)*TagSize }

// NewKey returns a random data key.
func NewKey() []byte { return random(KeySize) }

// NewNoncePrefix returns a random nonce prefix.
func NewNoncePrefix() []byte { return random(NoncePrefixSize) }

func random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("sse: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return b
}

// Stream seals or opens the segments of one extent.
type Stream struct {
	aead   cipher.AEAD
	prefix [NoncePrefixSize]byte
	aad    []byte
	size   int64
	segs   int64
}

// NewStream returns the version 1 stream of the extent id, holding size plaintext
// bytes, of an object with dataKey and noncePrefix (records without a format).
func NewStream(dataKey, noncePrefix, id []byte, size int64) (*Stream, error) {
	return newStream(dataKey, noncePrefix, "cairn-sse/v1", id, size)
}

// NewPartStream returns the version 2 stream of the extent id that is part number
// part of its object (0: the object stored whole).
func NewPartStream(dataKey, noncePrefix, id []byte, part uint32, size int64) (*Stream, error) {
	bound := binary.BigEndian.AppendUint32(append([]byte(nil), id...), part)
	return newStream(dataKey, noncePrefix, "cairn-sse/v2", bound, size)
}

// newStream returns the stream of version label of the extent bound (its id, and for
// version 2 its part number).
func newStream(dataKey, noncePrefix []byte, label string, bound []byte, size int64) (*Stream, error) {
	if len(dataKey) != KeySize || len(noncePrefix) != NoncePrefixSize {
		return nil, fmt.Errorf("sse: data key of %d bytes, nonce prefix of %d: want %d and %d", len(dataKey), len(noncePrefix), KeySize, NoncePrefixSize)
	}
	if size < 0 || size > MaxSize {
		return nil, fmt.Errorf("sse: extent of %d bytes: outside 0..%d", size, MaxSize)
	}
	mac := hmac.New(sha256.New, dataKey)
	mac.Write([]byte(label + " segment key"))
	mac.Write(bound)
	aead, err := newGCM(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	s := &Stream{aead: aead, aad: append([]byte(label), bound...), size: size, segs: Segments(size)}
	copy(s.prefix[:], noncePrefix)
	return s, nil
}

// LayoutEntry is one extent of an object's layout, in order: its part number (0 for
// an object stored whole), id and plaintext size.
type LayoutEntry struct {
	Part uint32
	ID   []byte
	Size int64
}

// LayoutKey derives from a data key the key its object's layout is authenticated with.
func LayoutKey(dataKey []byte) []byte {
	mac := hmac.New(sha256.New, dataKey)
	mac.Write([]byte("cairn-sse/v2 layout key"))
	return mac.Sum(nil)
}

// Layout returns the MAC, under layoutKey (LayoutKey), of an object's ordered extents.
func Layout(layoutKey []byte, extents []LayoutEntry) []byte {
	mac := hmac.New(sha256.New, layoutKey)
	mac.Write([]byte("cairn-sse/v2 layout"))
	var b [4 + 8 + 8]byte
	for _, e := range extents {
		binary.BigEndian.PutUint32(b[:4], e.Part)
		binary.BigEndian.PutUint64(b[4:12], uint64(len(e.ID)))
		binary.BigEndian.PutUint64(b[12:], uint64(e.Size))
		mac.Write(b[:])
		mac.Write(e.ID)
	}
	return mac.Sum(nil)
}

// CheckLayout reports whether mac is the Layout of extents under layoutKey
// (ErrAuth if not).
func CheckLayout(layoutKey []byte, extents []LayoutEntry, mac []byte) error {
	if !hmac.Equal(Layout(layoutKey, extents), mac) {
		return ErrAuth
	}
	return nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	return aead, nil
}

// plainLen returns the plaintext size of segment i.
func (s *Stream) plainLen(i int64) int {
	return int(min(SegmentSize, s.size-i*SegmentSize))
}

func (s *Stream) nonce(i int64) []byte {
	var n [12]byte
	copy(n[:], s.prefix[:])
	binary.BigEndian.PutUint32(n[NoncePrefixSize:], uint32(i))
	if i == s.segs-1 {
		n[11] = 1
	}
	return n[:]
}

// seal appends segment i, sealed, to dst.
func (s *Stream) seal(dst, plain []byte, i int64) []byte {
	return s.aead.Seal(dst, s.nonce(i), plain, s.aad)
}

// open appends the plaintext of sealed segment i to dst.
func (s *Stream) open(dst, sealed []byte, i int64) ([]byte, error) {
	if len(sealed) != s.plainLen(i)+TagSize {
		return nil, ErrAuth
	}
	out, err := s.aead.Open(dst, s.nonce(i), sealed, s.aad)
	if err != nil {
		return nil, ErrAuth
	}
	return out, nil
}

// SealedRange returns the sealed bytes [off, off+n) that hold plaintext [poff,
// poff+pn): the whole segments it touches (none for an empty range).
func (s *Stream) SealedRange(poff, pn int64) (off, n int64) {
	first := min(poff/SegmentSize, s.segs-1)
	off = first * sealedSegment
	if pn <= 0 {
		return off, 0
	}
	last := min((poff+pn-1)/SegmentSize, s.segs-1)
	end := min((last+1)*sealedSegment, SealedSize(s.size))
	return off, end - off
}

// buffers recycles the plaintext and sealed segment buffers of encrypters and
// decrypters (2 × sealedSegment bytes).
var buffers = sync.Pool{New: func() any { b := make([]byte, 2*sealedSegment); return &b }}

// Encrypter reads an extent's plaintext from a source and yields it sealed.
type Encrypter struct {
	s    *Stream
	src  io.Reader
	done func() error
	bp   *[]byte
	out  []byte // sealed bytes not yet read
	next int64  // next segment to seal
	err  error  // sticky: the error (or io.EOF) every later Read returns
}

// NewEncrypter returns a reader of the sealed form of the s.size bytes src yields.
// After the last segment, before io.EOF, it calls done (nil: none), whose error (such
// as a digest mismatch, or bytes past the size) Read returns instead. A src that ends
// early is io.ErrUnexpectedEOF. Close returns its buffers.
func (s *Stream) NewEncrypter(src io.Reader, done func() error) *Encrypter {
	return &Encrypter{s: s, src: src, done: done, bp: buffers.Get().(*[]byte)}
}

// Read implements io.Reader.
func (e *Encrypter) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		e.err = e.fill()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// fill seals the next segment into out, or returns why there is none.
func (e *Encrypter) fill() error {
	if e.bp == nil {
		return errors.New("sse: encrypter closed")
	}
	if e.next == e.s.segs {
		if e.done != nil {
			if err := e.done(); err != nil {
				return err
			}
		}
		return io.EOF
	}
	buf := *e.bp
	plain := buf[:e.s.plainLen(e.next)]
	if _, err := io.ReadFull(e.src, plain); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	e.out = e.s.seal(buf[sealedSegment:sealedSegment], plain, e.next)
	e.next++
	return nil
}

// Close releases the encrypter's buffers; it must not be read after.
func (e *Encrypter) Close() {
	if e.bp != nil {
		clear(*e.bp)
		buffers.Put(e.bp)
		e.bp, e.out = nil, nil
	}
}

// Decrypter is written an extent's sealed bytes, from the start of a segment, and
// writes plaintext to w.
type Decrypter struct {
	s    *Stream
	w    io.Writer
	bp   *[]byte
	have int   // sealed bytes of segment seg gathered (at (*bp)[:have])
	seg  int64 // segment being gathered
	skip int64 // plaintext bytes to drop from the next segment opened
	left int64 // plaintext bytes still to write
}

// NewDecrypter returns a writer that, written the sealed bytes s.SealedRange(off, n)
// names (from their start), writes plaintext [off, off+n) to w. Finish tells whether
// the whole range was written; Close returns its buffers.
func (s *Stream) NewDecrypter(w io.Writer, off, n int64) *Decrypter {
	first, _ := s.SealedRange(off, n)
	seg := first / sealedSegment
	return &Decrypter{s: s, w: w, bp: buffers.Get().(*[]byte), seg: seg, skip: off - seg*SegmentSize, left: n}
}

// Write implements io.Writer: it consumes all of p or fails.
func (d *Decrypter) Write(p []byte) (int, error) {
	if d.bp == nil {
		return 0, errors.New("sse: decrypter closed")
	}
	total := len(p)
	buf := *d.bp
	for len(p) > 0 {
		if d.left == 0 || d.seg >= d.s.segs {
			return total - len(p), errors.New("sse: sealed data past the range")
		}
		want := d.s.plainLen(d.seg) + TagSize
		k := copy(buf[d.have:want], p)
		d.have += k
		p = p[k:]
		if d.have < want {
			break
		}
		if err := d.flush(buf[:want]); err != nil {
			return total - len(p), err
		}
	}
	return total, nil
}

// flush opens the gathered segment and writes its part of the range.
func (d *Decrypter) flush(sealed []byte) error {
	plain, err := d.s.open((*d.bp)[sealedSegment:sealedSegment], sealed, d.seg)
	if err != nil {
		return err
	}
	d.have = 0
	d.seg++
	k := int64(len(plain))
	if d.skip >= k {
		d.skip -= k
		return nil
	}
	plain = plain[d.skip:]
	d.skip = 0
	plain = plain[:min(int64(len(plain)), d.left)]
	d.left -= int64(len(plain))
	if len(plain) == 0 {
		return nil
	}
	_, err = d.w.Write(plain)
	return err
}

// Finish returns nil if the whole range has been written, else an error.
func (d *Decrypter) Finish() error {
	if d.left > 0 || d.have > 0 {
		return errShort
	}
	return nil
}

// Close releases the decrypter's buffers; it must not be written after.
func (d *Decrypter) Close() {
	if d.bp != nil {
		clear(*d.bp)
		buffers.Put(d.bp)
		d.bp = nil
	}
}

// Wrap seals dataKey with kek (AES-256-GCM, random nonce), bound to aad: the stored
// form of a data key.
func Wrap(kek, dataKey, aad []byte) ([]byte, error) {
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	nonce := random(aead.NonceSize())
	return aead.Seal(nonce, nonce, dataKey, aad), nil
}

// Unwrap opens a key Wrap sealed; ErrAuth when kek or aad is not the one it was
// sealed with (or the record was altered).
func Unwrap(kek, wrapped, aad []byte) ([]byte, error) {
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	ns := aead.NonceSize()
	if len(wrapped) != WrappedSize || ns+KeySize+aead.Overhead() != WrappedSize {
		return nil, ErrAuth
	}
	key, err := aead.Open(nil, wrapped[:ns], wrapped[ns:], aad)
	if err != nil {
		return nil, ErrAuth
	}
	return key, nil
}

// WrappedSize is the size of a wrapped data key: nonce, key and tag.
const WrappedSize = 12 + KeySize + TagSize
