package kv

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core"
)

// Correctness of the write path rests on the store's conditional commit, not on the
// service's stripe locks or caches: these tests run two services — as two nodes of a
// cluster would be, each with its own node id, locks and caches — over one store.

// twoServices returns two services over one fresh store; at cleanup it checks the
// store's invariants and closes everything.
func twoServices(t *testing.T) (a, b *Service) {
	t.Helper()
	db := openTestDB(t)
	quiet := slog.New(slog.DiscardHandler) // sibling warnings are expected
	a, err := New(db, Config{NodeID: "node-a", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b, err = New(db, Config{NodeID: "node-b", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.CheckInvariants(); err != nil {
			t.Errorf("invariants after test: %v", err)
		}
		a.Close()
		b.Close()
	})
	return a, b
}

// allowMult sets allow_mult on bucket through s.
func allowMult(t *testing.T, s *Service, bucket string) {
	t.Helper()
	if err := s.SetProps(ctx, core.DefaultType, bucket, map[string]json.RawMessage{"allow_mult": json.RawMessage("true")}); err != nil {
		t.Fatal(err)
	}
}

// both runs fn(s, worker) from `workers` goroutines on each of a and b.
func both(a, b *Service, workers int, fn func(s *Service, worker string)) {
	var wg sync.WaitGroup
	for i, s := range []*Service{a, b} {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(s, fmt.Sprintf("%d.%d", i, w))
			}()
		}
	}
	wg.Wait()
}

// TestSharedStoreBlindWritesAllSurvive: writes without a clock from both services all
// survive as siblings.
func TestSharedStoreBlindWritesAllSurvive(t *testing.T) {
	a, b := twoServices(t)
	allowMult(t, a, "m")
	const workers, each = 4, 5
	var mu sync.Mutex // guards want
	var want []string
	both(a, b, workers, func(s *Service, w string) {
		for i := range each {
			v := fmt.Sprintf("%s-%d", w, i)
			if _, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "m", Key: "k",
				Value: core.Sibling{Value: []byte(v), ContentType: "text/plain"}}); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			want = append(want, v)
			mu.Unlock()
		}
	})
	for _, s := range []*Service{a, b} {
		got := values(get(t, s, "m", "k"))
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s sees %d siblings %v, want the %d written %v", s.NodeID(), len(got), got, len(want), want)
		}
	}
}

// tokens returns the union of the comma-separated token sets of o's live siblings.
func tokens(o *core.Object) map[string]bool {
	set := map[string]bool{}
	if o == nil {
		return set
	}
	for _, sib := range o.Siblings {
		if sib.Deleted || len(sib.Value) == 0 {
			continue
		}
		for _, tok := range strings.Split(string(sib.Value), ",") {
			set[tok] = true
		}
	}
	return set
}

// TestSharedStoreConditionalWritesLoseNothing: each write reads the object, merges
// its siblings' token sets, adds a token of its own and writes with the clock it read.
// Whatever the interleaving across the two services, the final siblings hold every
// token written: no update was lost.
func TestSharedStoreConditionalWritesLoseNothing(t *testing.T) {
	for _, mult := range []bool{true, false} {
		t.Run(fmt.Sprint("allow_mult=", mult), func(t *testing.T) {
			a, b := twoServices(t)
			if mult {
				allowMult(t, a, "m")
			}
			const workers, each = 3, 15
			var mu sync.Mutex // guards written
			written := map[string]bool{}
			both(a, b, workers, func(s *Service, w string) {
				for i := range each {
					tok := fmt.Sprintf("%s-%d", w, i)
					if err := readModifyWrite(s, tok, mult); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					written[tok] = true
					mu.Unlock()
				}
			})
			got := tokens(get(t, a, "m", "k"))
			for tok := range written {
				if !got[tok] {
					t.Errorf("token %s was lost (final holds %d of %d)", tok, len(got), len(written))
				}
			}
		})
	}
}

// readModifyWrite adds tok to the token set stored under m/k through s, writing with
// the clock it read. Without allow_mult a concurrent write would replace the value, so
// the write is made conditional (Precondition) on the clock it read, and retried.
func readModifyWrite(s *Service, tok string, mult bool) error {
	for {
		o, err := s.Get(ctx, core.DefaultType, "m", "k", GetOptions{})
		if err != nil && !IsNotFound(err) {
			return err
		}
		set := tokens(o)
		set[tok] = true
		list := make([]string, 0, len(set))
		for t := range set {
			list = append(list, t)
		}
		sort.Strings(list)
		var clock []byte
		if o != nil {
			clock = o.VClock
		}
		req := &PutRequest{Type: core.DefaultType, Bucket: "m", Key: "k", Context: clock,
			Value: core.Sibling{Value: []byte(strings.Join(list, ",")), ContentType: "text/plain"}}
		if !mult {
			req.Options.Precondition = func(cur *core.Object) error {
				if cur == nil && clock == nil || cur != nil && string(cur.VClock) == string(clock) {
					return nil
				}
				return errStale
			}
		}
		_, err = s.Put(ctx, req)
		if !errors.Is(err, errStale) {
			return err
		}
	}
}

var errStale = &core.Error{Code: core.EPRECONDITION, Message: "stale\n"}

// TestSharedStoreDeleteRacesWrite: a delete through one service and a write through
// the other, both made with the clock they read, keep both outcomes whatever their
// order: the written value survives next to a tombstone.
func TestSharedStoreDeleteRacesWrite(t *testing.T) {
	a, b := twoServices(t)
	allowMult(t, a, "m")
	for round := range 20 {
		key := fmt.Sprint("k", round)
		put(t, a, "m", key, "start", nil)
		clock := get(t, b, "m", key).VClock
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := a.Delete(ctx, core.DefaultType, "m", key, DeleteOptions{Context: clock}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			put(t, b, "m", key, "written", clock)
		}()
		wg.Wait()
		for _, s := range []*Service{a, b} {
			o := get(t, s, "m", key)
			tombs := 0
			var got []string
			for _, sib := range o.Siblings {
				if sib.Deleted {
					tombs++
				} else {
					got = append(got, string(sib.Value))
				}
			}
			if !slices.Equal(got, []string{"written"}) || tombs != 1 {
				t.Fatalf("round %d, %s: live %v and %d tombstones, want [written] and 1", round, s.NodeID(), got, tombs)
			}
		}
	}
}

// TestSharedStoreCountersAddUp: increments through both services add up.
func TestSharedStoreCountersAddUp(t *testing.T) {
	a, b := twoServices(t)
	allowMult(t, a, "c")
	const workers, each = 4, 25
	both(a, b, workers, func(s *Service, _ string) {
		for range each {
			if _, err := s.CounterAdd(ctx, "c", "k", 1, PutOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for _, s := range []*Service{a, b} {
		if v := counterValue(t, s, "c", "k"); v != 2*workers*each {
			t.Fatalf("%s reads %d, want %d", s.NodeID(), v, 2*workers*each)
		}
	}
}

// TestSharedStoreCachesFollowCommits: what one service commits, the other's object and
// properties caches show at once.
func TestSharedStoreCachesFollowCommits(t *testing.T) {
	a, b := twoServices(t)
	put(t, a, "b", "k", "one", nil)
	if got := values(get(t, a, "b", "k")); !slices.Equal(got, []string{"one"}) { // cached in a
		t.Fatalf("a reads %v", got)
	}
	put(t, b, "b", "k", "two", get(t, b, "b", "k").VClock)
	if got := values(get(t, a, "b", "k")); !slices.Equal(got, []string{"two"}) {
		t.Fatalf("after a write through b, a reads %v, want [two]", got)
	}
	if _, err := b.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, err := a.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); err != nil || len(tokens(o)) != 0 {
		t.Fatalf("after a delete through b, a reads %v, %v; want the tombstone", values(o), err)
	}
	if p, err := a.Props(ctx, core.DefaultType, "b"); err != nil || p.AllowMult {
		t.Fatalf("props: %+v, %v", p, err) // cached in a
	}
	allowMult(t, b, "b")
	if p, err := a.Props(ctx, core.DefaultType, "b"); err != nil || !p.AllowMult {
		t.Fatalf("after b set allow_mult, a's props: allow_mult=%v, %v", p.AllowMult, err)
	}
	if err := b.ResetProps(ctx, core.DefaultType, "b"); err != nil {
		t.Fatal(err)
	}
	if p, err := a.Props(ctx, core.DefaultType, "b"); err != nil || p.AllowMult {
		t.Fatalf("after b reset the props, a's props: allow_mult=%v, %v", p.AllowMult, err)
	}
}

// TestSharedStoreNodeIDAgreed: services starting on one store without a configured node
// id agree on the one stored first.
func TestSharedStoreNodeIDAgreed(t *testing.T) {
	db := openTestDB(t)
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := New(db, Config{})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = s.NodeID()
			s.Close()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("node ids %v, want one", ids)
		}
	}
}
