package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/cluster/clustertest"
	"github.com/cairnkv/cairn/core/cluster/jsblob"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/storage"
)

// TestReapOnOwner: every replicated key has exactly one owner among the nodes (the
// leader of its stream), and tombstones deleted through any node are reaped by their
// owners alone: every node's replica ends without the tombstones and their reap
// entries, with no reap commit refused as a conflict (before, every node raced to
// reap every tombstone).
func TestReapOnOwner(t *testing.T) {
	const keys = 30
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	var svcs []*kv.Service
	for i := range c.Len() {
		svc, err := kv.New(c.Node(i).Store(), kv.Config{NodeName: fmt.Sprintf("n%d", i+1), ReapDelay: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svcs = append(svcs, svc)
	}
	ctx := context.Background()
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range keys {
		if _, err := svcs[i%3].Put(ctx, &kv.PutRequest{Type: core.DefaultType, Bucket: "r", Key: key(i),
			Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}}); err != nil {
			t.Fatal(err)
		}
	}
	waitConverged(t, c)
	for i := range keys {
		k := storage.KeyString(storage.TagObject, core.DefaultType, "r", key(i))
		owners := 0
		for n := range c.Len() {
			if c.Node(n).Store().(*cluster.Store).Owns(k) {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("key %d has %d owners, want 1", i, owners)
		}
	}
	conflictsBefore := conflicts(c)
	for i := range keys {
		if _, err := svcs[(i+1)%3].Delete(ctx, core.DefaultType, "r", key(i), kv.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := 0
		for n := range c.Len() {
			st := c.Node(n).Store()
			for i := range keys {
				if _, err := st.Get(storage.KeyString(storage.TagObject, core.DefaultType, "r", key(i))); err == nil {
					left++
				}
			}
			it := st.IteratePrefix(storage.Key(storage.TagReap))
			for it.Next() {
				left++
			}
			it.Release()
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tombstones and reap entries left on the nodes after 30 s", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := conflicts(c) - conflictsBefore; n != 0 {
		t.Errorf("%d commits refused as conflicts while the owners reaped, want 0", n)
	}
}

// conflicts sums the nodes' refused commits.
func conflicts(c *clustertest.Cluster) uint64 {
	var n uint64
	for i := range c.Len() {
		n += c.Node(i).Store().(*cluster.Store).Metrics().Conflicts
	}
	return n
}

// TestS3CollectOnOwner: with an S3 service on each of three nodes (blobs in
// JetStream), the blobs an overwrite and a delete leave behind are collected by one
// node, the META stream's leader (S3 records replicate there), and every node's
// garbage records are gone afterwards.
func TestS3CollectOnOwner(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.Options{Partitions: 4})
	ctx := context.Background()
	var svcs []*s3.Service
	for i := range c.Len() {
		blobs, err := jsblob.New(ctx, c.Node(i).JetStream(), jsblob.Config{Replicas: c.Node(i).Replicas(), ChunkSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { blobs.Close() })
		svc, err := s3.New(c.Node(i).Store(), s3.Config{Blobs: blobs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svcs = append(svcs, svc)
	}
	u, err := svcs[0].CreateUser(ctx, s3.NewUser{Name: "alice", Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	alice := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, err := s3.CannedACL("", s3.Owner{ID: u.ID, DisplayName: u.DisplayName}, s3.Owner{ID: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svcs[0].CreateBucket(ctx, alice, "data", acl); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c)
	const objects = 4
	for round := range 2 { // the second round overwrites: the first round's blobs are garbage
		for i := range objects {
			body := bytes.Repeat([]byte{byte('a' + round)}, 5000)
			if _, err := svcs[(i+round)%3].PutObject(ctx, alice, "data", fmt.Sprintf("o%d", i), s3.PutInput{Body: bytes.NewReader(body), Size: int64(len(body))}); err != nil {
				t.Fatal(err)
			}
		}
		waitConverged(t, c)
	}
	if err := svcs[1].DeleteObject(ctx, alice, "data", "o0"); err != nil {
		t.Fatal(err)
	}
	// The first round's versions and o0's second are garbage: 5 versions.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var perNode []int64
		collectors, pending, total := 0, false, int64(0)
		for _, svc := range svcs {
			chunks, blobs := svc.Collected()
			perNode = append(perNode, chunks+blobs)
			total += chunks + blobs
			if chunks+blobs > 0 {
				collectors++
			}
			p, err := svc.Pending()
			if err != nil {
				t.Fatal(err)
			}
			pending = pending || p
		}
		if total > 0 && !pending {
			if collectors != 1 {
				t.Fatalf("nodes collected %v (chunk records and blobs): want the META leader alone", perNode)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: collected %v, records pending: %v", perNode, pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
