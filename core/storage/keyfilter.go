package storage

import (
	"errors"
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
)

// A key filter lets a point read of a key that was never written skip LevelDB: a read
// before a write of a new key (every PUT of a new object reads the key first) would
// otherwise search the memtable's skip list and probe the bloom filter of every
// level-0 table and of one table per deeper level, about 8 µs of CPU under load.
//
// The filter is a bloom filter of every key the DB holds (in the covered tables, see
// filtered), built by a scan of the keys present at open and kept up to date by the
// committer, which adds each key a group writes before goleveldb writes it: a key is
// in the filter before any read can find it in LevelDB, so "not in the filter" means
// absent. Deletes leave their keys in the filter (a false "maybe", answered by
// reading). Until the scan has finished, or once the filter is off, every key is a
// "maybe".
//
// The filter grows by adding slices, each four times the capacity of the one before;
// a key is counted only when no slice has it yet, so overwrites do not grow it. Past
// maxBytes it turns off and a new filter is built by a new scan, which counts only the
// keys still present (tables whose keys come and go, such as an S3 bucket's
// lifecycle entries, only grow a filter between scans); if even the new one does not
// fit, reads go to LevelDB for good.
type keyFilter struct {
	ready atomic.Bool // the scan has finished: the filter answers "absent"
	full  atomic.Bool // a key could not be added: answers "maybe" from now on
	// slices is the list of slices, oldest first; replaced (never modified) by grow.
	slices atomic.Pointer[[]*filterSlice]
	mu     sync.Mutex // guards bytes and the replacement of slices
	bytes  int64      // the slices' total size
	max    int64      // bytes the slices may take
}

// filterSlice is one blocked bloom filter: a key sets filterProbes bits of one
// 512-bit block (one cache line), chosen by its hash.
type filterSlice struct {
	blocks   []uint64 // 8 words per block
	nblocks  uint64
	capacity int64
	count    atomic.Int64
}

const (
	// filterBitsPerKey sizes the slices: with 512-bit blocks and 6 probes, about 1-2%
	// of absent keys read as "maybe" when a slice is at capacity.
	filterBitsPerKey = 10
	filterProbes     = 6
	// filterFirstKeys is the capacity of the first slice (80 KiB).
	filterFirstKeys = 1 << 16
	// filterGrowth multiplies the capacity of each new slice: 64 million keys take
	// six slices, so a lookup touches at most six cache lines.
	filterGrowth = 4
)

// filterSeed hashes keys for the filter; per process.
var filterSeed = maphash.MakeSeed()

// filtered reports whether key's table is covered by the filter. Index postings, reap
// and expiry queues and S3 chunks are written in numbers, read by iteration (or, for
// chunks, only when known to exist), so covering them would only grow the filter.
func filtered(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	switch key[0] {
	case TagIndex, TagReap, TagExpiry, TagChunk:
		return false
	}
	return true
}

func newKeyFilter(maxBytes int64) *keyFilter {
	f := &keyFilter{max: maxBytes}
	first := newFilterSlice(filterFirstKeys)
	f.bytes = int64(len(first.blocks) * 8)
	f.slices.Store(&[]*filterSlice{first})
	return f
}

func newFilterSlice(capacity int64) *filterSlice {
	nblocks := uint64((capacity*filterBitsPerKey + 511) / 512)
	return &filterSlice{blocks: make([]uint64, nblocks*8), nblocks: nblocks, capacity: capacity}
}

// filterHash hashes key for the filter.
func filterHash(key []byte) uint64 { return maphash.Bytes(filterSeed, key) }

// probe returns the index of h's block in s and the bit masks of its eight words.
func (s *filterSlice) probe(h uint64) (block uint64, masks [8]uint64) {
	block, _ = bits.Mul64(h, s.nblocks)
	x := h * 0x9e3779b97f4a7c15 // the bits that chose the block do not choose the bits
	for range filterProbes {
		bit := x >> 55 // 9 bits: one of the block's 512
		masks[bit>>6] |= 1 << (bit & 63)
		x <<= 9
	}
	return block * 8, masks
}

// has reports whether every bit of h is set in s.
func (s *filterSlice) has(h uint64) bool {
	base, masks := s.probe(h)
	for i, m := range masks {
		if m != 0 && atomic.LoadUint64(&s.blocks[base+uint64(i)])&m != m {
			return false
		}
	}
	return true
}

// set sets h's bits in s.
func (s *filterSlice) set(h uint64) {
	base, masks := s.probe(h)
	for i, m := range masks {
		if m != 0 {
			atomic.OrUint64(&s.blocks[base+uint64(i)], m)
		}
	}
}

// mayHave reports whether h may be in some slice. The newest slice is the largest and holds most keys, so a present key (a GET, an
// overwrite) is usually found at the first probe.
func (f *keyFilter) mayHave(h uint64) bool {
	list := *f.slices.Load()
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].has(h) {
			return true
		}
	}
	return false
}

// absent reports whether key is known not to be stored.
func (f *keyFilter) absent(key []byte) bool {
	if f == nil || !f.ready.Load() || f.full.Load() || !filtered(key) {
		return false
	}
	return !f.mayHave(filterHash(key))
}

// add adds key. It reports false when the filter is full (and answers "maybe").
func (f *keyFilter) add(key []byte) bool {
	if !filtered(key) {
		return true
	}
	if f.full.Load() {
		return false
	}
	h := filterHash(key)
	if f.mayHave(h) {
		return true
	}
	list := *f.slices.Load()
	s := list[len(list)-1]
	if s.count.Add(1) > s.capacity {
		if s = f.grow(s); s == nil {
			return false
		}
	}
	s.set(h)
	return true
}

// grow adds a slice after last (unless another add did already) and returns the slice
// to add to, or nil (and marks f full) when the budget f.max has no room for one. The
// new slice is filterGrowth times larger than last, or whatever the budget has left.
func (f *keyFilter) grow(last *filterSlice) *filterSlice {
	if f.full.Load() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	list := *f.slices.Load()
	if cur := list[len(list)-1]; cur != last {
		cur.count.Add(1)
		return cur
	}
	capacity := min(last.capacity*filterGrowth, (f.max-f.bytes)*8/filterBitsPerKey)
	if capacity < filterFirstKeys {
		f.full.Store(true)
		return nil
	}
	next := newFilterSlice(capacity)
	f.bytes += int64(len(next.blocks) * 8)
	next.count.Store(1)
	grown := append(append(make([]*filterSlice, 0, len(list)+1), list...), next)
	f.slices.Store(&grown)
	return next
}

// keys returns the number of keys counted in f's slices.
func (f *keyFilter) keys() (n int64) {
	for _, s := range *f.slices.Load() {
		n += s.count.Load()
	}
	return n
}

// size returns the bytes the filter's slices take.
func (f *keyFilter) size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bytes
}

// keyFilters is a DB's filters: the one reads use, and the one a scan is building.
// The committer adds every key it writes to both.
type keyFilters struct {
	serving  atomic.Pointer[keyFilter] // nil until the first scan finishes
	building atomic.Pointer[keyFilter] // nil unless a scan runs
	scanning atomic.Bool               // a scan goroutine runs (or is starting)
	off      atomic.Bool               // a filter of the keys present did not fit: no more scans
	hits     atomic.Int64              // reads answered "absent"
	wg       sync.WaitGroup            // the scan goroutine; Close waits for it
	adder    filterAdder               // replays a group's batch; guarded by the committer's token
}

// absent reports whether key is known not to be stored.
func (k *keyFilters) absent(key []byte) bool {
	if k.serving.Load().absent(key) {
		k.hits.Add(1)
		return true
	}
	return false
}

// filterAdder adds the keys of a replayed batch to the DB's filters.
type filterAdder struct {
	db                *DB
	serving, building *keyFilter
}

func (a *filterAdder) Put(key, _ []byte) {
	if a.serving != nil && !a.serving.add(key) {
		// Full: drop it now (reads go to LevelDB) rather than keep its memory beside
		// the one a new scan builds.
		a.db.keys.serving.CompareAndSwap(a.serving, nil)
		a.serving = nil
		a.db.startKeyScan(true)
	}
	if a.building != nil && !a.building.add(key) {
		a.building = nil // the scan finds it full and gives up
	}
}

func (a *filterAdder) Delete([]byte) {}

// addKeys adds the keys b puts to the filters, before b is written. Call with the
// committer's token: the scan installs its filter with the token too, so no group falls
// between the loads below and a swap.
func (db *DB) addKeys(b *leveldb.Batch) {
	a := &db.keys.adder
	*a = filterAdder{db: db, serving: db.keys.serving.Load(), building: db.keys.building.Load()}
	if a.serving == nil && a.building == nil {
		return
	}
	_ = b.Replay(a) // a batch built by Put and Delete always replays
	*a = filterAdder{}
}

// startKeyScan starts building a new filter from the keys present, unless a scan runs,
// filters are off or the DB is closing. tokenHeld: the caller holds the committer's
// token (the committer itself, when the serving filter fills up); otherwise it takes
// it, so that every group written after the new filter is set up adds its keys to it.
func (db *DB) startKeyScan(tokenHeld bool) {
	if db.o.KeyFilterBytes < firstSliceBytes || db.keys.off.Load() || !db.keys.scanning.CompareAndSwap(false, true) {
		return
	}
	// Like startRecovery: Close waits for the scan after closing stop, so the scan is
	// counted only if stop is not closed yet.
	db.failMu.Lock()
	select {
	case <-db.stop:
		db.failMu.Unlock()
		db.keys.scanning.Store(false)
		return
	default:
	}
	db.keys.wg.Add(1)
	db.failMu.Unlock()
	f := newKeyFilter(db.o.KeyFilterBytes)
	if !tokenHeld {
		db.committer.token <- struct{}{}
	}
	db.keys.building.Store(f)
	if !tokenHeld {
		<-db.committer.token
	}
	go db.scanKeys(f)
}

// firstSliceBytes is the size of a filter's first slice: a smaller KeyFilterBytes
// means no filter.
var firstSliceBytes = int64(len(newFilterSlice(filterFirstKeys).blocks) * 8)

// errScanStopped ends a scan when the DB closes.
var errScanStopped = errors.New("storage: key scan stopped")

// scanKeys adds every key present to f, then, holding the committer's token (no group
// is between addKeys' loads of the filters and the swap), serves reads with it, or
// drops it: after a failed scan reads go to LevelDB, and after one whose keys did not
// fit for good.
func (db *DB) scanKeys(f *keyFilter) {
	defer db.keys.wg.Done()
	err := db.scanInto(f)
	if testHookScanned != nil {
		testHookScanned(db)
	}
	select {
	case db.committer.token <- struct{}{}:
	case <-db.stop: // closing: nothing to install
		db.keys.scanning.Store(false)
		return
	}
	db.keys.building.CompareAndSwap(f, nil)
	switch {
	case errors.Is(err, errScanStopped) || errors.Is(err, ErrClosed):
	case err != nil:
		db.log.Warn("storage: key filter: scan failed; reads of absent keys search LevelDB", "dir", db.dir, "err", err)
	case f.full.Load() || f.keys() > f.max*8/filterBitsPerKey*3/4:
		// A filter of the keys present that leaves less than a quarter of the budget
		// free would fill up again after a few new keys and be scanned again, and
		// again: off instead.
		db.keys.off.Store(true)
		db.keys.serving.Store(nil)
		db.log.Warn("storage: key filter: the keys present need more than three quarters of its limit; reads of absent keys search LevelDB",
			"dir", db.dir, "limit_bytes", f.max)
	default:
		f.ready.Store(true)
		db.keys.serving.Store(f)
	}
	// Before the token goes back: a group that fills f right after may start the next scan.
	db.keys.scanning.Store(false)
	<-db.committer.token
}

// testHookScanned, when set by a test, runs when a scan has read the keys, before it
// installs its filter.
var testHookScanned func(*DB)

// scanChunkKeys is the number of keys one iterator of the scan reads: the scan makes a
// new iterator after each chunk, so that it does not pin one view of the store (which
// keeps compaction from dropping what was overwritten or deleted) for a whole scan of a
// large store, and a recovery interrupts one chunk only.
var scanChunkKeys = 1 << 16

// scanInto adds every key present to f, chunk by chunk. It first waits for the group
// being written (when the committer started the scan, the rest of its group was not
// added to f), so that every group that did not add its keys to f is in the view of
// the first chunk's iterator; a key written later is added by the committer, so a
// later chunk's newer view misses nothing. A chunk interrupted by a recovery is read
// again, up to three times in a row.
func (db *DB) scanInto(f *keyFilter) error {
	select {
	case db.committer.token <- struct{}{}:
		<-db.committer.token
	case <-db.stop:
		return errScanStopped
	}
	var from []byte
	for failures := 0; ; {
		next, err := db.scanChunk(f, from)
		switch {
		case errors.Is(err, ErrInterrupted) && failures < 2:
			failures++
			select {
			case <-db.stop:
				return errScanStopped
			case <-time.After(time.Second):
			}
			continue
		case err != nil:
			return err
		case next == nil:
			return nil
		}
		from, failures = next, 0
	}
}

// scanChunk adds the keys from from on (nil: the first) to f, at most scanChunkKeys of
// them, skipping the tables the filter does not cover, and returns the key to go on
// from (nil at the end). It reads without filling the block cache.
func (db *DB) scanChunk(f *keyFilter, from []byte) ([]byte, error) {
	it := db.iterate(from, nil, scanOptions)
	defer it.Release()
	ok := it.Next()
	for n := 0; ok; {
		key := it.Key()
		if len(key) > 0 && !filtered(key) { // skip the rest of the table
			if key[0] == 0xff {
				break
			}
			ok = it.Seek([]byte{key[0] + 1})
			continue
		}
		if n == scanChunkKeys {
			return append([]byte(nil), key...), nil
		}
		if n%4096 == 0 {
			select {
			case <-db.stop:
				return nil, errScanStopped
			default:
			}
		}
		if !f.add(key) {
			return nil, nil // full: scanKeys gives up
		}
		n++
		ok = it.Next()
	}
	return nil, it.Err()
}
