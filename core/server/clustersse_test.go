package server_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/coretest"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/server"
)

// writeKeyFile writes a master key file of the 32 bytes key, mode 0600.
func writeKeyFile(t *testing.T, key []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "master.key")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClusterSSE: three nodes started with the same --sse-master-key share SSE-S3: an
// object encrypted through one node (and one written under a bucket default set through
// another) reads back through the others. A node restarted with another master key
// refuses to start, saying why.
func TestClusterSSE(t *testing.T) {
	keyFile := writeKeyFile(t, sse.NewKey())
	srvs := startClusterWith(t, 3, func(cfg *server.Config) { cfg.SSEMasterKey = keyFile })
	ctx := context.Background()
	a := srvs[0].S3()
	u, err := a.CreateUser(ctx, s3.NewUser{Name: "alice", Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	alice := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, _ := s3.CannedACL("", s3.Owner{ID: u.ID, DisplayName: u.DisplayName}, s3.Owner{ID: u.ID})
	if _, err := a.CreateBucket(ctx, alice, "enc", acl); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("encrypted in a cluster "), 20_000)
	if _, err := a.PutObject(ctx, alice, "enc", "k", s3.PutInput{Body: bytes.NewReader(body), Size: int64(len(body)), SSE: s3.SSERequest{S3: true}}); err != nil {
		t.Fatal(err)
	}
	coretest.WaitFor(t, "bucket visible on node 1", func() bool {
		return srvs[1].S3().SetBucketEncryption(ctx, alice, "enc", s3.BucketEncryption{Algorithm: s3.SSEAlgorithm}) == nil
	})
	if _, err := srvs[1].S3().PutObject(ctx, alice, "enc", "dflt", s3.PutInput{Body: bytes.NewReader(body), Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k", "dflt"} {
		coretest.WaitFor(t, key+" readable on node 2", func() bool {
			o, err := srvs[2].S3().OpenObject(ctx, alice, "enc", key)
			if err != nil {
				return false
			}
			defer o.Close()
			var got bytes.Buffer
			if o.Manifest.SSE == nil || o.Unseal(nil) != nil || o.WriteRange(ctx, &got, 0, o.Manifest.Size) != nil {
				return false
			}
			return bytes.Equal(got.Bytes(), body)
		})
	}
	// Node 2 again, with another master key: refused.
	cfg := srvs[2].Config()
	if err := srvs[2].Close(); err != nil {
		t.Fatal(err)
	}
	cfg.SSEMasterKey = writeKeyFile(t, sse.NewKey())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := server.New(cfg, coretest.Version, log)
	if err == nil {
		s.Close()
		t.Fatal("a node with another master key started")
	}
	if !strings.Contains(err.Error(), "same master key") {
		t.Fatalf("a node with another master key: %v", err)
	}
}
