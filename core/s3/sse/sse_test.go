package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const S = SegmentSize

func plaintext(n int64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testStream(t testing.TB, key, id []byte, size int64) *Stream {
	t.Helper()
	s, err := NewStream(key, bytes.Repeat([]byte{9}, NoncePrefixSize), id, size)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seal returns the sealed form of plain, as an Encrypter yields it.
func seal(t testing.TB, s *Stream, plain []byte) []byte {
	t.Helper()
	e := s.NewEncrypter(bytes.NewReader(plain), nil)
	defer e.Close()
	out, err := io.ReadAll(e)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// open decrypts plaintext [off, off+n) from the sealed stream, fed as a reader of the
// sealed range would (in pieces of 1000 bytes, to cross segment boundaries mid-write).
func open(s *Stream, sealed []byte, off, n int64) ([]byte, error) {
	var out bytes.Buffer
	d := s.NewDecrypter(&out, off, n)
	defer d.Close()
	so, sn := s.SealedRange(off, n)
	if so+sn > int64(len(sealed)) {
		return nil, errShort
	}
	src := sealed[so : so+sn]
	for len(src) > 0 {
		k := min(1000, len(src))
		if _, err := d.Write(src[:k]); err != nil {
			return nil, err
		}
		src = src[k:]
	}
	return out.Bytes(), d.Finish()
}

// TestRoundTrip: every size around segment boundaries seals to SealedSize bytes and
// opens back whole; the sealed bytes do not contain the plaintext.
func TestRoundTrip(t *testing.T) {
	key := NewKey()
	for _, size := range []int64{0, 1, 100, S - 1, S, S + 1, 2 * S, 3*S + 5} {
		plain := plaintext(size)
		s := testStream(t, key, []byte("extent-1"), size)
		sealed := seal(t, s, plain)
		if int64(len(sealed)) != SealedSize(size) {
			t.Fatalf("size %d: sealed %d bytes, want %d", size, len(sealed), SealedSize(size))
		}
		if size >= 16 && bytes.Contains(sealed, plain[:16]) {
			t.Fatalf("size %d: the sealed bytes contain the plaintext", size)
		}
		got, err := open(s, sealed, 0, size)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("size %d: open: %v, equal %v", size, err, bytes.Equal(got, plain))
		}
	}
}

// TestRanges: every range between interesting offsets (segment boundaries ±1, the
// ends) decrypts to the plaintext's bytes, reading only the segments it touches.
func TestRanges(t *testing.T) {
	size := int64(3*S + 5)
	plain := plaintext(size)
	s := testStream(t, NewKey(), []byte("x"), size)
	sealed := seal(t, s, plain)
	points := []int64{0, 1, S - 1, S, S + 1, 2*S - 1, 2 * S, 2*S + 1, 3*S - 1, 3 * S, 3*S + 1, size - 1, size}
	for _, a := range points {
		for _, b := range points {
			if b < a {
				continue
			}
			so, sn := s.SealedRange(a, b-a)
			segs := (sn + sealedSegment - 1) / sealedSegment
			if want := (max(b-1, a)/S - a/S + 1); b > a && segs != want {
				t.Errorf("range %d+%d: %d segments read, want %d", a, b-a, segs, want)
			}
			if so%sealedSegment != 0 {
				t.Errorf("range %d+%d: sealed range starts mid-segment (%d)", a, b-a, so)
			}
			got, err := open(s, sealed, a, b-a)
			if err != nil || !bytes.Equal(got, plain[a:b]) {
				t.Errorf("range %d+%d: %v, %d bytes, equal %v", a, b-a, err, len(got), bytes.Equal(got, plain[a:b]))
			}
		}
	}
}

// TestTampering: a flipped bit, swapped or reordered segments, a truncated stream
// (at a segment boundary or inside one), a segment from another extent of the same
// object, the wrong key or nonce prefix: every one fails authentication.
func TestTampering(t *testing.T) {
	key := NewKey()
	size := int64(3 * S)
	plain := plaintext(size)
	s := testStream(t, key, []byte("extent-a"), size)
	sealed := seal(t, s, plain)
	other := seal(t, testStream(t, key, []byte("extent-b"), size), plain)
	seg := func(b []byte, i int) []byte { return b[i*sealedSegment : (i+1)*sealedSegment] }
	clone := func() []byte { return bytes.Clone(sealed) }
	cases := []struct {
		name   string
		sealed []byte
		s      *Stream
	}{
		{"flipped bit", func() []byte { b := clone(); b[S+10] ^= 1; return b }(), s},
		{"flipped tag", func() []byte { b := clone(); b[len(b)-1] ^= 0x80; return b }(), s},
		{"swapped segments", func() []byte {
			b := clone()
			x := bytes.Clone(seg(b, 0))
			copy(seg(b, 0), seg(b, 1))
			copy(seg(b, 1), x)
			return b
		}(), s},
		{"segment of another extent", func() []byte { b := clone(); copy(seg(b, 1), seg(other, 1)); return b }(), s},
		{"truncated at a segment boundary", sealed[:2*sealedSegment], testStream(t, key, []byte("extent-a"), 2*S)},
		{"truncated inside a segment", sealed[:len(sealed)-5], s},
		{"wrong key", sealed, testStream(t, NewKey(), []byte("extent-a"), size)},
		{"wrong extent id", sealed, testStream(t, key, []byte("extent-b"), size)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := open(c.s, c.sealed, 0, c.s.size)
			if err == nil {
				t.Fatal("tampered data opened")
			}
		})
	}
	// Another nonce prefix: the same key and extent id, other nonces.
	s2, _ := NewStream(key, bytes.Repeat([]byte{8}, NoncePrefixSize), []byte("extent-a"), size)
	if _, err := open(s2, sealed, 0, size); !errors.Is(err, ErrAuth) {
		t.Fatalf("other nonce prefix: %v, want ErrAuth", err)
	}
}

// TestEncrypterErrors: a source that ends early is io.ErrUnexpectedEOF; done's error
// is returned instead of io.EOF; a closed encrypter refuses to read.
func TestEncrypterErrors(t *testing.T) {
	s := testStream(t, NewKey(), []byte("x"), 2*S)
	e := s.NewEncrypter(bytes.NewReader(make([]byte, S+3)), nil)
	if _, err := io.ReadAll(e); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short source: %v", err)
	}
	e.Close()
	boom := errors.New("digest mismatch")
	e = s.NewEncrypter(bytes.NewReader(make([]byte, 2*S)), func() error { return boom })
	if _, err := io.ReadAll(e); !errors.Is(err, boom) {
		t.Fatalf("done's error: %v", err)
	}
	e.Close()
	if _, err := e.Read(make([]byte, 10)); err == nil {
		t.Fatal("closed encrypter read")
	}
}

// TestWrap: keys unwrap with the key and scheme they were wrapped with only; altered
// or short records fail.
func TestWrap(t *testing.T) {
	mk, _ := NewMasterKey(NewKey())
	dk := NewKey()
	w, err := mk.WrapKey(dk)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := mk.UnwrapKey(w); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap: %v", err)
	}
	other, _ := NewMasterKey(NewKey())
	if _, err := other.UnwrapKey(w); !errors.Is(err, ErrAuth) {
		t.Fatalf("other master key: %v", err)
	}
	if _, err := UnwrapCustomerKey(mk.key, w); !errors.Is(err, ErrAuth) {
		t.Fatalf("SSE-S3 record unwrapped as SSE-C: %v", err)
	}
	bad := bytes.Clone(w)
	bad[20] ^= 1
	for _, b := range [][]byte{bad, w[:10], nil} {
		if _, err := mk.UnwrapKey(b); !errors.Is(err, ErrAuth) {
			t.Fatalf("altered record: %v", err)
		}
	}
	if mk.ID() == other.ID() || len(mk.ID()) != 16 {
		t.Fatalf("ids %q %q", mk.ID(), other.ID())
	}
}

// TestMasterKeyFile: created 0600 at first use and read back the same; group- or
// world-readable, malformed and non-regular files are refused with a message saying
// why; concurrent creators agree on one key.
func TestMasterKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MasterKeyFile)
	k1, created, err := LoadOrCreateMasterKey(path)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %#o", fi.Mode().Perm())
	}
	k2, created, err := LoadOrCreateMasterKey(path)
	if err != nil || created || k2.ID() != k1.ID() {
		t.Fatalf("reload: %v %v", created, err)
	}
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := strings.Repeat("ab", KeySize)
	for _, c := range []struct{ name, path, want string }{
		{"group readable", write("g", good, 0o640), "owner only"},
		{"world readable", write("w", good, 0o604), "owner only"},
		{"short", write("s", good[:10], 0o600), "malformed"},
		{"not hex", write("h", strings.Repeat("zz", KeySize), 0o600), "malformed"},
		{"trailing text", write("t", good+"\nmore", 0o600), "malformed"},
		{"directory", dir, "not a regular file"},
	} {
		if _, err := LoadMasterKey(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := LoadMasterKey(write("ok", good+"\n", 0o600)); err != nil {
		t.Errorf("good key with a line feed: %v", err)
	}
	// Creators racing on one path all end with the one key written, and leave no
	// temporary file.
	race := filepath.Join(t.TempDir(), MasterKeyFile)
	ids := make(chan string, 8)
	for range 8 {
		go func() {
			k, _, err := LoadOrCreateMasterKey(race)
			if err != nil {
				ids <- err.Error()
				return
			}
			ids <- k.ID()
		}()
	}
	first := <-ids
	for range 7 {
		if id := <-ids; id != first {
			t.Fatalf("racing creators: %q and %q", first, id)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(race)); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// FuzzDecrypter: whatever sealed bytes a decrypter is fed, it never panics, never
// writes more than its range, and writes only what was sealed.
func FuzzDecrypter(f *testing.F) {
	key := bytes.Repeat([]byte{1}, KeySize)
	s, _ := NewStream(key, make([]byte, NoncePrefixSize), []byte("f"), 100)
	f.Add(seal(f, s, plaintext(100)), int64(100), int64(0), int64(100))
	f.Add([]byte("short"), int64(S+1), int64(S), int64(1))
	f.Fuzz(func(t *testing.T, sealed []byte, size, off, n int64) {
		size = max(0, min(size, 4*S))
		off = max(0, min(off, size))
		n = max(0, min(n, size-off))
		s, err := NewStream(key, make([]byte, NoncePrefixSize), []byte("f"), size)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		d := s.NewDecrypter(&out, off, n)
		defer d.Close()
		_, werr := d.Write(sealed)
		ferr := d.Finish()
		if int64(out.Len()) > n {
			t.Fatalf("wrote %d bytes of a %d-byte range", out.Len(), n)
		}
		if werr == nil && ferr == nil && n > 0 {
			// Only a real sealing of zeros-or-not authenticates: re-seal what came out
			// is not possible for a range, so check the whole-object case.
			if off == 0 && n == size {
				if got := seal(t, s, out.Bytes()); !bytes.Equal(got, sealed) {
					t.Fatal("opened data that is not what its plaintext seals to")
				}
			}
		}
	})
}

// BenchmarkSeal and BenchmarkOpen measure the segment format alone over 1 MiB.
func BenchmarkSeal(b *testing.B) {
	plain := plaintext(1 << 20)
	s := testStream(b, NewKey(), []byte("bench"), int64(len(plain)))
	b.SetBytes(int64(len(plain)))
	for range b.N {
		e := s.NewEncrypter(bytes.NewReader(plain), nil)
		if _, err := io.Copy(io.Discard, e); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

func BenchmarkOpen(b *testing.B) {
	plain := plaintext(1 << 20)
	s := testStream(b, NewKey(), []byte("bench"), int64(len(plain)))
	sealed := seal(b, s, plain)
	b.SetBytes(int64(len(plain)))
	for range b.N {
		d := s.NewDecrypter(io.Discard, 0, int64(len(plain)))
		if _, err := d.Write(sealed); err != nil {
			b.Fatal(err)
		}
		if err := d.Finish(); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}
