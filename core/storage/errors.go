package storage

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cairnkv/cairn/core"
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

	// ErrNoSpace is returned (wrapped) by writes while the device of the data directory
	// is full (ENOSPC or EDQUOT), by blob writes that run out of space, and by Open when
	// the directory cannot be opened for lack of space. Writes are suspended until the
	// DB has recovered on its own (see the package documentation); reads keep working.
	// It carries the core.ENOSPACE code: errors.As finds a *core.Error in it, which the
	// interfaces answer as insufficient storage.
	ErrNoSpace error = noSpaceError{}

	// ErrWritesSuspended is returned (wrapped) by writes after a write failed with an
	// I/O error other than a full device, until the DB has recovered on its own.
	ErrWritesSuspended = errors.New("storage: writes are suspended after an I/O error")

	// ErrInterrupted is returned (wrapped) by the iterators and snapshots that were open
	// when the DB reopened its files to recover from a failed write: they read files
	// that are gone. Reading again from a new snapshot sees the same data.
	ErrInterrupted = errors.New("storage: read interrupted: the database reopened its files to recover from a failed write")

	// ErrUnavailable is returned (wrapped) by every operation while the DB has no open
	// files: recovery closed them and could not open them again. Recovery keeps trying.
	ErrUnavailable = errors.New("storage: the database could not reopen its files; retrying")
)

// noSpaceMessage is the client-facing text of a write refused for lack of space.
const noSpaceMessage = "Insufficient storage: the server's disk is full. " +
	"Reads still work; writes resume on their own once space is freed.\n"

// noSpaceError is the type of ErrNoSpace.
type noSpaceError struct{}

func (noSpaceError) Error() string { return "storage: no space left on the data directory's device" }

// As lets errors.As find the client-facing *core.Error of a full disk in any error that
// wraps ErrNoSpace.
func (noSpaceError) As(target any) bool {
	p, ok := target.(**core.Error)
	if ok {
		*p = &core.Error{Code: core.ENOSPACE, Message: noSpaceMessage}
	}
	return ok
}

// isNoSpace reports whether err is the operating system's "device full" or "quota
// exceeded".
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

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
