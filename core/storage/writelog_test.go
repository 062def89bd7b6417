package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/syndtr/goleveldb/leveldb"
)

// TestWriteLog checks the log's answers: a key is vouched for until a group writes a
// key of its bucket, never after a failure, and never for another key's stamp or
// another log's.
func TestWriteLog(t *testing.T) {
	k, other := []byte("ok"), []byte("other")
	for keyBucket(other) == keyBucket(k) {
		other = append(other, 'x')
	}
	batchOf := func(keys ...[]byte) *leveldb.Batch {
		b := new(leveldb.Batch)
		for _, key := range keys {
			b.Put(key, []byte("v"))
		}
		return b
	}
	tests := []struct {
		name  string
		after func(l *writeLog) // what happens between the stamp and the check
		stamp func(l *writeLog) readStamp
		want  bool
	}{
		{"nothing written", func(*writeLog) {}, nil, true},
		{"another bucket written", func(l *writeLog) { l.record(batchOf(other), nil, 0) }, nil, true},
		{"the key written", func(l *writeLog) { l.record(batchOf(other, k), nil, 0) }, nil, false},
		{"the key deleted", func(l *writeLog) {
			b := new(leveldb.Batch)
			b.Delete(k)
			l.record(b, nil, 0)
		}, nil, false},
		{"a failed write", func(l *writeLog) { l.fail() }, nil, false},
		{"another key's stamp", func(*writeLog) {}, func(l *writeLog) readStamp { return l.stamp(other) }, false},
		{"another log's stamp", func(*writeLog) {}, func(*writeLog) readStamp { return new(writeLog).stamp(k) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := new(writeLog)
			l.record(batchOf([]byte("earlier")), nil, 0)
			s := l.stamp(k)
			if tt.stamp != nil {
				s = tt.stamp(l)
			}
			tt.after(l)
			if got := l.unchanged(k, s); got != tt.want {
				t.Fatalf("unchanged = %v, want %v", got, tt.want)
			}
			// A stamp taken after whatever happened is good again.
			if s2 := l.stamp(k); !l.unchanged(k, s2) {
				t.Fatal("a fresh stamp is not vouched for")
			}
		})
	}
}

// TestRequireItem: RequireItem behaves as Require(key, it.Rev), and when nothing wrote
// the key since the read, the write log settles it: the DeriveFunc receives the very
// bytes the read returned. (When the key was written since, the store may still take
// the item's bytes if their revision is current: either is right.)
func TestRequireItem(t *testing.T) {
	ctx := context.Background()
	key := KeyString(TagObject, "default", "b", "k")
	tests := []struct {
		name string
		// between runs after the read and before the commit.
		between  func(t *testing.T, db *DB, other *DB)
		item     func(t *testing.T, db, other *DB, it Item) Item
		conflict bool
		vouched  bool // the write log settles it: the DeriveFunc gets the item's own bytes
	}{
		{name: "unchanged", vouched: true},
		{name: "written since", between: func(t *testing.T, db, _ *DB) { mustPut(t, db, key, "v2") }, conflict: true},
		{name: "same bytes written since", between: func(t *testing.T, db, _ *DB) { mustPut(t, db, key, "v1") }},
		{name: "another key written since", between: func(t *testing.T, db, _ *DB) {
			other := KeyString(TagObject, "default", "b", "k2")
			for keyBucket(other) == keyBucket(key) { // not in the key's bucket
				other = append(other, 'x')
			}
			mustPut(t, db, other, "x")
		}, vouched: true},
		{name: "item of another store", item: otherItem(key, "v1")},
		{name: "stale item of another store", item: otherItem(key, "elsewhere"), conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, other := openTest(t), openTest(t)
			var mu sync.Mutex
			var gotOld []byte
			db.RegisterDerive(TagObject, func(k, old, _ []byte, _ *Derived) error {
				if string(k) == string(key) {
					mu.Lock()
					gotOld = old
					mu.Unlock()
				}
				return nil
			})
			mustPut(t, db, key, "v1")
			it, err := db.Read(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if tt.item != nil {
				it = tt.item(t, db, other, it)
			}
			if tt.between != nil {
				tt.between(t, db, other)
			}
			var b Batch
			b.RequireItem(key, it)
			b.Put(key, []byte("new"))
			err = db.Commit(ctx, &b, false)
			if tt.conflict {
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("commit: %v, want a conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("commit: %v", err)
			}
			if v, err := db.Get(key); err != nil || string(v) != "new" {
				t.Fatalf("after the commit: %q, %v", v, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if string(gotOld) != "v1" {
				t.Fatalf("DeriveFunc's old value %q, want v1", gotOld)
			}
			if tt.vouched && &gotOld[0] != &it.Value[0] {
				t.Fatal("DeriveFunc did not get the item's own bytes: the key was read again")
			}
		})
	}
}

// TestRequireItemAbsent: an item read for an absent key makes a create conditional on
// the key's absence, with or without the log.
func TestRequireItemAbsent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	key := KeyString(TagObject, "default", "b", "new")
	it, err := db.Read(ctx, key)
	if err != nil || it.Rev.Exists() {
		t.Fatalf("read of an absent key: %v, %v", it, err)
	}
	var b Batch
	b.RequireItem(key, it)
	b.Put(key, []byte("first"))
	if err := db.Commit(ctx, &b, false); err != nil {
		t.Fatalf("create: %v", err)
	}
	// The same item again: the key now exists.
	b.Reset()
	b.RequireItem(key, it)
	b.Put(key, []byte("second"))
	if err := db.Commit(ctx, &b, false); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create: %v, want a conflict", err)
	}
}

// otherItem returns a TestRequireItem item: key read from the other store, where it
// holds v.
func otherItem(key []byte, v string) func(t *testing.T, db, other *DB, it Item) Item {
	return func(t *testing.T, _, other *DB, _ Item) Item {
		mustPut(t, other, key, v)
		it, err := other.Read(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
}

func mustPut(t *testing.T, db *DB, key []byte, v string) {
	t.Helper()
	if err := db.Put(key, []byte(v), false); err != nil {
		t.Fatal(err)
	}
}

// TestRequireItemOfChange: the item of a notified change (Change.Item) is as good as a
// Read's: a write committed on it is settled without reading the key again while nobody
// wrote the key, and conflicts once somebody did.
func TestRequireItemOfChange(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	key := KeyString(TagObject, "default", "b", "k")
	var mu sync.Mutex
	var last Item
	var gotOld []byte
	cancel := db.Subscribe(func(cs []Change) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			if string(c.Key) == string(key) {
				last = c.Item(bytes.Clone(c.Value))
			}
		}
	})
	defer cancel()
	db.RegisterDerive(TagObject, func(_, old, _ []byte, _ *Derived) error {
		gotOld = old // the commit goroutine; read after Commit returns
		return nil
	})
	commitOn := func(it Item, v string) error {
		var b Batch
		b.RequireItem(key, it)
		b.Put(key, []byte(v))
		return db.Commit(ctx, &b, false)
	}
	mustPut(t, db, key, "v1")
	mu.Lock()
	it := last
	mu.Unlock()
	if err := commitOn(it, "v2"); err != nil {
		t.Fatalf("commit on the change's item: %v", err)
	}
	if string(gotOld) != "v1" || &gotOld[0] != &it.Value[0] {
		t.Fatalf("DeriveFunc's old value %q (the item's own bytes: %v), want the item's v1", gotOld, &gotOld[0] == &it.Value[0])
	}
	if err := commitOn(it, "v3"); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit on a stale change's item: %v, want a conflict", err)
	}
}

// TestChangeOwned: a change is Owned exactly when its writer handed its batch over
// (Batch.HandOver, or DB.Put and DB.Delete, whose batches are their own), in a group of
// one or of several members; an owned change's bytes are the batch's and stay as
// committed.
func TestChangeOwned(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var mu sync.Mutex
	owned := map[string]bool{}
	kept := map[string][]byte{}
	cancel := db.Subscribe(func(cs []Change) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			owned[string(c.Key)] = c.Owned
			if c.Owned {
				kept[string(c.Key)] = c.Value // kept without a copy, as the contract allows
			}
		}
	})
	defer cancel()
	commit := func(key string, handOver bool) {
		t.Helper()
		var b Batch
		b.Put(k(key), []byte("v-"+key))
		if handOver {
			b.HandOver()
		}
		if err := db.Commit(ctx, &b, false); err != nil {
			t.Fatal(err)
		}
	}
	commit("lent", false)
	commit("handed", true)
	mustPut(t, db, k("put"), "v-put")
	if err := db.Delete(k("put"), false); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup // concurrent writers: groups of several members
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			commit(fmt.Sprint("c", i), i%2 == 0)
		}()
	}
	wg.Wait()
	want := map[string]bool{"lent": false, "handed": true, "put": true}
	for i := 0; i < 32; i++ {
		want[fmt.Sprint("c", i)] = i%2 == 0
	}
	mu.Lock()
	defer mu.Unlock()
	for key, w := range want {
		if got, ok := owned[string(k(key))]; !ok || got != w {
			t.Errorf("%s: Owned %v (notified %v), want %v", key, got, ok, w)
		}
	}
	for key, w := range want {
		if !w || key == "put" { // "put": the delete's change (no value) came last
			continue
		}
		if v := kept[string(k(key))]; string(v) != "v-"+key {
			t.Errorf("kept value of %s is %q, want %q", key, v, "v-"+key)
		}
	}
}

// TestManyConditions: batches of more conditions and keys than an overlay searches
// linearly (smallLocal), and more keys than the committer remembers revisions of
// (maxRememberGroup) — the expiry reaper's deletes — commit on items read, hand the
// DeriveFunc each item's own bytes, conflict as a whole when one key changed, and
// leave later conditions (on revisions no longer remembered) checked correctly.
func TestManyConditions(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, smallLocal + 1, maxRememberGroup + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			db := openTest(t)
			var mu sync.Mutex
			olds := map[string][]byte{}
			db.RegisterDerive(TagObject, func(k, old, _ []byte, _ *Derived) error {
				mu.Lock()
				defer mu.Unlock()
				olds[string(k)] = old
				return nil
			})
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = KeyString(TagObject, "default", "b", fmt.Sprint("k", i))
				mustPut(t, db, keys[i], fmt.Sprint("v", i))
			}
			read := func() []Item {
				items := make([]Item, n)
				for i, key := range keys {
					it, err := db.Read(ctx, key)
					if err != nil {
						t.Fatal(err)
					}
					items[i] = it
				}
				return items
			}
			batch := func(items []Item, op func(b *Batch, key []byte)) *Batch {
				b := new(Batch)
				for i, key := range keys {
					b.RequireItem(key, items[i])
					op(b, key)
				}
				return b
			}
			// One key changed after the read: the whole batch conflicts.
			stale := read()
			mustPut(t, db, keys[n/2], "changed")
			if err := db.Commit(ctx, batch(stale, func(b *Batch, key []byte) { b.Put(key, []byte("x")) }), false); !errors.Is(err, ErrConflict) {
				t.Fatalf("commit on a stale item: %v, want a conflict", err)
			}
			if v, _ := db.Get(keys[n/2]); string(v) != "changed" {
				t.Fatalf("a refused batch wrote %q", v)
			}
			if v, _ := db.Get(keys[n-1]); n > 1 && string(v) != fmt.Sprint("v", n-1) {
				t.Fatalf("a refused batch wrote %q", v)
			}
			// Read afresh: the deletes commit on the items' own bytes.
			items := read()
			clear(olds)
			if err := db.Commit(ctx, batch(items, func(b *Batch, key []byte) { b.Delete(key) }), false); err != nil {
				t.Fatalf("commit: %v", err)
			}
			mu.Lock()
			for i, key := range keys {
				if old := olds[string(key)]; string(old) != string(items[i].Value) || &old[0] != &items[i].Value[0] {
					t.Fatalf("key %d: DeriveFunc's old value %q is not the item read", i, old)
				}
			}
			mu.Unlock()
			// Later conditions: on the deleted keys' absence they hold, on their old
			// revisions they conflict.
			for i, key := range keys[:min(n, 3)] {
				var b Batch
				b.Require(key, items[i].Rev)
				b.Put(key, []byte("again"))
				if err := db.Commit(ctx, &b, false); !errors.Is(err, ErrConflict) {
					t.Fatalf("key %d: commit on its deleted revision: %v, want a conflict", i, err)
				}
				b.Reset()
				b.Require(key, NoRevision)
				b.Put(key, []byte("again"))
				if err := db.Commit(ctx, &b, false); err != nil {
					t.Fatalf("key %d: create on its absence: %v", i, err)
				}
			}
		})
	}
}
