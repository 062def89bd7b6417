package kv

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// objectCache keeps encoded object records by storage key, bounded in bytes, so that
// reads of recently used objects skip LevelDB (whose block cache serialises readers on
// one LRU lock). It is coherent with storage because every change of an object key is
// made under that key's stripe lock, which also updates the cache:
//   - write caches the new record after committing it (write-through: a key just written
//     is likely to be read, and a read of it then skips storage);
//   - the reaper evicts a reaped key;
//   - a read that misses fills the cache while holding the stripe lock, so it cannot
//     install a record older than one a concurrent write has just cached.
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
	mu   sync.Mutex // guards m, lru and size
	m    map[string]*list.Element
	lru  list.List // front = most recently used; elements hold *cacheEntry
	size int64
}

type cacheEntry struct {
	key string
	val []byte
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
		c.shards[i].m = map[string]*list.Element{}
	}
	return c
}

func (c *objectCache) shard(k []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, k)%cacheShards]
}

// get returns the cached record for k.
func (c *objectCache) get(k []byte) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.m[string(k)]
	if ok {
		s.lru.MoveToFront(e)
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	return e.Value.(*cacheEntry).val, true
}

// put caches v (which the caller must not modify afterwards) under k. Records larger
// than a shard's budget are not cached.
func (c *objectCache) put(k, v []byte) {
	if c == nil {
		return
	}
	cost := int64(len(k)+len(v)) + entryOverhead
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[string(k)]; ok {
		s.size -= entryCost(e)
		s.lru.Remove(e)
		delete(s.m, string(k))
	}
	if cost > c.perShard {
		return
	}
	for s.size+cost > c.perShard {
		last := s.lru.Back()
		s.size -= entryCost(last)
		delete(s.m, last.Value.(*cacheEntry).key)
		s.lru.Remove(last)
	}
	ent := &cacheEntry{key: string(k), val: v}
	s.m[ent.key] = s.lru.PushFront(ent)
	s.size += cost
}

// del evicts k.
func (c *objectCache) del(k []byte) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	if e, ok := s.m[string(k)]; ok {
		s.size -= entryCost(e)
		s.lru.Remove(e)
		delete(s.m, string(k))
	}
	s.mu.Unlock()
}

func entryCost(e *list.Element) int64 {
	ce := e.Value.(*cacheEntry)
	return int64(len(ce.key)+len(ce.val)) + entryOverhead
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
