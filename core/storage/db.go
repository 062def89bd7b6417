package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"
	lstorage "github.com/syndtr/goleveldb/leveldb/storage"
)

// SchemaVersion is the on-disk schema version this build writes and understands. It is
// stored as a decimal string under KeyString(TagMeta, "schema").
const SchemaVersion = 1

// schemaKey is the TagMeta key holding the schema version.
var schemaKey = KeyString(TagMeta, "schema")

// DB is an open data directory. All methods are safe for concurrent use.
//
// A write that fails with an I/O error (a full disk) suspends writes: they are refused
// at once with an error wrapping ErrNoSpace (or ErrWritesSuspended), reads go on, and
// the DB recovers on its own by reopening its files once the device has room (see
// heal.go and the package documentation).
type DB struct {
	dir string
	o   Options // with defaults
	log *slog.Logger

	// mu guards cur, draining and closed. Reads and writes hold it shared while they use
	// cur; recovery holds it exclusively to replace cur.
	mu  sync.RWMutex
	cur *generation
	// draining, while non-nil, makes new iterators and snapshots wait for it to close:
	// recovery is waiting for the readers of cur to finish.
	draining chan struct{}
	closed   bool

	committer committer
	wlog      writeLog    // the committed groups, for RequireItem's conditions
	derive    derivers    // RegisterDerive's functions
	subs      subscribers // Subscribe's callbacks
	keys      keyFilters  // the keys stored, for reads of absent keys (keyfilter.go)

	// fail is why writes are suspended (nil when they are not).
	fail atomic.Pointer[failure]
	// failMu guards recovering, which tells whether the recovery goroutine runs, and
	// orders the closing of stop with the start of that goroutine.
	failMu     sync.Mutex
	recovering bool
	recoveryWG sync.WaitGroup
	recoveries atomic.Int64
	stop       chan struct{} // closed by Close: stops recovery

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the LevelDB in dir with the given options. It takes
// an exclusive lock on the directory: if another process, or another Open in this
// process, holds it, the error wraps ErrLocked and names the directory. A new directory
// is stamped with SchemaVersion; an existing one must not carry a newer version
// (ErrSchemaTooNew). Corruption is reported as ErrCorrupted (see Recover).
//
// The directory and every file in it are made private (0700, 0600). If the device is
// too full to open the directory for writing, Open opens it read-only with writes
// suspended (they resume on their own once space is freed); if even that fails, the
// error wraps ErrNoSpace.
func Open(dir string, opts Options) (*DB, error) {
	return open(dir, opts, false)
}

// Recover opens dir like Open but first rebuilds the manifest from the table files
// present, for a directory that Open reports as ErrCorrupted. Data in damaged tables
// may be lost.
func Recover(dir string, opts Options) (*DB, error) {
	return open(dir, opts, true)
}

func open(dir string, opts Options, recover bool) (*DB, error) {
	o := opts.withDefaults()
	if !o.ReadOnly {
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return nil, fmt.Errorf("storage: open: %w", err)
		}
	}
	g, err := openGeneration(dir, o, recover, o.ReadOnly)
	var f *failure
	if err != nil && !o.ReadOnly && !recover && isNoSpace(err) {
		// A full disk: goleveldb's open writes (a table of the journals, a manifest).
		// Serve reads from a read-only open, and resume writes when space is freed.
		if ro, rerr := openGeneration(dir, o, false, true); rerr == nil {
			g, f = ro, &failure{cause: err, noSpace: true, since: time.Now()}
		}
	}
	if err != nil && g == nil {
		return nil, openError(dir, err)
	}
	db := &DB{dir: dir, o: o, log: o.Logger, cur: g, stop: make(chan struct{})}
	db.committer.start(db)
	if f != nil {
		db.fail.Store(f)
		db.log.Warn("storage: the data directory's disk is full: opened read-only; writes are refused until space is freed",
			"dir", dir, "err", f.cause)
		db.startRecovery()
	}
	if err := db.checkSchema(o.ReadOnly || f != nil); err != nil {
		_ = db.Close()
		return nil, err
	}
	if !o.ReadOnly {
		db.startKeyScan(false)
	}
	return db, nil
}

// openError maps a failed open to this package's sentinels and names the directory.
func openError(dir string, err error) error {
	switch {
	case isLockErr(err):
		return &lockedError{dir: dir, err: err}
	case lerrors.IsCorrupted(err):
		return fmt.Errorf("storage: open %q: %w: %w", dir, ErrCorrupted, err)
	case isNoSpace(err):
		return fmt.Errorf("storage: open %q: %w: %w", dir, ErrNoSpace, err)
	}
	return fmt.Errorf("storage: open %q: %w", dir, err)
}

// isLockErr reports whether err is goleveldb's failure to take the directory lock:
// flock(LOCK_EX|LOCK_NB) fails with EWOULDBLOCK when another open file description holds
// it, and goleveldb returns its own ErrLocked for a second lock of one storage.
func isLockErr(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) ||
		errors.Is(err, lstorage.ErrLocked)
}

// checkSchema writes SchemaVersion into a directory that has none and refuses one whose
// version is newer than this build's.
func (db *DB) checkSchema(readOnly bool) error {
	v, err := db.Get(schemaKey)
	switch {
	case errors.Is(err, ErrNotFound):
		if readOnly {
			return nil
		}
		if err := db.Put(schemaKey, []byte(strconv.Itoa(SchemaVersion)), true); err != nil {
			return fmt.Errorf("storage: open: write schema version: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("storage: open: read schema version: %w", err)
	}
	n, perr := strconv.Atoi(string(v))
	if perr != nil || n < 1 {
		return fmt.Errorf("storage: data directory %q: schema version record %q: %w", db.dir, v, ErrBadSchema)
	}
	if n > SchemaVersion {
		return fmt.Errorf("storage: data directory %q has schema version %d but this build supports up to %d; upgrade cairn: %w",
			db.dir, n, SchemaVersion, ErrSchemaTooNew)
	}
	return nil
}

// Dir returns the data directory the DB was opened on.
func (db *DB) Dir() string { return db.dir }

// readableLocked returns the files to read, or why there are none. Call with mu held.
func (db *DB) readableLocked(op string) (*generation, error) {
	switch {
	case db.closed:
		return nil, fmt.Errorf("storage: %s: %w", op, ErrClosed)
	case db.cur == nil:
		return nil, fmt.Errorf("storage: %s: %w", op, ErrUnavailable)
	}
	return db.cur, nil
}

// writableLocked returns the files to write, or why writes are refused. Call with mu
// held.
func (db *DB) writableLocked(op string) (*generation, error) {
	if f := db.fail.Load(); f != nil && !db.closed {
		return nil, f.refuse(op)
	}
	return db.readableLocked(op)
}

// Get returns the value stored under key, or ErrNotFound. The returned slice belongs to
// the caller.
func (db *DB) Get(key []byte) ([]byte, error) {
	v, found, _, err := db.get(key)
	if err == nil && !found {
		return nil, wrap("get", leveldb.ErrNotFound)
	}
	return v, err
}

// get reads key from the current generation, which it returns; found is false (and
// err nil) when key is absent, so that a miss costs no error value.
func (db *DB) get(key []byte) (v []byte, found bool, g *generation, err error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	g, err = db.readableLocked("get")
	if err != nil {
		return nil, false, nil, err
	}
	if db.keys.absent(key) {
		return nil, false, g, nil
	}
	v, err = g.ldb.Get(key, nil)
	switch {
	case err == nil:
		return v, true, g, nil
	case errors.Is(err, leveldb.ErrNotFound):
		return nil, false, g, nil
	}
	return nil, false, nil, wrap("get", err)
}

// Has reports whether key exists.
func (db *DB) Has(key []byte) (bool, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	g, err := db.readableLocked("has")
	if err != nil {
		return false, err
	}
	if db.keys.absent(key) {
		return false, nil
	}
	ok, err := g.ldb.Has(key, nil)
	if err != nil {
		return false, wrap("has", err)
	}
	return ok, nil
}

// Write applies every operation of b atomically, in order. With sync the journal is
// fsynced before Write returns, so the batch survives a machine crash; without it the
// batch survives a process crash only. Concurrent writers are group-committed: batches
// that queue while one write is in progress are merged into a single journal write (and
// a single fsync if any of them asked for sync), so many concurrent sync writers cost
// far less than one fsync each. A nil or empty batch is a no-op. b may be reused once
// Write returns. The batch's conditions (Batch.Require) and the derived writes of its
// operations (RegisterDerive) apply as for Commit: Write is Commit without a context.
//
// An error means the batch was not applied and is not after a restart or a recovery
// either (its bytes are cut off the journal): a batch whose journal write succeeded is acknowledged even if goleveldb
// failed afterwards. While writes are suspended, Write fails at once with an error
// wrapping ErrNoSpace or ErrWritesSuspended.
func (db *DB) Write(b *Batch, sync bool) error {
	if b == nil || b.b.Len() == 0 && len(b.conds) == 0 {
		return nil
	}
	return db.commit(&b.b, b.conds, sync, b.handedOver)
}

// Put stores value under key; sync as for Write.
func (db *DB) Put(key, value []byte, sync bool) error {
	b := new(leveldb.Batch)
	b.Put(key, value)
	return db.commit(b, nil, sync, true) // b is this call's own
}

// Delete removes key (deleting a missing key is not an error); sync as for Write.
func (db *DB) Delete(key []byte, sync bool) error {
	b := new(leveldb.Batch)
	b.Delete(key)
	return db.commit(b, nil, sync, true) // b is this call's own
}

var (
	syncWrite  = &opt.WriteOptions{Sync: true}
	asyncWrite = &opt.WriteOptions{}
)

func writeOpts(sync bool) *opt.WriteOptions {
	if sync {
		return syncWrite
	}
	return asyncWrite
}

// acquireReader counts a new iterator or snapshot on the current files, waiting while
// recovery drains them.
func (db *DB) acquireReader(op string) (*readerRef, error) {
	for {
		db.mu.RLock()
		if done := db.draining; done != nil {
			db.mu.RUnlock()
			<-done
			continue
		}
		g, err := db.readableLocked(op)
		if err != nil {
			db.mu.RUnlock()
			return nil, err
		}
		r := g.acquire()
		db.mu.RUnlock()
		return r, nil
	}
}

// Iterate returns an iterator over the keys in [lo, hi) in ascending order, reading an
// implicit snapshot taken now. A nil lo starts at the first key; a nil hi runs to the
// end of the keyspace. The iterator must be released.
func (db *DB) Iterate(lo, hi []byte) *Iterator { return db.iterate(lo, hi, nil) }

// iterate is Iterate with goleveldb read options (nil: the defaults).
func (db *DB) iterate(lo, hi []byte, ro *opt.ReadOptions) *Iterator {
	r, err := db.acquireReader("iterate")
	if err != nil {
		return failedIterator(err)
	}
	return newIterator(r.g.ldb.NewIterator(rangeOf(lo, hi), ro), r, nil)
}

// IteratePrefix returns an iterator over the keys that start with prefix (see Iterate).
func (db *DB) IteratePrefix(prefix []byte) *Iterator {
	return db.Iterate(prefix, PrefixEnd(prefix))
}

// NewSnapshot returns a consistent read-only view of the DB as of now. It must be
// released; an unreleased snapshot pins old data and stops compaction from dropping it,
// and delays recovery after a failed write (which interrupts it, see ErrInterrupted).
func (db *DB) NewSnapshot() (*Snapshot, error) {
	r, err := db.acquireReader("snapshot")
	if err != nil {
		return nil, err
	}
	s, err := r.g.ldb.GetSnapshot()
	if err != nil {
		r.release()
		return nil, wrap("snapshot", err)
	}
	return &Snapshot{s: s, ref: r}, nil
}

// CompactRange compacts the key range [lo, hi) (nil means unbounded on that side),
// dropping deleted and overwritten versions. It blocks until done; it is meant for
// maintenance and tests, not the request path. It is refused while writes are
// suspended.
func (db *DB) CompactRange(lo, hi []byte) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	g, err := db.writableLocked("compact")
	if err != nil {
		return err
	}
	if err := g.ldb.CompactRange(*rangeOf(lo, hi)); err != nil {
		return wrap("compact", err)
	}
	return nil
}

// Close stops recovery and background compaction, closes the files and releases the
// directory lock. Nothing needs flushing: every acknowledged write is already in the
// journal and is replayed by the next Open. Release iterators and snapshots first.
// Calling Close again returns the first call's result; other methods then fail with
// ErrClosed.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.failMu.Lock() // orders the close with startRecovery's check of stop
		close(db.stop)
		db.failMu.Unlock()
		db.recoveryWG.Wait()
		db.keys.wg.Wait() // the key scan, stopped by stop
		db.mu.Lock()
		g := db.cur
		db.cur, db.closed = nil, true
		db.mu.Unlock()
		db.committer.stop() // after closed: what is still queued fails with ErrClosed
		if g != nil {
			if err := g.close(); err != nil {
				db.closeErr = wrap("close", err)
			}
		}
	})
	return db.closeErr
}

// wrap maps goleveldb errors to this package's sentinels and adds context.
func wrap(op string, err error) error {
	switch {
	case errors.Is(err, leveldb.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, leveldb.ErrClosed), errors.Is(err, leveldb.ErrSnapshotReleased),
		errors.Is(err, leveldb.ErrIterReleased):
		return fmt.Errorf("storage: %s: %w", op, ErrClosed)
	case lerrors.IsCorrupted(err):
		return fmt.Errorf("storage: %s: %w: %w", op, ErrCorrupted, err)
	}
	return fmt.Errorf("storage: %s: %w", op, err)
}
