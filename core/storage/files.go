package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	lstorage "github.com/syndtr/goleveldb/leveldb/storage"
)

// Modes of everything this package creates: the journal and the tables hold every
// value in clear (S3 secrets included), so no other local user may read them, whatever
// the mode of the directory above.
const (
	dirPerm  fs.FileMode = 0o700
	filePerm fs.FileMode = 0o600
)

// faultFunc, set by tests through Options.fault, may fail a file operation of the
// LevelDB ("create", "write" or "sync") before it happens, as a full disk would.
type faultFunc func(op string, fd lstorage.FileDesc) error

// fileStorage is goleveldb's file storage for one opening of the directory, with what
// this package adds to it: every file goleveldb creates is made private (goleveldb
// creates them 0644), syncs can be slowed down (Options.SyncLatency), faults can be
// injected (tests), and the journal's writes are observed, so that a failed write can
// be told from an applied one and its partial record cut off (see journalObserver).
type fileStorage struct {
	lstorage.Storage
	dir     string
	delay   time.Duration
	fault   faultFunc
	journal journalObserver
}

// openFileStorage opens dir with goleveldb's file storage (taking its lock). Opened for
// writing, it makes the directory and the files goleveldb created at open private.
func openFileStorage(dir string, readOnly bool, o Options) (*fileStorage, error) {
	st, err := lstorage.OpenFile(dir, readOnly)
	if err != nil {
		return nil, err
	}
	s := &fileStorage{Storage: st, dir: dir, delay: o.SyncLatency, fault: o.fault}
	if !readOnly {
		if err := makePrivate(dir); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	return s, nil
}

// makePrivate sets dir to dirPerm and every regular file directly in it to filePerm:
// the files goleveldb creates itself (LOCK, LOG, CURRENT) and those of older builds.
func makePrivate(dir string) error {
	if err := os.Chmod(dir, dirPerm); err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := chmodIfLoose(filepath.Join(dir, e.Name()), filePerm); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}

// MakeTreePrivate takes group and other permissions away from every file and
// directory under dir (dir itself is left alone: it is the operator's), as this
// package creates them, for the files that older builds created 0644 and 0755. A
// directory that is private already is not entered: what this build writes is private
// from the start. Symbolic links are not followed. It returns how many entries it
// changed, and goes on after an error, returning the first.
func MakeTreePrivate(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("storage: make %s private: %w", dir, err)
	}
	n := 0
	var first error
	for _, e := range entries {
		k, err := makeEntryPrivate(filepath.Join(dir, e.Name()), e)
		n += k
		if first == nil && err != nil {
			first = fmt.Errorf("storage: make %s private: %w", dir, err)
		}
	}
	return n, first
}

// makeEntryPrivate makes the file or directory tree at path private (see
// MakeTreePrivate).
func makeEntryPrivate(path string, e fs.DirEntry) (int, error) {
	fi, err := e.Info()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, err
	case fi.Mode().Perm()&0o077 == 0 || !fi.Mode().IsDir() && !fi.Mode().IsRegular():
		return 0, nil
	}
	n := 0
	var first error
	if fi.IsDir() {
		// The contents first: the directory's own mode tells the next start whether
		// this one finished.
		k, err := MakeTreePrivate(path)
		n, first = k, err
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n, errors.Join(first, err)
	}
	return n + 1, first
}

// chmodIfLoose sets path to perm when its mode gives anything more than perm. A file
// that is gone already is not an error.
func chmodIfLoose(path string, perm fs.FileMode) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&^perm == 0 {
		return nil
	}
	if err := os.Chmod(path, perm); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// fileName is goleveldb's name for fd (leveldb/storage's fsGenName).
func fileName(fd lstorage.FileDesc) string {
	switch fd.Type {
	case lstorage.TypeManifest:
		return fmt.Sprintf("MANIFEST-%06d", fd.Num)
	case lstorage.TypeJournal:
		return fmt.Sprintf("%06d.log", fd.Num)
	case lstorage.TypeTable:
		return fmt.Sprintf("%06d.ldb", fd.Num)
	default:
		return fmt.Sprintf("%06d.tmp", fd.Num)
	}
}

// inject returns the injected fault for op on fd, if any.
func (s *fileStorage) inject(op string, fd lstorage.FileDesc) error {
	if s.fault == nil {
		return nil
	}
	return s.fault(op, fd)
}

// Create creates fd private and wraps its writer.
func (s *fileStorage) Create(fd lstorage.FileDesc) (lstorage.Writer, error) {
	if err := s.inject("create", fd); err != nil {
		return nil, err
	}
	w, err := s.Storage.Create(fd)
	if err != nil {
		return nil, err
	}
	// The directory is private already: this only keeps the file private if it is
	// ever moved out, or the directory opened up.
	if err := os.Chmod(filepath.Join(s.dir, fileName(fd)), filePerm); err != nil {
		_ = w.Close()
		return nil, err
	}
	if fd.Type == lstorage.TypeJournal {
		s.journal.created(fd)
	}
	return &fileWriter{Writer: w, s: s, fd: fd}, nil
}

// SetMeta points CURRENT at the manifest fd; goleveldb rewrites CURRENT (0644) each time.
func (s *fileStorage) SetMeta(fd lstorage.FileDesc) error {
	if err := s.Storage.SetMeta(fd); err != nil {
		return err
	}
	for _, name := range []string{"CURRENT", "CURRENT.bak"} {
		if err := chmodIfLoose(filepath.Join(s.dir, name), filePerm); err != nil {
			return err
		}
	}
	return nil
}

// fileWriter is a file goleveldb writes, seen by its fileStorage.
type fileWriter struct {
	lstorage.Writer
	s  *fileStorage
	fd lstorage.FileDesc
}

// Write writes p, and tells the journal observer what happened to a journal's bytes.
func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := 0, w.s.inject("write", w.fd)
	if err == nil {
		n, err = w.Writer.Write(p)
	}
	if w.fd.Type == lstorage.TypeJournal {
		w.s.journal.wrote(w.fd, n, err)
	}
	return n, err
}

// Sync waits for the simulated sync latency, then syncs; a journal's failed sync
// counts as a failed write (its bytes may be lost).
func (w *fileWriter) Sync() error {
	if w.s.delay > 0 {
		time.Sleep(w.s.delay)
	}
	err := w.s.inject("sync", w.fd)
	if err == nil {
		err = w.Writer.Sync()
	}
	if w.fd.Type == lstorage.TypeJournal && err != nil {
		w.s.journal.wrote(w.fd, 0, err)
	}
	return err
}

// journalObserver follows the bytes goleveldb writes to its journal. Writes are
// serialized by the DB's committer, so between begin and the end of one goleveldb Write
// every journal byte belongs to that write: if a journal write or sync failed, the
// write was not applied (goleveldb puts a batch in the memtable only after its journal
// write succeeded) and its bytes start at the point begin recorded; if bytes were
// written without failure, the write was journaled and applied even if goleveldb then
// reported an error (a memtable rotation that failed after the journal write).
type journalObserver struct {
	mu       sync.Mutex   // guards the fields below
	cur      journalPoint // the journal being written and its size
	written  uint64       // bytes written to journals since open
	failures uint64       // failed journal writes and syncs since open
	start    journalPoint // where the bytes of the write in progress begin
	failedAt *journalPoint
}

// journalPoint is an offset in one journal file.
type journalPoint struct {
	fd  lstorage.FileDesc
	off int64
}

// journalMark is the observer's counters when a write began.
type journalMark struct{ written, failures uint64 }

// begin records that a write starts now, and returns the counters to compare with.
func (o *journalObserver) begin() journalMark {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start = o.cur
	return journalMark{o.written, o.failures}
}

// created records a new journal: the write in progress, if any, writes to it from 0.
func (o *journalObserver) created(fd lstorage.FileDesc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cur = journalPoint{fd: fd}
	o.start = o.cur
}

// wrote records n bytes written to fd, and err, the write's or the sync's failure.
func (o *journalObserver) wrote(fd lstorage.FileDesc, n int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if fd == o.cur.fd {
		o.cur.off += int64(n)
	}
	o.written += uint64(n)
	if err != nil {
		o.failures++
		if o.failedAt == nil {
			p := o.start
			o.failedAt = &p
		}
	}
}

// since reports whether a journal write failed, and whether journal bytes were
// written, since m.
func (o *journalObserver) since(m journalMark) (failed, wrote bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failures > m.failures, o.written > m.written
}

// failurePoint returns where the bytes of the first failed write begin, if one failed.
func (o *journalObserver) failurePoint() (journalPoint, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failedAt == nil {
		return journalPoint{}, false
	}
	return *o.failedAt, true
}

// cutJournal truncates the journal of p to p.off, removing the bytes of a write that
// was reported failed: a partial record would be dropped by the replay anyway, but a
// complete one whose sync failed would come back. Call it only with the DB closed.
func cutJournal(dir string, p journalPoint) error {
	path := filepath.Join(dir, fileName(p.fd))
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // compacted and removed: its acknowledged records are in a table
	case err != nil:
		return err
	case fi.Size() <= p.off:
		return nil
	}
	return os.Truncate(path, p.off)
}
