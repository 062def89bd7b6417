package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// services starts a kv.Service on every node of c.
func services(t testing.TB, c *clustertest.Cluster) []*kv.Service {
	t.Helper()
	var out []*kv.Service
	for i := range c.Len() {
		svc, err := kv.New(c.Node(i).Store(), kv.Config{NodeName: fmt.Sprintf("n%d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		out = append(out, svc)
	}
	return out
}

var quorumRead = kv.GetOptions{R: core.QuorumAll}

// setAllowMult makes bucket allow siblings, through node 0, and waits until every
// node sees it.
func setAllowMult(t *testing.T, svcs []*kv.Service, c *clustertest.Cluster, bucket string) {
	t.Helper()
	ctx := context.Background()
	if err := svcs[0].SetProps(ctx, core.DefaultType, bucket, map[string]json.RawMessage{"allow_mult": json.RawMessage("true")}); err != nil {
		t.Fatal(err)
	}
	for i := range svcs {
		st := c.Node(i).Store().(*cluster.Store)
		if err := st.Sync(ctx, storage.KeyString(storage.TagProps, core.DefaultType, bucket)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrossNodeKV: kv services on different nodes of one cluster behave as one
// store: concurrent blind writes all survive as siblings, vclock-conditional
// increments lose no update, counters are exact; every node reads the same.
func TestCrossNodeKV(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	svcs := services(t, c)
	ctx := context.Background()
	setAllowMult(t, svcs, c, "s")
	t.Run("BlindWritesBecomeSiblings", func(t *testing.T) {
		const writers = 12
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svcs[i%2].Put(ctx, &kv.PutRequest{Bucket: "s", Key: "blind", Type: core.DefaultType,
					Value: core.Sibling{Value: []byte("v" + strconv.Itoa(i)), ContentType: "text/plain"}})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		var want []string
		for i := range writers {
			want = append(want, "v"+strconv.Itoa(i))
		}
		sort.Strings(want)
		for n, svc := range svcs {
			o, err := svc.Get(ctx, core.DefaultType, "s", "blind", quorumRead)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range o.Siblings {
				got = append(got, string(s.Value))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("node %d: siblings %v, want %v", n+1, got, want)
			}
		}
	})
	t.Run("ConditionalWritesLoseNothing", func(t *testing.T) {
		const workers, each = 4, 10
		runWorkers(t, workers, each, func(w int) error { return conditionalIncrement(ctx, svcs[w%2]) })
		for n, svc := range svcs {
			o, err := svc.Get(ctx, core.DefaultType, "plain", "cas", quorumRead)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Siblings) != 1 || string(o.Siblings[0].Value) != strconv.Itoa(workers*each) {
				t.Fatalf("node %d: %d siblings, first %q; want one, %d", n+1, len(o.Siblings), o.Siblings[0].Value, workers*each)
			}
		}
	})
	t.Run("CountersExact", func(t *testing.T) {
		const workers, each = 4, 10
		runWorkers(t, workers, each, func(w int) error {
			_, err := svcs[w%2].CounterAdd(ctx, "s", "counter", 1, kv.PutOptions{})
			return err
		})
		for n, svc := range svcs {
			v, err := svc.CounterValue(ctx, "s", "counter", quorumRead)
			if err != nil || v != workers*each {
				t.Fatalf("node %d: counter %d, %v; want %d", n+1, v, err, workers*each)
			}
		}
	})
}

var errChanged = errors.New("changed since read")

// conditionalIncrement reads plain/cas, and writes its value plus one on the vclock
// read: a write finding another clock is refused and tried again from a fresh read.
func conditionalIncrement(ctx context.Context, svc *kv.Service) error {
	for attempt := 0; attempt < 1000; attempt++ {
		var clock []byte
		n := 0
		o, err := svc.Get(ctx, core.DefaultType, "plain", "cas", quorumRead)
		switch err {
		case nil:
			clock = o.VClock
			if n, err = strconv.Atoi(string(o.Siblings[0].Value)); err != nil {
				return err
			}
		default:
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != core.ENOTFOUND {
				return err
			}
		}
		_, err = svc.Put(ctx, &kv.PutRequest{Type: core.DefaultType, Bucket: "plain", Key: "cas", Context: clock,
			Value: core.Sibling{Value: []byte(strconv.Itoa(n + 1)), ContentType: "text/plain"},
			Options: kv.PutOptions{Precondition: func(cur *core.Object) error {
				var curClock []byte
				if cur != nil {
					curClock = cur.VClock
				}
				if !bytes.Equal(curClock, clock) {
					return errChanged
				}
				return nil
			}}})
		if errors.Is(err, errChanged) {
			continue
		}
		return err
	}
	return fmt.Errorf("too many attempts")
}

// TestCrossNodeTxn: multi-key batches of cluster-wide records (as the S3 service
// commits) committed concurrently from two nodes are atomic: both keys always hold
// the same count, and no increment is lost.
func TestCrossNodeTxn(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	a, b := storage.KeyString(storage.TagS3, "a"), storage.KeyString(storage.TagS3, "b")
	ctx := context.Background()
	const workers, each = 4, 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := c.Node(w % 2).Store()
			for range each {
				if err := storage.RetryConflicts(ctx, 1000, func() error { return incrementPair(ctx, st, a, b) }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range c.Len() {
		st := c.Node(i).Store().(*cluster.Store)
		if err := st.Sync(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := st.Sync(ctx, b); err != nil {
			t.Fatal(err)
		}
		va, _ := st.Get(a)
		vb, _ := st.Get(b)
		if string(va) != strconv.Itoa(workers*each) || string(vb) != string(va) {
			t.Fatalf("node %d: a=%q b=%q, want both %d", i+1, va, vb, workers*each)
		}
	}
}

// incrementPair reads a and b from one snapshot, checks they are equal and writes
// both plus one, conditionally on both.
func incrementPair(ctx context.Context, st storage.Store, a, b []byte) error {
	ia, err := st.Read(ctx, a)
	if err != nil {
		return err
	}
	ib, err := st.Read(ctx, b)
	if err != nil {
		return err
	}
	if !bytes.Equal(ia.Value, ib.Value) {
		// Two reads are not one snapshot: a newer pair may be half read. The
		// conditions make the commit conflict; retry.
		return fmt.Errorf("torn read: %w", storage.ErrConflict)
	}
	n := 0
	if ia.Value != nil {
		n, _ = strconv.Atoi(string(ia.Value))
	}
	var batch storage.Batch
	batch.Require(a, ia.Rev)
	batch.Require(b, ib.Rev)
	v := []byte(strconv.Itoa(n + 1))
	batch.Put(a, v)
	batch.Put(b, v)
	return st.Commit(ctx, &batch, true)
}

// runWorkers runs workers goroutines that each call fn (with their number) each times,
// stopping a worker at its first error, which fails the test; it returns when all end.
func runWorkers(t *testing.T, workers, each int, fn func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := fn(w); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
