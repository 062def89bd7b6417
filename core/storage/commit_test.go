package storage

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestCloseWhileWriting closes the DB under 32 writers: each write either succeeds (and
// is there after reopening) or fails with ErrClosed, none waits for good, and the
// committer's goroutine ends with Close.
func TestCloseWhileWriting(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 32, 200
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards ok
		ok   [][]byte
		errc = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				key := k("t", "b", fmt.Sprintf("%d-%d", w, i))
				err := db.Put(key, []byte("v"), false)
				switch {
				case err == nil:
					mu.Lock()
					ok = append(ok, key)
					mu.Unlock()
				case errors.Is(err, ErrClosed):
					return
				default:
					errc <- err
					return
				}
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writers still waiting 10 s after Close")
	}
	close(errc)
	for err := range errc {
		t.Errorf("write during Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before Open", n, before)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, key := range ok {
		if _, err := db.Get(key); err != nil {
			t.Fatalf("acknowledged write %q lost: %v", key, err)
		}
	}
}
