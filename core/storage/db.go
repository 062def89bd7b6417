package storage

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
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
type DB struct {
	ldb *leveldb.DB
	dir string
	// stor is the storage opened for the DB when it was not goleveldb's own (see
	// Options.SyncLatency); Close closes it after the DB.
	stor lstorage.Storage

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the LevelDB in dir with the given options. It takes
// an exclusive lock on the directory: if another process, or another Open in this
// process, holds it, the error wraps ErrLocked and names the directory. A new directory
// is stamped with SchemaVersion; an existing one must not carry a newer version
// (ErrSchemaTooNew). Corruption is reported as ErrCorrupted (see Recover).
func Open(dir string, opts Options) (*DB, error) {
	return open(dir, opts.leveldbOptions(), false, opts.SyncLatency)
}

// Recover opens dir like Open but first rebuilds the manifest from the table files
// present, for a directory that Open reports as ErrCorrupted. Data in damaged tables
// may be lost.
func Recover(dir string, opts Options) (*DB, error) {
	return open(dir, opts.leveldbOptions(), true, opts.SyncLatency)
}

func open(dir string, lo *opt.Options, recover bool, syncLatency time.Duration) (*DB, error) {
	if !lo.ReadOnly {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("storage: open: %w", err)
		}
	}
	var (
		ldb  *leveldb.DB
		err  error
		stor lstorage.Storage
	)
	switch {
	case syncLatency > 0:
		if stor, err = lstorage.OpenFile(dir, lo.ReadOnly); err == nil {
			slow := slowSyncStorage{Storage: stor, delay: syncLatency}
			if recover {
				ldb, err = leveldb.Recover(slow, lo)
			} else {
				ldb, err = leveldb.Open(slow, lo)
			}
			if err != nil {
				_ = stor.Close()
			}
		}
	case recover:
		ldb, err = leveldb.RecoverFile(dir, lo)
	default:
		ldb, err = leveldb.OpenFile(dir, lo)
	}
	if err != nil {
		if isLockErr(err) {
			return nil, &lockedError{dir: dir, err: err}
		}
		if lerrors.IsCorrupted(err) {
			return nil, fmt.Errorf("storage: open %q: %w: %w", dir, ErrCorrupted, err)
		}
		return nil, fmt.Errorf("storage: open %q: %w", dir, err)
	}
	db := &DB{ldb: ldb, dir: dir, stor: stor}
	if err := db.checkSchema(lo.ReadOnly); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
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
	v, err := db.ldb.Get(schemaKey, nil)
	switch {
	case errors.Is(err, leveldb.ErrNotFound):
		if readOnly {
			return nil
		}
		if err := db.ldb.Put(schemaKey, []byte(strconv.Itoa(SchemaVersion)), &opt.WriteOptions{Sync: true}); err != nil {
			return wrap("open: write schema version", err)
		}
		return nil
	case err != nil:
		return wrap("open: read schema version", err)
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

// Get returns the value stored under key, or ErrNotFound. The returned slice belongs to
// the caller.
func (db *DB) Get(key []byte) ([]byte, error) {
	v, err := db.ldb.Get(key, nil)
	if err != nil {
		return nil, wrap("get", err)
	}
	return v, nil
}

// Has reports whether key exists.
func (db *DB) Has(key []byte) (bool, error) {
	ok, err := db.ldb.Has(key, nil)
	if err != nil {
		return false, wrap("has", err)
	}
	return ok, nil
}

// Write applies every operation of b atomically, in order. With sync the journal is
// fsynced before Write returns, so the batch survives a machine crash; without it the
// batch survives a process crash only. Concurrent writers are group-committed:
// goleveldb merges batches that queue while one write is in progress into a single
// journal write (and a single fsync if any of them asked for sync), so many concurrent
// sync writers cost far less than one fsync each. A nil or empty batch is a no-op. b
// may be reused once Write returns.
func (db *DB) Write(b *Batch, sync bool) error {
	if b == nil || b.b.Len() == 0 {
		return nil
	}
	if err := db.ldb.Write(&b.b, writeOpts(sync)); err != nil {
		return wrap("write", err)
	}
	return nil
}

// Put stores value under key; sync as for Write.
func (db *DB) Put(key, value []byte, sync bool) error {
	if err := db.ldb.Put(key, value, writeOpts(sync)); err != nil {
		return wrap("put", err)
	}
	return nil
}

// Delete removes key (deleting a missing key is not an error); sync as for Write.
func (db *DB) Delete(key []byte, sync bool) error {
	if err := db.ldb.Delete(key, writeOpts(sync)); err != nil {
		return wrap("delete", err)
	}
	return nil
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

// Iterate returns an iterator over the keys in [lo, hi) in ascending order, reading an
// implicit snapshot taken now. A nil lo starts at the first key; a nil hi runs to the
// end of the keyspace. The iterator must be released.
func (db *DB) Iterate(lo, hi []byte) *Iterator {
	return newIterator(db.ldb.NewIterator(rangeOf(lo, hi), nil))
}

// IteratePrefix returns an iterator over the keys that start with prefix (see Iterate).
func (db *DB) IteratePrefix(prefix []byte) *Iterator {
	return db.Iterate(prefix, PrefixEnd(prefix))
}

// NewSnapshot returns a consistent read-only view of the DB as of now. It must be
// released; an unreleased snapshot pins old data and stops compaction from dropping it.
func (db *DB) NewSnapshot() (*Snapshot, error) {
	s, err := db.ldb.GetSnapshot()
	if err != nil {
		return nil, wrap("snapshot", err)
	}
	return &Snapshot{s: s}, nil
}

// CompactRange compacts the key range [lo, hi) (nil means unbounded on that side),
// dropping deleted and overwritten versions. It blocks until done; it is meant for
// maintenance and tests, not the request path.
func (db *DB) CompactRange(lo, hi []byte) error {
	if err := db.ldb.CompactRange(*rangeOf(lo, hi)); err != nil {
		return wrap("compact", err)
	}
	return nil
}

// Close stops background compaction, closes the files and releases the directory
// lock. Nothing needs flushing: every acknowledged write is already in the journal and
// is replayed by the next Open. Release iterators and snapshots first. Calling Close
// again returns the first call's result; other methods then fail with ErrClosed.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if err := db.ldb.Close(); err != nil {
			db.closeErr = wrap("close", err)
		}
		if db.stor != nil {
			if err := db.stor.Close(); err != nil && db.closeErr == nil {
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
