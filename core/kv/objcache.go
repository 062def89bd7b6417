package kv

import (
	"hash/maphash"
	"sync"

	"github.com/cairnkv/cairn/core/storage"
)

// objectCache keeps encoded object records with their storage revisions, by storage
// key, bounded in bytes, so that reads of recently used objects skip LevelDB (whose
// block cache serialises readers on one LRU lock). It is coherent with storage through
// the store's change notifications, not through locks (Service.applyChanges):
//   - every committed change of an object key, by this service or any other writer of
//     the store, is applied to the cache in commit order before the commit is
//     acknowledged (write-through: a key just written is likely to be read);
//   - a read that misses fills the cache only if no change reached the key's shard since
//     the read began (gen), so it cannot install a record older than one a concurrent
//     commit has just cached; it fills holding the key's stripe lock, so that two fills
//     of a key land in the order of their reads (a read may see a commit before the
//     store has notified it, see Service.readRecordForGet).
//
// A write reads the record and its revision from the cache and commits on that
// revision: were the cache ever stale, the commit would fail with a conflict and the
// write retry from storage, so correctness never rests on the cache.
//
// Cached bytes are immutable: records decoded from them share value slices with the
// cache, and nobody may modify a value in place.
type objectCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
	// perShard is each shard's byte budget.
	perShard int64
}

const cacheShards = 64

type cacheShard struct {
	mu   sync.Mutex // guards m, lru, size and gen
	m    map[string]*cacheEntry
	lru  cacheEntry // the sentinel of the entries' ring: lru.next is the most recently used
	size int64
	// gen counts the committed changes applied to the shard (put, del): a fill whose
	// read began before the latest one is dropped.
	gen uint64
}

type cacheEntry struct {
	key string
	// it is the record and its revision (and read stamp, see Batch.RequireItem); a nil
	// value records that the key is absent (markAbsent).
	it storage.Item
	// prev and next link the shard's entries in LRU order (a ring through
	// cacheShard.lru): no list element of its own to allocate per entry.
	prev, next *cacheEntry
}

// unlink removes e from its ring.
func (e *cacheEntry) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// pushFront makes e the most recently used entry of s.
func (s *cacheShard) pushFront(e *cacheEntry) {
	if s.lru.next == nil { // the zero shard: an empty ring
		s.lru.next, s.lru.prev = &s.lru, &s.lru
	}
	e.prev, e.next = &s.lru, s.lru.next
	e.next.prev = e
	s.lru.next = e
}

// back returns the least recently used entry of s, nil when s is empty.
func (s *cacheShard) back() *cacheEntry {
	if s.lru.prev == &s.lru {
		return nil
	}
	return s.lru.prev
}

// entryOverhead approximates the memory of one entry beyond its key and value.
const entryOverhead = 96

// newObjectCache returns a cache holding about maxBytes, or nil (no cache) for
// maxBytes <= 0.
func newObjectCache(maxBytes int64) *objectCache {
	if maxBytes <= 0 {
		return nil
	}
	c := &objectCache{seed: maphash.MakeSeed(), perShard: maxBytes / cacheShards}
	for i := range c.shards {
		c.shards[i].m = map[string]*cacheEntry{}
	}
	return c
}

func (c *objectCache) shard(k []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, k)%cacheShards]
}

// get returns the cached record for k and its revision.
func (c *objectCache) get(k []byte) (storage.Item, bool) {
	if c == nil {
		return storage.Item{}, false
	}
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.m[string(k)]
	var it storage.Item
	if ok {
		e.unlink()
		s.pushFront(e)
		it = e.it
	}
	s.mu.Unlock()
	return it, ok
}

// gen returns the generation of k's shard, to pass to fill.
func (c *objectCache) gen(k []byte) uint64 {
	if c == nil {
		return 0
	}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// fits reports whether a record of n bytes under k can be cached.
func (c *objectCache) fits(k []byte, n int) bool {
	return c != nil && int64(len(k)+n)+entryOverhead <= c.perShard
}

// fill caches it, read from storage, under k, unless a committed change reached k's
// shard since gen (the read may be older than that change).
func (c *objectCache) fill(k []byte, it storage.Item, gen uint64) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == gen {
		c.putLocked(s, k, it)
	}
}

// put caches the committed record it (whose bytes the caller must not modify
// afterwards) under k, replacing what the cache holds. Records larger than a shard's
// budget are not cached.
func (c *objectCache) put(k []byte, it storage.Item) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	c.putLocked(s, k, it)
}

func (c *objectCache) putLocked(s *cacheShard, k []byte, it storage.Item) {
	v := it.Value
	cost := int64(len(k)+len(v)) + entryOverhead
	if e, ok := s.m[string(k)]; ok {
		s.remove(e)
	}
	if cost > c.perShard {
		return
	}
	for s.size+cost > c.perShard {
		s.remove(s.back())
	}
	ent := &cacheEntry{key: string(k), it: it}
	s.m[ent.key] = ent
	s.pushFront(ent)
	s.size += cost
}

// markAbsent applies a committed delete of k (it: the delete's item, with a nil value).
// A cached record is replaced by an entry that records the key's absence, so that the
// reads that follow a delete of a key in use (an expired object the reaper removed, a
// reaped tombstone) are answered from the cache, as the reads of its record were,
// instead of each searching LevelDB for a key that is not there; a key that is not
// cached stays out of the cache, which deletes therefore never grow.
func (c *objectCache) markAbsent(k []byte, it storage.Item) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if _, ok := s.m[string(k)]; ok {
		c.putLocked(s, k, it)
	}
}

// del evicts k (a record too large to cache, or a cached record found stale).
func (c *objectCache) del(k []byte) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	s.gen++
	if e, ok := s.m[string(k)]; ok {
		s.remove(e)
	}
	s.mu.Unlock()
}

// remove drops e from s. Call with s.mu held.
func (s *cacheShard) remove(e *cacheEntry) {
	s.size -= entryCost(e)
	delete(s.m, e.key)
	e.unlink()
}

func entryCost(e *cacheEntry) int64 {
	return int64(len(e.key)+len(e.it.Value)) + entryOverhead
}

// bytes returns the cache's current size.
func (c *objectCache) bytes() int64 {
	if c == nil {
		return 0
	}
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.size
		s.mu.Unlock()
	}
	return n
}
