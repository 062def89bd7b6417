package kv

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// item is a cache entry's value with a revision made from its length.
func item(v []byte) storage.Item {
	return storage.Item{Value: v, Rev: storage.MakeRevision(1, uint64(len(v)))}
}

func TestObjectCacheEvictsByBytes(t *testing.T) {
	c := newObjectCache(cacheShards * 1024) // 1 KiB per shard
	for i := 0; i < 1000; i++ {
		c.put([]byte(fmt.Sprint("k", i)), item(make([]byte, 200)))
	}
	if n := c.bytes(); n > cacheShards*1024 {
		t.Fatalf("cache holds %d bytes, budget %d", n, cacheShards*1024)
	}
	if c.fits([]byte("huge"), 4096) {
		t.Fatal("fits: a record larger than a shard's budget")
	}
	c.put([]byte("huge"), item(make([]byte, 4096)))
	if _, ok := c.get([]byte("huge")); ok {
		t.Fatal("a record larger than a shard's budget was cached")
	}
	c.put([]byte("a"), item([]byte("1")))
	c.put([]byte("a"), item([]byte("22")))
	if it, ok := c.get([]byte("a")); !ok || string(it.Value) != "22" || it.Rev != item([]byte("22")).Rev {
		t.Fatalf("replace: %+v %v", it, ok)
	}
	c.del([]byte("a"))
	if _, ok := c.get([]byte("a")); ok {
		t.Fatal("deleted entry still cached")
	}
	var nilCache *objectCache
	nilCache.put([]byte("x"), item(nil))
	nilCache.fill([]byte("x"), item(nil), nilCache.gen([]byte("x")))
	if _, ok := nilCache.get([]byte("x")); ok || nilCache.bytes() != 0 || nilCache.fits([]byte("x"), 1) {
		t.Fatal("a disabled cache must hold nothing")
	}
}

// TestObjectCacheLRU: a shard evicts its least recently used entries first; a get, a
// replace and a fill make an entry the most recently used; a deleted entry leaves the
// order of the others as it was.
func TestObjectCacheLRU(t *testing.T) {
	const v = 100
	perEntry := int64(5+v) + entryOverhead // keys of five bytes
	c := newObjectCache(cacheShards * 3 * perEntry)
	// Keys that share a shard.
	var keys []string
	first := c.shard([]byte("k0000"))
	for i := 0; len(keys) < 6 && i < 10000; i++ {
		if k := fmt.Sprintf("k%04d", i); c.shard([]byte(k)) == first {
			keys = append(keys, k)
		}
	}
	a, b, d, e, f, g := keys[0], keys[1], keys[2], keys[3], keys[4], keys[5]
	put := func(k string) { c.put([]byte(k), item(make([]byte, v))) }
	steps := []struct {
		do   func()
		want []string // held, in any order
	}{
		{func() { put(a); put(b); put(d) }, []string{a, b, d}},
		{func() { c.get([]byte(a)); put(e) }, []string{a, d, e}}, // b was the least recently used
		{func() { put(d); put(f) }, []string{d, e, f}},           // d replaced: a is now the oldest
		{func() { c.del([]byte(e)); put(g) }, []string{d, f, g}}, // a slot was free
		{func() { c.fill([]byte(a), item(make([]byte, v)), c.gen([]byte(a))) }, []string{f, g, a}},
	}
	for i, st := range steps {
		st.do()
		var held []string
		for _, k := range keys {
			if _, ok := c.shard([]byte(k)).m[k]; ok {
				held = append(held, k)
			}
		}
		if fmt.Sprint(sorted(held)) != fmt.Sprint(sorted(st.want)) {
			t.Fatalf("step %d: holds %v, want %v", i, held, st.want)
		}
		if n := c.bytes(); n != int64(len(held))*perEntry {
			t.Fatalf("step %d: %d bytes for %d entries", i, n, len(held))
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// TestObjectCacheFill: a fill (a read from storage) is dropped when a committed change
// reached the key's shard after the read began, so it cannot replace a newer record.
func TestObjectCacheFill(t *testing.T) {
	k := []byte("k")
	tests := []struct {
		name   string
		before func(c *objectCache) // between reading gen and filling
		want   string               // "" for nothing cached
	}{
		{"no change", func(*objectCache) {}, "read"},
		{"a put meanwhile", func(c *objectCache) { c.put(k, item([]byte("newer"))) }, "newer"},
		{"a delete meanwhile", func(c *objectCache) { c.del(k) }, ""},
		{"a put of another key of the shard", func(c *objectCache) { c.put(k, item([]byte("newer"))); c.del(k) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newObjectCache(DefaultObjectCacheSize)
			gen := c.gen(k)
			tc.before(c)
			c.fill(k, item([]byte("read")), gen)
			it, ok := c.get(k)
			if got := string(it.Value); ok != (tc.want != "") || got != tc.want {
				t.Fatalf("cached %q (%v), want %q", got, ok, tc.want)
			}
		})
	}
}

// TestObjectCacheCoherentUnderRaces: writers increase counters through the service while
// readers fetch them; with a cache small enough to evict constantly, no reader may ever
// see a counter go backwards, and the final reads equal the last writes.
func TestObjectCacheCoherentUnderRaces(t *testing.T) {
	for _, size := range []int64{cacheShards * 512, -1, DefaultObjectCacheSize} {
		t.Run(fmt.Sprint("cache=", size), func(t *testing.T) {
			s := newTestService(t, Config{ObjectCacheSize: size})
			const keys, writes, readers = 8, 60, 4
			var done atomic.Bool
			var wg sync.WaitGroup
			for k := 0; k < keys; k++ {
				wg.Add(1)
				go func(k int) {
					defer wg.Done()
					for i := 1; i <= writes; i++ {
						put(t, s, "b", fmt.Sprint("k", k), strconv.Itoa(i), nil)
					}
				}(k)
			}
			var rwg sync.WaitGroup
			for r := 0; r < readers; r++ {
				rwg.Add(1)
				go func() {
					defer rwg.Done()
					last := make([]int, keys)
					for !done.Load() {
						for k := 0; k < keys; k++ {
							o, err := s.Get(ctx, core.DefaultType, "b", fmt.Sprint("k", k), GetOptions{})
							if IsNotFound(err) {
								continue
							}
							if err != nil {
								t.Error(err)
								return
							}
							n, _ := strconv.Atoi(string(o.Siblings[0].Value))
							if n < last[k] {
								t.Errorf("key k%d went back from %d to %d", k, last[k], n)
								return
							}
							last[k] = n
						}
					}
				}()
			}
			wg.Wait()
			done.Store(true)
			rwg.Wait()
			for k := 0; k < keys; k++ {
				if got := values(get(t, s, "b", fmt.Sprint("k", k))); fmt.Sprint(got) != fmt.Sprintf("[%d]", writes) {
					t.Fatalf("k%d = %v, want [%d]", k, got, writes)
				}
			}
		})
	}
}

func TestGetNoCacheFill(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s1, err := New(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s1, "b", "k", "value", nil)
	s1.Close()
	// A new service starts with an empty cache.
	s, err := New(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{NoCacheFill: true})
	if err != nil || string(o.Siblings[0].Value) != "value" {
		t.Fatalf("get without filling: %v %v", o, err)
	}
	if n := s.CacheBytes(); n != 0 {
		t.Errorf("a NoCacheFill miss filled the cache (%d bytes)", n)
	}
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.CacheBytes() == 0 {
		t.Error("a plain miss did not fill the cache")
	}
	// A cached record is still served to a NoCacheFill read.
	if o, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{NoCacheFill: true}); err != nil || string(o.Siblings[0].Value) != "value" {
		t.Fatalf("cached get without filling: %v %v", o, err)
	}
}

// TestObjectCacheRecordsAbsence: a delete of a cached key leaves an entry saying it is
// absent, which reads and conditional writes use; a delete of an uncached key caches
// nothing.
func TestObjectCacheRecordsAbsence(t *testing.T) {
	c := newObjectCache(cacheShards * 1024)
	c.put([]byte("a"), item([]byte("1")))
	gen := c.gen([]byte("a"))
	c.markAbsent([]byte("a"), storage.Item{})
	if it, ok := c.get([]byte("a")); !ok || it.Value != nil {
		t.Fatalf("after the delete of a cached key: %+v %v", it, ok)
	}
	if c.gen([]byte("a")) == gen {
		t.Fatal("a delete did not advance the shard's generation")
	}
	c.markAbsent([]byte("b"), storage.Item{})
	if _, ok := c.get([]byte("b")); ok {
		t.Fatal("the delete of an uncached key was cached")
	}

	s := newTestService(t, Config{})
	put(t, s, "b", "k", "v", nil)
	get(t, s, "b", "k") // cached
	var batch storage.Batch
	batch.Delete(objectKey(core.DefaultType, "b", "k"))
	if err := s.db.Commit(ctx, &batch, false); err != nil {
		t.Fatal(err)
	}
	if it, ok := s.cache.get(objectKey(core.DefaultType, "b", "k")); !ok || it.Value != nil {
		t.Fatalf("the service's cache after a delete: %+v %v", it, ok)
	}
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("get of a deleted key: %v", err)
	}
	o := put(t, s, "b", "k", "again", nil) // commits on the cached absence
	if got := values(get(t, s, "b", "k")); !slices.Equal(got, []string{"again"}) || len(o.Siblings) != 1 {
		t.Fatalf("write over a deleted key: %v", got)
	}
}
