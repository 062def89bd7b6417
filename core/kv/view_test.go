package kv

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

func listKeys(t *testing.T, v *View, typ, bucket string) []string {
	t.Helper()
	var got []string
	if err := v.Keys(ctx, typ, bucket, func(k string) error { got = append(got, k); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func listBuckets(t *testing.T, v *View, typ string) []string {
	t.Helper()
	var got []string
	if err := v.Buckets(ctx, typ, func(b string) error { got = append(got, b); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestViewKeysAndBuckets(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := newTestService(t, Config{Now: clock.Now, ReapDelay: time.Hour})
	// Names with the key encoding's framing bytes, and buckets that prefix each other.
	keys := []string{"", "a", "a\x00", "a\x00\x01", "a\x00b", "ab", "b\xff", "\x00"}
	buckets := []string{"b", "b\x00", "b\x00x", "ba", "c"}
	for _, b := range buckets {
		for _, k := range keys {
			put(t, s, b, k, "v", nil)
		}
	}
	v, err := s.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Writes after the view is opened are not in it.
	put(t, s, "b", "late", "v", nil)
	put(t, s, "late-bucket", "k", "v", nil)
	want := slices.Sorted(slices.Values(keys))
	for _, b := range buckets {
		if got := listKeys(t, v, core.DefaultType, b); !slices.Equal(got, want) {
			t.Errorf("keys of %q = %q, want %q", b, got, want)
		}
	}
	if got := listBuckets(t, v, core.DefaultType); !slices.Equal(got, buckets) {
		t.Errorf("buckets = %q, want %q", got, buckets)
	}
	v.Close()

	// A fully deleted bucket is listed while its tombstones are visible.
	for _, k := range keys {
		if _, err := s.Delete(ctx, core.DefaultType, "c", k, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	v, _ = s.View(ctx)
	if got := listBuckets(t, v, core.DefaultType); !slices.Contains(got, "c") {
		t.Errorf("bucket of visible tombstones missing: %q", got)
	}
	if got := listKeys(t, v, core.DefaultType, "c"); !slices.Equal(got, want) {
		t.Errorf("visible tombstones not listed: %q", got)
	}
	v.Close()
	// Past the reap delay (not yet reaped) they are not listed.
	clock.Add(2 * time.Hour)
	v, _ = s.View(ctx)
	if got := listBuckets(t, v, core.DefaultType); slices.Contains(got, "c") {
		t.Errorf("bucket of expired tombstones listed: %q", got)
	}
	if got := listKeys(t, v, core.DefaultType, "c"); len(got) != 0 {
		t.Errorf("expired tombstones listed: %q", got)
	}
	v.Close()
	if err := s.ReapDue(); err != nil {
		t.Fatal(err)
	}

	// Unknown types are not found; typed buckets are their own namespace.
	v, _ = s.View(ctx)
	defer v.Close()
	if err := v.Keys(ctx, "nosuch", "b", func(string) error { return nil }); !IsNotFound(err) {
		t.Errorf("unknown type: %v", err)
	}
	if err := v.Buckets(ctx, "nosuch", func(string) error { return nil }); !IsNotFound(err) {
		t.Errorf("unknown type: %v", err)
	}
	// fn's error stops the scan and comes back.
	stop := errors.New("stop")
	n := 0
	if err := v.Keys(ctx, core.DefaultType, "b", func(string) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("stop: err %v after %d keys", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for i := 0; i < 2*checkEvery; i++ {
		put(t, s, "big", "k"+string(rune('a'+i%26))+itoa(i), "v", nil)
	}
	v2, _ := s.View(ctx)
	defer v2.Close()
	if err := v2.Keys(cctx, core.DefaultType, "big", func(string) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled listing: %v", err)
	}
}

func itoa(i int) string { return string(storage.Uint64Component(uint64(i))) }

func TestProbeRecordMatchesDecode(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "m", `{"allow_mult":true}`)
	put(t, s, "m", "k", "one", nil, core.IndexEntry{Field: "f_bin", Value: "x"})
	put(t, s, "m", "k", "two", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "m", "gone", DeleteOptions{}); !IsNotFound(err) {
		t.Fatal(err)
	}
	put(t, s, "m", "gone", "v", nil)
	if _, err := s.Delete(ctx, core.DefaultType, "m", "gone", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k", "gone"} {
		raw, err := s.db.Get(objectKey(core.DefaultType, "m", key))
		if err != nil {
			t.Fatal(err)
		}
		r, err := decodeRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		del, lm, _, err := probeRecord(raw)
		if err != nil || del != r.allDeleted() || !lm.Equal(r.lastModified()) {
			t.Errorf("%s: probe = %v %v %v, decode = %v %v", key, del, lm, err, r.allDeleted(), r.lastModified())
		}
		for cut := 0; cut < len(raw); cut++ {
			if _, _, _, err := probeRecord(raw[:cut]); err == nil {
				t.Fatalf("%s: probe of a record cut at %d succeeded", key, cut)
			}
		}
	}
}
