package jsblob

import (
	"context"
	"crypto/sha256"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster/jsblob/internal/natstest"
)

// heapPeak samples the heap in use until stop is called, which returns the peak
// growth over the heap at the start. The collector runs often meanwhile, so that the
// peak is what is held rather than garbage not yet collected.
func heapPeak() (stop func() int64) {
	gc := debug.SetGCPercent(5)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	var peak int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, int64(m.HeapInuse)-base)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		debug.SetGCPercent(gc)
		return peak
	}
}

// patternReader yields n bytes of a pattern, in the caller's buffer.
type patternReader struct{ off, n int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n-r.off)
	for i := range k {
		p[i] = byte((r.off + i) % 251)
	}
	r.off += k
	return int(k), nil
}

// TestStreamedBoundedMemory writes a 64 MiB blob in 64 KiB pieces and reads it back
// through CopyRange, and checks that the heap (the embedded server's included) grows
// by a small part of the blob, not by the blob.
func TestStreamedBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB through JetStream")
	}
	const size = 64 << 20
	nodes := natstest.Start(t, 1)
	s := newStore(t, nodes[0].JS, Config{})
	ctx := context.Background()
	id := []byte("big")

	stop := heapPeak()
	w, err := s.Create(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(w, want), &patternReader{n: size}, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	writePeak := stop()

	stop = heapPeak()
	r, err := s.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := r.CopyRange(got, 0, r.Size())
	r.Close()
	readPeak := stop()
	if err != nil || n != size {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	if string(got.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatal("the 64 MiB blob reads back other bytes")
	}
	t.Logf("heap growth: writing %.1f MiB, reading %.1f MiB, for a blob of %d MiB", float64(writePeak)/(1<<20), float64(readPeak)/(1<<20), size>>20)
	const limit = 24 << 20
	if writePeak > limit || readPeak > limit {
		t.Errorf("heap grew by %d bytes writing, %d reading a %d-byte blob: more than %d", writePeak, readPeak, size, limit)
	}
}
