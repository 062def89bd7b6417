package storage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestKeyFilterNoFalseNegatives(t *testing.T) {
	f := newKeyFilter(1 << 30)
	const n = 400_000 // past the first two slices
	for i := range n {
		if !f.add(k("t", "b", fmt.Sprint(i))) {
			t.Fatalf("add %d: full", i)
		}
	}
	f.ready.Store(true)
	if got := len(*f.slices.Load()); got != 3 {
		t.Errorf("%d slices for %d keys, want 3", got, n)
	}
	for i := range n {
		if f.absent(k("t", "b", fmt.Sprint(i))) {
			t.Fatalf("key %d added but absent", i)
		}
	}
	maybe := 0
	const probes = 100_000
	for i := range probes {
		if !f.absent(k("t", "b", fmt.Sprint("never-", i))) {
			maybe++
		}
	}
	// Each slice errs on about 1-2% of absent keys when full; three slices, the last
	// a quarter full.
	if rate := float64(maybe) / probes; rate > 0.05 {
		t.Errorf("%.2f%% of absent keys read as maybe", 100*rate)
	}
	t.Logf("false maybes: %.2f%%, %d bytes for %d keys", 100*float64(maybe)/probes, f.size(), n)
}

func TestKeyFilterAnswers(t *testing.T) {
	f := newKeyFilter(1 << 30)
	key := k("t", "b", "x")
	if f.absent(key) {
		t.Fatal("a filter not ready answered absent")
	}
	f.ready.Store(true)
	if !f.absent(key) {
		t.Fatal("an empty filter did not answer absent")
	}
	f.add(key)
	if f.absent(key) {
		t.Fatal("added key answered absent")
	}
	// Overwrites do not count.
	before := (*f.slices.Load())[0].count.Load()
	for range 100 {
		f.add(key)
	}
	if after := (*f.slices.Load())[0].count.Load(); after != before {
		t.Errorf("count %d after 100 overwrites, was %d", after, before)
	}
	// Tables the filter does not cover are always maybe.
	for _, tag := range []byte{TagIndex, TagReap, TagExpiry, TagChunk} {
		if f.absent(KeyString(tag, "never")) {
			t.Errorf("table %q answered absent", tag)
		}
	}
	var nilFilter *keyFilter
	if nilFilter.absent(key) {
		t.Error("no filter answered absent")
	}
}

func TestKeyFilterFull(t *testing.T) {
	f := newKeyFilter(100 << 10) // the first slice (80 KiB) but not the second
	f.ready.Store(true)
	i := 0
	for ; f.add(k("t", "b", fmt.Sprint(i))); i++ {
		if i > 1<<20 {
			t.Fatal("never full")
		}
	}
	if i < filterFirstKeys {
		t.Errorf("full after %d keys, capacity %d", i, filterFirstKeys)
	}
	if f.absent(k("t", "b", "never")) {
		t.Error("a full filter answered absent")
	}
}

// TestKeyFilterOpen: the keys present at open are found by the scan; absent keys are
// then answered without LevelDB, and every key written later is found.
func TestKeyFilterOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := db.Put(k("t", "b", fmt.Sprint(i)), []byte("v"), false); err != nil {
			t.Fatal(err)
		}
	}
	db = reopenScanned(t, db, dir)
	if st := db.Stats(); st["key_filter_ready"] != true {
		t.Fatalf("filter not ready after the scan: %v", st["key_filter_ready"])
	}
	for i := range 1000 {
		if _, err := db.Get(k("t", "b", fmt.Sprint(i))); err != nil {
			t.Fatalf("key %d present at open: %v", i, err)
		}
	}
	hits := db.keys.hits.Load()
	for i := range 1000 {
		it, err := db.Read(context.Background(), k("t", "b", fmt.Sprint("new", i)))
		if err != nil || it.Rev.Exists() {
			t.Fatalf("new key %d: %v %v", i, it.Rev, err)
		}
	}
	if got := db.keys.hits.Load() - hits; got < 950 {
		t.Errorf("the filter answered %d of 1000 reads of absent keys", got)
	}
	// A key written after a read that found it absent conflicts with that read.
	key := k("t", "b", "new7")
	it, _ := db.Read(context.Background(), key)
	if err := db.Put(key, []byte("w"), false); err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.RequireItem(key, it)
	b.Put(key, []byte("late"))
	if err := db.Write(b, false); err == nil {
		t.Fatal("a write conditional on a stale absent read was applied")
	}
	if v, err := db.Get(key); err != nil || string(v) != "w" {
		t.Fatalf("get %q after the refused write: %q %v", key, v, err)
	}
}

// TestKeyFilterWriteThenRead: a key whose write was acknowledged is found by every
// later read, while other writers and the scan run (go test -race).
func TestKeyFilterWriteThenRead(t *testing.T) {
	db := openTest(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				key := k("t", "b", fmt.Sprintf("%d/%d", w, i))
				if err := db.Put(key, []byte("v"), false); err != nil {
					errs <- err
					return
				}
				it, err := db.Read(context.Background(), key)
				if err != nil || !it.Rev.Exists() {
					errs <- fmt.Errorf("%s written, then read: exists %v, %w", key, it.Rev.Exists(), err)
					return
				}
				if ok, err := db.Has(key); err != nil || !ok {
					errs <- fmt.Errorf("%s written, then Has: %v, %w", key, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestKeyFilterRebuild: a filter that fills up is rebuilt by a new scan from the keys
// still present (deleted keys drop out), and reads stay right throughout; one whose
// keys do not fit turns the filter off for good.
func TestKeyFilterRebuild(t *testing.T) {
	db, err := Open(t.TempDir(), Options{NoSync: true, KeyFilterBytes: 100 << 10}) // the first slice (80 KiB) and no second
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkInvariants(t, db); db.Close() })
	waitKeyScan(t, db)
	first := db.keys.serving.Load()
	// Write and delete more keys than the first slice holds: the filter fills up.
	b := db.NewBatch()
	for i := range filterFirstKeys + 1000 {
		key := k("t", "b", fmt.Sprint(i))
		b.Put(key, []byte("v"))
		if i%2 == 0 {
			b.Delete(key)
		}
		if b.Len() >= 1000 {
			writeBatch(t, db, b)
		}
	}
	writeBatch(t, db, b)
	deadline := time.Now().Add(10 * time.Second)
	for db.keys.serving.Load() == first || db.keys.scanning.Load() {
		if time.Now().After(deadline) {
			t.Fatal("no new filter 10 s after the first filled up")
		}
		time.Sleep(time.Millisecond)
	}
	if st := db.Stats(); st["key_filter_ready"] != true {
		t.Fatalf("rebuilt filter not ready: %v", st)
	}
	for i := range filterFirstKeys + 1000 {
		_, err := db.Get(k("t", "b", fmt.Sprint(i)))
		if want := i%2 == 1; want != (err == nil) {
			t.Fatalf("key %d: present %v, got err %v", i, want, err)
		}
	}
	// Now more keys present than fit: the next rebuild gives up for good.
	for i := range 2 * filterFirstKeys {
		b.Put(k("t", "c", fmt.Sprint(i)), []byte("v"))
		if b.Len() >= 1000 {
			writeBatch(t, db, b)
		}
	}
	writeBatch(t, db, b)
	deadline = time.Now().Add(10 * time.Second)
	for !db.keys.off.Load() {
		if time.Now().After(deadline) {
			t.Fatal("filter not off 10 s after the keys outgrew it")
		}
		time.Sleep(time.Millisecond)
	}
	waitKeyScan(t, db)
	if _, err := db.Get(k("t", "c", "5")); err != nil {
		t.Fatalf("present key with the filter off: %v", err)
	}
	if st := db.Stats(); st["key_filter_ready"] != false {
		t.Errorf("key_filter_ready %v with the filter off", st["key_filter_ready"])
	}
}

// writeBatch writes b and empties it.
func writeBatch(t *testing.T, db *DB, b *Batch) {
	t.Helper()
	if err := db.Write(b, false); err != nil {
		t.Fatal(err)
	}
	b.Reset()
}

// TestKeyFilterWriteWhileInstalling: a key written after the scan read the keys and
// before it installs its filter is in the filter installed (review: a group between
// the committer's loads of the filters and the swap was in neither).
func TestKeyFilterWriteWhileInstalling(t *testing.T) {
	key := k("t", "b", "written-while-installing")
	testHookScanned = func(db *DB) {
		if err := db.Put(key, []byte("siblings"), false); err != nil {
			t.Error(err)
		}
	}
	db, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkInvariants(t, db); db.Close() })
	waitKeyScan(t, db)
	testHookScanned = nil
	if db.keys.serving.Load() == nil {
		t.Fatal("no filter installed")
	}
	if ok, err := db.Has(key); err != nil || !ok {
		t.Fatalf("Has %v, %v", ok, err)
	}
	it, err := db.Read(context.Background(), key)
	if err != nil || !it.Rev.Exists() {
		t.Fatalf("Read: exists %v, %v", it.Rev.Exists(), err)
	}
	b := db.NewBatch()
	b.RequireItem(key, Item{}) // "absent": must conflict
	b.Put(key, []byte("fresh object"))
	if err := db.Write(b, false); err == nil {
		t.Fatal("a write conditional on absence replaced the stored object")
	}
}

// TestKeyFilterFullAllocatesNothing: adds to a full filter allocate no slice (review:
// each one allocated the next slice before finding it over the budget).
func TestKeyFilterFullAllocatesNothing(t *testing.T) {
	f := newKeyFilter(400 << 10)
	for i := 0; f.add(k("t", "b", fmt.Sprint(i))); i++ {
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for j := range 100 {
		if f.add(k("t", "b", fmt.Sprint("new-", j))) {
			t.Fatal("a full filter took a key")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 4<<10 {
		t.Errorf("%d bytes allocated per add to a full filter", per)
	}
	// The budget is used up: the last slice takes what the growth factor would
	// have exceeded.
	if f.size() < 300<<10 {
		t.Errorf("full at %d bytes of a 400 KiB budget", f.size())
	}
}

// TestKeyFilterScanAcrossClose: a filter that fills up while Close runs starts no scan
// that Close does not wait for (go test -race: review found wg.Add racing wg.Wait).
func TestKeyFilterScanAcrossClose(t *testing.T) {
	for range 5 {
		db, err := Open(t.TempDir(), Options{NoSync: true, KeyFilterBytes: 100 << 10})
		if err != nil {
			t.Fatal(err)
		}
		waitKeyScan(t, db)
		b := db.NewBatch()
		for i := range filterFirstKeys - 10 {
			b.Put(k("t", "b", fmt.Sprint(i)), []byte("v"))
		}
		writeBatch(t, db, b)
		for i := range 20000 {
			b.Put(k("t", "c", fmt.Sprint(i)), []byte("v"))
		}
		done := make(chan error, 1)
		go func() { done <- db.Write(b, false) }()
		for {
			db.committer.mu.Lock()
			n := len(db.committer.queue)
			db.committer.mu.Unlock()
			if n == 0 {
				break
			}
			runtime.Gosched()
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Fatal(err)
		}
	}
}

// TestKeyFilterScanChunks: a scan in chunks (a new iterator each) that skips the
// tables the filter does not cover finds every covered key.
func TestKeyFilterScanChunks(t *testing.T) {
	defer func(n int) { scanChunkKeys = n }(scanChunkKeys)
	scanChunkKeys = 7
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	var keys [][]byte
	for _, tag := range []byte{TagChunk, TagExpiry, TagGrant, TagIndex, TagModule, TagObject, TagS3, TagReap} {
		for i := range 20 {
			key := KeyString(tag, "b", fmt.Sprint(i))
			b.Put(key, []byte("v"))
			if filtered(key) {
				keys = append(keys, key)
			}
		}
	}
	writeBatch(t, db, b)
	db = reopenScanned(t, db, dir)
	f := db.keys.serving.Load()
	if f == nil {
		t.Fatal("no filter")
	}
	for _, key := range keys {
		if f.absent(key) {
			t.Fatalf("covered key %q absent after a chunked scan", key)
		}
	}
	// Only covered keys (and the schema record) were counted.
	var counted int64
	for _, s := range *f.slices.Load() {
		counted += s.count.Load()
	}
	if want := int64(len(keys) + 1); counted != want {
		t.Errorf("%d keys counted, want %d", counted, want)
	}
}

// reopenScanned closes db, opens dir again, waits for the key scan, and closes the new
// DB (after checking invariants) when the test ends.
func reopenScanned(t *testing.T, db *DB, dir string) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkInvariants(t, db); db.Close() })
	waitKeyScan(t, db)
	return db
}
