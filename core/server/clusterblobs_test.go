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

	"github.com/cairnkv/cairn/core/coretest"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/server"
)

// startCluster builds and starts n servers in cluster mode on loopback ports (at once:
// each waits for a majority of its peers), closed at the end of the test.
func startCluster(t *testing.T, n int) []*server.Server {
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
// of cluster mode is JetStream's, not the node's files.
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
	for i, s := range srvs[1:] {
		var o *s3.Object
		coretest.WaitFor(t, fmt.Sprintf("the object's manifest on node %d", i+1), func() bool {
			o, err = s.S3().OpenObject(ctx, alice, "data", "big")
			return err == nil && o.Manifest.ETag == m.ETag
		})
		for _, r := range [][2]int64{{0, int64(len(body))}, {1 << 20, 777}, {int64(len(body)) - 1, 1}} {
			var got bytes.Buffer
			if err := o.WriteRange(ctx, &got, r[0], r[1]); err != nil || !bytes.Equal(got.Bytes(), body[r[0]:r[0]+r[1]]) {
				t.Errorf("node %d: bytes %d+%d: %v (right: %v)", i+1, r[0], r[1], err, bytes.Equal(got.Bytes(), body[r[0]:r[0]+r[1]]))
			}
		}
		o.Close()
	}
	// Nothing in any node's blob directory: the bytes are in the cluster.
	for i, s := range srvs {
		entries, _ := os.ReadDir(filepath.Join(s.Config().DataDir, server.BlobsDir))
		if len(entries) != 0 {
			t.Errorf("node %d has %d entries in its blob directory", i, len(entries))
		}
	}
}
