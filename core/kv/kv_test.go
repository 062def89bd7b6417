package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// fakeClock is a settable clock for reap tests.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newTestService opens a fresh store and service; at cleanup it checks the store's
// invariants (objects ⇔ postings ⇔ reap entries) and closes everything.
func newTestService(t testing.TB, cfg Config) *Service {
	t.Helper()
	dir := t.TempDir()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.CheckInvariants(); err != nil {
			t.Errorf("invariants after test: %v", err)
		}
		s.Close()
		db.Close()
	})
	return s
}

var ctx = context.Background()

// openTestDB opens a fresh store that is closed at the end of the test.
func openTestDB(t testing.TB) *storage.DB {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func put(t testing.TB, s *Service, bucket, key, value string, clock []byte, idx ...core.IndexEntry) *core.Object {
	t.Helper()
	o, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: bucket, Key: key, Context: clock,
		Value:   core.Sibling{Value: []byte(value), ContentType: "text/plain", Indexes: idx},
		Options: PutOptions{W: core.QuorumDefault, DW: core.QuorumDefault, PW: core.QuorumDefault}})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return o
}

func values(o *core.Object) []string {
	var vs []string
	for _, s := range o.Siblings {
		if s.Deleted {
			vs = append(vs, "<deleted>")
			continue
		}
		vs = append(vs, string(s.Value))
	}
	sort.Strings(vs)
	return vs
}

func setProps(t testing.TB, s *Service, bucket string, props string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(props), &m); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProps(ctx, core.DefaultType, bucket, m); err != nil {
		t.Fatalf("set props %s: %v", props, err)
	}
}

func get(t testing.TB, s *Service, bucket, key string) *core.Object {
	t.Helper()
	o, err := s.Get(ctx, core.DefaultType, bucket, key, GetOptions{R: core.QuorumDefault, PR: core.QuorumDefault})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return o
}

// TestSiblingScenarios runs write sequences and checks the values left. Each step writes
// a value with the clock of a named earlier read (or none) and may read (saving the clock).
func TestSiblingScenarios(t *testing.T) {
	type step struct {
		write   string // value to write; "" = read only
		ctxFrom string // name of a saved read whose clock to send; "" = none
		saveAs  string // read afterwards and save the clock under this name
	}
	tests := []struct {
		name  string
		props string
		steps []step
		want  []string
	}{
		{"allow_mult=false: last write wins without clocks", `{"allow_mult":false}`,
			[]step{{write: "a"}, {write: "b"}, {write: "c"}}, []string{"c"}},
		{"allow_mult: writes without clocks become siblings", `{"allow_mult":true}`,
			[]step{{write: "a"}, {write: "b"}, {write: "c"}}, []string{"a", "b", "c"}},
		{"allow_mult: a write with the read clock resolves siblings", `{"allow_mult":true}`,
			[]step{{write: "a"}, {write: "b"}, {saveAs: "r"}, {write: "merged", ctxFrom: "r"}}, []string{"merged"}},
		{"allow_mult: concurrent writes from the same read are siblings", `{"allow_mult":true}`,
			[]step{{write: "a", saveAs: "r"}, {write: "x", ctxFrom: "r"}, {write: "y", ctxFrom: "r"}}, []string{"x", "y"}},
		{"dvv: a stale context drops only what it saw", `{"allow_mult":true,"dvv_enabled":true}`,
			[]step{{write: "x", saveAs: "r1"}, {write: "y"}, {write: "z", ctxFrom: "r1"}}, []string{"y", "z"}},
		{"no dvv: a stale context keeps everything", `{"allow_mult":true,"dvv_enabled":false}`,
			[]step{{write: "x", saveAs: "r1"}, {write: "y"}, {write: "z", ctxFrom: "r1"}}, []string{"x", "y", "z"}},
		{"last_write_wins replaces siblings", `{"allow_mult":true,"last_write_wins":true}`,
			[]step{{write: "a"}, {write: "b"}}, []string{"b"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t, Config{})
			b := fmt.Sprintf("b%d", i)
			setProps(t, s, b, tt.props)
			saved := map[string][]byte{}
			for _, st := range tt.steps {
				if st.write != "" {
					put(t, s, b, "k", st.write, saved[st.ctxFrom])
				}
				if st.saveAs != "" {
					saved[st.saveAs] = get(t, s, b, "k").VClock
				}
			}
			if got := values(get(t, s, b, "k")); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("values = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClockDescendsEverythingWritten(t *testing.T) {
	s := newTestService(t, Config{})
	var clocks [][]byte
	for i := 0; i < 5; i++ {
		clocks = append(clocks, put(t, s, "b", "k", fmt.Sprint(i), nil).VClock)
	}
	final, _ := vclock.Decode(get(t, s, "b", "k").VClock)
	for i, c := range clocks {
		vc, _ := vclock.Decode(c)
		if !final.Descends(vc) {
			t.Fatalf("final clock %v does not descend write %d's clock %v", final, i, vc)
		}
	}
}

func TestConcurrentWritersWithoutClocksAllSurvive(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "b", `{"allow_mult":true}`)
	const writers = 32
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			put(t, s, "b", "k", fmt.Sprintf("w%02d", i), nil)
		}(i)
	}
	wg.Wait()
	got := values(get(t, s, "b", "k"))
	if len(got) != writers {
		t.Fatalf("%d siblings survive, want %d: %v", len(got), writers, got)
	}
}

func TestDeleteTombstoneAndReap(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now, ReapDelay: 3 * time.Second})
	put(t, s, "b", "k", "v", nil, core.IndexEntry{Field: "f_bin", Value: "x"})
	if _, err := s.Delete(ctx, core.DefaultType, "b", "nope", DeleteOptions{}); !IsNotFound(err) {
		t.Fatalf("delete of a missing key: %v", err)
	}
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	o := get(t, s, "b", "k")
	if !o.Deleted() || len(o.VClock) == 0 {
		t.Fatalf("tombstone not visible: %+v", o)
	}
	if tomb, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); !IsNotFound(err) || tomb == nil || !tomb.Deleted() {
		t.Fatalf("second delete: %v, %+v", err, tomb)
	}
	if err := s.ReapDue(); err != nil {
		t.Fatal(err)
	}
	if o := get(t, s, "b", "k"); !o.Deleted() {
		t.Fatal("tombstone reaped too early")
	}
	clk.Add(3 * time.Second)
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("expired tombstone still visible: %v", err)
	}
	if err := s.ReapDue(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Get(objectKey(core.DefaultType, "b", "k")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("tombstone not removed by the reaper")
	}
}

func TestWriteOverTombstoneWithItsClock(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "b", `{"allow_mult":true}`)
	put(t, s, "b", "k", "v1", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tomb := get(t, s, "b", "k")
	put(t, s, "b", "k", "v2", tomb.VClock)
	if got := values(get(t, s, "b", "k")); fmt.Sprint(got) != "[v2]" {
		t.Fatalf("values = %v, want [v2]", got)
	}
}

func TestStaleDeleteBecomesSibling(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "b", `{"allow_mult":true}`)
	old := put(t, s, "b", "k", "v1", nil).VClock
	put(t, s, "b", "k", "v2", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{Context: old}); err != nil {
		t.Fatal(err)
	}
	if got := values(get(t, s, "b", "k")); fmt.Sprint(got) != "[<deleted> v1 v2]" {
		t.Fatalf("values = %v", got)
	}
}

func TestIndexPostingsFollowWrites(t *testing.T) {
	s := newTestService(t, Config{})
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }
	put(t, s, "b", "k", "1", nil, e("a_bin", "x"), e("n_int", "5"))
	put(t, s, "b", "k", "2", nil, e("a_bin", "y"), e("n_int", "5"))
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	setProps(t, s, "m", `{"allow_mult":true}`)
	put(t, s, "m", "k", "1", nil, e("a_bin", "x"))
	put(t, s, "m", "k", "2", nil, e("a_bin", "y"))
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, core.DefaultType, "m", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	it := s.db.IteratePrefix([]byte{storage.TagIndex})
	for it.Next() {
		n++
	}
	it.Release()
	if n != 2 {
		t.Fatalf("%d postings left, want 2 (only b/k's)", n)
	}
}

func TestQuorumAboveNValRefused(t *testing.T) {
	s := newTestService(t, Config{})
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k",
		Value: core.Sibling{Value: []byte("v")}, Options: PutOptions{W: core.Quorum{N: 4}}})
	if core.ErrorCode(err) != core.EINVALID || core.ErrorMessage(err) != "Specified w/dw/pw values invalid for bucket n value of 3\n" {
		t.Fatalf("w=4: %v", err)
	}
	if _, err := s.Get(ctx, core.DefaultType, "b", "k", GetOptions{R: core.Quorum{N: 9}}); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("r=9: %v", err)
	}
	if _, err := s.Delete(ctx, core.DefaultType, "b", "k", DeleteOptions{RW: core.Quorum{N: 4}}); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("rw=4: %v", err)
	}
}

func TestPreconditionRunsUnderLock(t *testing.T) {
	s := newTestService(t, Config{})
	refuse := func(cur *core.Object) error {
		if cur != nil {
			return &core.Error{Code: core.EPRECONDITION}
		}
		return nil
	}
	req := &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("v")},
		Options: PutOptions{Precondition: refuse}}
	if _, err := s.Put(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, req); core.ErrorCode(err) != core.EPRECONDITION {
		t.Fatalf("second conditional put: %v", err)
	}
}

func TestValueSizeLimit(t *testing.T) {
	s := newTestService(t, Config{MaxValueSize: 10})
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: make([]byte, 11)}})
	if core.ErrorCode(err) != core.ETOOLARGE {
		t.Fatalf("11 bytes over a 10-byte limit: %v", err)
	}
}

func TestBadClockRefused(t *testing.T) {
	s := newTestService(t, Config{})
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Context: []byte{9, 9}, Value: core.Sibling{Value: []byte("v")}})
	if core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("bad clock: %v", err)
	}
}

func TestReopenKeepsObjectsAndNodeID(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.NodeID()
	put(t, s, "b", "k", "persisted", nil)
	s.Close()
	db.Close()
	db, err = storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err = New(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.NodeID() != id {
		t.Fatalf("node id changed across restart: %s -> %s", id, s.NodeID())
	}
	if got := values(get(t, s, "b", "k")); fmt.Sprint(got) != "[persisted]" {
		t.Fatalf("after reopen: %v", got)
	}
}

// ownerOf owns the object keys it lists.
type ownerOf map[string]bool

func (o ownerOf) Owns(k []byte) bool { return o[string(k)] }

// TestReapDueResumes: a pass that stopped at its scan bound resumes after its last
// entry, so tombstones another node owns, however many, cannot hold back the ones this
// node owns; a pass that reached the end starts again from the first.
func TestReapDueResumes(t *testing.T) {
	defer func(n int) { maxReapScan = n }(maxReapScan)
	maxReapScan = 2
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now, ReapDelay: time.Second})
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		put(t, s, "b", k, "v", nil)
		if _, err := s.Delete(ctx, core.DefaultType, "b", k, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Millisecond) // reap deadlines in key order
	}
	clk.Add(2 * time.Second)
	mine := objectKey(core.DefaultType, "b", "k4")
	s.owner = ownerOf{string(mine): true}
	passes := 0
	for ; passes < 5; passes++ {
		if _, err := s.db.Get(mine); errors.Is(err, storage.ErrNotFound) {
			break
		}
		if err := s.ReapDue(); err != nil {
			t.Fatal(err)
		}
	}
	if passes != 3 {
		t.Fatalf("this node's tombstone reaped after %d passes, want 3 (two entries a pass, four owned elsewhere first)", passes)
	}
	// The others' entries stay for their owner; owning everything again, one pass
	// from the start reaps them.
	s.owner = nil
	for range 3 {
		if err := s.ReapDue(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if _, err := s.db.Get(objectKey(core.DefaultType, "b", fmt.Sprintf("k%d", i))); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("k%d not reaped once owned", i)
		}
	}
}
