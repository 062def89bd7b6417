package storage

import (
	"time"

	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// Package defaults for Options. They were chosen by the benchmarks in bench_test.go on a
// 2-core machine; TUNING.md records the measurements and the reasons.
const (
	DefaultBlockCacheSize         = 64 << 20  // goleveldb: 8 MiB
	DefaultWriteBuffer            = 64 << 20  // goleveldb: 4 MiB
	DefaultCompactionTableSize    = 16 << 20  // goleveldb: 2 MiB
	DefaultCompactionTotalSize    = 256 << 20 // level-1 size; goleveldb: 10 MiB
	DefaultCompactionL0Trigger    = 4         // goleveldb: 4
	DefaultWriteL0SlowdownTrigger = 8         // goleveldb: 8
	DefaultWriteL0PauseTrigger    = 16        // goleveldb: 12
	DefaultOpenFilesCacheCapacity = 1000      // goleveldb: 500
	DefaultBloomFilterBits        = 10        // goleveldb: no filter
)

// Options tune the underlying goleveldb. The zero value of every field means the
// package default (the Default* constants), which is what production should use; the
// fields exist for operators with unusual machines and for benchmarks.
type Options struct {
	// BlockCacheSize is the capacity in bytes of the LRU cache of uncompressed table
	// blocks. Negative disables the block cache.
	BlockCacheSize int

	// WriteBuffer is the size in bytes of the memtable (and of its journal) before it
	// is frozen and flushed to a level-0 table. Up to two memtables exist at once.
	WriteBuffer int

	// CompactionTableSize is the target size in bytes of tables written by compaction.
	CompactionTableSize int

	// CompactionTotalSize is the size limit in bytes of level 1; each deeper level may
	// be ten times larger. Larger means fewer, bigger compactions.
	CompactionTotalSize int

	// CompactionL0Trigger is the number of level-0 tables that triggers a compaction.
	CompactionL0Trigger int

	// WriteL0SlowdownTrigger is the number of level-0 tables at which each write is
	// delayed by 1 ms to let compaction catch up.
	WriteL0SlowdownTrigger int

	// WriteL0PauseTrigger is the number of level-0 tables at which writes stop until
	// compaction brings the count back down.
	WriteL0PauseTrigger int

	// OpenFilesCacheCapacity is the number of table files kept open. Negative disables
	// the cache (every read opens its table).
	OpenFilesCacheCapacity int

	// BloomFilterBits is the number of bloom-filter bits per key stored in each table,
	// letting a point read skip tables that cannot hold the key. 0 means the default
	// (on); negative disables the filter. Changing it is safe on an existing directory.
	BloomFilterBits int

	// SeeksCompaction re-enables goleveldb's read-triggered ("seek") compactions, which
	// the package disables by default so that reads never add compaction work during a
	// write burst.
	SeeksCompaction bool

	// NoSync makes every write skip fsync regardless of its sync flag. For tests only:
	// a crash may lose acknowledged writes.
	NoSync bool

	// ReadOnly opens the directory read-only (shared lock; writes fail). Open does not
	// write the schema version in this mode.
	ReadOnly bool

	// SyncLatency, if positive, delays every file sync by that long, simulating a disk
	// whose fsync is slower than this machine's. For benchmarks only.
	SyncLatency time.Duration
}

// def returns v if it is non-zero and d otherwise.
func def(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// leveldbOptions translates o into goleveldb options.
func (o Options) leveldbOptions() *opt.Options {
	lo := &opt.Options{
		BlockCacheCapacity:     def(o.BlockCacheSize, DefaultBlockCacheSize),
		WriteBuffer:            def(o.WriteBuffer, DefaultWriteBuffer),
		CompactionTableSize:    def(o.CompactionTableSize, DefaultCompactionTableSize),
		CompactionTotalSize:    def(o.CompactionTotalSize, DefaultCompactionTotalSize),
		CompactionL0Trigger:    def(o.CompactionL0Trigger, DefaultCompactionL0Trigger),
		WriteL0SlowdownTrigger: def(o.WriteL0SlowdownTrigger, DefaultWriteL0SlowdownTrigger),
		WriteL0PauseTrigger:    def(o.WriteL0PauseTrigger, DefaultWriteL0PauseTrigger),
		OpenFilesCacheCapacity: def(o.OpenFilesCacheCapacity, DefaultOpenFilesCacheCapacity),
		DisableSeeksCompaction: !o.SeeksCompaction,
		BlockCacheEvictRemoved: true,
		NoSync:                 o.NoSync,
		ReadOnly:               o.ReadOnly,
	}
	if lo.BlockCacheCapacity < 0 {
		lo.DisableBlockCache = true
	}
	if bits := def(o.BloomFilterBits, DefaultBloomFilterBits); bits > 0 {
		lo.Filter = filter.NewBloomFilter(bits)
	}
	return lo
}
