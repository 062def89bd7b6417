package jsblob

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/cluster/jsblob/internal/natstest"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/storage"
)

// TestS3Service runs the S3 service's object path over the store on three nodes:
// objects in blobs written and read back whole and by range, a reader opened before
// an overwrite and a delete keeping its version, and the collector removing the old
// versions' blobs, after which s3.Check finds every blob owned and none leaked.
func TestS3Service(t *testing.T) {
	nodes := natstest.Start(t, 3)
	blobs := newStore(t, nodes[1].JS, Config{Replicas: 3, ChunkSize: 4096})
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, err := s3.New(db, s3.Config{ChunkSize: 16, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, err := svc.CreateUser(ctx, s3.NewUser{Name: "alice", Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	alice := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, err := s3.CannedACL("", s3.Owner{ID: u.ID, DisplayName: u.DisplayName}, s3.Owner{ID: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateBucket(ctx, alice, "data", acl); err != nil {
		t.Fatal(err)
	}
	putObj := func(key string, body []byte) {
		t.Helper()
		if _, err := svc.PutObject(ctx, alice, "data", key, s3.PutInput{Body: bytes.NewReader(body), Size: int64(len(body))}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	readRange := func(o *s3.Object, off, n int64) []byte {
		t.Helper()
		var b bytes.Buffer
		if err := o.WriteRange(ctx, &b, off, n); err != nil {
			t.Fatalf("read %d+%d: %v", off, n, err)
		}
		return b.Bytes()
	}
	sizes := []int{17, 4096, 4097, 100_000}
	for _, size := range sizes {
		putObj(fmt.Sprintf("k%d", size), data(size, byte(size)))
	}
	for _, size := range sizes {
		o, err := svc.OpenObject(ctx, alice, "data", fmt.Sprintf("k%d", size))
		if err != nil {
			t.Fatal(err)
		}
		want := data(size, byte(size))
		if got := readRange(o, 0, int64(size)); !bytes.Equal(got, want) {
			t.Errorf("object of %d bytes reads back %d other bytes", size, len(got))
		}
		if got := readRange(o, int64(size/3), int64(size/2)); !bytes.Equal(got, want[size/3:size/3+size/2]) {
			t.Errorf("object of %d bytes: a middle range differs", size)
		}
		o.Close()
	}
	old, err := svc.OpenObject(ctx, alice, "data", "k100000")
	if err != nil {
		t.Fatal(err)
	}
	putObj("k100000", data(5000, 9))
	if err := svc.DeleteObject(ctx, alice, "data", "k4097"); err != nil {
		t.Fatal(err)
	}
	if got := readRange(old, 0, 100_000); !bytes.Equal(got, data(100_000, byte(100_000%256))) {
		t.Error("a reader opened before the overwrite lost its version")
	}
	old.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := svc.Pending()
		if err != nil {
			t.Fatal(err)
		}
		if !p {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not finish within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, removed := svc.Collected()
	svc.Close()
	rep, err := s3.Check(db, blobs)
	if err != nil {
		t.Fatalf("check: %v (%+v)", err, rep)
	}
	if removed != 2 || rep.Blobs != 3 || rep.Objects != 3 || rep.Problems != 0 {
		t.Errorf("after the overwrite and the delete: %d blobs removed, %d objects and %d blobs checked; want 2, 3 and 3 (%+v)", removed, rep.Objects, rep.Blobs, rep)
	}
}
