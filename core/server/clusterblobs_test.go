package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/coretest"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/server"
)

// startCluster builds and starts n servers in cluster mode on loopback ports (at once:
// each waits for a majority of its peers), closed at the end of the test.
func startCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith is startCluster with each node's configuration changed by mod (nil:
// none) before it starts.
func startClusterWith(t *testing.T, n int, mod func(cfg *server.Config)) []*server.Server {
	t.Helper()
	routes := make([]string, n)
	for i := range routes {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		routes[i] = l.Addr().String()
		l.Close()
	}
	srvs := make([]*server.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range srvs {
		cfg := coretest.Config(t)
		cfg.ClusterName, cfg.ClusterListen, cfg.ClusterPeers = "blobs", routes[i], strings.Join(routes, ",")
		if mod != nil {
			mod(&cfg)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			if errs[i] = server.PrepareDataDir(cfg.DataDir, log); errs[i] != nil {
				return
			}
			if srvs[i], errs[i] = server.New(cfg, coretest.Version, log); errs[i] == nil {
				errs[i] = srvs[i].Start()
			}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range srvs {
			if s != nil {
				s.Close()
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	return srvs
}

// TestClusterS3Blobs writes an object large enough to be a blob through one node of
// three and reads it back, whole and by range, through the two others: the blob store
// of cluster mode is JetStream's, not the node's files. Then the writing node stops:
// the object stays readable, and a new one is written and read through the others.
func TestClusterS3Blobs(t *testing.T) {
	srvs := startCluster(t, 3)
	ctx := context.Background()
	a := srvs[0].S3()
	u, err := a.CreateUser(ctx, s3.NewUser{Name: "alice", Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	alice := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, err := s3.CannedACL("", s3.Owner{ID: u.ID, DisplayName: u.DisplayName}, s3.Owner{ID: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateBucket(ctx, alice, "data", acl); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3<<20+12345)
	for i := range body {
		body[i] = byte(i * 7 % 253)
	}
	m, err := a.PutObject(ctx, alice, "data", "big", s3.PutInput{Body: bytes.NewReader(body), Size: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	readOn := func(i int, key string, body []byte, etag string) {
		t.Helper()
		var o *s3.Object
		coretest.WaitFor(t, fmt.Sprintf("the manifest of %s on node %d", key, i), func() bool {
			o, err = srvs[i].S3().OpenObject(ctx, alice, "data", key)
			return err == nil && o.Manifest.ETag == etag
		})
		defer o.Close()
		for _, r := range [][2]int64{{0, int64(len(body))}, {1 << 20, 777}, {int64(len(body)) - 1, 1}} {
			var got bytes.Buffer
			if err := o.WriteRange(ctx, &got, r[0], r[1]); err != nil || !bytes.Equal(got.Bytes(), body[r[0]:r[0]+r[1]]) {
				t.Errorf("node %d: %s bytes %d+%d: %v (right: %v)", i, key, r[0], r[1], err, bytes.Equal(got.Bytes(), body[r[0]:r[0]+r[1]]))
			}
		}
	}
	readOn(1, "big", body, m.ETag)
	readOn(2, "big", body, m.ETag)
	// Nothing in any node's blob directory: the bytes are in the cluster.
	for i, s := range srvs {
		entries, _ := os.ReadDir(filepath.Join(s.Config().DataDir, server.BlobsDir))
		if len(entries) != 0 {
			t.Errorf("node %d has %d entries in its blob directory", i, len(entries))
		}
	}

	// The writer gone, the two others still read the object and write new ones.
	start := time.Now()
	if err := srvs[0].Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed in %v", time.Since(start))
	readOn(1, "big", body, m.ETag)
	t.Logf("read in %v", time.Since(start))
	body2 := bytes.Repeat([]byte("after the loss of a node "), 50_000)
	m2, err := srvs[1].S3().PutObject(ctx, alice, "data", "second", s3.PutInput{Body: bytes.NewReader(body2), Size: int64(len(body2))})
	if err != nil {
		t.Fatalf("a PUT with one node of three down: %v", err)
	}
	t.Logf("written in %v", time.Since(start))
	readOn(2, "second", body2, m2.ETag)
	t.Logf("read in %v", time.Since(start))
}
