package storage

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap these (test with errors.Is);
// everything else coming from goleveldb is wrapped with a "storage: <op>:" prefix.
var (
	// ErrNotFound is returned by Get when the key does not exist.
	ErrNotFound = errors.New("storage: not found")

	// ErrLocked is returned by Open when another process (or another Open in this
	// process) holds the data directory's LOCK file. The returned error names the
	// directory: `storage: data directory "/x" is in use by another process (LOCK held)`.
	ErrLocked = errors.New("storage: data directory is in use by another process (LOCK held)")

	// ErrSchemaTooNew is returned by Open when the data directory was written by a newer
	// Cairn whose on-disk schema version this build does not understand.
	ErrSchemaTooNew = errors.New("storage: schema version is newer than this build supports")

	// ErrBadSchema is returned by Open when the stored schema version record is not a
	// version number.
	ErrBadSchema = errors.New("storage: unreadable schema version record")

	// ErrCorrupted is returned (wrapped) when goleveldb reports corruption: a bad
	// journal, manifest or table. Recover may be able to rebuild the manifest.
	ErrCorrupted = errors.New("storage: database is corrupted")

	// ErrClosed is returned by operations on a DB that has been closed, and by
	// snapshot and iterator operations after their DB or snapshot was released.
	ErrClosed = errors.New("storage: closed")

	// ErrMalformedKey is returned by DecodeKey and DecodeReapKey for bytes that are not
	// a key built by Key.
	ErrMalformedKey = errors.New("storage: malformed key")
)

// lockedError reports a held LOCK file for one directory. It matches ErrLocked with
// errors.Is and unwraps to the underlying lock error.
type lockedError struct {
	dir string
	err error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("storage: data directory %q is in use by another process (LOCK held)", e.dir)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

func (e *lockedError) Unwrap() error { return e.err }
