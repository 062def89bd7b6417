package kv

import (
	"log/slog"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// TestReadOnlyServiceWritesNothing: a service on a store opened read-only (cairn check)
// starts on a store that has no node id, does not try to reap a due tombstone (no write
// error is logged, the tombstone stays), and still checks the store.
func TestReadOnlyServiceWritesNothing(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(db, Config{NodeID: "given", ReapDelay: time.Hour}) // stores no node id
	if err != nil {
		t.Fatal(err)
	}
	put(t, w, "b", "k", "v", nil)
	if _, err := w.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db.Close()

	ro, err := storage.Open(dir, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var logged syncLog
	clock := &fakeClock{t: time.Now().Add(2 * time.Hour)} // the tombstone is due
	s, err := New(ro, Config{ReadOnly: true, ReapDelay: 40 * time.Millisecond, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatalf("read-only service on a store without a node id: %v", err)
	}
	if s.NodeID() == "" {
		t.Error("no node id")
	}
	time.Sleep(200 * time.Millisecond) // a reaper would have ticked a few times
	rep, err := s.CheckStore()
	if err != nil || rep.Count != 0 || rep.Objects != 1 {
		t.Errorf("check: %+v, %v; want 1 object (the tombstone), no problem", rep, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if out := logged.String(); out != "" {
		t.Errorf("the read-only service logged %q; want nothing", out)
	}
}
