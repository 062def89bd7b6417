package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
	"github.com/cairnkv/cairn/core/server"
)

// The s3 phase: the object-storage interface against a bare net/http file server.
//
//   - PUT and GET throughput of small (4 KiB) and large (4 MiB) objects over loopback,
//     each against a bare net/http server that writes each object to a new file, fsyncs
//     it and renames it over the object's file before the answer (as Cairn syncs the
//     object before its commit) and serves it back from that file (sendfile); both sides get byte-identical requests (V2-signed, path style)
//     from the built-in generator, the bare server ignoring the signature;
//   - the same comparison for large objects as the AWS SDKs send them (s3v4.go);
//   - one PUT of a big object (1 GiB) streamed from a generator, with the process's peak
//     RSS above its idle RSS (target: under 64 MiB), then a streaming GET of it whose MD5
//     is checked, with its peak RSS too.
//
// It runs its own Cairn (S3 listener on a loopback port, a fresh data directory), so
// that the KV data of the other phases does not weigh on it, and the built-in generator
// whatever --loadgen says (wrk cannot sign requests).

// s3Bucket is the s3 phase's bucket.
const s3Bucket = "bench-s3"

// s3RSSLimitMiB is the big upload's target: peak RSS above idle; s3MultipartRSSLimitMiB
// the multipart upload's.
const (
	s3RSSLimitMiB          = 64
	s3MultipartRSSLimitMiB = 128
)

// s3RSSInterval is how often the big transfers sample the RSS.
const s3RSSInterval = 50 * time.Millisecond

// Objects in the key set of each size: PUTs overwrite random ones of them, GETs read
// random ones.
const (
	s3SmallKeys = 1024
	s3LargeKeys = 32
)

// s3Result is the s3 phase's section of the report and of the JSON line.
type s3Result struct {
	// Auth describes how requests are signed.
	Auth string `json:"auth"`
	// Seconds is the measured time of each side of a pair, after WarmupS of warm-up, in
	// Slices alternating slices.
	Seconds float64        `json:"seconds"`
	WarmupS float64        `json:"warmup_s"`
	Slices  int            `json:"slices"`
	Cases   []s3CaseResult `json:"cases"`
	Big     *s3BigResult   `json:"big,omitempty"`
	// Multipart is the multipart upload of --s3-multipart bytes.
	Multipart *s3MultipartResult `json:"multipart,omitempty"`
	// V4 is the signature V4 comparison of large objects (--s3-v4-sizes).
	V4 []s3V4Case `json:"v4,omitempty"`
	// Versioned is the versioning part (s3versions.go).
	Versioned *s3VersionedResult `json:"versioned,omitempty"`
}

// s3MultipartResult is the multipart upload and its GET.
type s3MultipartResult struct {
	Size     int64 `json:"size"`
	PartSize int64 `json:"part_size"`
	Parts    int   `json:"parts"`
	Conns    int   `json:"conns"`
	// Verified: the completed ETag is the MD5 of the part MD5s, and the GET's bytes have,
	// part by part, the MD5s of the parts sent.
	Verified bool       `json:"verified"`
	Put      s3Transfer `json:"put"`
	Get      s3Transfer `json:"get"`
}

// s3CaseResult is one operation on one object size, Cairn against the bare server.
type s3CaseResult struct {
	Op         string  `json:"op"` // PUT or GET
	Size       int64   `json:"size"`
	Conns      int     `json:"conns"`
	Keys       int     `json:"keys"`
	CairnOps   float64 `json:"cairn_ops"`
	CairnMiBs  float64 `json:"cairn_mib_s"`
	BareOps    float64 `json:"bare_ops"`
	BareMiBs   float64 `json:"bare_mib_s"`
	Ratio      float64 `json:"ratio"` // Cairn / bare
	CairnP50ms float64 `json:"cairn_p50_ms,omitempty"`
	BareP50ms  float64 `json:"bare_p50_ms,omitempty"`
}

// s3BigResult is the big object's PUT and GET.
type s3BigResult struct {
	Size int64  `json:"size"`
	MD5  string `json:"md5"`
	// Verified: the PUT's ETag and the GET's body both had the MD5 of the data sent.
	Verified bool       `json:"verified"`
	Put      s3Transfer `json:"put"`
	Get      s3Transfer `json:"get"`
}

// s3Transfer is one big transfer: its rate and the process's memory meanwhile.
type s3Transfer struct {
	Seconds float64 `json:"seconds"`
	MiBs    float64 `json:"mib_s"`
	// IdleMiB is the RSS just before (after a GC that returned free memory to the OS);
	// PeakMiB the highest RSS sampled during the transfer, GrowthMiB their difference.
	IdleMiB   float64 `json:"idle_rss_mib"`
	PeakMiB   float64 `json:"peak_rss_mib"`
	GrowthMiB float64 `json:"rss_growth_mib"`
	// HeapPeakMiB is the highest Go heap (live and not yet collected objects) sampled,
	// HeapIdleMiB the same figure before: where the RSS growth comes from.
	HeapIdleMiB float64 `json:"heap_idle_mib"`
	HeapPeakMiB float64 `json:"heap_peak_mib"`
	Samples     int     `json:"samples"`
	// HWMMiB is the kernel's peak RSS of the process (VmHWM), reset just before the
	// transfer (/proc/self/clear_refs), read just after: unlike the samples, it misses
	// no short peak. Zero when the kernel does not allow the reset.
	HWMMiB float64 `json:"vmhwm_mib,omitempty"`
}

// byteSize is a size flag: a number of bytes with an optional binary suffix (K, KiB,
// M, MiB, G, GiB, case-insensitive).
type byteSize int64

func (s *byteSize) String() string { return fmtSize(int64(*s)) }

func (s *byteSize) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = byteSize(n)
	return nil
}

// parseSize reads "4096", "4KiB", "4k", "1GiB", "1.5MiB".
func parseSize(v string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if s, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(s), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("%q is not a size (like 4096, 4KiB, 4MiB, 1GiB)", v)
	}
	return int64(f * float64(mult)), nil
}

// fmtSize writes n bytes in the largest binary unit that divides it.
func fmtSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// sizeList is a comma-separated list of sizes.
type sizeList []int64

func (l *sizeList) String() string {
	var parts []string
	for _, n := range *l {
		parts = append(parts, fmtSize(n))
	}
	return strings.Join(parts, ",")
}

func (l *sizeList) Set(v string) error {
	*l = nil
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		n, err := parseSize(p)
		if err != nil {
			return err
		}
		*l = append(*l, n)
	}
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// s3Cred is the benchmark user's key pair.
type s3Cred struct{ keyID, secret string }

// httpDate formats the Date header, once per second whatever the request rate.
type httpDate struct{ cur atomic.Pointer[dateStamp] }

type dateStamp struct {
	sec int64
	s   string
}

func (d *httpDate) now() string {
	t := time.Now()
	if p := d.cur.Load(); p != nil && p.sec == t.Unix() {
		return p.s
	}
	p := &dateStamp{sec: t.Unix(), s: t.UTC().Format(http.TimeFormat)}
	d.cur.Store(p)
	return p.s
}

// Headers the V2 string to sign reads: only Content-Type is sent besides Date.
var (
	s3PutHeaders = map[string][]string{"Content-Type": {"application/octet-stream"}}
	s3GetHeaders = map[string][]string{}
)

// signV2 returns the Authorization header value of a path-style request (no x-amz-*
// headers, no Content-MD5) on resource at date.
func (c s3Cred) signV2(method, resource, date string) string {
	h := s3GetHeaders
	if method == http.MethodPut {
		h = s3PutHeaders
	}
	sts := sig.StringToSignV2(&sig.Request{Method: method, Header: h}, date, resource)
	return "AWS " + c.keyID + ":" + sig.SignV2(c.secret, sts)
}

// s3Key is the i-th object of a key set.
func s3Key(prefix string, i int) string { return prefix + string(appendPadded(nil, uint64(i), 8)) }

// s3Workload builds the raw requests of one operation on one key set. PUT bodies are
// size-byte windows of pool at random offsets (so consecutive objects differ);
// Sequential keys follow the run's sequence number (to populate the set once).
type s3Workload struct {
	method     string
	prefix     string // key prefix within s3Bucket
	keys       int
	sequential bool
	size       int
	pool       []byte // at least size bytes
	cred       s3Cred
	date       *httpDate
	bucket     string // "" is s3Bucket
}

// raw returns the built-in generator's request function, sending Host: host. The
// requests are the same bytes for every server but the Host line.
func (w s3Workload) raw(host string) RequestFunc {
	hostLine := "Host: " + host + "\r\n"
	sizeStr := strconv.Itoa(w.size)
	bucket := w.bucket
	if bucket == "" {
		bucket = s3Bucket
	}
	return func(dst []byte, r *rand.Rand, seq int64) []byte {
		i := int(seq)
		if !w.sequential {
			i = r.IntN(w.keys)
		}
		resource := "/" + bucket + "/" + s3Key(w.prefix, i)
		date := w.date.now()
		dst = append(dst, w.method...)
		dst = append(dst, ' ')
		dst = append(dst, resource...)
		dst = append(dst, " HTTP/1.1\r\n"...)
		dst = append(dst, hostLine...)
		dst = append(dst, "Date: "...)
		dst = append(dst, date...)
		dst = append(dst, "\r\nAuthorization: "...)
		dst = append(dst, w.cred.signV2(w.method, resource, date)...)
		if w.method != http.MethodPut {
			return append(dst, "\r\n\r\n"...)
		}
		dst = append(dst, "\r\nContent-Type: application/octet-stream\r\nContent-Length: "...)
		dst = append(dst, sizeStr...)
		dst = append(dst, "\r\n\r\n"...)
		off := 0
		if extra := len(w.pool) - w.size; extra > 0 {
			off = r.IntN(extra + 1)
		}
		return append(dst, w.pool[off:off+w.size]...)
	}
}

// s3BareHandler is the baseline: PUT /bucket/key writes the body to a new file in dir,
// fsyncs it, renames it to the object's file and answers 200; GET serves the file (200,
// Content-Type, Content-Length; net/http sends it with sendfile). Requests are not
// authenticated.
func s3BareHandler(dir string) http.Handler {
	ct := []string{"application/octet-stream"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := bareObjectFile(dir, r.URL.Path)
		if !ok {
			http.Error(w, "bad object path", http.StatusBadRequest)
			return
		}
		switch r.Method {
		case http.MethodPut:
			if err := writeSynced(name, r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header()["Content-Length"] = []string{"0"}
			w.WriteHeader(http.StatusOK)
		case http.MethodGet:
			f, err := os.Open(name)
			if errors.Is(err, os.ErrNotExist) {
				http.NotFound(w, r)
				return
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			h := w.Header()
			h["Content-Type"] = ct
			h["Content-Length"] = []string{strconv.FormatInt(fi.Size(), 10)}
			w.WriteHeader(http.StatusOK)
			_, _ = io.Copy(w, f)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
}

// bareObjectFile maps /bucket/key to dir/bucket.key; keys of other characters than
// letters, digits, '-', '_' and '.' are refused.
func bareObjectFile(dir, p string) (string, bool) {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !ok || bucket == "" || key == "" || key[0] == '.' {
		return "", false
	}
	for _, s := range []string{bucket, key} {
		for _, c := range s {
			if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
				return "", false
			}
		}
	}
	return filepath.Join(dir, bucket+"."+key), true
}

// writeSynced writes body to a new temporary file beside name, fsyncs it and renames it
// over name: the previous object stays whole until the new one is durable, as in Cairn
// (which also syncs the directory).
func writeSynced(name string, body io.Reader) error {
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// s3Servers are the phase's two servers.
type s3Servers struct {
	srv               *server.Server
	cred              s3Cred
	cairnAddr, kvAddr string
	bare              *http.Server
	bareAddr          string
	dirs              []string
}

func (s *s3Servers) close() error {
	var errs []error
	if s.bare != nil {
		errs = append(errs, s.bare.Close())
	}
	if s.srv != nil {
		errs = append(errs, s.srv.Close())
	}
	for _, d := range s.dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	return errors.Join(errs...)
}

// startS3Servers starts a Cairn serving S3 on a loopback port with a user and the
// benchmark bucket, and the bare file server.
func (b *bench) startS3Servers(ctx context.Context) (*s3Servers, error) {
	s := &s3Servers{}
	dir, err := os.MkdirTemp("", "cairn-bench-s3-")
	if err != nil {
		return s, err
	}
	s.dirs = append(s.dirs, dir)
	bareDir, err := os.MkdirTemp("", "cairn-bench-s3bare-")
	if err != nil {
		return s, err
	}
	s.dirs = append(s.dirs, bareDir)

	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.KVListen, cfg.S3Listen, cfg.LogLevel = dir, "127.0.0.1:0", "127.0.0.1:0", "error"
	cfg.CacheSize = b.o.CacheSize
	cfg.ObjectCacheSize = b.o.ObjectCacheSize
	cfg.S3MaxObjectSize = max(cfg.S3MaxObjectSize, int64(b.o.S3Big))
	srv, err := server.New(cfg, "bench", slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		return s, err
	}
	s.srv = srv
	if err := srv.Start(); err != nil {
		return s, err
	}
	s.cairnAddr, s.kvAddr = srv.S3Addr().String(), srv.KVAddr().String()
	u, err := srv.S3().CreateUser(ctx, s3.NewUser{Name: "cairn-bench", Email: "bench@cairn-bench.invalid"})
	if err != nil {
		return s, fmt.Errorf("create the S3 user: %w", err)
	}
	s.cred = s3Cred{keyID: u.KeyID, secret: u.KeySecret}
	who := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, err := s3.CannedACL("", u.Owner(), u.Owner())
	if err != nil {
		return s, err
	}
	if _, err := srv.S3().CreateBucket(ctx, who, s3Bucket, acl); err != nil {
		return s, fmt.Errorf("create the S3 bucket: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return s, err
	}
	s.bareAddr = ln.Addr().String()
	// The same server settings as Cairn's listeners.
	s.bare = &http.Server{Handler: s3BareHandler(bareDir), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
	go func() { _ = s.bare.Serve(ln) }()
	return s, nil
}

// phaseS3 runs the s3 phase.
func (b *bench) phaseS3(ctx context.Context) error {
	s, err := b.startS3Servers(ctx)
	if err != nil {
		return errors.Join(err, s.close())
	}
	defer func() {
		if err := s.close(); err != nil {
			b.logf("s3: closing: %v", err)
		}
	}()
	b.s3 = &s3Result{Auth: "signature V2 (HMAC-SHA1 of a ~90-byte string per request), path style",
		Seconds: b.o.S3Duration.Seconds(), WarmupS: b.o.Warmup.Seconds(), Slices: b.slices()}
	// The big object first, on the fresh server: its idle RSS then holds no memtable
	// filled by the throughput runs, which would hide part of the growth.
	if err := b.s3BigObject(ctx, s); err != nil {
		return err
	}
	if b.o.S3Multipart > 0 {
		if err := b.s3MultipartObject(ctx, s); err != nil {
			return err
		}
	}
	if err := b.s3V4Compare(ctx, s); err != nil {
		return err
	}
	date := &httpDate{}
	for _, c := range []struct {
		size  int
		conns int
		keys  int
	}{
		{int(b.o.S3Small), b.o.S3SmallConns, s3SmallKeys},
		{int(b.o.S3Large), b.o.S3LargeConns, s3LargeKeys},
	} {
		pool := makeValue(c.size + min(c.size, 64<<10))
		prefix := "o" + fmtSize(int64(c.size)) + "-"
		w := s3Workload{prefix: prefix, keys: c.keys, size: c.size, pool: pool, cred: s.cred, date: date}
		if err := b.s3Populate(ctx, s, w, max(8, c.conns)); err != nil {
			return err
		}
		for _, method := range []string{http.MethodPut, http.MethodGet} {
			if err := b.s3Settle(ctx, s); err != nil {
				return err
			}
			w.method = method
			name := "s3-" + strings.ToLower(method) + "-" + fmtSize(int64(c.size))
			bare, cairn, err := b.s3Pair(ctx,
				side{name: name + "-bare", server: "bare", addr: s.bareAddr, build: w.raw(s.bareAddr), conns: c.conns},
				side{name: name + "-cairn", server: "cairn", addr: s.cairnAddr, build: w.raw(s.cairnAddr), conns: c.conns})
			if err != nil {
				return err
			}
			r := s3CaseResult{Op: method, Size: int64(c.size), Conns: c.conns, Keys: c.keys,
				CairnOps: cairn.RPS, CairnMiBs: cairn.RPS * mib(int64(c.size)), CairnP50ms: cairn.P50ms,
				BareOps: bare.RPS, BareMiBs: bare.RPS * mib(int64(c.size)), BareP50ms: bare.P50ms}
			if bare.RPS > 0 {
				r.Ratio = cairn.RPS / bare.RPS
			}
			b.s3.Cases = append(b.s3.Cases, r)
		}
	}
	return b.s3Versioned(ctx, s, date)
}

// s3Settle waits for the S3 server's LevelDB compactions, as settle does for the main one.
func (b *bench) s3Settle(ctx context.Context, s *s3Servers) error {
	saved := b.cairnAddr
	b.cairnAddr = s.kvAddr
	defer func() { b.cairnAddr = saved }()
	return b.settle(ctx)
}

// s3Populate writes w's key set once on both servers (unmeasured) from conns connections.
func (b *bench) s3Populate(ctx context.Context, s *s3Servers, w s3Workload, conns int) error {
	w.method, w.sequential = http.MethodPut, true
	for _, t := range []struct{ name, addr string }{{"bare", s.bareAddr}, {"cairn", s.cairnAddr}} {
		start := time.Now()
		st, err := runToEnd(ctx, Builtin{Addr: t.addr, Conns: conns, Build: w.raw(t.addr), Total: int64(w.keys), Seed: 1})
		if err != nil {
			return err
		}
		b.logf("s3: %s: %d objects of %s written in %v, %d errors", t.name, st.Requests, fmtSize(int64(w.size)),
			time.Since(start).Round(time.Millisecond), st.Errors)
		if st.Errors > 0 || st.Requests != int64(w.keys) {
			return fmt.Errorf("s3: populate %s: %d of %d PUTs failed", t.name, int64(w.keys)-st.Requests, w.keys)
		}
	}
	return nil
}

// s3Pair measures x and y as measurePair does (warm-ups, then alternating slices),
// over --s3-duration; one slice means one warm-up of --warmup before each side.
func (b *bench) s3Pair(ctx context.Context, x, y side) (phaseResult, phaseResult, error) {
	n := b.slices()
	d := b.o.S3Duration / time.Duration(n)
	ramp := min(b.o.Warmup, 100*time.Millisecond)
	if n <= 1 {
		ramp = b.o.Warmup
	} else if err := b.warmUp(ctx, x, y); err != nil {
		return phaseResult{}, phaseResult{}, err
	}
	return b.slicedPair(ctx, x, y, n, ramp, d, n == 1)
}

// genReader yields n deterministic pseudo-random bytes (ChaCha8) without holding them,
// feeding a hash as it goes.
type genReader struct {
	src  *rand.ChaCha8
	left int64
	sum  hash.Hash
}

func newGenReader(n int64, seed byte) *genReader {
	var s [32]byte
	s[0] = seed
	return &genReader{src: rand.NewChaCha8(s), left: n, sum: md5.New()}
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, _ := g.src.Read(p)
	g.sum.Write(p[:n])
	g.left -= int64(n)
	return n, nil
}

// genSHA256 is the hex SHA-256 of newGenReader(n, seed)'s bytes.
func genSHA256(n int64, seed byte) (string, error) {
	h := sha256.New()
	if _, err := io.CopyBuffer(h, newGenReader(n, seed), make([]byte, 256<<10)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// memSampler samples the process's RSS and Go heap at an interval until stopped.
type memSampler struct {
	done, finished chan struct{}
	start          time.Time
	peakRSS        int64 // KiB
	peakHeap       uint64
	samples        int
	timeline       []string
}

// heapObjectsBytes is the Go heap's objects, live and not yet swept (runtime/metrics,
// no stop-the-world).
func heapObjectsBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func startMemSampler(interval time.Duration) *memSampler {
	m := &memSampler{done: make(chan struct{}), finished: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(m.finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		lastLog := time.Duration(-1)
		for {
			rss, err := rssKiB()
			heap := heapObjectsBytes()
			if err == nil {
				m.samples++
				m.peakRSS = max(m.peakRSS, rss)
				m.peakHeap = max(m.peakHeap, heap)
				if el := time.Since(m.start); el-lastLog >= time.Second || lastLog < 0 {
					lastLog = el
					m.timeline = append(m.timeline, fmt.Sprintf("%.1fs:%d/%d", el.Seconds(), rss>>10, heap>>20))
				}
			}
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// stop ends the sampling; the fields are final afterwards.
func (m *memSampler) stop() {
	close(m.done)
	<-m.finished
}

// idleMemory collects garbage, returns free memory to the OS, and reads the RSS (KiB)
// and Go heap (bytes).
func idleMemory() (int64, uint64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	rss, err := rssKiB()
	return rss, heapObjectsBytes(), err
}

// s3BigObject PUTs one --s3-big object streamed from a generator, then GETs it back
// streaming, sampling the RSS during each.
func (b *bench) s3BigObject(ctx context.Context, s *s3Servers) error {
	size := int64(b.o.S3Big)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true,
		WriteBufferSize: 256 << 10, ReadBufferSize: 256 << 10}}
	defer client.CloseIdleConnections()
	res := &s3BigResult{Size: size}

	// Signed as the AWS SDKs sign: V4 with the body's SHA-256, which the server checks
	// as the body streams (one generator pass to hash it, another to send it).
	sum, err := genSHA256(size, 1)
	if err != nil {
		return err
	}
	gen := newGenReader(size, 1)
	req, err := newS3V4Client(s.cairnAddr, s.cred, 1).request(ctx, http.MethodPut, "big", gen, size, sum)
	if err != nil {
		return err
	}
	var etag string
	err = b.s3Transfer(&res.Put, size, "s3-big-put", func() error {
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("PUT %s: %s: %s", fmtSize(size), resp.Status, strings.TrimSpace(string(msg)))
		}
		etag = strings.Trim(resp.Header.Get("ETag"), `"`)
		return nil
	})
	if err != nil {
		return fmt.Errorf("s3 big PUT: %w", err)
	}
	res.MD5 = hex.EncodeToString(gen.sum.Sum(nil))
	putOK := etag == res.MD5
	if !putOK {
		b.notes = append(b.notes, fmt.Sprintf("s3: the big PUT's ETag %q is not the MD5 of the data sent (%s)", etag, res.MD5))
	}

	if err := b.s3Settle(ctx, s); err != nil {
		return err
	}
	req, err = newS3V4Client(s.cairnAddr, s.cred, 1).request(ctx, http.MethodGet, "big", nil, 0, "")
	if err != nil {
		return err
	}
	var got string
	var n int64
	err = b.s3Transfer(&res.Get, size, "s3-big-get", func() error {
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return fmt.Errorf("GET %s: %s: %s", fmtSize(size), resp.Status, strings.TrimSpace(string(msg)))
		}
		h := md5.New()
		n, err = io.CopyBuffer(h, resp.Body, make([]byte, 256<<10))
		got = hex.EncodeToString(h.Sum(nil))
		return err
	})
	if err != nil {
		return fmt.Errorf("s3 big GET: %w", err)
	}
	getOK := n == size && got == res.MD5
	if !getOK {
		b.notes = append(b.notes, fmt.Sprintf("s3: the big GET returned %d bytes of MD5 %s, not %d bytes of MD5 %s", n, got, size, res.MD5))
	}
	res.Verified = putOK && getOK
	b.s3.Big = res
	if res.Put.IdleMiB > 0 {
		b.limit(fmt.Sprintf("RSS above idle during one %s S3 PUT", fmtSize(size)), res.Put.GrowthMiB, "MiB", s3RSSLimitMiB)
	}
	return nil
}

// s3MultipartObject uploads one --s3-multipart object in --s3-part-size parts, sent
// --s3-part-conns at a time, each streamed from its own generator, then completes it and
// GETs it back, checking each part's bytes; the RSS is sampled during both.
func (b *bench) s3MultipartObject(ctx context.Context, s *s3Servers) error {
	size, partSize := int64(b.o.S3Multipart), int64(b.o.S3PartSize)
	parts := int((size + partSize - 1) / partSize)
	base := "http://" + s.cairnAddr + "/" + s3Bucket + "/multipart"
	resource := "/" + s3Bucket + "/multipart"
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: b.o.S3PartConns,
		WriteBufferSize: 256 << 10, ReadBufferSize: 256 << 10}}
	defer client.CloseIdleConnections()
	res := &s3MultipartResult{Size: size, PartSize: partSize, Parts: parts, Conns: b.o.S3PartConns}
	do := func(method, query string, body io.Reader, n int64) ([]byte, http.Header, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+"?"+query, body)
		if err != nil {
			return nil, nil, err
		}
		req.ContentLength = n
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("Date", date)
		h := s3GetHeaders
		if method == http.MethodPut {
			req.Header.Set("Content-Type", "application/octet-stream")
			h = s3PutHeaders
		}
		sts := sig.StringToSignV2(&sig.Request{Method: method, Header: h}, date, resource+"?"+query)
		req.Header.Set("Authorization", "AWS "+s.cred.keyID+":"+sig.SignV2(s.cred.secret, sts))
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		msg, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s ?%s: %s: %s", method, query, resp.Status, strings.TrimSpace(string(msg)))
		}
		return msg, resp.Header, err
	}
	etags := make([]string, parts)
	err := b.s3Transfer(&res.Put, size, "s3-multipart-put", func() error {
		body, _, err := do(http.MethodPost, "uploads", nil, 0)
		if err != nil {
			return err
		}
		var init struct {
			UploadID string `xml:"UploadId"`
		}
		if err := xml.Unmarshal(body, &init); err != nil || init.UploadID == "" {
			return fmt.Errorf("initiate: no upload id in %q", body)
		}
		next := make(chan int)
		errs := make(chan error, b.o.S3PartConns)
		for range b.o.S3PartConns {
			go func() {
				for n := range next {
					part := min(partSize, size-int64(n-1)*partSize)
					gen := newGenReader(part, byte(n))
					_, h, err := do(http.MethodPut, fmt.Sprintf("partNumber=%d&uploadId=%s", n, init.UploadID), gen, part)
					if err == nil && strings.Trim(h.Get("ETag"), `"`) != hex.EncodeToString(gen.sum.Sum(nil)) {
						err = fmt.Errorf("part %d: ETag %s is not the MD5 of the part", n, h.Get("ETag"))
					}
					if err != nil {
						errs <- err
						for range next {
						}
						return
					}
					etags[n-1] = hex.EncodeToString(gen.sum.Sum(nil))
				}
				errs <- nil
			}()
		}
		for n := 1; n <= parts; n++ {
			next <- n
		}
		close(next)
		var perr error
		for range b.o.S3PartConns {
			perr = errors.Join(perr, <-errs)
		}
		if perr != nil {
			return perr
		}
		var doc strings.Builder
		doc.WriteString("<CompleteMultipartUpload>")
		for i, e := range etags {
			fmt.Fprintf(&doc, "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>", i+1, e)
		}
		doc.WriteString("</CompleteMultipartUpload>")
		body, _, err = do(http.MethodPost, "uploadId="+init.UploadID, strings.NewReader(doc.String()), int64(doc.Len()))
		if err != nil {
			return err
		}
		var done struct {
			ETag string `xml:"ETag"`
		}
		if err := xml.Unmarshal(body, &done); err != nil {
			return fmt.Errorf("complete: %w", err)
		}
		h := md5.New()
		for _, e := range etags {
			raw, _ := hex.DecodeString(e)
			h.Write(raw)
		}
		if want := fmt.Sprintf("%x-%d", h.Sum(nil), parts); strings.Trim(done.ETag, `"`) != want {
			return fmt.Errorf("complete: ETag %s, want %s", done.ETag, want)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("s3 multipart PUT: %w", err)
	}
	if err := b.s3Settle(ctx, s); err != nil {
		return err
	}
	ok := true
	err = b.s3Transfer(&res.Get, size, "s3-multipart-get", func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base, nil)
		if err != nil {
			return err
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("Date", date)
		req.Header.Set("Authorization", s.cred.signV2(http.MethodGet, resource, date))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET: %s", resp.Status)
		}
		buf := make([]byte, 256<<10)
		for i := range parts {
			h := md5.New()
			part := min(partSize, size-int64(i)*partSize)
			if _, err := io.CopyBuffer(h, io.LimitReader(resp.Body, part), buf); err != nil {
				return err
			}
			if hex.EncodeToString(h.Sum(nil)) != etags[i] {
				ok = false
			}
		}
		if n, _ := io.Copy(io.Discard, resp.Body); n != 0 {
			ok = false
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("s3 multipart GET: %w", err)
	}
	res.Verified = ok
	if !ok {
		b.notes = append(b.notes, "s3: the multipart object read back differs from the parts sent")
	}
	b.s3.Multipart = res
	if res.Put.IdleMiB > 0 {
		b.limit(fmt.Sprintf("RSS above idle during one %s S3 multipart upload", fmtSize(size)), res.Put.GrowthMiB, "MiB", s3MultipartRSSLimitMiB)
	}
	return nil
}

// s3Transfer runs one big transfer with the memory sampler (and, with --cpuprofile,
// CPU and heap profiles), filling t.
func (b *bench) s3Transfer(t *s3Transfer, size int64, name string, fn func() error) error {
	idle, heapIdle, err := idleMemory()
	if err != nil {
		b.notes = append(b.notes, "s3: RSS not measured: "+err.Error())
	}
	hwmReset := resetPeakRSS() == nil
	m := startMemSampler(s3RSSInterval)
	stopProfile := b.profile(name)
	start := time.Now()
	err = fn()
	el := time.Since(start)
	stopProfile()
	m.stop()
	if err != nil {
		return err
	}
	if hwm, herr := procStatusKiB("VmHWM:"); hwmReset && herr == nil {
		t.HWMMiB = float64(hwm) / 1024
		m.peakRSS = max(m.peakRSS, hwm)
	}
	if b.o.CPUProfile != "" {
		b.heapProfile(name)
	}
	t.Seconds = el.Seconds()
	t.MiBs = mib(size) / el.Seconds()
	t.Samples = m.samples
	t.HeapIdleMiB, t.HeapPeakMiB = mib(int64(heapIdle)), mib(int64(m.peakHeap))
	if idle > 0 {
		t.IdleMiB, t.PeakMiB = float64(idle)/1024, float64(m.peakRSS)/1024
		t.GrowthMiB = float64(m.peakRSS-idle) / 1024
	}
	b.logf("%s: %s in %v = %.0f MiB/s; RSS idle %.0f MiB, peak %.0f MiB (+%.1f MiB); Go heap %.0f -> peak %.0f MiB; %d samples",
		name, fmtSize(size), el.Round(time.Millisecond), t.MiBs, t.IdleMiB, t.PeakMiB, t.GrowthMiB, t.HeapIdleMiB, t.HeapPeakMiB, m.samples)
	if t.HWMMiB > 0 {
		b.logf("%s: VmHWM (peak RSS, reset before) %.1f MiB", name, t.HWMMiB)
	}
	b.logf("%s: RSS MiB/heap MiB over time: %s", name, strings.Join(m.timeline, " "))
	return nil
}

// heapProfile writes the live heap (after a GC) to PREFIX.NAME.heap.pprof.
func (b *bench) heapProfile(name string) {
	path := b.o.CPUProfile + "." + name + ".heap.pprof"
	f, err := os.Create(path)
	if err != nil {
		b.logf("heap profile: %v", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.logf("heap profile: %v", err)
		return
	}
	b.logf("heap profile after %s in %s", name, path)
}

// reportS3 prints the s3 phase's section.
func (b *bench) reportS3(w io.Writer) error {
	r := b.s3
	if r == nil {
		return nil
	}
	fmt.Fprintf(w, "\ns3: object-storage interface vs a bare net/http server writing each object to a new file, fsynced\n"+
		"    and renamed over the old one (as Cairn syncs each object before its commit; GET via sendfile). Requests: %s, the same bytes\n"+
		"    to both (the bare server checks no signature and computes no MD5); built-in generator; PUTs overwrite\n"+
		"    random objects of a populated set, GETs read random ones. Each side: %gs after %gs of warm-up, in %d\n"+
		"    alternating slices.\n", r.Auth, r.Seconds, r.WarmupS, r.Slices)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\tconns\tobjects\tcairn ops/s\tcairn MiB/s\tbare ops/s\tbare MiB/s\tcairn/bare\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.1f\t%.0f\t%.1f\t%.2f\t\n", c.Op, fmtSize(c.Size), c.Conns, c.Keys,
			c.CairnOps, c.CairnMiBs, c.BareOps, c.BareMiBs, c.Ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := reportS3V4(w, r.V4); err != nil {
		return err
	}
	if g := r.Big; g != nil {
		verdict := "MD5 verified (PUT ETag and GET body)"
		if !g.Verified {
			verdict = "MD5 MISMATCH"
		}
		fmt.Fprintf(w, "    one %s object, streamed: PUT %.1fs (%.0f MiB/s), RSS %.0f -> peak %.0f MiB (+%.1f MiB; VmHWM %.0f MiB), Go heap peak %.0f MiB;\n"+
			"    GET %.1fs (%.0f MiB/s), RSS %.0f -> peak %.0f MiB (+%.1f MiB, no target), Go heap peak %.0f MiB; %s\n"+
			"    (RSS of the whole process, sampled every %v: Cairn, the client and the idle servers of the other phases)\n",
			fmtSize(g.Size), g.Put.Seconds, g.Put.MiBs, g.Put.IdleMiB, g.Put.PeakMiB, g.Put.GrowthMiB, g.Put.HWMMiB, g.Put.HeapPeakMiB,
			g.Get.Seconds, g.Get.MiBs, g.Get.IdleMiB, g.Get.PeakMiB, g.Get.GrowthMiB, g.Get.HeapPeakMiB, verdict, s3RSSInterval)
	}
	if m := r.Multipart; m != nil {
		verdict := "every part read back verified"
		if !m.Verified {
			verdict = "READ-BACK MISMATCH"
		}
		fmt.Fprintf(w, "    one %s multipart upload (%d parts of %s, %d at a time): PUT %.1fs (%.0f MiB/s), RSS +%.1f MiB;\n"+
			"    GET %.1fs (%.0f MiB/s), RSS +%.1f MiB; %s\n",
			fmtSize(m.Size), m.Parts, fmtSize(m.PartSize), m.Conns, m.Put.Seconds, m.Put.MiBs, m.Put.GrowthMiB,
			m.Get.Seconds, m.Get.MiBs, m.Get.GrowthMiB, verdict)
	}
	return reportS3Versioned(w, r.Versioned)
}
