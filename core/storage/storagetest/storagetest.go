// Package storagetest is the conformance suite of storage.Store: the contract every
// implementation (the local LevelDB, a replicated log in front of it) must satisfy.
// An implementation's tests call Run with a function that opens its store on a
// directory:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T, dir string) storage.Store {
//			st, err := storage.OpenStore(dir, storage.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return st
//		})
//	}
//
// Open is called again on the same directory after Close to check durability.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// Opener opens the implementation's store on dir, failing t on error. Each subtest
// gets a fresh directory; the store is closed by the suite.
type Opener func(t *testing.T, dir string) storage.Store

// Run runs the conformance suite against the stores open makes.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Revisions", testRevisions},
		{"ConflictOnStaleRevision", testConflictStale},
		{"ConflictOnCreateWhenPresent", testConflictCreate},
		{"FailedConditionWritesNothing", testAtomicity},
		{"ConditionsOnly", testConditionsOnly},
		{"DerivedWrites", testDerived},
		{"DerivedWritesInOneBatch", testDerivedOneBatch},
		{"DerivedErrorWritesNothing", testDerivedError},
		{"RequireItem", testRequireItem},
		{"RevisionsAfterManyWrites", testRevisionsMany},
		{"SnapshotIsolation", testSnapshot},
		{"IterationBounds", testIteration},
		{"ConcurrentCAS", testConcurrentCAS},
		{"SyncedCommitSurvivesReopen", testDurability},
		{"Notifications", testNotifications},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// fresh opens a store on a new directory and closes it at the end of the test.
func fresh(t *testing.T, open Opener) storage.Store {
	t.Helper()
	st := open(t, t.TempDir())
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// key returns a key of the object table (the table kv derives writes from).
func key(name string) []byte { return storage.KeyString(storage.TagObject, "t", "b", name) }

func read(t *testing.T, st storage.Store, k []byte) storage.Item {
	t.Helper()
	it, err := st.Read(context.Background(), k)
	if err != nil {
		t.Fatalf("Read(%q): %v", k, err)
	}
	return it
}

func commit(t *testing.T, st storage.Store, b *storage.Batch) {
	t.Helper()
	if err := st.Commit(context.Background(), b, false); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func put(t *testing.T, st storage.Store, k []byte, v string) {
	t.Helper()
	var b storage.Batch
	b.Put(k, []byte(v))
	commit(t, st, &b)
}

func wantValue(t *testing.T, st storage.Store, k []byte, want string, present bool) {
	t.Helper()
	v, err := st.Get(k)
	switch {
	case !present && !errors.Is(err, storage.ErrNotFound):
		t.Fatalf("Get(%q) = %q, %v; want not found", k, v, err)
	case present && (err != nil || string(v) != want):
		t.Fatalf("Get(%q) = %q, %v; want %q", k, v, err, want)
	}
}

func testRevisions(t *testing.T, open Opener) {
	st := fresh(t, open)
	k := key("r")
	if it := read(t, st, k); it.Rev != storage.NoRevision || it.Value != nil || it.Rev.Exists() {
		t.Fatalf("absent key: %+v, want NoRevision and nil", it)
	}
	put(t, st, k, "one")
	r1 := read(t, st, k)
	if !r1.Rev.Exists() || string(r1.Value) != "one" {
		t.Fatalf("after put: %+v", r1)
	}
	if again := read(t, st, k); again.Rev != r1.Rev {
		t.Fatalf("two reads of one state: %v then %v", r1.Rev, again.Rev)
	}
	put(t, st, k, "two")
	if r2 := read(t, st, k); r2.Rev == r1.Rev || !r2.Rev.Exists() {
		t.Fatalf("a new value kept revision %v", r2.Rev)
	}
	put(t, st, k, "")
	if r := read(t, st, k); !r.Rev.Exists() || r.Value == nil || len(r.Value) != 0 {
		t.Fatalf("a present empty value: %+v, want a revision and an empty non-nil value", r)
	}
	var b storage.Batch
	b.Delete(k)
	commit(t, st, &b)
	if r := read(t, st, k); r.Rev != storage.NoRevision {
		t.Fatalf("after delete: %v, want NoRevision", r.Rev)
	}
}

func testConflictStale(t *testing.T, open Opener) {
	st := fresh(t, open)
	k := key("c")
	put(t, st, k, "v1")
	r1 := read(t, st, k)
	put(t, st, k, "v2")
	var b storage.Batch
	b.Require(k, r1.Rev)
	b.Put(k, []byte("stale"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit on a stale revision: %v, want ErrConflict", err)
	}
	wantValue(t, st, k, "v2", true)
	// The current revision commits.
	b.Reset()
	b.Require(k, read(t, st, k).Rev)
	b.Put(k, []byte("v3"))
	commit(t, st, &b)
	wantValue(t, st, k, "v3", true)
	// A delete since the read is a conflict too.
	r3 := read(t, st, k)
	b.Reset()
	b.Delete(k)
	commit(t, st, &b)
	b.Reset()
	b.Require(k, r3.Rev)
	b.Put(k, []byte("v4"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit after a delete: %v, want ErrConflict", err)
	}
	wantValue(t, st, k, "", false)
}

func testConflictCreate(t *testing.T, open Opener) {
	st := fresh(t, open)
	k := key("new")
	var b storage.Batch
	b.Require(k, storage.NoRevision)
	b.Put(k, []byte("first"))
	commit(t, st, &b)
	b.Reset()
	b.Require(k, storage.NoRevision)
	b.Put(k, []byte("second"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("create when present: %v, want ErrConflict", err)
	}
	wantValue(t, st, k, "first", true)
}

func testAtomicity(t *testing.T, open Opener) {
	st := fresh(t, open)
	a, c, guard := key("a"), key("c"), key("guard")
	put(t, st, guard, "g1")
	stale := read(t, st, guard).Rev
	put(t, st, guard, "g2")
	var b storage.Batch
	b.Put(a, []byte("A"))
	b.Require(a, storage.NoRevision) // holds
	b.Require(guard, stale)          // does not
	b.Put(c, []byte("C"))
	b.Delete(guard)
	if err := st.Commit(context.Background(), &b, true); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit: %v, want ErrConflict", err)
	}
	wantValue(t, st, a, "", false)
	wantValue(t, st, c, "", false)
	wantValue(t, st, guard, "g2", true)
}

func testConditionsOnly(t *testing.T, open Opener) {
	st := fresh(t, open)
	k := key("k")
	put(t, st, k, "v")
	var b storage.Batch
	b.Require(k, read(t, st, k).Rev)
	if err := st.Commit(context.Background(), &b, false); err != nil {
		t.Fatalf("a batch of conditions that hold: %v", err)
	}
	b.Reset()
	b.Require(k, storage.NoRevision)
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a batch of a condition that fails: %v, want ErrConflict", err)
	}
}

// The derive function of the tests: an object value is a comma-separated list of
// terms; each term has a posting (TagIndex, term, key) and a value "del" also queues
// the key in the reap table.
func postingKey(term string, k []byte) []byte {
	return storage.Key(storage.TagIndex, []byte(term), k)
}

func terms(v []byte) []string {
	if len(v) == 0 {
		return nil
	}
	return strings.Split(string(v), ",")
}

func derive(k, old, new []byte, out *storage.Derived) error {
	keep := map[string]bool{}
	for _, term := range terms(new) {
		keep[term] = true
	}
	for _, term := range terms(old) {
		if !keep[term] {
			out.Delete(postingKey(term, k))
		}
	}
	for _, term := range terms(new) {
		out.Put(postingKey(term, k), nil)
	}
	if string(new) == "fail" {
		return errors.New("refused")
	}
	return nil
}

// postings lists the terms that have a posting for k.
func postings(t *testing.T, st storage.Store, k []byte) []string {
	t.Helper()
	it := st.IteratePrefix([]byte{storage.TagIndex})
	defer it.Release()
	var got []string
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 2 {
			t.Fatalf("posting %q: %v", it.Key(), err)
		}
		if bytes.Equal(comps[1], k) {
			got = append(got, string(comps[0]))
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func wantPostings(t *testing.T, st storage.Store, k []byte, want ...string) {
	t.Helper()
	if got := postings(t, st, k); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("postings of %q: %v, want %v", k, got, want)
	}
}

func testDerived(t *testing.T, open Opener) {
	st := fresh(t, open)
	st.RegisterDerive(storage.TagObject, derive)
	k := key("d")
	put(t, st, k, "a,b")
	wantPostings(t, st, k, "a", "b")
	// A conditional update removes the terms it drops and adds the new ones.
	var b storage.Batch
	b.Require(k, read(t, st, k).Rev)
	b.Put(k, []byte("b,c"))
	commit(t, st, &b)
	wantPostings(t, st, k, "b", "c")
	// A refused commit derives nothing.
	b.Reset()
	b.Require(k, storage.NoRevision)
	b.Put(k, []byte("z"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit: %v, want ErrConflict", err)
	}
	wantPostings(t, st, k, "b", "c")
	// A delete removes them all.
	b.Reset()
	b.Delete(k)
	commit(t, st, &b)
	wantPostings(t, st, k)
	// Keys of other tables derive nothing.
	put(t, st, storage.KeyString(storage.TagProps, "x"), "q")
	wantPostings(t, st, storage.KeyString(storage.TagProps, "x"))
}

func testDerivedOneBatch(t *testing.T, open Opener) {
	st := fresh(t, open)
	st.RegisterDerive(storage.TagObject, derive)
	k, k2 := key("one"), key("two")
	put(t, st, k, "a")
	// Two writes of one key in one batch: the second derives from the first. Writes
	// from concurrent commits may be grouped; each derives from the one before.
	var b storage.Batch
	b.Put(k, []byte("b"))
	b.Put(k, []byte("c,d"))
	b.Put(k2, []byte("e"))
	commit(t, st, &b)
	wantPostings(t, st, k, "c", "d")
	wantPostings(t, st, k2, "e")
	// A batch of many keys, each written twice: each write derives from the one before.
	b.Reset()
	for round := range 2 {
		for i := range 100 {
			b.Put(key(fmt.Sprint("many", i)), []byte(fmt.Sprintf("r%d,i%d", round, i)))
		}
	}
	commit(t, st, &b)
	for i := range 100 {
		wantPostings(t, st, key(fmt.Sprint("many", i)), fmt.Sprintf("i%d", i), "r1")
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b storage.Batch
			b.Put(k, []byte("t"+strconv.Itoa(i)))
			if err := st.Commit(context.Background(), &b, i%2 == 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	v, err := st.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	wantPostings(t, st, k, string(v))
}

func testDerivedError(t *testing.T, open Opener) {
	st := fresh(t, open)
	st.RegisterDerive(storage.TagObject, derive)
	k, other := key("e"), key("other")
	put(t, st, k, "a")
	var b storage.Batch
	b.Put(other, []byte("x"))
	b.Put(k, []byte("fail"))
	err := st.Commit(context.Background(), &b, false)
	if err == nil || errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit of a record its derive function refuses: %v, want a non-conflict error", err)
	}
	wantValue(t, st, k, "a", true)
	wantValue(t, st, other, "", false)
	wantPostings(t, st, k, "a")
	wantPostings(t, st, other)
}

func testSnapshot(t *testing.T, open Opener) {
	st := fresh(t, open)
	a, b := key("a"), key("b")
	put(t, st, a, "old")
	snap, err := st.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	put(t, st, a, "new")
	put(t, st, b, "later")
	if v, err := snap.Get(a); err != nil || string(v) != "old" {
		t.Fatalf("snapshot Get = %q, %v; want old", v, err)
	}
	if _, err := snap.Get(b); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("snapshot Get of a later key: %v, want ErrNotFound", err)
	}
	it := snap.IteratePrefix([]byte{storage.TagObject})
	defer it.Release()
	var got []string
	for it.Next() {
		got = append(got, string(it.Value()))
	}
	if err := it.Err(); err != nil || strings.Join(got, ",") != "old" {
		t.Fatalf("snapshot iteration: %v, %v; want [old]", got, err)
	}
	wantValue(t, st, a, "new", true)
}

func testIteration(t *testing.T, open Opener) {
	st := fresh(t, open)
	var b storage.Batch
	for _, name := range []string{"d", "a", "c", "b", "a\x00", "e"} {
		b.Put(key(name), []byte(name))
	}
	b.Put(storage.KeyString(storage.TagObject, "t", "bb", "x"), []byte("other bucket"))
	commit(t, st, &b)
	collect := func(it *storage.Iterator) string {
		t.Helper()
		defer it.Release()
		var got []string
		for it.Next() {
			got = append(got, string(it.Value()))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, "|")
	}
	if got := collect(st.IteratePrefix(storage.KeyString(storage.TagObject, "t", "b"))); got != "a|a\x00|b|c|d|e" {
		t.Fatalf("prefix: %q", got)
	}
	if got := collect(st.Iterate(key("b"), key("d"))); got != "b|c" {
		t.Fatalf("[b, d): %q", got)
	}
	it := st.Iterate(key("b"), key("e"))
	defer it.Release()
	if !it.Seek(key("bb")) || string(it.Value()) != "c" {
		t.Fatalf("Seek(bb) at %q, want c", it.Value())
	}
	if it.Seek(key("e")) {
		t.Fatalf("Seek past the upper bound found %q", it.Value())
	}
	snap, err := st.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	if got := collect(snap.Iterate(key("a\x00"), key("c"))); got != "a\x00|b" {
		t.Fatalf("snapshot [a\\0, c): %q", got)
	}
}

// testConcurrentCAS increments one counter from many goroutines, each reading the
// value with its revision and committing on that revision, retrying on conflict: no
// increment may be lost.
func testConcurrentCAS(t *testing.T, open Opener) {
	st := fresh(t, open)
	k := key("counter")
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := increment(st, k); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wantValue(t, st, k, strconv.Itoa(workers*each), true)
}

func increment(st storage.Store, k []byte) error {
	ctx := context.Background()
	for attempt := 0; attempt < 10_000; attempt++ {
		it, err := st.Read(ctx, k)
		if err != nil {
			return err
		}
		n := 0
		if it.Value != nil {
			if n, err = strconv.Atoi(string(it.Value)); err != nil {
				return err
			}
		}
		var b storage.Batch
		b.Require(k, it.Rev)
		b.Put(k, []byte(strconv.Itoa(n+1)))
		err = st.Commit(ctx, &b, false)
		if !errors.Is(err, storage.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("increment: too many conflicts")
}

func testDurability(t *testing.T, open Opener) {
	dir := t.TempDir()
	st := open(t, dir)
	k := key("durable")
	var b storage.Batch
	b.Require(k, storage.NoRevision)
	b.Put(k, []byte("kept"))
	if err := st.Commit(context.Background(), &b, true); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, dir)
	defer st.Close()
	wantValue(t, st, k, "kept", true)
	if it := read(t, st, k); !it.Rev.Exists() {
		t.Fatalf("revision after reopen: %v", it.Rev)
	}
}

func testNotifications(t *testing.T, open Opener) {
	st := fresh(t, open)
	st.RegisterDerive(storage.TagObject, derive)
	type seen struct {
		key, value string
		rev        storage.Revision
	}
	var mu sync.Mutex // guards got
	var got []seen
	cancel := st.Subscribe(func(cs []storage.Change) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			got = append(got, seen{string(c.Key), string(c.Value), c.Rev})
		}
	})
	a := key("a")
	put(t, st, a, "x")
	revA := read(t, st, a).Rev
	var b storage.Batch
	b.Require(a, storage.NoRevision) // fails: not notified
	b.Put(a, []byte("y"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit: %v, want ErrConflict", err)
	}
	b.Reset()
	b.Delete(a)
	commit(t, st, &b)
	cancel()
	put(t, st, a, "after cancel")
	mu.Lock()
	defer mu.Unlock()
	want := []seen{{string(a), "x", revA}, {string(a), "", storage.NoRevision}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notified %+v, want %+v (derived writes are not notified)", got, want)
	}
}

// testRequireItem: a condition that carries the value read derives from it; a value
// that does not have the revision is ignored (the store derives from what is stored),
// and a stale one is a conflict like Require.
func testRequireItem(t *testing.T, open Opener) {
	st := fresh(t, open)
	st.RegisterDerive(storage.TagObject, derive)
	k := key("ri")
	put(t, st, k, "a,b")
	it := read(t, st, k)
	var b storage.Batch
	b.RequireItem(k, it)
	b.Put(k, []byte("b,c"))
	commit(t, st, &b)
	wantPostings(t, st, k, "b", "c")
	// A lying value (not the revision's): ignored.
	it = read(t, st, k)
	b.Reset()
	b.RequireItem(k, storage.Item{Value: []byte("x,y,z"), Rev: it.Rev})
	b.Put(k, []byte("d"))
	commit(t, st, &b)
	wantPostings(t, st, k, "d")
	// A stale item: a conflict.
	b.Reset()
	b.RequireItem(k, it)
	b.Put(k, []byte("e"))
	if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit on a stale item: %v, want ErrConflict", err)
	}
	wantPostings(t, st, k, "d")
	// Absent: an Item{} requires absence.
	b.Reset()
	b.RequireItem(key("absent"), storage.Item{})
	b.Put(key("absent"), []byte("f"))
	commit(t, st, &b)
	wantPostings(t, st, key("absent"), "f")
}

// testRevisionsMany writes many keys, unconditionally and conditionally, in one batch
// and in many, then checks that every key's revision as Read returns it is the one a
// condition accepts, and an older one is refused: the store's bookkeeping of
// revisions (if any) never goes stale.
func testRevisionsMany(t *testing.T, open Opener) {
	st := fresh(t, open)
	const n = 300
	old := make([]storage.Revision, n)
	var b storage.Batch
	for i := range n {
		b.Put(key(strconv.Itoa(i)), []byte("v0"))
	}
	commit(t, st, &b)
	for i := range n {
		k := key(strconv.Itoa(i))
		old[i] = read(t, st, k).Rev
		b.Reset()
		if i%2 == 0 {
			b.Require(k, old[i])
		}
		if i%3 == 0 {
			b.Delete(k)
		} else {
			b.Put(k, []byte("v1"))
		}
		commit(t, st, &b)
	}
	for i := range n {
		k := key(strconv.Itoa(i))
		b.Reset()
		b.Require(k, old[i])
		if err := st.Commit(context.Background(), &b, false); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("key %d: a condition on the revision before the last write: %v, want ErrConflict", i, err)
		}
		b.Reset()
		b.Require(k, read(t, st, k).Rev)
		commit(t, st, &b)
	}
}
