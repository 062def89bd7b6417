package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// putTTL stores value under b/k with an explicit TTL (nil: the bucket's).
func putTTL(t testing.TB, s *Service, bucket, key, value string, ttl *int64, idx ...core.IndexEntry) *core.Object {
	t.Helper()
	o, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: bucket, Key: key,
		Value:   core.Sibling{Value: []byte(value), ContentType: "text/plain", Indexes: idx},
		Options: PutOptions{TTL: ttl}})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return o
}

func ttlOf(n int64) *int64 { return &n }

func TestRecordExpiryEncoding(t *testing.T) {
	clock, _ := vclock.VClock(nil).Increment("n", time.Unix(1, 0))
	sib := storedSibling{Sibling: core.Sibling{Value: []byte("v"), LastModified: time.Unix(5, 0).UTC()}}
	for _, tc := range []struct {
		name    string
		expiry  int64
		version byte
	}{
		{"no expiry keeps version 1", 0, recordVersion},
		{"expiry is version 2", 1_700_000_000_000_000_000, recordVersionExpiry},
		{"smallest expiry", 1, recordVersionExpiry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &record{clock: clock, siblings: []storedSibling{sib}, expiry: tc.expiry}
			enc := r.encode()
			if enc[0] != tc.version {
				t.Fatalf("version byte %d, want %d", enc[0], tc.version)
			}
			got, err := decodeRecord(enc)
			if err != nil || got.expiry != tc.expiry || string(got.siblings[0].Value) != "v" {
				t.Fatalf("decode: %v, expiry %d", err, got.expiry)
			}
			info, err := scanDerived(enc, nil)
			if err != nil || info.expiry != tc.expiry {
				t.Fatalf("scanDerived: %v, expiry %d", err, info.expiry)
			}
			if _, _, exp, err := probeRecord(enc); err != nil || exp != tc.expiry {
				t.Fatalf("probeRecord: %v, expiry %d", err, exp)
			}
			for cut := 1; cut < len(enc); cut++ {
				if _, err := decodeRecord(enc[:cut]); err == nil {
					t.Fatalf("truncated at %d decoded", cut)
				}
			}
		})
	}
	// A version 2 record must carry a positive expiry.
	for _, bad := range [][]byte{{recordVersionExpiry, 0}, {recordVersionExpiry, 1}, {recordVersionExpiry}} {
		if _, err := decodeRecord(bad); !errors.Is(err, errCorrupt) {
			t.Errorf("decode %x: %v, want corrupt", bad, err)
		}
	}
}

func TestParseTTL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"60", 60, true}, {" 7 ", 7, true}, {"315360000", MaxTTLSeconds, true},
		{"315360001", 0, false}, {"-1", 0, false}, {"1.5", 0, false}, {"", 0, false},
		{"abc", 0, false}, {"99999999999999999999999", 0, false},
	} {
		n, err := ParseTTL(tc.in)
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("ParseTTL(%q) = %d, %v", tc.in, n, err)
		}
		if err != nil && core.ErrorCode(err) != core.EINVALID {
			t.Errorf("ParseTTL(%q) error code %v, want EINVALID", tc.in, core.ErrorCode(err))
		}
	}
}

func TestTTLPropertyValidated(t *testing.T) {
	s := newTestService(t, Config{})
	for _, tc := range []struct {
		val string
		ok  bool
	}{{"0", true}, {"30", true}, {"315360000", true}, {"315360001", false}, {"-1", false}, {`"x"`, false}, {"1.5", false}} {
		err := s.SetProps(ctx, core.DefaultType, "b", map[string]json.RawMessage{core.PropTTL: json.RawMessage(tc.val)})
		if (err == nil) != tc.ok {
			t.Errorf("ttl %s: %v", tc.val, err)
		}
		err = s.CreateType(ctx, "t"+strings.Trim(tc.val, `".-`), map[string]json.RawMessage{core.PropTTL: json.RawMessage(tc.val)})
		if (err == nil) != tc.ok {
			t.Errorf("type with ttl %s: %v", tc.val, err)
		}
	}
	setProps(t, s, "b", `{"ttl":30}`)
	p, err := s.Props(ctx, core.DefaultType, "b")
	if err != nil || p.TTL != 30 {
		t.Fatalf("props: %v, ttl %d", err, p.TTL)
	}
	if _, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("v")},
		Options: PutOptions{TTL: ttlOf(MaxTTLSeconds + 1)}}); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("put with a TTL out of range: %v", err)
	}
}

// TestExpiredObjectIsGone walks an object through its life: readable with its expiry,
// then absent from reads, listings and index queries the instant it expires, written
// over as a fresh object, and reaped by the expiry reaper.
func TestExpiredObjectIsGone(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now})
	setProps(t, s, "b", `{"ttl":60,"allow_mult":true}`)
	e := core.IndexEntry{Field: "f_bin", Value: "x"}
	putTTL(t, s, "b", "bucket-ttl", "1", nil, e)
	putTTL(t, s, "b", "own-ttl", "2", ttlOf(10), e)
	putTTL(t, s, "b", "forever", "3", ttlOf(0), e)

	o := get(t, s, "b", "own-ttl")
	if want := clk.Now().Add(10 * time.Second); !o.Expiry.Equal(want) {
		t.Fatalf("expiry %v, want %v", o.Expiry, want)
	}
	if left, ok := ExpiresIn(o, clk.Now().Add(2500*time.Millisecond)); !ok || left != 8 {
		t.Fatalf("ExpiresIn = %d, %v; want 8 (rounded up)", left, ok)
	}
	if _, ok := ExpiresIn(get(t, s, "b", "forever"), clk.Now()); ok {
		t.Fatal("an object without TTL has an expiry")
	}
	clk.Add(10 * time.Second)
	if _, err := s.Get(ctx, core.DefaultType, "b", "own-ttl", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("expired object read: %v", err)
	}
	checkListed(t, s, "b", []string{"bucket-ttl", "forever"})
	clk.Add(50 * time.Second)
	checkListed(t, s, "b", []string{"forever"})

	// A write over an expired object starts a new object: no sibling, a new clock.
	o = putTTL(t, s, "b", "own-ttl", "new", nil)
	if got := values(o); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("values after rewrite %v", got)
	}
	if c, err := vclock.Decode(o.VClock); err != nil || len(c) != 1 {
		t.Fatalf("clock after rewrite: %v %v", c, err)
	}
	if _, err := s.ReapExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Get(objectKey(core.DefaultType, "b", "bucket-ttl")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("expired object not reaped: %v", err)
	}
	if got := values(get(t, s, "b", "own-ttl")); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("the rewritten object was reaped: %v", got)
	}
	// The background reaper may have removed own-ttl before it was written again.
	if total, minute := s.ExpiredReaped(); total < 1 || total > 2 || minute != total {
		t.Fatalf("reaped stats %d, %d; want 1 or 2, both the same", total, minute)
	}
}

// checkListed checks that the bucket's key listing, $bucket query and f_bin query
// return exactly want.
func checkListed(t *testing.T, s *Service, bucket string, want []string) {
	t.Helper()
	v, err := s.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := listKeys(t, v, core.DefaultType, bucket); !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if got := listBuckets(t, v, core.DefaultType); !slices.Equal(got, []string{bucket}) {
		t.Errorf("buckets %v", got)
	}
	for _, q := range []struct{ field, term string }{{"$bucket", bucket}, {"f_bin", "x"}} {
		iq, err := index.NewQuery(q.field, []string{q.term})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if _, err := v.Index(ctx, core.DefaultType, bucket, iq, func(_, key []byte) error {
			got = append(got, string(key))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s query: %v, want %v", q.field, got, want)
		}
	}
}

// TestExpiryRewriteWins checks that the reaper never deletes an object written again
// (without a TTL, or with a later one) after its first expiry entry was made.
func TestExpiryRewriteWins(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now})
	putTTL(t, s, "b", "k", "1", ttlOf(5))
	putTTL(t, s, "b", "later", "1", ttlOf(5))
	due := clk.Now().Add(5 * time.Second)
	clk.Add(6 * time.Second)
	dueList, err := s.dueExpiries(storage.Key(storage.TagExpiry), clk.Now())
	if err != nil || len(dueList) != 2 {
		t.Fatalf("due: %v, %d entries", err, len(dueList))
	}
	putTTL(t, s, "b", "k", "2", ttlOf(0))
	putTTL(t, s, "b", "later", "2", ttlOf(100))
	n, err := s.reapExpiredBatch(ctx, dueList, due)
	if err != nil || n != 0 {
		t.Fatalf("reaped %d, %v; want 0", n, err)
	}
	for _, k := range []string{"k", "later"} {
		if got := values(get(t, s, "b", k)); !slices.Equal(got, []string{"2"}) {
			t.Fatalf("%s: %v", k, got)
		}
	}
}

// TestExpiryCounter checks that a counter (an object written through an update
// function, as data types are) takes the bucket's ttl.
func TestExpiryCounter(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clk.Now})
	setProps(t, s, "c", `{"allow_mult":true,"ttl":5}`)
	if _, err := s.CounterAdd(ctx, "c", "k", 3, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.CounterValue(ctx, "c", "k", GetOptions{}); err != nil || v != 3 {
		t.Fatalf("counter %d, %v", v, err)
	}
	clk.Add(5 * time.Second)
	if _, err := s.CounterValue(ctx, "c", "k", GetOptions{}); !IsNotFound(err) {
		t.Fatalf("expired counter: %v", err)
	}
	if v, err := s.CounterAdd(ctx, "c", "k", 1, PutOptions{}); err != nil || v != 1 {
		t.Fatalf("counter over an expired one: %d, %v", v, err)
	}
}

// TestCheckReportsExpiryEntries checks that CheckStore finds an expiry entry without its
// object, an object without its entry, and a posting that lost its expiry.
func TestCheckReportsExpiryEntries(t *testing.T) {
	s := newTestService(t, Config{})
	putTTL(t, s, "b", "k", "1", ttlOf(100), core.IndexEntry{Field: "f_bin", Value: "x"})
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecordAt(s, "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	entry := storage.ExpiryKey(r.expiry, []byte(core.DefaultType), []byte("b"), []byte("k"))
	stray := storage.ExpiryKey(r.expiry, []byte(core.DefaultType), []byte("b"), []byte("gone"))
	posting, err := index.PostingKey(core.DefaultType, "b", "k", core.IndexEntry{Field: "f_bin", Value: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var b storage.Batch
	b.Delete(entry)
	b.Put(stray, nil)
	b.Put(posting, nil)
	if err := s.db.Commit(ctx, &b, false); err != nil {
		t.Fatal(err)
	}
	rep, err := s.CheckStore()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Problems, "\n")
	for _, want := range []string{"default/b/gone at", "object default/b/k expiring at", "holds expiry"} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q:\n%s", want, all)
		}
	}
	// Repair, so that the cleanup's invariant check passes.
	b.Reset()
	b.Put(entry, nil)
	b.Delete(stray)
	b.Put(posting, postingValue(r.expiry))
	if err := s.db.Commit(ctx, &b, false); err != nil {
		t.Fatal(err)
	}
}

func decodeRecordAt(s *Service, bucket, key string) (*record, error) {
	v, err := s.db.Get(objectKey(core.DefaultType, bucket, key))
	if err != nil {
		return nil, err
	}
	return decodeRecord(v)
}

// TestDeriveExpiry: the store keeps one expiry entry per record with an expiry, and
// every posting of it holds that expiry, whoever writes and whatever changes.
func TestDeriveExpiry(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	e1, e2 := t0.Add(time.Minute).UnixNano(), t0.Add(time.Hour).UnixNano()
	a := core.IndexEntry{Field: "a_bin", Value: "x"}
	rec := func(expiry int64, deleted bool) []byte {
		s := sib(t0, deleted)
		if !deleted {
			s.Indexes = []core.IndexEntry{a}
		}
		return (&record{clock: vclock.VClock{{Actor: "n", Counter: 1}}, siblings: []storedSibling{s}, expiry: expiry}).encode()
	}
	tests := []struct {
		name     string
		writes   [][]byte // nil: a delete of the key
		expiry   int64    // of the expiry entry left, 0: none
		postings int      // postings left
	}{
		{"create with expiry", [][]byte{rec(e1, false)}, e1, 1},
		{"rewrite, same expiry", [][]byte{rec(e1, false), rec(e1, false)}, e1, 1},
		{"expiry moved", [][]byte{rec(e1, false), rec(e2, false)}, e2, 1},
		{"expiry removed", [][]byte{rec(e1, false), rec(0, false)}, 0, 1},
		{"expiry added", [][]byte{rec(0, false), rec(e2, false)}, e2, 1},
		{"deleted (tombstone)", [][]byte{rec(e1, false), rec(0, true)}, 0, 0},
		{"reaped", [][]byte{rec(e1, false), nil}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			db.RegisterDerive(storage.TagObject, objectDeriver{reapDelay: time.Second}.derive)
			k := objectKey(core.DefaultType, "b", "k")
			for _, v := range tc.writes {
				var batch storage.Batch
				if v == nil {
					batch.Delete(k)
				} else {
					batch.Put(k, v)
				}
				if err := db.Commit(ctx, &batch, false); err != nil {
					t.Fatal(err)
				}
			}
			var entries []int64
			it := db.IteratePrefix([]byte{storage.TagExpiry})
			for it.Next() {
				at, _, _, key, err := storage.DecodeExpiryKey(it.Key())
				if err != nil || string(key) != "k" {
					t.Fatalf("entry %q: %v", it.Key(), err)
				}
				entries = append(entries, at)
			}
			it.Release()
			if want := []int64{tc.expiry}; tc.expiry == 0 && len(entries) != 0 || tc.expiry != 0 && !slices.Equal(entries, want) {
				t.Fatalf("expiry entries %v, want %d", entries, tc.expiry)
			}
			n := 0
			it = db.IteratePrefix([]byte{storage.TagIndex})
			for it.Next() {
				n++
				if string(it.Value()) != string(postingValue(tc.expiry)) {
					t.Errorf("posting value %x, want %x", it.Value(), postingValue(tc.expiry))
				}
			}
			it.Release()
			if n != tc.postings {
				t.Fatalf("%d postings, want %d", n, tc.postings)
			}
		})
	}
}

// TestExpiryCursor: a scan starts after the last entry handled, and from the index's
// start on the first scan, every expirySweepEvery, and when the clock went back.
func TestExpiryCursor(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	head := storage.Key(storage.TagExpiry)
	e1 := storage.ExpiryKey(t0.UnixNano(), []byte("t"), []byte("b"), []byte("k1"))
	e2 := storage.ExpiryKey(t0.Add(time.Second).UnixNano(), []byte("t"), []byte("b"), []byte("k0"))
	var c expiryCursor
	steps := []struct {
		name    string
		now     time.Time
		advance []byte
		want    []byte
	}{
		{"first scan sweeps", t0, e2, head},
		{"then from the last entry", t0.Add(time.Second), e1, e2}, // an earlier entry does not move it back
		{"still the cursor", t0.Add(expirySweepEvery - time.Nanosecond), nil, e2},
		{"sweep after a minute", t0.Add(expirySweepEvery), e1, head},
		{"from the sweep's last entry", t0.Add(expirySweepEvery + time.Second), nil, e1},
		{"clock set back sweeps", t0, nil, head},
	}
	for _, st := range steps {
		if got := c.start(st.now); !bytes.Equal(got, st.want) {
			t.Fatalf("%s: start %q, want %q", st.name, got, st.want)
		}
		if st.advance != nil {
			c.advance(st.advance)
		}
	}
}

// TestReapEntries checks what the reaper does with each kind of due expiry entry: an
// expired object's own entry goes with the object (the derived writes of its delete
// remove the entry and the postings), an entry at another expiry than its record's (one
// an older build left) is removed explicitly, and an entry naming no object or no key
// at all is dropped. The store is consistent after (CheckInvariants, at cleanup), and
// the expiry index is empty.
func TestReapEntries(t *testing.T) {
	e := core.IndexEntry{Field: "f_bin", Value: "x"}
	tests := []struct {
		name   string
		entry  func(s *Service, expiry int64) []byte // an extra entry written directly; nil: none
		reaped int
	}{
		{name: "own entry", reaped: 1},
		{name: "stale entry at another expiry", reaped: 1, entry: func(_ *Service, expiry int64) []byte {
			return storage.ExpiryKey(expiry-int64(time.Second), []byte(core.DefaultType), []byte("b"), []byte("k"))
		}},
		{name: "entry of a missing object", reaped: 1, entry: func(_ *Service, expiry int64) []byte {
			return storage.ExpiryKey(expiry, []byte(core.DefaultType), []byte("b"), []byte("gone"))
		}},
		{name: "malformed entry", reaped: 1, entry: func(_ *Service, expiry int64) []byte {
			return append(storage.ExpiryPrefix(expiry), 0xff)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			s := newTestService(t, Config{Now: clk.Now})
			putTTL(t, s, "b", "k", "1", ttlOf(5), e)
			expiry := clk.Now().Add(5 * time.Second).UnixNano()
			if tt.entry != nil {
				if err := storage.Put(ctx, s.db, tt.entry(s, expiry), nil, false); err != nil {
					t.Fatal(err)
				}
			}
			clk.Add(6 * time.Second)
			n, err := s.ReapExpired(ctx)
			if err != nil || n != tt.reaped {
				t.Fatalf("ReapExpired = %d, %v; want %d", n, err, tt.reaped)
			}
			if _, err := s.db.Get(objectKey(core.DefaultType, "b", "k")); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("the expired object is still stored: %v", err)
			}
			it := s.db.IteratePrefix(storage.Key(storage.TagExpiry))
			defer it.Release()
			for it.Next() {
				t.Errorf("entry left: %q", it.Key())
			}
		})
	}
}

// TestExpiryBacklog checks the reaper's backlog figure: zero until a pass meets due
// entries it has not handled, then the age of the oldest of them, and zero again once
// a pass found nothing more due.
func TestExpiryBacklog(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name  string
		steps func(e *expiryStats)
		want  time.Duration // at base + 10 s
	}{
		{"never behind", func(*expiryStats) {}, 0},
		{"behind", func(e *expiryStats) { e.behind(base.UnixNano()) }, 10 * time.Second},
		{"further along", func(e *expiryStats) {
			e.behind(base.UnixNano())
			e.behind(base.Add(4 * time.Second).UnixNano())
		}, 6 * time.Second},
		{"a malformed entry keeps the last known", func(e *expiryStats) {
			e.behind(base.UnixNano())
			e.behind(0)
		}, 10 * time.Second},
		{"not yet expired by this clock", func(e *expiryStats) { e.behind(base.Add(time.Minute).UnixNano()) }, 0},
		{"caught up", func(e *expiryStats) {
			e.behind(base.UnixNano())
			e.caughtUp()
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e expiryStats
			tt.steps(&e)
			if got := e.backlog(base.Add(10 * time.Second)); got != tt.want {
				t.Fatalf("backlog %v, want %v", got, tt.want)
			}
		})
	}

	// Through the service: a pass stopped by its context leaves the backlog, a full
	// pass clears it.
	clk := &fakeClock{t: base}
	s := newTestService(t, Config{Now: clk.Now})
	putTTL(t, s, "b", "k", "1", ttlOf(5))
	clk.Add(8 * time.Second)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.ReapExpired(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReapExpired with a cancelled context: %v", err)
	}
	if got := s.ExpiryBacklog(); got != 0 && got != 3*time.Second {
		t.Fatalf("backlog %v after a stopped pass, want 3s (or 0: the background reaper ran)", got)
	}
	if _, err := s.ReapExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.ExpiryBacklog(); got != 0 {
		t.Fatalf("backlog %v after a full pass, want 0", got)
	}
}
