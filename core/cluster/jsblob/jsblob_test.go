package jsblob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/cluster/jsblob/internal/natstest"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/storage/blobtest"
)

// streams numbers the streams the tests create, so that each store is new and empty.
var streams atomic.Int64

// newStore opens a store on a new stream of js with cfg, closed and deleted at the
// end of the test.
func newStore(t testing.TB, js jetstream.JetStream, cfg Config) *Store {
	t.Helper()
	n := streams.Add(1)
	if cfg.Stream == "" {
		cfg.Stream = fmt.Sprintf("BLOBS_%d", n)
		cfg.Subject = fmt.Sprintf("t%d.blob", n)
	}
	s, err := New(context.Background(), js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, s.cfg.Stream)
	})
	return s
}

// same opens another store on the stream of s through js (another node's).
func same(t testing.TB, js jetstream.JetStream, s *Store) *Store {
	t.Helper()
	o, err := New(context.Background(), js, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func TestConformanceOneNode(t *testing.T) {
	nodes := natstest.Start(t, 1)
	blobtest.Run(t, func(t *testing.T) storage.BlobStore {
		// Small chunks: every range of the suite crosses chunk boundaries.
		return newStore(t, nodes[0].JS, Config{ChunkSize: 4096})
	})
}

func TestConformanceThreeNodes(t *testing.T) {
	nodes := natstest.Start(t, 3)
	i := 0
	blobtest.Run(t, func(t *testing.T) storage.BlobStore {
		i++
		return newStore(t, nodes[i%3].JS, Config{Replicas: 3, ChunkSize: 64 << 10})
	})
}

// put writes data as the blob id through s.
func put(t testing.TB, s storage.BlobStore, id, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := s.Create(ctx, id)
	if err != nil {
		t.Fatalf("create %x: %v", id, err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("write %x: %v", id, err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("commit %x: %v", id, err)
	}
}

// get reads the blob id whole through s.
func get(t testing.TB, s storage.BlobStore, id []byte) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatalf("open %x: %v", id, err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if _, err := r.CopyRange(&buf, 0, r.Size()); err != nil {
		t.Fatalf("read %x: %v", id, err)
	}
	return buf.Bytes()
}

// data returns n bytes that differ with seed.
func data(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%253) ^ seed
	}
	return b
}

// TestEveryNodeReads writes a blob through each node of three and reads each through
// every node, then loses the server leading the stream: the committed blobs stay
// readable and new ones writable through the two others.
func TestEveryNodeReads(t *testing.T) {
	nodes := natstest.Start(t, 3)
	s0 := newStore(t, nodes[0].JS, Config{Replicas: 3, ChunkSize: 32 << 10})
	stores := []*Store{s0, same(t, nodes[1].JS, s0), same(t, nodes[2].JS, s0)}
	blobs := map[string][]byte{}
	for i, s := range stores {
		id := []byte(fmt.Sprintf("node-%d", i))
		blobs[string(id)] = data(100<<10+i, byte(i))
		put(t, s, id, blobs[string(id)])
	}
	check := func(stores []*Store) {
		t.Helper()
		for id, want := range blobs {
			for j, s := range stores {
				if got := get(t, s, []byte(id)); !bytes.Equal(got, want) {
					t.Errorf("blob %s read through node %d: %d bytes, not the ones written", id, j, len(got))
				}
			}
		}
	}
	check(stores)

	// Lose the stream's leader: the worst case, as the survivors elect a new one.
	info, err := s0.stream.Info(context.Background())
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info: %v", err)
	}
	lost := -1
	for i, nd := range nodes {
		if nd.Server.Name() == info.Cluster.Leader {
			lost = i
		}
	}
	if lost < 0 {
		t.Fatalf("the stream's leader %q is none of the servers", info.Cluster.Leader)
	}
	nodes[lost].Shutdown()
	stores[lost].Close()
	stores = append(stores[:lost:lost], stores[lost+1:]...)
	start := time.Now()
	check(stores)
	t.Logf("the committed blobs read through both survivors %v after the leader's loss", time.Since(start))
	for i, s := range stores {
		id := []byte(fmt.Sprintf("after-loss-%d", i))
		blobs[string(id)] = data(70<<10, byte(10+i))
		put(t, s, id, blobs[string(id)])
	}
	t.Logf("and a blob written through each %v after it", time.Since(start))
	check(stores)
	if ok, err := stores[1].Remove(context.Background(), []byte("node-0")); !ok || err != nil {
		t.Errorf("remove with a server down = %v, %v", ok, err)
	}
}

// TestRemoveGrace shows a removed blob's chunks kept for the readers opened before,
// purged by the sweep once the grace has passed, and the id free for a new blob
// meanwhile.
func TestRemoveGrace(t *testing.T) {
	nodes := natstest.Start(t, 1)
	const grace = 300 * time.Millisecond
	s := newStore(t, nodes[0].JS, Config{ChunkSize: 1000, ReaderGrace: grace})
	ctx := context.Background()
	old := data(5000, 1)
	put(t, s, []byte("x"), old)
	r, err := s.Open(ctx, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ok, err := s.Remove(ctx, []byte("x")); !ok || err != nil {
		t.Fatalf("remove = %v, %v", ok, err)
	}
	put(t, s, []byte("x"), data(3000, 2)) // a new generation under the same id
	p := make([]byte, 5000)
	if n, err := r.ReadAt(p, 0); n != 5000 || err != nil || !bytes.Equal(p, old) {
		t.Fatalf("the reader opened before Remove: %d, %v", n, err)
	}
	// Sweep, not waiting for the store's own pass, which may be the one that runs.
	time.Sleep(grace + 50*time.Millisecond)
	if _, err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := r.ReadAt(p, 0); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the old reader after the grace: %d, %v; want its chunks gone", n, err)
	}
	if got := get(t, s, []byte("x")); !bytes.Equal(got, data(3000, 2)) {
		t.Errorf("the new generation reads %d bytes, not the ones written", len(got))
	}
	var names []string
	if err := s.Walk(ctx, func(id []byte, name string, size int64) error {
		names = append(names, fmt.Sprintf("%q %s %d", id, name, size))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || !strings.HasPrefix(names[0], `"x"`) || !strings.HasSuffix(names[0], " 3000") {
		t.Errorf("walk after the sweep: %q", names)
	}
}

// walkAll returns what Walk reports, one "id|name|size" line each.
func walkAll(t *testing.T, s *Store) []string {
	t.Helper()
	var got []string
	if err := s.Walk(context.Background(), func(id []byte, name string, size int64) error {
		got = append(got, fmt.Sprintf("%s|%s|%d", id, name, size))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestUnfinishedAndStray shows Walk reporting a blob whose writer never committed (by
// id, for the S3 collector's Remove) and chunks that belong to no blob (nil id), and
// a writer whose blob was removed meanwhile failing its Commit and leaving nothing.
func TestUnfinishedAndStray(t *testing.T) {
	nodes := natstest.Start(t, 1)
	s := newStore(t, nodes[0].JS, Config{ChunkSize: 100})
	ctx := context.Background()
	w, err := s.Create(ctx, []byte("dying"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data(250, 0)); err != nil {
		t.Fatal(err)
	}
	got := walkAll(t, s)
	if len(got) != 1 || !strings.HasPrefix(got[0], "dying|") || !strings.Contains(got[0], "(unfinished)") {
		t.Fatalf("walk with an unfinished blob: %q", got)
	}
	if _, err := s.Stat(ctx, []byte("dying")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("stat of an unfinished blob: %v", err)
	}
	// The collector removes it (its writer is presumed dead); the writer learns at
	// Commit, and what it wrote after the removal is purged.
	if ok, err := s.Remove(ctx, []byte("dying")); !ok || err != nil {
		t.Fatalf("remove of an unfinished blob = %v, %v", ok, err)
	}
	if _, err := w.Write(data(250, 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err == nil {
		t.Error("a commit after the blob was removed succeeded")
	}
	if got := walkAll(t, s); len(got) != 0 {
		t.Errorf("walk after the failed commit: %q", got)
	}
	// A chunk of no generation any head speaks for.
	if _, err := nodes[0].JS.Publish(ctx, s.chunkSubj("abcd", 999, 0), []byte("lost")); err != nil {
		t.Fatal(err)
	}
	got = walkAll(t, s)
	if len(got) != 1 || !strings.HasPrefix(got[0], "|") || !strings.HasSuffix(got[0], "|4") {
		t.Errorf("walk with a stray chunk: %q", got)
	}
}

// TestBadInput shows ids and configurations out of bounds refused, and a head that
// is not one of the store's records read as an error, not a blob.
func TestBadInput(t *testing.T) {
	nodes := natstest.Start(t, 1)
	s := newStore(t, nodes[0].JS, Config{})
	ctx := context.Background()
	long := bytes.Repeat([]byte{1}, MaxIDLen+1)
	if _, err := s.Create(ctx, long); err == nil {
		t.Error("an id longer than MaxIDLen was created")
	}
	if _, err := s.Stat(ctx, long); err == nil || errors.Is(err, storage.ErrNotFound) {
		t.Errorf("stat of a too long id: %v", err)
	}
	put(t, s, bytes.Repeat([]byte{0xff}, MaxIDLen), []byte("longest"))
	for _, c := range []Config{{ChunkSize: MaxChunkSize + 1}, {ChunkSize: -1}, {Replicas: 6}, {Subject: "a.*"}, {Subject: "a b"}, {Subject: "a."}} {
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	if _, err := New(ctx, nodes[0].JS, Config{ChunkSize: MaxChunkSize}); err == nil || !strings.Contains(err.Error(), "max_payload") {
		t.Errorf("chunks larger than the server's max_payload: %v", err)
	}
	for _, bad := range []string{`{"state":"committed","gen":1,"size":-1,"chunk":10}`, `{"state":"committed","gen":1,"size":1,"chunk":0}`,
		`{"state":"committed","size":1,"chunk":10}`, `{"state":"removed"}`, `{"state":"other"}`, `not json`} {
		if _, err := nodes[0].JS.Publish(ctx, s.headSubj("0102"), []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Open(ctx, []byte{1, 2}); err == nil || errors.Is(err, storage.ErrNotFound) {
			t.Errorf("open with the head %s: %v, want an error other than not found", bad, err)
		}
	}
}

// failAfter is a writer that fails once it took n bytes.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("client went away")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestCopyRangeStops shows CopyRange ending, its fetches ahead included, when the
// client's writer fails or the reader's context ends, and every range of a blob of
// many chunks read right with the fetches ahead.
func TestCopyRangeStops(t *testing.T) {
	nodes := natstest.Start(t, 1)
	s := newStore(t, nodes[0].JS, Config{ChunkSize: 1000, ReadAhead: 3})
	want := data(20_000, 7)
	put(t, s, []byte("r"), want)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := s.Open(ctx, []byte("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range [][2]int64{{0, 20_000}, {999, 2}, {1000, 1000}, {1500, 17_001}, {19_999, 1}, {7_777, 0}} {
		var buf bytes.Buffer
		if n, err := r.CopyRange(&buf, c[0], c[1]); n != c[1] || err != nil || !bytes.Equal(buf.Bytes(), want[c[0]:c[0]+c[1]]) {
			t.Errorf("CopyRange(%d, %d) = %d, %v", c[0], c[1], n, err)
		}
	}
	if n, err := r.CopyRange(&failAfter{n: 2500}, 0, 20_000); n != 2500 || err == nil {
		t.Errorf("CopyRange to a writer failing after 2500 bytes = %d, %v", n, err)
	}
	cancel()
	if n, err := r.CopyRange(io.Discard, 0, 20_000); !errors.Is(err, context.Canceled) {
		t.Errorf("CopyRange with its context ended = %d, %v", n, err)
	}
	r.Close()
	if _, err := r.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("ReadAt after Close succeeded")
	}
}

// TestRacesAcrossNodes has the three nodes create one id at once (one wins, the
// others get ErrExists) and remove it at once (one reports the removal), round after
// round.
func TestRacesAcrossNodes(t *testing.T) {
	nodes := natstest.Start(t, 3)
	s0 := newStore(t, nodes[0].JS, Config{Replicas: 3})
	stores := []*Store{s0, same(t, nodes[1].JS, s0), same(t, nodes[2].JS, s0)}
	ctx := context.Background()
	for round := range 5 {
		id := []byte{byte(round)}
		type result struct {
			node int
			w    storage.BlobWriter
			err  error
		}
		results := make(chan result, len(stores))
		for i, s := range stores {
			go func() {
				w, err := s.Create(ctx, id)
				results <- result{i, w, err}
			}()
		}
		winner := -1
		for range stores {
			r := <-results
			switch {
			case r.err == nil && winner >= 0:
				t.Fatalf("round %d: nodes %d and %d both created the id", round, winner, r.node)
			case r.err == nil:
				winner = r.node
				if _, err := r.w.Write([]byte{byte(r.node)}); err != nil {
					t.Fatal(err)
				}
				if err := r.w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			case !errors.Is(r.err, ErrExists):
				t.Errorf("round %d: the losing create on node %d: %v, want ErrExists", round, r.node, r.err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no create won", round)
		}
		if got := get(t, stores[(winner+1)%3], id); !bytes.Equal(got, []byte{byte(winner)}) {
			t.Errorf("round %d: the blob reads %v, node %d wrote it", round, got, winner)
		}
		removed := make(chan bool, len(stores))
		for _, s := range stores {
			go func() {
				ok, err := s.Remove(ctx, id)
				if err != nil {
					t.Error(err)
				}
				removed <- ok
			}()
		}
		n := 0
		for range stores {
			if <-removed {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d: %d of 3 concurrent removals reported removing the blob", round, n)
		}
	}
}
