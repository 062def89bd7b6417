package storage

import (
	"time"

	lstorage "github.com/syndtr/goleveldb/leveldb/storage"
)

// slowSyncStorage is goleveldb's file storage with a fixed delay before every Sync of a
// file it creates (the journal, tables, the manifest): it makes this machine's disk behave
// like one whose fsync takes that long, so that benchmarks can show what group commit
// does on slower disks. See Options.SyncLatency.
type slowSyncStorage struct {
	lstorage.Storage
	delay time.Duration
}

// Create wraps the created file's writer so that its Sync waits first.
func (s slowSyncStorage) Create(fd lstorage.FileDesc) (lstorage.Writer, error) {
	w, err := s.Storage.Create(fd)
	if err != nil {
		return nil, err
	}
	return slowSyncWriter{Writer: w, delay: s.delay}, nil
}

type slowSyncWriter struct {
	lstorage.Writer
	delay time.Duration
}

// Sync sleeps for the configured latency, then syncs.
func (w slowSyncWriter) Sync() error {
	time.Sleep(w.delay)
	return w.Writer.Sync()
}
