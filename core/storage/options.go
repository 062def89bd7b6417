package storage

import (
	"log/slog"
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
	DefaultKeyFilterBytes         = 256 << 20 // the DB's own filter of the keys stored (keyfilter.go)
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

	// KeyFilterBytes bounds the memory of the DB's own filter of the keys it stores,
	// which answers reads of keys never written without searching LevelDB (about 1.3
	// bytes per key; keyfilter.go). 0 means DefaultKeyFilterBytes; negative disables
	// the filter. A store with more keys than fit reads every key from LevelDB.
	KeyFilterBytes int64

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

	// Logger receives the DB's warnings: writes suspended after a failed write, and
	// resumed. Nil discards them.
	Logger *slog.Logger

	// Recovery timing (tests shorten it; zero means the default below).
	recoveryInterval time.Duration // between recovery attempts
	drainGrace       time.Duration // readers may finish before being interrupted
	drainTimeout     time.Duration // interrupted readers must be released within
	// resumeFreeSpace is the free space, beyond the size of the journals, that the
	// device must have before recovery reopens the files after a full disk.
	resumeFreeSpace int64
	// fault, set by tests, fails LevelDB file operations (see faultFunc).
	fault faultFunc
	// raw, set by benchmarks, replaces the goleveldb options built from the fields.
	raw *opt.Options
}

// Defaults of the recovery timing.
const (
	defaultRecoveryInterval = time.Second
	defaultDrainGrace       = time.Second
	defaultDrainTimeout     = 10 * time.Second
	defaultResumeFreeSpace  = 4 << 20
)

// withDefaults returns o with its zero recovery settings and logger filled in.
func (o Options) withDefaults() Options {
	if o.recoveryInterval <= 0 {
		o.recoveryInterval = defaultRecoveryInterval
	}
	if o.drainGrace <= 0 {
		o.drainGrace = defaultDrainGrace
	}
	if o.drainTimeout <= 0 {
		o.drainTimeout = defaultDrainTimeout
	}
	if o.resumeFreeSpace <= 0 {
		o.resumeFreeSpace = defaultResumeFreeSpace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.KeyFilterBytes == 0 {
		o.KeyFilterBytes = DefaultKeyFilterBytes
	}
	return o
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
	if o.raw != nil {
		lo := *o.raw
		lo.NoWriteMerge, lo.DisableLargeBatchTransaction = true, true
		return &lo
	}
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
		// The DB merges concurrent writes itself (commit.go), one goleveldb write at a
		// time, so that it knows which write a journal failure belongs to.
		NoWriteMerge: true,
		// A batch larger than the write buffer goes through the journal like any
		// other: goleveldb's transaction path would write tables and retry its
		// manifest commit, with no journal to tell applied from failed.
		DisableLargeBatchTransaction: true,
	}
	if lo.BlockCacheCapacity < 0 {
		lo.DisableBlockCache = true
	}
	if bits := def(o.BloomFilterBits, DefaultBloomFilterBits); bits > 0 {
		lo.Filter = filter.NewBloomFilter(bits)
	}
	return lo
}
