package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openTest opens a fresh DB in a temporary directory with fsync disabled and closes it
// (after checking invariants) when the test ends.
func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		checkInvariants(t, db)
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// checkInvariants verifies what must hold after any storage test: every key decodes, the
// schema version is present, and no iterator or snapshot leaked.
func checkInvariants(t *testing.T, db *DB) {
	t.Helper()
	waitKeyScan(t, db) // its iterator is the DB's own
	it := db.Iterate(nil, nil)
	defer it.Release()
	var prev []byte
	for it.Next() {
		k := it.Key()
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			t.Errorf("invariant: keys out of order: %q then %q", prev, k)
		}
		prev = append(prev[:0], k...)
		if _, _, err := DecodeKey(k); err != nil {
			t.Errorf("invariant: %v", err)
		}
	}
	if err := it.Err(); err != nil {
		t.Errorf("invariant: iterate: %v", err)
	}
	if v, err := db.Get(schemaKey); err != nil || string(v) != "1" {
		t.Errorf("invariant: schema version = %q, %v", v, err)
	}
	it.Release()
	st := db.Stats()
	if n := st["alive_iterators"]; n != 0 {
		t.Errorf("invariant: %v iterators alive", n)
	}
	if n := st["alive_snapshots"]; n != 0 {
		t.Errorf("invariant: %v snapshots alive", n)
	}
}

func k(s ...string) []byte { return KeyString(TagObject, s...) }

func TestGetPutDelete(t *testing.T) {
	db := openTest(t)
	if _, err := db.Get(k("t", "b", "missing")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	if ok, err := db.Has(k("t", "b", "missing")); ok || err != nil {
		t.Fatalf("Has missing = %v, %v", ok, err)
	}
	val := []byte("v1")
	if err := db.Put(k("t", "b", "k"), val, false); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X' // the DB must have copied it
	got, err := db.Get(k("t", "b", "k"))
	if err != nil || string(got) != "v1" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	got[0] = 'Y' // the caller owns the slice
	if again, _ := db.Get(k("t", "b", "k")); string(again) != "v1" {
		t.Fatalf("Get after mutating result = %q", again)
	}
	if ok, err := db.Has(k("t", "b", "k")); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}
	if err := db.Delete(k("t", "b", "k"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(k("t", "b", "k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get deleted: %v", err)
	}
	if err := db.Delete(k("t", "b", "never"), false); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
}

func TestReopenPersistence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < 100; i++ {
		b.Put(k("t", "b", fmt.Sprint(i)), []byte(fmt.Sprint("v", i)))
	}
	if err := db.Write(b, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := db.Get(k("t", "b", "1")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := db.Put(k("t", "b", "1"), nil, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 100; i++ {
		v, err := db.Get(k("t", "b", fmt.Sprint(i)))
		if err != nil || string(v) != fmt.Sprint("v", i) {
			t.Fatalf("after reopen, key %d = %q, %v", i, v, err)
		}
	}
	checkInvariants(t, db)
}

func TestLockedInProcess(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{NoSync: true})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open err = %v, want ErrLocked", err)
	}
	want := fmt.Sprintf("storage: data directory %q is in use by another process (LOCK held)", dir)
	if err.Error() != want {
		t.Fatalf("message = %q, want %q", err.Error(), want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db.Close()
}

const helperEnv = "CAIRN_STORAGE_TEST_HELPER"

// TestHelperProcess is not a test: the cross-process tests re-execute the test binary
// with helperEnv set to "mode:dir" and this function does the child's part.
func TestHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("helper process for the cross-process tests")
	}
	mode, dir, _ := strings.Cut(spec, ":")
	db, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	switch mode {
	case "hold":
		// Hold the lock until the parent closes our stdin.
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		db.Close()
		os.Exit(0)
	case "crash":
		// Acknowledge a synced batch and die without closing the DB.
		b := db.NewBatch()
		b.Put(k("t", "b", "crash1"), []byte("one"))
		b.Put(k("t", "b", "crash2"), []byte("two"))
		b.Delete(k("t", "b", "gone"))
		if err := db.Write(b, true); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("ready")
		os.Exit(0)
	}
	os.Exit(3)
}

// startHelper runs TestHelperProcess in a child process and waits for its "ready" line.
func startHelper(t *testing.T, mode, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode+":"+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("helper %s: %q, %v", mode, line, err)
	}
	go io.Copy(io.Discard, stdout)
	return cmd, stdin
}

func TestLockedAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin := startHelper(t, "hold", dir)
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("Open while child holds the dir: %v, want ErrLocked", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after child exit: %v", err)
	}
	db.Close()
}

func TestSyncedBatchSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Put(k("t", "b", "gone"), []byte("x"), true); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cmd, stdin := startHelper(t, "crash", dir)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for key, want := range map[string]string{"crash1": "one", "crash2": "two"} {
		if v, err := db.Get(k("t", "b", key)); err != nil || string(v) != want {
			t.Errorf("%s = %q, %v; want %q", key, v, err, want)
		}
	}
	if _, err := db.Get(k("t", "b", "gone")); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted key: %v", err)
	}
	checkInvariants(t, db)
}

func TestSchemaVersion(t *testing.T) {
	tests := []struct {
		name   string
		stored string // "" = leave as written by Open
		want   error
	}{
		{"current", "", nil},
		{"older accepted", "1", nil},
		{"newer refused", "2", ErrSchemaTooNew},
		{"garbage", "one", ErrBadSchema},
		{"zero", "0", ErrBadSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.stored != "" {
				if err := db.Put(KeyString(TagMeta, "schema"), []byte(tt.stored), true); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			db, err = Open(dir, Options{NoSync: true})
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("reopen err = %v, want %v", err, tt.want)
			}
			if err != nil {
				if errors.Is(tt.want, ErrSchemaTooNew) && !strings.Contains(err.Error(), "schema version 2") {
					t.Errorf("message does not name the version: %v", err)
				}
				// The refused open must have released the lock.
				if _, err := Open(dir, Options{NoSync: true}); !errors.Is(err, tt.want) {
					t.Fatalf("second refused open: %v", err)
				}
				return
			}
			db.Close()
		})
	}
}

func TestBatch(t *testing.T) {
	db := openTest(t)
	if err := db.Put(k("t", "b", "del"), []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	if err := db.Write(b, true); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if err := db.Write(nil, true); err != nil {
		t.Fatalf("nil batch: %v", err)
	}
	key := []byte("reused")
	b.Put(k("t", "b", "a"), []byte("1"))
	b.Put(k("t", "b", "a"), []byte("2")) // later operation wins
	b.Delete(k("t", "b", "del"))
	b.Put(k("t", "b", string(key)), key)
	key[0] = 'X' // Put copied
	if b.Len() != 4 || b.Size() == 0 {
		t.Fatalf("Len = %d, Size = %d", b.Len(), b.Size())
	}
	if err := db.Write(b, false); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.Get(k("t", "b", "a")); string(v) != "2" {
		t.Fatalf("a = %q", v)
	}
	if v, _ := db.Get(k("t", "b", "reused")); string(v) != "reused" {
		t.Fatalf("reused = %q", v)
	}
	if ok, _ := db.Has(k("t", "b", "del")); ok {
		t.Fatal("del still present")
	}
	b.Reset()
	if b.Len() != 0 {
		t.Fatalf("Len after Reset = %d", b.Len())
	}
	var zero Batch // the zero value is usable
	zero.Put(k("t", "b", "z"), nil)
	if err := db.Write(&zero, false); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.Has(k("t", "b", "z")); !ok {
		t.Fatal("zero-value batch not written")
	}
}

// TestBatchAtomicity checks that concurrent readers never see half of a batch: every
// batch writes the same generation number to a group of keys.
func TestBatchAtomicity(t *testing.T) {
	db := openTest(t)
	const keys = 8
	write := func(gen int) error {
		b := db.NewBatch()
		for i := 0; i < keys; i++ {
			b.Put(k("t", "atom", fmt.Sprint(i)), []byte(fmt.Sprint(gen)))
		}
		return db.Write(b, false)
	}
	if err := write(0); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				it := db.IteratePrefix(k("t", "atom"))
				var first string
				n := 0
				for it.Next() {
					if n == 0 {
						first = string(it.Value())
					} else if string(it.Value()) != first {
						errc <- fmt.Errorf("torn batch: %q then %q", first, it.Value())
						it.Release()
						return
					}
					n++
				}
				it.Release()
				if n != keys {
					errc <- fmt.Errorf("saw %d keys", n)
					return
				}
			}
		}()
	}
	for gen := 1; gen <= 300; gen++ {
		if err := write(gen); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func TestConcurrentSyncWriters(t *testing.T) {
	db, err := Open(t.TempDir(), Options{}) // real fsync: exercises group commit
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				b := db.NewBatch()
				b.Put(k("t", "gc", fmt.Sprint(g, "/", i)), []byte("v"))
				b.Put(KeyString(TagIndex, "t", "gc", "idx_bin", fmt.Sprint(i), fmt.Sprint(g, "/", i)), nil)
				if err := db.Write(b, true); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	it := db.IteratePrefix(k("t", "gc"))
	for it.Next() {
		n++
	}
	it.Release()
	if n != 320 {
		t.Fatalf("%d objects, want 320", n)
	}
	checkInvariants(t, db)
}

func collect(t *testing.T, it *Iterator) []string {
	t.Helper()
	defer it.Release()
	var out []string
	for it.Next() {
		_, cs, err := DecodeKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(cs[len(cs)-1])+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIterateBounds(t *testing.T) {
	db := openTest(t)
	for _, key := range []string{"a", "b", "b\x00", "c", "d"} {
		if err := db.Put(k("t", "b1", key), []byte("1"), false); err != nil {
			t.Fatal(err)
		}
		if err := db.Put(k("t", "b10", key), []byte("10"), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put(k("t", "b\x00", "z"), []byte("0"), false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		it   func() *Iterator
		want []string
	}{
		{"prefix is exact", func() *Iterator { return db.IteratePrefix(k("t", "b1")) },
			[]string{"a=1", "b=1", "b\x00=1", "c=1", "d=1"}},
		{"prefix with zero byte", func() *Iterator { return db.IteratePrefix(k("t", "b\x00")) },
			[]string{"z=0"}},
		{"half open", func() *Iterator { return db.Iterate(k("t", "b1", "b"), k("t", "b1", "d")) },
			[]string{"b=1", "b\x00=1", "c=1"}},
		{"hi excluded exactly", func() *Iterator { return db.Iterate(k("t", "b1", "b"), k("t", "b1", "b\x00")) },
			[]string{"b=1"}},
		{"empty range", func() *Iterator { return db.Iterate(k("t", "b1", "c"), k("t", "b1", "c")) }, nil},
		{"inverted range", func() *Iterator { return db.Iterate(k("t", "b1", "d"), k("t", "b1", "a")) }, nil},
		{"nil hi runs to end", func() *Iterator { return db.Iterate(k("t", "b10", "d"), nil) },
			[]string{"d=10", "schema=1"}}, // TagMeta sorts after TagObject
		{"missing prefix", func() *Iterator { return db.IteratePrefix(k("t", "nope")) }, nil},
		{"snapshot scan is exact", func() *Iterator {
			snap, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(snap.Release)
			return snap.Scan(k("t", "b1"))
		}, []string{"a=1", "b=1", "b\x00=1", "c=1", "d=1"}},
		{"tag prefix", func() *Iterator { return db.IteratePrefix([]byte{TagIndex}) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, tt.it())
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// nil lo: the whole keyspace, starting with the first table.
	it := db.Iterate(nil, nil)
	defer it.Release()
	if !it.Next() || it.Key()[0] != TagObject {
		t.Fatalf("first key = %q", it.Key())
	}
}

func TestSeek(t *testing.T) {
	db := openTest(t)
	for _, key := range []string{"b", "d", "f"} {
		if err := db.Put(k("t", "s", key), []byte(key), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put(k("t", "t", "a"), []byte("other bucket"), false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		seek  string
		ok    bool
		at    string // value at the seek position
		after string // value after one Next ("" = exhausted)
	}{
		{"a", true, "b", "d"},
		{"b", true, "b", "d"},
		{"c", true, "d", "f"},
		{"f", true, "f", ""},
		{"g", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.seek, func(t *testing.T) {
			it := db.IteratePrefix(k("t", "s"))
			defer it.Release()
			if got := it.Seek(k("t", "s", tt.seek)); got != tt.ok {
				t.Fatalf("Seek = %v", got)
			}
			if string(it.Value()) != tt.at {
				t.Fatalf("at %q, want %q", it.Value(), tt.at)
			}
			if !tt.ok {
				return
			}
			if it.Next() != (tt.after != "") || string(it.Value()) != tt.after {
				t.Fatalf("after Next at %q, want %q", it.Value(), tt.after)
			}
		})
	}
	// Seeking below the lower bound clamps to it.
	it := db.Iterate(k("t", "s", "c"), nil)
	if !it.Seek(k("t", "a")) || string(it.Value()) != "d" {
		t.Fatalf("clamped Seek at %q", it.Value())
	}
	it.Release()
	it.Release() // idempotent
	if it.Next() || it.Seek(nil) || it.Key() != nil || it.Value() != nil || it.Err() != nil {
		t.Fatal("released iterator still usable")
	}
}

func TestSnapshotIsolation(t *testing.T) {
	db := openTest(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Put(k("t", "b", "x"), []byte("old"), false))
	must(db.Put(k("t", "b", "y"), []byte("old"), false))
	snap, err := db.NewSnapshot()
	must(err)
	it := db.IteratePrefix(k("t", "b")) // implicit snapshot, taken now
	must(db.Put(k("t", "b", "x"), []byte("new"), false))
	must(db.Delete(k("t", "b", "y"), false))
	must(db.Put(k("t", "b", "z"), []byte("new"), false))

	if v, err := snap.Get(k("t", "b", "x")); err != nil || string(v) != "old" {
		t.Fatalf("snapshot x = %q, %v", v, err)
	}
	if ok, err := snap.Has(k("t", "b", "y")); !ok || err != nil {
		t.Fatalf("snapshot Has y = %v, %v", ok, err)
	}
	if _, err := snap.Get(k("t", "b", "z")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("snapshot z: %v", err)
	}
	if got := strings.Join(collect(t, snap.IteratePrefix(k("t", "b"))), ","); got != "x=old,y=old" {
		t.Fatalf("snapshot scan = %q", got)
	}
	if got := strings.Join(collect(t, it), ","); got != "x=old,y=old" {
		t.Fatalf("implicit snapshot scan = %q", got)
	}
	if got := strings.Join(collect(t, db.IteratePrefix(k("t", "b"))), ","); got != "x=new,z=new" {
		t.Fatalf("live scan = %q", got)
	}
	sit := snap.Iterate(nil, nil)
	snap.Release()
	snap.Release()
	if _, err := snap.Get(k("t", "b", "x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get on released snapshot: %v", err)
	}
	// An iterator outlives its snapshot until released.
	if !sit.Next() {
		t.Fatalf("iterator of released snapshot: %v", sit.Err())
	}
	sit.Release()
}

func TestStatsAndCompact(t *testing.T) {
	db := openTest(t)
	val := bytes.Repeat([]byte("v"), 1000)
	for i := 0; i < 2000; i++ {
		if err := db.Put(k("t", "b", fmt.Sprint(i)), val, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CompactRange(nil, nil); err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	for _, key := range []string{"level_sizes", "level_tables", "level0_tables", "total_size",
		"alive_snapshots", "alive_iterators", "write_delay_count", "write_delay_ms",
		"write_paused", "open_tables", "block_cache_bytes", "compactions", "leveldb_stats"} {
		if _, ok := st[key]; !ok {
			t.Errorf("Stats lacks %q", key)
		}
	}
	if st["total_size"].(int64) == 0 {
		t.Errorf("total_size = 0 after compaction: %v", st)
	}
	if db.Dir() == "" {
		t.Error("Dir empty")
	}
}

func TestOptionsTranslation(t *testing.T) {
	lo := Options{}.leveldbOptions()
	if lo.Filter == nil || lo.BlockCacheCapacity != DefaultBlockCacheSize || lo.WriteBuffer != DefaultWriteBuffer ||
		!lo.DisableSeeksCompaction {
		t.Fatalf("defaults not applied: %+v", lo)
	}
	lo = Options{BloomFilterBits: -1, BlockCacheSize: -1, OpenFilesCacheCapacity: -1, SeeksCompaction: true}.leveldbOptions()
	if lo.Filter != nil || !lo.DisableBlockCache || lo.GetOpenFilesCacheCapacity() != 0 || lo.DisableSeeksCompaction {
		t.Fatalf("negatives not honoured: %+v", lo)
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Put(k("t", "b", "k"), []byte("v"), true); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := ro.Get(k("t", "b", "k")); err != nil || string(v) != "v" {
		t.Fatalf("read-only Get = %q, %v", v, err)
	}
	if err := ro.Put(k("t", "b", "k"), nil, false); err == nil {
		t.Fatal("Put on read-only DB succeeded")
	}
}

func TestOpenNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(f, Options{})
	if err == nil || errors.Is(err, ErrLocked) || !strings.HasPrefix(err.Error(), "storage: open") {
		t.Fatalf("Open(file) = %v", err)
	}
}

func TestCorruptedAndRecover(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := db.Put(k("t", "b", fmt.Sprint(i)), []byte("v"), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CompactRange(nil, nil); err != nil { // move the data into tables
		t.Fatal(err)
	}
	db.Close()
	manifests, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	if len(manifests) == 0 {
		t.Fatal("no manifest")
	}
	for _, m := range manifests {
		if err := os.WriteFile(m, []byte("garbage, not a manifest"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Open(dir, Options{NoSync: true})
	if !errors.Is(err, ErrCorrupted) {
		t.Fatalf("Open of corrupted dir: %v, want ErrCorrupted", err)
	}
	db, err = Recover(dir, Options{NoSync: true})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	defer db.Close()
	for i := 0; i < 100; i++ {
		if _, err := db.Get(k("t", "b", fmt.Sprint(i))); err != nil {
			t.Fatalf("after Recover, key %d: %v", i, err)
		}
	}
	checkInvariants(t, db)
}

// TestSyncLatency: with a simulated sync latency a synced write takes at least that
// long, an unsynced one does not wait, and the directory lock is released on Close.
func TestSyncLatency(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{SyncLatency: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := db.Put([]byte("k"), []byte("v"), true); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("a synced write took %v, less than the simulated sync latency", d)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopening after Close: %v", err)
	}
	defer db.Close()
	if v, err := db.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("after reopening: %q, %v", v, err)
	}
}

// waitKeyScan waits for the key filter's scan to end.
func waitKeyScan(t *testing.T, db *DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for db.keys.scanning.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the key scan still runs after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
