package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	lstorage "github.com/syndtr/goleveldb/leveldb/storage"

	"github.com/cairnkv/cairn/core"
)

// fastRecovery shortens the recovery timing for tests.
func fastRecovery(o Options) Options {
	o.recoveryInterval = 20 * time.Millisecond
	o.drainGrace = 50 * time.Millisecond
	o.drainTimeout = time.Second
	return o
}

// diskFault fails the file operations that match while it is on, with ENOSPC, as a
// full disk does.
type diskFault struct {
	on    atomic.Bool
	op    string
	ftype lstorage.FileType
}

func (f *diskFault) fail(op string, fd lstorage.FileDesc) error {
	if f.on.Load() && op == f.op && fd.Type&f.ftype != 0 {
		return &os.PathError{Op: op, Path: fileName(fd), Err: syscall.ENOSPC}
	}
	return nil
}

// ledger records the outcome of every write of a test: the keys (and values) of the
// acknowledged ones and the keys of the failed ones.
type ledger struct {
	mu     sync.Mutex // guards the maps
	acked  map[string][]byte
	failed map[string]bool
}

func newLedger() *ledger { return &ledger{acked: map[string][]byte{}, failed: map[string]bool{}} }

// put writes key=value synced (a batch with an index-like second key every other time)
// and records the outcome; it returns the error.
func (l *ledger) put(db *DB, key string, value []byte) error {
	b := db.NewBatch()
	b.Put(k("t", "b", key), value)
	b.Put(KeyString(TagIndex, "t", "b", "i_bin", key), nil)
	err := db.Write(b, true)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.acked[key] = value
	} else {
		l.failed[key] = true
	}
	return err
}

// verify checks that every acknowledged write is in db with its value and that no
// failed write is.
func (l *ledger) verify(t *testing.T, db *DB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, v := range l.acked {
		got, err := db.Get(k("t", "b", key))
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("acknowledged write %s: got %d bytes, %v", key, len(got), err)
		}
		if ok, err := db.Has(KeyString(TagIndex, "t", "b", "i_bin", key)); !ok || err != nil {
			t.Fatalf("acknowledged write %s: its second key is missing (%v): the batch was torn", key, err)
		}
	}
	for key := range l.failed {
		if _, err := db.Get(k("t", "b", key)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("write %s was refused but is in the store (%v)", key, err)
		}
		if ok, _ := db.Has(KeyString(TagIndex, "t", "b", "i_bin", key)); ok {
			t.Fatalf("write %s was refused but its second key is in the store", key)
		}
	}
}

// value returns a value of n bytes that compresses badly, distinct per i.
func value(i, n int) []byte {
	v := make([]byte, n)
	x := uint32(i)*2654435761 + 1
	for j := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[j] = byte(x)
	}
	return v
}

// writeUntilRefused writes from 4 goroutines until writes are refused for lack of
// space, checking each failure's error; it returns the number of writes made.
func writeUntilRefused(t *testing.T, db *DB, l *ledger, prefix string, size int) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		refused atomic.Bool
		next    atomic.Int64
	)
	deadline := time.Now().Add(20 * time.Second)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !refused.Load() && time.Now().Before(deadline) {
				i := int(next.Add(1))
				err := l.put(db, fmt.Sprintf("%s%06d", prefix, i), value(i, size))
				if err == nil {
					continue
				}
				if !errors.Is(err, ErrNoSpace) {
					t.Errorf("write %d: %v, want an error wrapping ErrNoSpace", i, err)
				}
				if e := core.AsError(err); e == nil || e.Code != core.ENOSPACE {
					t.Errorf("write %d: %v carries no core.ENOSPACE error", i, err)
				}
				refused.Store(true)
			}
		}()
	}
	wg.Wait()
	if !refused.Load() {
		t.Fatal("writes were never refused")
	}
}

// waitResumed writes until a write succeeds again (recovery on its own), within 15 s.
func waitResumed(t *testing.T, db *DB, l *ledger, prefix string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		err := l.put(db, fmt.Sprintf("%s%06d", prefix, i), value(i, 100))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume on their own: %v\nstats: %v", err, db.Stats()["writes_suspended"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reopenAndVerify closes db, opens dir again and checks the ledger and the invariants
// on it. The caller closes the returned DB.
func reopenAndVerify(t *testing.T, db *DB, dir string, l *ledger) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Logf("close: %v", err) // goleveldb reports a compaction that failed meanwhile
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.verify(t, db)
	checkInvariants(t, db)
	return db
}

// failOneWrite makes one write fail on a failing journal, then removes the fault.
func failOneWrite(t *testing.T, db *DB, l *ledger, fault *diskFault) {
	t.Helper()
	fault.on.Store(true)
	if err := l.put(db, "x", []byte("v")); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write with a failing journal: %v, want ErrNoSpace", err)
	}
	fault.on.Store(false)
}

// TestWriteFailureHeals injects ENOSPC into each kind of file write goleveldb makes
// (the journal's writes and syncs, a memtable flush's table, the manifest), and checks
// that writes are refused with ErrNoSpace, reads go on, writes resume on their own once
// the fault is gone, and after a reopen every acknowledged write is there and no
// refused one is.
func TestWriteFailureHeals(t *testing.T) {
	skipCompactionFaultsUnderRace(t)
	cases := []struct {
		name  string
		op    string
		ftype lstorage.FileType
	}{
		{"journal write", "write", lstorage.TypeJournal},
		{"journal sync", "sync", lstorage.TypeJournal},
		{"table create", "create", lstorage.TypeTable},
		{"table write", "write", lstorage.TypeTable},
		{"manifest write", "write", lstorage.TypeManifest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fault := &diskFault{op: tc.op, ftype: tc.ftype}
			// A small write buffer: memtable flushes (tables, manifest records) happen
			// after a few writes.
			o := fastRecovery(Options{WriteBuffer: 64 << 10, fault: fault.fail})
			db, err := Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			l := newLedger()
			for i := 0; i < 50; i++ {
				if err := l.put(db, fmt.Sprintf("a%06d", i), value(i, 1000)); err != nil {
					t.Fatal(err)
				}
			}
			fault.on.Store(true)
			writeUntilRefused(t, db, l, "b", 1000)
			if st := db.Stats(); st["writes_suspended"] != true {
				t.Errorf("stats writes_suspended = %v while writes are refused", st["writes_suspended"])
			}
			if err := db.Delete(k("t", "b", "a000001"), false); !errors.Is(err, ErrNoSpace) {
				t.Errorf("a delete while writes are suspended: %v, want ErrNoSpace", err)
			}
			l.verify(t, db) // reads go on
			fault.on.Store(false)
			waitResumed(t, db, l, "c")
			for i := 0; i < 100; i++ {
				if err := l.put(db, fmt.Sprintf("d%06d", i), value(i, 1000)); err != nil {
					t.Fatalf("after recovery: %v", err)
				}
			}
			if n := db.Stats()["write_recoveries"].(int64); n < 1 {
				t.Errorf("write_recoveries = %d", n)
			}
			l.verify(t, db)
			db = reopenAndVerify(t, db, dir, l)
			defer db.Close()
			t.Logf("%d acknowledged, %d refused", len(l.acked), len(l.failed))
		})
	}
}

// TestRecoveryInterruptsReaders: an iterator and a snapshot open when writes fail are
// interrupted by recovery (ErrInterrupted) once the grace period is over, which lets
// recovery proceed; new readers work on the reopened files.
func TestRecoveryInterruptsReaders(t *testing.T) {
	fault := &diskFault{op: "write", ftype: lstorage.TypeJournal}
	db, err := Open(t.TempDir(), fastRecovery(Options{fault: fault.fail}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := newLedger()
	for i := 0; i < 10; i++ {
		if err := l.put(db, fmt.Sprint(i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	it := db.IteratePrefix(k("t", "b"))
	if !it.Next() {
		t.Fatal("iterator is empty")
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	failOneWrite(t, db, l, fault)
	// The readers' owners go on reading until recovery interrupts them.
	deadline := time.Now().Add(10 * time.Second)
	for it.Seek(k("t", "b")) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(it.Err(), ErrInterrupted) {
		t.Fatalf("iterator across recovery: Err = %v, want ErrInterrupted", it.Err())
	}
	if it.Key() != nil || it.Next() {
		t.Error("an interrupted iterator still yields keys")
	}
	it.Release()
	for {
		_, err := snap.Get(k("t", "b", "1"))
		if errors.Is(err, ErrInterrupted) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("snapshot across recovery: Get = %v, want ErrInterrupted", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitResumed(t, db, l, "y")
	snap.Release()
	it = db.IteratePrefix(k("t", "b"))
	if !it.Next() || it.Err() != nil {
		t.Errorf("a new iterator after recovery: %v", it.Err())
	}
	it.Release()
	l.verify(t, db)
	checkInvariants(t, db)
}

// TestRecoveryWaitsForUnreleasedSnapshot: a snapshot that is never read again nor
// released keeps recovery from closing the files (writes stay refused) until it is
// released; then writes resume.
func TestRecoveryWaitsForUnreleasedSnapshot(t *testing.T) {
	fault := &diskFault{op: "write", ftype: lstorage.TypeJournal}
	o := fastRecovery(Options{fault: fault.fail})
	o.drainTimeout = 50 * time.Millisecond
	db, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := newLedger()
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	failOneWrite(t, db, l, fault)
	time.Sleep(500 * time.Millisecond) // several attempts
	if err := l.put(db, "y", []byte("v")); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write while a snapshot holds the files: %v, want still refused", err)
	}
	if v, err := db.Get(k("t", "b", "x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused write is readable: %q, %v", v, err)
	}
	snap.Release()
	waitResumed(t, db, l, "z")
	l.verify(t, db)
}

// TestOpenOnFullDisk: a directory whose journal cannot be flushed into a table at open
// (the disk is full) opens read-only with writes refused, serves its data, and resumes
// writes once the disk has room; a new directory that cannot be created fails with
// ErrNoSpace.
func TestOpenOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	for i := 0; i < 20; i++ {
		if err := l.put(db, fmt.Sprint(i), value(i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	fault := &diskFault{op: "create", ftype: lstorage.TypeTable | lstorage.TypeManifest | lstorage.TypeJournal}
	fault.on.Store(true)
	db, err = Open(dir, fastRecovery(Options{fault: fault.fail}))
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	defer db.Close()
	l.verify(t, db)
	if err := l.put(db, "x", []byte("v")); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write on a full disk: %v, want ErrNoSpace", err)
	}
	it := db.IteratePrefix(k("t", "b"))
	n := 0
	for it.Next() {
		n++
	}
	if it.Err() != nil || n != 20 {
		t.Errorf("listing on a full disk: %d keys, %v", n, it.Err())
	}
	it.Release()
	fault.on.Store(false)
	waitResumed(t, db, l, "y")
	l.verify(t, db)

	_, err = Open(t.TempDir(), Options{fault: fault.fail})
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	fault.on.Store(true)
	_, err = Open(t.TempDir(), Options{fault: fault.fail})
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("creating a directory on a full disk: %v, want ErrNoSpace", err)
	}
}

// TestAppliedDespiteRotationFailure: goleveldb reports an error for a batch it has
// journaled and applied when the memtable rotation that follows fails (here: a batch
// larger than the write buffer on an empty memtable, and no room for the next
// journal). The batch is readable and durable, so Write acknowledges it; writes are
// suspended until recovery, and the batch is there after it and after a reopen.
func TestAppliedDespiteRotationFailure(t *testing.T) {
	dir := t.TempDir()
	fault := &diskFault{op: "create", ftype: lstorage.TypeJournal}
	db, err := Open(dir, fastRecovery(Options{WriteBuffer: 64 << 10, fault: fault.fail}))
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	// A first large batch leaves an empty memtable behind it (goleveldb rotates before
	// and after it): the next one is written to an empty memtable.
	if err := l.put(db, "big0", value(0, 100<<10)); err != nil {
		t.Fatal(err)
	}
	fault.on.Store(true)
	if err := l.put(db, "big", value(1, 100<<10)); err != nil {
		t.Fatalf("a batch journaled before the rotation failed: %v, want it acknowledged", err)
	}
	if st := db.Stats(); st["writes_suspended"] != true {
		t.Errorf("writes_suspended = %v after goleveldb failed", st["writes_suspended"])
	}
	if err := l.put(db, "next", []byte("v")); !errors.Is(err, ErrNoSpace) {
		t.Errorf("the write after: %v, want ErrNoSpace", err)
	}
	l.verify(t, db)
	fault.on.Store(false)
	waitResumed(t, db, l, "after")
	l.verify(t, db)
	reopenAndVerify(t, db, dir, l).Close()
}
